#include "mcts/rollout_evaluator.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "mcts/rng.h"
#include "mcts/seed.h"

namespace oppidum::mcts {

RolloutEvaluator::RolloutEvaluator(std::uint64_t seed, int rollouts, int max_plies)
    : seed_(seed), rollouts_(rollouts), max_plies_(max_plies) {
  if (rollouts < 1)
    throw std::invalid_argument("RolloutEvaluator: rollouts must be at least 1, not " +
                                std::to_string(rollouts));
  if (max_plies < 0)
    throw std::invalid_argument("RolloutEvaluator: max_plies must be 0 (the game's bound) or more, "
                                "not " + std::to_string(max_plies));
}

std::string RolloutEvaluator::describe() const {
  return "rollout(k=" + std::to_string(rollouts_) + ")";
}

double RolloutEvaluator::playout(const GameState& state, std::uint64_t seed) const {
  Rng rng(seed);
  const int player = state.current_player();
  const int limit = max_plies_ > 0 ? max_plies_ : state.game().max_game_length();
  auto game = state.clone();
  ActionList legal;
  for (int ply = 0; ply < limit; ++ply) {
    game->legal_actions(legal);
    if (legal.empty()) return game->result(player);
    game->apply(legal[rng.uniform_int(legal.size())]);
  }
  return game->is_terminal() ? game->result(player) : 0.0;
}

void RolloutEvaluator::evaluate(const EvalRequest* requests, int n, EvalResult* results) {
  if (n <= 0) return;
  const std::uint64_t first = next_request_.fetch_add(static_cast<std::uint64_t>(n));
  for (int i = 0; i < n; ++i) {
    const std::uint64_t request = first + static_cast<std::uint64_t>(i);
    double sum = 0.0;
    int played = 0;
    // At least one playout; no more once the request's deadline has passed (a timed search
    // with many rollouts a leaf overran a short clock by a whole leaf's playouts).
    const bool timed = requests[i].deadline != std::chrono::steady_clock::time_point::max();
    while (played < rollouts_ &&
           (played == 0 || !timed || std::chrono::steady_clock::now() < requests[i].deadline)) {
      sum += playout(*requests[i].state,
                     derive_seed(seed_, kRolloutStream,
                                 request * static_cast<std::uint64_t>(rollouts_) +
                                     static_cast<std::uint64_t>(played)));
      ++played;
    }
    results[i].value = static_cast<float>(std::clamp(sum / played, -1.0, 1.0));
    set_uniform_priors(*requests[i].legal, results[i].priors);
  }
}

}  // namespace oppidum::mcts
