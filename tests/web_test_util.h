// A tiny run folder for the web tests, made without training: config.yaml, metrics.csv and
// arena.csv rows of three generations, chunks of random self-play games (networks of generations
// 0, 1 and 2) and random-weight checkpoints, in the layout of trainer/run_folder.h.
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
  std::vector<selfplay::GameRecord> records;  // in the order of the chunks
};

// `games` random games in chunks of 4; steps_per_generation 10, 30 steps, gates at 10, 20, 30
// (generations 1 and 3 promoted).
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

}  // namespace oppidum::test_util
