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
#include "tests/record_test_util.h"

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
  fs::create_directories(dir / "games");
  fs::create_directories(dir / "checkpoints");
  TinyRun run;
  run.dir = dir;
  std::ofstream(dir / "config.yaml") << "run:\n  game: " << game
                                     << "\n  seed: 3\nnet:\n  blocks: 1\n  filters: 8\n"
                                        "training:\n  steps_per_generation: 10\n";
  std::ofstream metrics(dir / "metrics.csv");
  metrics << "kind,seconds,step,generation,positions,games,policy_loss,value_loss,learning_rate,"
             "gate_elo,promoted,best_elo,gate_games,anchor_score,anchor_elo,node,"
             "games_per_second,nodes,stream_lag,stream_evicted\n";
  std::ofstream arena(dir / "arena.csv");
  arena << "generation,step,opponent_generation,games,wins,draws,losses,elo,elo_low,elo_high,llr,"
           "verdict,promoted,seconds,rating,anchor,anchor_games,anchor_score,anchor_elo,"
           "anchor_elo_low,anchor_elo_high\n";
  double rating = 0;
  int best = 0;
  for (int step = 1; step <= 30; ++step) {
    const double seconds = 25.0 * step, positions = 400.0 * step;
    metrics << "train," << seconds << "," << step << "," << step / 10 << "," << positions << ","
            << 5 * step << "," << 3.0 - step * 0.05 << "," << 1.0 - step * 0.01
            << ",0.02,,,,,,,,,,,\n";
    ++run.train_rows;
    if (step % 10 == 0) {
      const int generation = step / 10;
      const bool promoted = generation != 2;
      const double elo = promoted ? 60.0 : -20.0;
      const int opponent = best;
      if (promoted) rating += elo, best = generation;
      metrics << "gate," << seconds << "," << step << "," << generation << "," << positions << ","
              << 5 * step << ",,,," << elo << "," << promoted << "," << rating << ",8,,,,,,,\n";
      arena << generation << "," << step << "," << opponent << ",8,"
            << (promoted ? 6 : 2) << ",0," << (promoted ? 2 : 6) << "," << elo << ","
            << elo - 100 << "," << elo + 100 << ",0.5,cap," << promoted << "," << seconds << ","
            << rating << ",,,,,,\n";
      ++run.gates;
    }
  }
  std::vector<selfplay::GameRecord> chunk;
  int number = 0;
  for (int i = 0; i < games; ++i) {
    selfplay::GameRecord r = random_record(game, 1000 + static_cast<std::uint64_t>(i));
    r.network_step = 10 * (i % 3);
    chunk.push_back(r);
    run.records.push_back(r);
    if (chunk.size() == 4 || i + 1 == games) {
      char name[32];
      std::snprintf(name, sizeof name, "chunk-%08d.bin", number++);
      selfplay::write_game_file((dir / "games" / name).string(), chunk);
      chunk.clear();
    }
  }
  run.games = games;
  const Game& g = game_by_name(game);
  const model::NetConfig net = model::NetConfig::sized(1, 8);
  for (const char* name : {"gen-0000", "gen-0001", "gen-0002", "gen-0003", "best"})
    model::save_checkpoint(model::random_checkpoint(g, net, name[4] == '0' ? 7 : 8),
                           (dir / "checkpoints" / (std::string(name) + ".ckpt")).string());
  return run;
}

}  // namespace oppidum::test_util
