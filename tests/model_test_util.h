// Helpers for the model tests: seeded non-terminal positions with their legal actions, random
// input planes, and a temporary folder for checkpoint files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "model/net_config.h"

namespace oppidum::model::test_util {

struct Position {
  std::unique_ptr<GameState> state;
  ActionList legal;
};

// `count` non-terminal positions from seeded random games (a random number of plies into each).
inline std::vector<Position> random_positions(const Game& game, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Position> out;
  while (static_cast<int>(out.size()) < count) {
    auto state = game.initial_state();
    const int plies = static_cast<int>(rng() % 60);
    ActionList legal;
    for (int p = 0; p < plies; ++p) {
      state->legal_actions(legal);
      if (legal.empty()) break;
      state->apply(legal[static_cast<int>(rng() % static_cast<unsigned>(legal.size()))]);
    }
    Position pos;
    state->legal_actions(pos.legal);
    if (pos.legal.empty()) continue;
    pos.state = std::move(state);
    out.push_back(std::move(pos));
  }
  return out;
}

// A small network of `blocks` x `filters` with narrow heads (policy 4, value 3/24).
inline NetConfig test_config(int blocks, int filters, bool pooling) {
  NetConfig c = NetConfig::sized(blocks, filters);
  c.policy_channels = 4;
  c.value_channels = 3;
  c.value_hidden = 24;
  c.global_pooling = pooling;
  return c;
}

inline std::vector<mcts::EvalRequest> requests_for(const std::vector<Position>& positions) {
  std::vector<mcts::EvalRequest> r;
  for (const Position& p : positions) r.push_back({p.state.get(), &p.legal});
  return r;
}

inline std::vector<float> random_planes(const Game& game, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 2.0f);
  std::vector<float> planes(static_cast<std::size_t>(n) *
                            static_cast<std::size_t>(game.input_shape().size()));
  for (float& v : planes) v = u(rng);
  return planes;
}

// A fresh folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("oppidum_" + tag + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace oppidum::model::test_util
