// Helpers for the model tests: seeded non-terminal positions with their legal actions, random
// input planes, and a temporary folder for checkpoint files.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "games/game.h"
#include "games/playout.h"
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
    Position pos;
    pos.state = random_position(game, rng, 60, pos.legal);
    if (pos.legal.empty()) continue;
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

// The 2x8 network of the inference-server tests (policy 4, value 2/16): fast to evaluate.
inline NetConfig tiny_config() {
  NetConfig c = NetConfig::sized(2, 8);
  c.policy_channels = 4;
  c.value_channels = 2;
  c.value_hidden = 16;
  return c;
}

inline std::vector<mcts::EvalRequest> requests_for(const std::vector<Position>& positions) {
  std::vector<mcts::EvalRequest> r;
  for (const Position& p : positions) r.push_back({p.state.get(), &p.legal});
  return r;
}

// The requests of positions[first, first + n).
inline std::vector<mcts::EvalRequest> requests_for(const std::vector<Position>& positions,
                                                   int first, int n) {
  std::vector<mcts::EvalRequest> r;
  for (int i = first; i < first + n; ++i) r.push_back({positions[i].state.get(), &positions[i].legal});
  return r;
}

// Priors and value equal within `tolerance`.
inline bool same_result(const mcts::EvalResult& a, const mcts::EvalResult& b,
                        float tolerance = 1e-5f) {
  if (a.priors.size() != b.priors.size() || std::abs(a.value - b.value) > tolerance) return false;
  for (std::size_t i = 0; i < a.priors.size(); ++i)
    if (std::abs(a.priors[i] - b.priors[i]) > tolerance) return false;
  return true;
}

// Four threads keep evaluating overlapping slices of 4 of `positions` (at least 32) through
// `server` while the weights change: `swap` runs once 50 calls have returned, `after_swap` (if
// any) once 50 calls that started after the swap have returned; then the threads stop. Counts the
// results that are neither A's nor B's, and the A results of calls that started after `swap`.
struct SwapUnderLoad {
  int invalid = 0;
  int old_after_swap = 0;
};
template <class Server>
SwapUnderLoad evaluate_through_swap(Server& server, const std::vector<Position>& positions,
                                    const std::vector<mcts::EvalResult>& expect_a,
                                    const std::vector<mcts::EvalResult>& expect_b,
                                    float tolerance, const std::function<void()>& swap,
                                    const std::function<void()>& after_swap = {}) {
  std::atomic<bool> swapped{false}, finish{false};
  std::atomic<int> invalid{0}, old_after_swap{0}, after{0}, before{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      int round = 0;
      while (!finish.load()) {
        const bool swap_done = swapped.load();  // read before the call starts
        const int first = (t * 8 + round++) % 28;
        const auto requests = requests_for(positions, first, 4);
        std::vector<mcts::EvalResult> results(4);
        server.evaluate(requests.data(), 4, results.data());
        for (int i = 0; i < 4; ++i) {
          const bool is_a = same_result(results[i], expect_a[first + i], tolerance);
          const bool is_b = same_result(results[i], expect_b[first + i], tolerance);
          if (!is_a && !is_b) ++invalid;
          if (swap_done && !is_b) ++old_after_swap;
        }
        ++(swap_done ? after : before);
      }
    });
  while (before.load() < 50) std::this_thread::yield();
  swap();
  swapped = true;
  while (after.load() < 50) std::this_thread::yield();
  if (after_swap) after_swap();
  finish = true;
  for (auto& th : threads) th.join();
  return {invalid.load(), old_after_swap.load()};
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
