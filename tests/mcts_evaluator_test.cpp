// The evaluators of mcts/: uniform and random rollouts.
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "games/dvonn/game.h"
#include "games/mg/game.h"
#include "mcts/evaluator.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/search.h"
#include "tests/mcts_test_util.h"

namespace oppidum::mcts {
namespace {

// `count` distinct positions (by hash) along seeded random games.
std::vector<std::unique_ptr<GameState>> positions(const Game& game, int count, std::uint64_t seed) {
  std::vector<std::unique_ptr<GameState>> out;
  std::set<std::uint64_t> seen;
  Rng rng(seed);
  while (static_cast<int>(out.size()) < count) {
    auto state = game.initial_state();
    ActionList legal;
    for (;;) {
      state->legal_actions(legal);
      if (legal.empty() || static_cast<int>(out.size()) == count) break;
      if (seen.insert(state->hash()).second) out.push_back(state->clone());
      state->apply(legal[rng.uniform_int(legal.size())]);
    }
  }
  return out;
}

struct Batch {
  std::vector<ActionList> legal;
  std::vector<EvalRequest> requests;
  std::vector<EvalResult> results;
};

Batch make_batch(const std::vector<std::unique_ptr<GameState>>& states) {
  Batch b;
  b.legal.resize(states.size());
  b.results.resize(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) states[i]->legal_actions(b.legal[i]);
  for (std::size_t i = 0; i < states.size(); ++i) b.requests.push_back({states[i].get(), &b.legal[i]});
  return b;
}

void evaluate(Evaluator& evaluator, Batch& b) {
  evaluator.evaluate(b.requests.data(), static_cast<int>(b.requests.size()), b.results.data());
}

TEST(EvaluatorTest, UniformGivesZeroAndUniformPriors) {
  const auto states = positions(mg::mg_game(), 10, 1);
  Batch b = make_batch(states);
  UniformEvaluator uniform;
  evaluate(uniform, b);
  for (std::size_t i = 0; i < states.size(); ++i) {
    EXPECT_EQ(b.results[i].value, 0.0f);
    ASSERT_EQ(b.results[i].priors.size(), static_cast<std::size_t>(b.legal[i].size()));
    for (float p : b.results[i].priors) EXPECT_FLOAT_EQ(p, 1.0f / b.legal[i].size());
  }
}

TEST(EvaluatorTest, RolloutValuesAreResultsInRange) {
  for (const Game* game : {&mg::mg_game(), &dvonn::dvonn_game()}) {
    const auto states = positions(*game, 20, 2);
    Batch b = make_batch(states);
    RolloutEvaluator rollouts(5, 3);
    evaluate(rollouts, b);
    for (std::size_t i = 0; i < states.size(); ++i) {
      EXPECT_GE(b.results[i].value, -1.0f);
      EXPECT_LE(b.results[i].value, 1.0f);
      const float sum = std::accumulate(b.results[i].priors.begin(), b.results[i].priors.end(), 0.0f);
      EXPECT_NEAR(sum, 1.0f, 1e-5f);
    }
  }
}

TEST(EvaluatorTest, RolloutFavoursTheSideWithAWinInOne) {
  // Light's c5 tower wins with c5-c7; random play often finds it before Dark gets anywhere.
  const auto state =
      mg::mg_game().parse_state("t......./......../..T...../......../......../......../T....... L");
  ASSERT_FALSE(test_util::winning_moves(*state).empty());
  std::vector<std::unique_ptr<GameState>> one;
  one.push_back(state->clone());
  Batch b = make_batch(one);
  RolloutEvaluator rollouts(11, 200);
  evaluate(rollouts, b);
  EXPECT_GT(b.results[0].value, 0.2f);
}

TEST(EvaluatorTest, RolloutIsReproducibleAndThreadSafe) {
  const auto states = positions(mg::mg_game(), 16, 3);
  Batch a = make_batch(states), b = make_batch(states);
  RolloutEvaluator first(21, 2), second(21, 2);
  evaluate(first, a);
  evaluate(second, b);
  for (std::size_t i = 0; i < states.size(); ++i) EXPECT_EQ(a.results[i].value, b.results[i].value);

  RolloutEvaluator shared(22, 1);
  std::vector<std::thread> threads;
  std::vector<Batch> batches;
  for (int t = 0; t < 4; ++t) batches.push_back(make_batch(states));
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { evaluate(shared, batches[t]); });
  for (auto& th : threads) th.join();
  for (const Batch& batch : batches)
    for (const EvalResult& r : batch.results) EXPECT_LE(std::abs(r.value), 1.0f);
  EXPECT_THROW(RolloutEvaluator(1, 0), std::invalid_argument);
}

TEST(EvaluatorTest, RolloutsPastTheDeadlineStopAfterTheFirstPlayout) {
  // A timed search with many rollouts a leaf overran its clock by a whole leaf's playouts: past
  // the request's deadline only the first playout is played, the one a single rollout plays.
  const auto states = positions(mg::mg_game(), 6, 4);
  Batch late = make_batch(states), single = make_batch(states), all = make_batch(states);
  for (EvalRequest& r : late.requests)
    r.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  RolloutEvaluator cut(31, 1000), one(31, 1), every(31, 1000);
  for (std::size_t i = 0; i < states.size(); ++i) {  // request i: playout seeds from the same base
    cut.evaluate(&late.requests[i], 1, &late.results[i]);
    one.evaluate(&single.requests[i], 1, &single.results[i]);
  }
  evaluate(every, all);
  int averaged = 0;
  for (std::size_t i = 0; i < states.size(); ++i) {
    EXPECT_TRUE(late.results[i].value == -1.0f || late.results[i].value == 0.0f ||
                late.results[i].value == 1.0f)
        << late.results[i].value;
    if (i == 0) {
      EXPECT_EQ(late.results[i].value, single.results[i].value);
    }
    // Without a deadline all 1000 are played: a mean, rarely a single result.
    averaged += all.results[i].value != -1.0f && all.results[i].value != 1.0f &&
                all.results[i].value != 0.0f;
  }
  EXPECT_GT(averaged, 0);
}

}  // namespace
}  // namespace oppidum::mcts
