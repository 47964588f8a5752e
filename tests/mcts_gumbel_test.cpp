// The Gumbel root search (mcts/search.h): the sequential-halving schedule, the improved policy
// recomputed from the tree by the paper's formula, visits spread by halving, targets over legal
// actions only, proven wins, tree reuse and determinism.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/dvonn/game.h"
#include "games/mg/game.h"
#include "mcts/evaluator.h"
#include "mcts/search.h"
#include "tests/mcts_test_util.h"

namespace oppidum::mcts {
namespace {

using test_util::HashEvaluator;

SearchConfig gumbel_config(std::uint64_t seed = 1, bool noise = true) {
  SearchConfig c;
  c.root = RootPolicy::kGumbel;
  c.gumbel_noise = noise;
  c.dirichlet_weight = 0.25f;  // must be ignored by the Gumbel root
  c.temperature = 1.0f;        // likewise
  c.seed = seed;
  return c;
}

TEST(GumbelTest, ScheduleFollowsSequentialHalving) {
  // 16 simulations over 4 actions: two phases; each of the 4 gets 2 visits, then the best 2 get 4
  // more each.
  EXPECT_EQ(sequential_halving_schedule(4, 16),
            (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  // 50 over 16: four phases of floor(50 / (r * 4)) visits (at least 1) for r = 16, 8, 4, 2 actions
  // (16 + 8 + 12 + 12 = 48 simulations), then the last 2 share what is left.
  std::vector<int> expected(16, 0);
  expected.insert(expected.end(), 8, 1);
  for (int v = 2; v <= 4; ++v) expected.insert(expected.end(), 4, v);
  for (int v = 5; v <= 11; ++v) expected.insert(expected.end(), 2, v);
  expected.resize(50);
  EXPECT_EQ(sequential_halving_schedule(16, 50), expected);
  // One action takes every simulation; fewer simulations than actions stop in the first phase.
  EXPECT_EQ(sequential_halving_schedule(1, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sequential_halving_schedule(8, 5), (std::vector<int>{0, 0, 0, 0, 0}));
  // For any size: the budget is exact, it starts at 0, and the considered counts never decrease.
  for (int m : {2, 3, 5, 16, 32})
    for (int n : {1, 7, 16, 64, 200}) {
      const auto s = sequential_halving_schedule(m, n);
      ASSERT_EQ(static_cast<int>(s.size()), n) << m << " " << n;
      EXPECT_EQ(s.front(), 0);
      EXPECT_TRUE(std::is_sorted(s.begin(), s.end())) << m << " " << n;
    }
}

TEST(GumbelTest, ImprovedPolicyIsTheCompletedQFormulaOnTheTree) {
  for (const Game* game : {&mg::mg_game(), &dvonn::dvonn_game()}) {
    auto state = game->initial_state();
    if (game == &dvonn::dvonn_game())  // a position of the movement phase
      for (int i = 0; i < 49; ++i) {
        ActionList legal;
        state->legal_actions(legal);
        state->apply(legal[static_cast<int>((i * 7) % legal.size())]);
      }
    HashEvaluator net;
    SearchTree tree(*state, gumbel_config());
    // The root's evaluation comes first: remember its value (the network's v of the formula).
    tree.start_search(24);
    const PendingLeaf* leaf = tree.select_leaf();
    ASSERT_NE(leaf, nullptr);
    EvalResult root_eval;
    const EvalRequest request = leaf->request();
    net.evaluate(&request, 1, &root_eval);
    tree.receive(root_eval);
    while ((leaf = tree.select_leaf()) != nullptr) {
      EvalResult e;
      const EvalRequest r = leaf->request();
      net.evaluate(&r, 1, &e);
      tree.receive(e);
    }
    const SearchResult result = tree.result();
    ASSERT_TRUE(result.improved_policy);

    // The paper's formula, from the tree's statistics.
    const std::vector<ChildStats> children = tree.children();
    double n_sum = 0, p_visited = 0, pq = 0;
    int n_max = 0;
    for (const ChildStats& c : children) {
      n_max = std::max(n_max, c.visits);
      if (c.visits == 0) continue;
      n_sum += c.visits;
      p_visited += c.prior;
      pq += c.prior * c.value;
    }
    ASSERT_GT(n_sum, 0);
    const double v_mix = (root_eval.value + n_sum * pq / p_visited) / (n_sum + 1);
    std::vector<double> q;
    for (const ChildStats& c : children) q.push_back(c.visits > 0 ? c.value : v_mix);
    const double lo = *std::min_element(q.begin(), q.end());
    const double hi = *std::max_element(q.begin(), q.end());
    ASSERT_GT(hi - lo, 1e-6);
    std::vector<double> logits;
    double top = -1e300;
    for (std::size_t i = 0; i < q.size(); ++i) {
      const double sigma = (50.0 + n_max) * 1.0 * (q[i] - lo) / (hi - lo);
      logits.push_back(std::log(children[i].prior) + sigma);
      top = std::max(top, logits.back());
    }
    double z = 0;
    for (double& l : logits) z += l = std::exp(l - top);
    ASSERT_EQ(result.policy.size(), children.size());
    for (std::size_t i = 0; i < children.size(); ++i)
      EXPECT_NEAR(result.policy[i], logits[i] / z, 1e-5) << game->name() << " child " << i;
    // A distribution over the legal actions, in legal_actions order.
    ActionList legal;
    state->legal_actions(legal);
    ASSERT_EQ(result.legal.size(), legal.size());
    for (int i = 0; i < legal.size(); ++i) EXPECT_EQ(result.legal[i], legal[i]);
    EXPECT_NEAR(std::accumulate(result.policy.begin(), result.policy.end(), 0.0), 1.0, 1e-5);
    for (float p : result.policy) EXPECT_GE(p, 0.0f);
  }
}

TEST(GumbelTest, HalvingSpreadsTheVisits) {
  // 16 simulations over 4 considered actions: four actions get 2 visits, then two of them 4 more.
  const auto state = mg::mg_game().initial_state();
  UniformEvaluator uniform;
  SearchConfig config = gumbel_config(7);
  config.gumbel_considered = 4;
  SearchTree tree(*state, config);
  const SearchResult r = tree.run(uniform, 16);
  std::multiset<int> nonzero;
  for (int v : r.search_visits)
    if (v > 0) nonzero.insert(v);
  EXPECT_EQ(nonzero, (std::multiset<int>{2, 2, 6, 6}));
  EXPECT_EQ(r.simulations, 16);
  // The move is one of the two most visited.
  const auto chosen = std::find(r.legal.begin(), r.legal.end(), r.action) - r.legal.begin();
  EXPECT_EQ(r.search_visits[static_cast<std::size_t>(chosen)], 6);
  // No temperature: the choice is certain.
  EXPECT_FLOAT_EQ(r.sampling[static_cast<std::size_t>(chosen)], 1.0f);
}

TEST(GumbelTest, TheGumbelDrawsPickTheConsideredActions) {
  // With uniform priors the first considered actions are the Gumbel-top-m: different seeds pick
  // different sets, the same seed the same set.
  const auto state = mg::mg_game().initial_state();
  UniformEvaluator uniform;
  auto considered = [&](std::uint64_t seed) {
    SearchConfig config = gumbel_config(seed);
    config.gumbel_considered = 4;
    SearchTree tree(*state, config);
    const SearchResult r = tree.run(uniform, 4);
    std::set<Action> s;
    for (int i = 0; i < r.legal.size(); ++i)
      if (r.search_visits[static_cast<std::size_t>(i)] > 0) s.insert(r.legal[i]);
    return s;
  };
  EXPECT_EQ(considered(1).size(), 4u);
  EXPECT_EQ(considered(1), considered(1));
  std::set<std::set<Action>> seen;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) seen.insert(considered(seed));
  EXPECT_GT(seen.size(), 3u);
  // Without noise the draw is the priors' order: with uniform priors, the same set every time.
  SearchConfig quiet = gumbel_config(1, false);
  quiet.gumbel_considered = 4;
  SearchConfig quiet2 = gumbel_config(2, false);
  quiet2.gumbel_considered = 4;
  SearchTree a(*state, quiet), b(*state, quiet2);
  EXPECT_EQ(a.run(uniform, 4).search_visits, b.run(uniform, 4).search_visits);
}

TEST(GumbelTest, TakesAProvenWin) {
  // Light's tower on c5 reaches row 7 with c5-c7 or c5-e7.
  const auto state = mg::mg_game().parse_state(
      "t......./......../..T...../......../......../......../T....... L");
  const std::set<Action> wins = {state->parse_action("c5-c7"), state->parse_action("c5-e7")};
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    HashEvaluator net;
    SearchTree tree(*state, gumbel_config(seed));  // every move is considered
    const SearchResult r = tree.run(net, 64);
    EXPECT_TRUE(wins.count(r.action)) << "seed " << seed << ": " << state->action_to_string(r.action);
    EXPECT_EQ(r.proven, Proven::kWin);
  }
}

TEST(GumbelTest, ReusedTreeCountsOnlyThisSearch) {
  const auto state = mg::mg_game().initial_state();
  HashEvaluator net;
  SearchTree tree(*state, gumbel_config(3));
  const SearchResult first = tree.run(net, 64);
  tree.advance(first.action);
  const SearchResult second = tree.run(net, 32);
  EXPECT_EQ(std::accumulate(second.search_visits.begin(), second.search_visits.end(), 0), 32);
  EXPECT_GE(std::accumulate(second.visits.begin(), second.visits.end(), 0), 32);
  EXPECT_EQ(second.simulations, 32);
}

TEST(GumbelTest, SameSeedSameSearch) {
  const auto state = dvonn::dvonn_game().initial_state();
  HashEvaluator a, b;
  SearchTree one(*state, gumbel_config(11)), two(*state, gumbel_config(11));
  const SearchResult r1 = one.run(a, 40), r2 = two.run(b, 40);
  EXPECT_EQ(r1.search_visits, r2.search_visits);
  EXPECT_EQ(r1.policy, r2.policy);
  EXPECT_EQ(r1.action, r2.action);
}

TEST(GumbelTest, RootPolicyNames) {
  EXPECT_EQ(root_policy_from_string("gumbel"), RootPolicy::kGumbel);
  EXPECT_EQ(root_policy_from_string("puct"), RootPolicy::kPuct);
  EXPECT_STREQ(to_string(RootPolicy::kGumbel), "gumbel");
  EXPECT_THROW(root_policy_from_string("Gumbel"), std::invalid_argument);
  SearchConfig bad = gumbel_config();
  bad.gumbel_considered = 1;
  EXPECT_THROW(bad.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace oppidum::mcts
