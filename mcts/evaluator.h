// The evaluator seam between search and whatever judges positions (a network behind a batching
// inference server, random rollouts, a uniform fake for tests). Search hands over a batch of
// positions, each with its legal actions, and gets back for each one a value and a prior over those
// actions. Implementations must be thread-safe: many search threads call `evaluate` at once.
//
// Contract of `evaluate(requests, n, results)`:
// - `requests[i].state` is a non-terminal position and `*requests[i].legal` its legal actions in
//   the order of GameState::legal_actions (non-empty); both stay valid until `evaluate` returns.
// - It writes `results[0..n)`: `value` in [-1, 1] for the side to move of the position, and
//   `priors` with one entry per legal action, aligned with `*legal`, non-negative, summing to 1.
// - It blocks until every result is written; n may be 0.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "games/game.h"

namespace oppidum::mcts {

struct EvalRequest {
  const GameState* state = nullptr;
  const ActionList* legal = nullptr;  // the state's legal actions, non-empty
  // When the search that asks must be done (a timed search's deadline; max: none). An evaluator
  // whose work on a position can stop early (the rollout evaluator's playouts after the first)
  // does none of it past this time; the others need not look.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct EvalResult {
  float value = 0.0f;         // in [-1, 1], for the side to move
  std::vector<float> priors;  // aligned with *legal, sums to 1
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Evaluates n positions as one batch; thread-safe; blocks until all results are written.
  virtual void evaluate(const EvalRequest* requests, int n, EvalResult* results) = 0;
  // One line for logs and reports, e.g. "uniform" or "rollout(k=4)".
  virtual std::string describe() const = 0;
};

// Value 0 and uniform priors everywhere: the fake evaluator of tests and benchmarks, and with
// enough visits a plain minimax-like search that still finds forced wins through proven results.
class UniformEvaluator final : public Evaluator {
 public:
  void evaluate(const EvalRequest* requests, int n, EvalResult* results) override;
  std::string describe() const override { return "uniform"; }
};

// Fills `priors` with 1/size uniform priors for `legal` (helper for evaluators).
void set_uniform_priors(const ActionList& legal, std::vector<float>& priors);

}  // namespace oppidum::mcts
