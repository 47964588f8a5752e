// Evaluates a position by uniformly random playouts to the end of the game: the value is the mean
// result of `rollouts` playouts for the side to move at the position (a playout cut off at the ply
// limit counts as a draw; past the request's deadline no more playouts than the first are
// played, and the value is the mean of those played); priors are uniform. This is the classic UCT
// baseline of the arena and a network-free evaluator for search tests.
//
// Randomness: every request takes the next number of an atomic counter, and its playouts are
// seeded by derive_seed(seed, kRolloutStream, number * rollouts + k). So a single thread calling
// `evaluate` repeatedly gets the same values for the same seed, and concurrent callers are safe
// (their interleaving only decides which numbers each gets).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "mcts/evaluator.h"

namespace oppidum::mcts {

class RolloutEvaluator final : public Evaluator {
 public:
  // rollouts >= 1 playouts per position; a playout stops as a draw after `max_plies` actions
  // (0: the game's max_game_length()). Throws std::invalid_argument for rollouts < 1 or
  // max_plies < 0.
  explicit RolloutEvaluator(std::uint64_t seed, int rollouts = 1, int max_plies = 0);

  void evaluate(const EvalRequest* requests, int n, EvalResult* results) override;
  std::string describe() const override;

 private:
  // Result of one random playout from `state`, for the side to move at `state`.
  double playout(const GameState& state, std::uint64_t seed) const;

  std::uint64_t seed_;
  int rollouts_;
  int max_plies_;
  std::atomic<std::uint64_t> next_request_{0};
};

}  // namespace oppidum::mcts
