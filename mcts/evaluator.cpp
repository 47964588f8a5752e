#include "mcts/evaluator.h"

namespace oppidum::mcts {

void set_uniform_priors(const ActionList& legal, std::vector<float>& priors) {
  const int n = legal.size();
  priors.assign(static_cast<std::size_t>(n), n > 0 ? 1.0f / static_cast<float>(n) : 0.0f);
}

void UniformEvaluator::evaluate(const EvalRequest* requests, int n, EvalResult* results) {
  for (int i = 0; i < n; ++i) {
    results[i].value = 0.0f;
    set_uniform_priors(*requests[i].legal, results[i].priors);
  }
}

}  // namespace oppidum::mcts
