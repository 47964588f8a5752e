// Helpers for the search tests: which moves win at once, which moves let the opponent win at once,
// seeded random positions that have a given property (all through the game contract, so they work
// for every game), and a deterministic stand-in for a network (HashEvaluator).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/rng.h"

namespace oppidum::mcts::test_util {

inline std::vector<Action> legal_vector(const GameState& state) {
  ActionList legal;
  state.legal_actions(legal);
  return {legal.begin(), legal.end()};
}

inline std::unique_ptr<GameState> after(const GameState& state, Action action) {
  auto next = state.clone();
  next->apply(action);
  return next;
}

// True when playing `action` ends the game at once with the mover winning.
inline bool wins_at_once(const GameState& state, Action action) {
  const auto next = after(state, action);
  return next->is_terminal() && next->result(state.current_player()) > 0;
}

// True when, after `action`, `player` has lost or the side to move then can end the game at once
// with `player` losing.
inline bool loses_at_once(const GameState& state, Action action) {
  const int player = state.current_player();
  const auto next = after(state, action);
  if (next->is_terminal()) return next->result(player) < 0;
  for (Action reply : legal_vector(*next)) {
    const auto last = after(*next, reply);
    if (last->is_terminal() && last->result(player) < 0) return true;
  }
  return false;
}

inline std::vector<Action> winning_moves(const GameState& state) {
  std::vector<Action> out;
  for (Action a : legal_vector(state))
    if (wins_at_once(state, a)) out.push_back(a);
  return out;
}

inline std::vector<Action> safe_moves(const GameState& state) {
  std::vector<Action> out;
  for (Action a : legal_vector(state))
    if (!loses_at_once(state, a)) out.push_back(a);
  return out;
}

// Up to `count` positions met in seeded uniformly random games from the initial position (one per
// game at most) for which `keep(state)` holds.
template <class Keep>
std::vector<std::unique_ptr<GameState>> find_positions(const Game& game, std::uint64_t seed,
                                                       int count, int max_games, Keep keep) {
  std::vector<std::unique_ptr<GameState>> found;
  Rng rng(seed);
  for (int g = 0; g < max_games && static_cast<int>(found.size()) < count; ++g) {
    auto state = game.initial_state();
    ActionList legal;
    for (int ply = 0; ply < game.max_game_length(); ++ply) {
      state->legal_actions(legal);
      if (legal.empty()) break;
      if (keep(*state)) {
        found.push_back(state->clone());
        break;
      }
      state->apply(legal[rng.uniform_int(legal.size())]);
    }
  }
  return found;
}

// A deterministic stand-in for a network: the value and priors are functions of the position's
// hash, and it records the batch sizes it was called with.
class HashEvaluator final : public Evaluator {
 public:
  void evaluate(const EvalRequest* requests, int n, EvalResult* results) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      batches_.push_back(n);
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t h = requests[i].state->hash();
      results[i].value = static_cast<float>(static_cast<double>(h % 2001) / 1000.0 - 1.0);
      const int size = requests[i].legal->size();
      results[i].priors.resize(static_cast<std::size_t>(size));
      float sum = 0.0f;
      for (int k = 0; k < size; ++k)
        sum += results[i].priors[static_cast<std::size_t>(k)] =
            1.0f + static_cast<float>((h >> (k % 60)) & 7);
      for (float& p : results[i].priors) p /= sum;
    }
  }
  std::string describe() const override { return "hash"; }
  std::vector<int> batches() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return batches_;
  }
  int positions() const {
    const auto b = batches();
    return std::accumulate(b.begin(), b.end(), 0);
  }

 private:
  mutable std::mutex mutex_;
  std::vector<int> batches_;
};

}  // namespace oppidum::mcts::test_util
