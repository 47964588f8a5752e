// A tiny run folder for the web tests, made without training: config.yaml, metrics.csv (train,
// gate and self-play rows) and arena.csv rows of three generations, chunks of random self-play
// games (networks of generations 0, 1 and 2) and random-weight checkpoints, in the layout of
// trainer/run_folder.h; and the same run resumed for a second session.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "model/checkpoint.h"
#include "model/net_config.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "tests/record_test_util.h"
#include "trainer/run_folder.h"

namespace oppidum::test_util {

// A folder of its own under the test temp directory for this process: CTest runs each test of a
// suite as its own process, in parallel, so a shared path would be rebuilt under another's feet.
inline std::filesystem::path process_temp_dir(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) /
         (name + "-" + std::to_string(static_cast<long>(::getpid())));
}

struct TinyRun {
  std::filesystem::path dir;
  int games = 0;
  int train_rows = 0;
  int gates = 0;
  std::vector<trainer::SelfplayRow> selfplay;  // one per generation, its speed 100 + 10 * gen
  std::vector<selfplay::GameRecord> records;  // in the order of the chunks
};

// `games` random games in chunks of 4; steps_per_generation 10, 30 steps 25 s apart, gates and
// self-play rows at 10, 20, 30 (generations 1 and 3 promoted). The rows' positions and games are
// made up (400 and 5 per step), as a finished run's rows lag its store: the page must take the
// store's.
inline TinyRun make_tiny_run(const std::filesystem::path& dir, const std::string& game,
                             int games) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  TinyRun run;
  run.dir = dir;
  const trainer::RunPaths paths{dir};
  {  // the tables through the run folder's own writer (trainer/run_folder.h)
    trainer::RunFolder folder(dir);
    folder.open_tables(false, "");
    double rating = 0;
    int best = 0;
    for (int step = 1; step <= 30; ++step) {
      const double seconds = 25.0 * step;
      const std::int64_t positions = 400 * step;
      folder.append_train({seconds, step, step / 10, positions, 5LL * step, 3.0 - step * 0.05,
                           1.0 - step * 0.01, 0.02});
      ++run.train_rows;
      if (step % 10 == 0) {
        trainer::GateRow g;
        g.generation = step / 10;
        g.promoted = g.generation != 2;
        g.elo = g.promoted ? 60.0 : -20.0;
        g.step = step;
        g.opponent_generation = best;
        if (g.promoted) rating += g.elo, best = g.generation;
        g.games = 8, g.wins = g.promoted ? 6 : 2, g.draws = 0, g.losses = g.promoted ? 2 : 6;
        g.elo_low = g.elo - 100, g.elo_high = g.elo + 100, g.llr = 0.5;
        g.verdict = "cap";
        g.seconds = seconds;
        g.rating = rating;
        folder.append_gate(g, positions, 5LL * step);
        ++run.gates;
        trainer::SelfplayRow sp;
        sp.seconds = seconds;
        sp.generation = g.generation;
        sp.positions = positions;
        sp.games = 5LL * step;
        sp.positions_per_second = 100.0 + 10.0 * g.generation;
        sp.evals_per_position = 50, sp.forward_busy = 0.9, sp.forward_rate = 8000;
        sp.mean_batch = 60, sp.bound = 160;
        folder.append_selfplay(sp);
        run.selfplay.push_back(sp);
      }
    }
  }
  std::ofstream(paths.config()) << "run:\n  game: " << game
                                << "\n  seed: 3\nnet:\n  blocks: 1\n  filters: 8\n"
                                   "training:\n  steps_per_generation: 10\n";
  // The chunks through the replay store's own writer, four games each.
  selfplay::FolderReplayStore store(paths.games().string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  std::vector<selfplay::GameRecord> chunk;
  for (int i = 0; i < games; ++i) {
    selfplay::GameRecord r = random_record(game, 1000 + static_cast<std::uint64_t>(i));
    r.network_step = 10 * (i % 3);
    chunk.push_back(r);
    run.records.push_back(r);
    if (chunk.size() == 4 || i + 1 == games) {
      store.append(chunk);
      chunk.clear();
    }
  }
  run.games = games;
  const Game& g = game_by_name(game);
  const model::NetConfig net = model::NetConfig::sized(1, 8);
  for (int generation = 0; generation <= 3; ++generation)
    model::save_checkpoint(model::random_checkpoint(g, net, 7), paths.candidate(generation).string());
  model::save_checkpoint(model::random_checkpoint(g, net, 8), paths.best().string());
  return run;
}

// Continues a tiny run as `train` does when it is started again: a second session, whose clock
// starts at 0 (rows at 5 s apart), trains steps 31 to 40 (generation 4 gated, not promoted, and
// its self-play row at 150 positions/s) and stores `games` more games in chunks of 4.
inline void resume_tiny_run(TinyRun& run, int games) {
  const trainer::RunPaths paths{run.dir};
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    for (int step = 31; step <= 40; ++step) {
      const double seconds = 5.0 * (step - 30);
      folder.append_train({seconds, step, step / 10, 400LL * step, 5LL * step, 1.5, 0.6, 0.02});
      ++run.train_rows;
    }
    trainer::GateRow g;
    g.generation = 4, g.step = 40, g.opponent_generation = 3, g.promoted = false;
    g.games = 8, g.wins = 3, g.draws = 1, g.losses = 4;
    g.elo = -43.7, g.elo_low = -200, g.elo_high = 110, g.llr = -0.2, g.verdict = "cap";
    g.seconds = 50, g.rating = folder.rating();
    folder.append_gate(g, 16000, 200);
    ++run.gates;
    trainer::SelfplayRow sp;
    sp.seconds = 50, sp.generation = 4, sp.positions = 16000, sp.games = 200;
    sp.positions_per_second = 150, sp.evals_per_position = 50, sp.forward_busy = 0.9;
    sp.forward_rate = 8000, sp.mean_batch = 60, sp.bound = 160;
    folder.append_selfplay(sp);
    run.selfplay.push_back(sp);
  }
  selfplay::FolderReplayStore store(paths.games().string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  std::vector<selfplay::GameRecord> chunk;
  for (int i = 0; i < games; ++i) {
    selfplay::GameRecord r =
        random_record(run.records.front().game, 5000 + static_cast<std::uint64_t>(i));
    r.network_step = 30;
    chunk.push_back(r);
    run.records.push_back(r);
    if (chunk.size() == 4 || i + 1 == games) {
      store.append(chunk);
      chunk.clear();
    }
  }
  run.games += games;
}

}  // namespace oppidum::test_util
