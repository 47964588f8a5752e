// PUCT search: forced wins and defences found in both games, visit accounting, proven results,
// tree reuse, root noise, determinism, and value orientation in a game where the side to move does
// not always alternate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/dvonn/game.h"
#include "games/mg/game.h"
#include "games/registry.h"
#include "mcts/evaluator.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/search.h"
#include "tests/mcts_test_util.h"

namespace oppidum::mcts {
namespace {

using test_util::legal_vector;
using test_util::safe_moves;
using test_util::winning_moves;

bool contains(const std::vector<Action>& v, Action a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

SearchConfig quiet_config(int simulations = 200) {
  SearchConfig c;
  c.simulations = simulations;
  c.dirichlet_weight = 0.0f;
  c.temperature = 0.0f;
  c.final_temperature = 0.0f;
  return c;
}

std::unique_ptr<GameState> mg(const char* text) { return mg::mg_game().parse_state(text); }

// Light's tower on c5 reaches row 7 with c5-c7 (or c5-e7); Dark's a7 tower blocks c5-a7.
constexpr const char* kMgWinInOne =
    "t......./......../..T...../......../......../......../T....... L";
// Dark's d3 tower threatens d3-d1; Light's towers on c2 and e2 block the diagonals, and only
// b1-d1 puts a stone on d2 or d1 without unblocking one.
constexpr const char* kMgDefend =
    ".......t/......../......../......../...t..../..T.T.../TT...... L";
// Light has three moves and after each Dark wins with e3-e1.
constexpr const char* kMgLost = "t......./......../......../......../....t.../......../T....... L";

TEST(SearchTest, MgFindsWinInOne) {
  const auto state = mg(kMgWinInOne);
  const auto wins = winning_moves(*state);
  ASSERT_FALSE(wins.empty());
  ASSERT_TRUE(contains(wins, state->parse_action("c5-c7")));
  ASSERT_FALSE(contains(wins, state->parse_action("a1-a3")));
  UniformEvaluator uniform;
  SearchTree tree(*state, quiet_config());
  const SearchResult r = tree.run(uniform, 200);
  EXPECT_TRUE(contains(wins, r.action)) << state->action_to_string(r.action);
  EXPECT_EQ(r.proven, Proven::kWin);
  EXPECT_EQ(tree.root_proven(), Proven::kWin);
  // The search stops once the root is proven, so far fewer than 200 simulations run.
  EXPECT_LT(r.simulations, 200);
}

TEST(SearchTest, MgDefendsAgainstLossInOne) {
  const auto state = mg(kMgDefend);
  ASSERT_TRUE(winning_moves(*state).empty());
  const auto safe = safe_moves(*state);
  ASSERT_EQ(safe, std::vector<Action>{state->parse_action("b1-d1")});
  ASSERT_GT(legal_vector(*state).size(), 3u);
  UniformEvaluator uniform;
  SearchTree tree(*state, quiet_config());
  const SearchResult r = tree.run(uniform, 400);
  EXPECT_EQ(state->action_to_string(r.action), "b1-d1");
  // Every other move is refuted at once and proven lost.
  for (const ChildStats& child : tree.children()) {
    if (child.action != r.action) {
      EXPECT_EQ(child.proven, Proven::kLoss) << child.action;
    }
  }
}

TEST(SearchTest, MgRootWithOnlyLosingMovesIsProvenLost) {
  const auto state = mg(kMgLost);
  ASSERT_TRUE(safe_moves(*state).empty());
  UniformEvaluator uniform;
  SearchTree tree(*state, quiet_config());
  const SearchResult r = tree.run(uniform, 200);
  EXPECT_EQ(r.proven, Proven::kLoss);
  EXPECT_EQ(tree.root_proven(), Proven::kLoss);
  EXPECT_TRUE(state->is_legal(r.action));
}

TEST(SearchTest, ProvenResultsShowInTheChildren) {
  const auto state = mg(kMgWinInOne);
  UniformEvaluator uniform;
  SearchTree tree(*state, quiet_config());
  tree.run(uniform, 200);
  const Action win = state->parse_action("c5-c7");
  bool seen = false;
  for (const ChildStats& child : tree.children())
    if (child.action == win && child.visits > 0) {
      seen = true;
      EXPECT_EQ(child.proven, Proven::kWin);
      EXPECT_FLOAT_EQ(child.value, 1.0f);
    }
  // Proof needs only one winning child: the search may have proven c5-e7 first.
  if (!seen) {
    EXPECT_EQ(tree.root_proven(), Proven::kWin);
  }
}

// DVONN: positions from random games where the side to move can end the game at once as the
// winner, and also has moves that do not.
TEST(SearchTest, DvonnFindsWinInOne) {
  const auto positions = test_util::find_positions(
      dvonn::dvonn_game(), 7, 5, 400, [](const GameState& s) {
        const auto wins = winning_moves(s);
        return !wins.empty() && wins.size() < legal_vector(s).size();
      });
  ASSERT_GE(positions.size(), 3u);
  UniformEvaluator uniform;
  for (const auto& state : positions) {
    SearchTree tree(*state, quiet_config());
    const SearchResult r = tree.run(uniform, 300);
    EXPECT_TRUE(contains(winning_moves(*state), r.action))
        << state->to_string() << " played " << state->action_to_string(r.action);
    EXPECT_EQ(r.proven, Proven::kWin) << state->to_string();
  }
}

// DVONN: positions where some moves let the opponent end the game at once as the winner and some
// do not, and no move wins at once.
TEST(SearchTest, DvonnDefendsAgainstLossInOne) {
  const auto positions = test_util::find_positions(
      dvonn::dvonn_game(), 11, 5, 400, [](const GameState& s) {
        if (s.ply() < 49 || !winning_moves(s).empty()) return false;
        const auto safe = safe_moves(s);
        return !safe.empty() && safe.size() < legal_vector(s).size();
      });
  ASSERT_GE(positions.size(), 3u);
  UniformEvaluator uniform;
  for (const auto& state : positions) {
    SearchTree tree(*state, quiet_config());
    const SearchResult r = tree.run(uniform, 1500);
    // A root proven lost means every move loses, later if not at once: any choice is right.
    if (r.proven == Proven::kLoss) continue;
    EXPECT_TRUE(contains(safe_moves(*state), r.action))
        << state->to_string() << " played " << state->action_to_string(r.action);
  }
}

TEST(SearchTest, VisitCountsSumToSimulationsOnAFreshTree) {
  for (const Game* game : {&mg::mg_game(), &dvonn::dvonn_game()}) {
    const auto state = game->initial_state();
    UniformEvaluator uniform;
    SearchTree tree(*state, quiet_config());
    const SearchResult r = tree.run(uniform, 150);
    EXPECT_EQ(std::accumulate(r.visits.begin(), r.visits.end(), 0), 150) << game->name();
    EXPECT_EQ(r.simulations, 150);
    EXPECT_EQ(tree.root_visits(), 151);  // the root's own evaluation is not a simulation
    EXPECT_EQ(legal_vector(*state), std::vector<Action>(r.legal.begin(), r.legal.end()));
    EXPECT_NEAR(std::accumulate(r.policy.begin(), r.policy.end(), 0.0f), 1.0f, 1e-5);
    EXPECT_NEAR(std::accumulate(r.sampling.begin(), r.sampling.end(), 0.0f), 1.0f, 1e-5);
    ASSERT_FALSE(r.principal_variation.empty());
    EXPECT_EQ(r.principal_variation.front(), r.action);  // temperature 0: the most visited
  }
}

TEST(SearchTest, AdvanceKeepsTheChosenSubtree) {
  const auto state = mg::mg_game().initial_state();
  RolloutEvaluator rollouts(3);
  SearchTree tree(*state, quiet_config());
  const SearchResult r = tree.run(rollouts, 300);
  const auto before = tree.children({r.action});
  ASSERT_FALSE(before.empty());
  const int kept_visits = std::accumulate(
      before.begin(), before.end(), 0, [](int s, const ChildStats& c) { return s + c.visits; });
  tree.advance(r.action);
  EXPECT_EQ(tree.root_state().hash(), test_util::after(*state, r.action)->hash());
  const auto now = tree.children();
  ASSERT_EQ(now.size(), before.size());
  for (std::size_t i = 0; i < now.size(); ++i) {
    EXPECT_EQ(now[i].action, before[i].action);
    EXPECT_EQ(now[i].visits, before[i].visits);
    EXPECT_FLOAT_EQ(now[i].value, before[i].value);
  }
  // The next search adds its simulations to the reused visits.
  const SearchResult next = tree.run(rollouts, 50);
  EXPECT_EQ(std::accumulate(next.visits.begin(), next.visits.end(), 0), kept_visits + 50);
  EXPECT_EQ(next.simulations, 50);
}

TEST(SearchTest, AdvanceToAnUnexpandedChildStartsFresh) {
  const auto state = mg::mg_game().initial_state();
  UniformEvaluator uniform;
  SearchTree tree(*state, quiet_config());
  tree.run(uniform, 5);
  Action unvisited = -1;
  for (const ChildStats& c : tree.children())
    if (c.visits == 0) unvisited = c.action;
  ASSERT_GE(unvisited, 0);
  tree.advance(unvisited);
  EXPECT_EQ(tree.root_visits(), 0);
  EXPECT_TRUE(tree.children().empty());
  EXPECT_EQ(tree.node_count(), 1);
  const SearchResult r = tree.run(uniform, 20);
  EXPECT_EQ(std::accumulate(r.visits.begin(), r.visits.end(), 0), 20);
}

// A tree never grows past max_tree_nodes: a search that would pass it ends early, says so, and
// still gives a move; after advance() the kept subtree leaves room for the next search. (A timed
// search of 10 million simulations once took some 30 GB.)
TEST(SearchTest, ASearchEndsWhenItsTreeIsFull) {
  for (const Game* game : {&mg::mg_game(), &dvonn::dvonn_game()}) {
    const auto state = game->initial_state();
    UniformEvaluator uniform;
    SearchConfig config = quiet_config();
    config.max_tree_nodes = 5000;
    SearchTree tree(*state, config);
    const SearchResult r = tree.run(uniform, 100000);
    EXPECT_TRUE(r.tree_full) << game->name();
    EXPECT_LE(tree.node_count(), 5000) << game->name();
    EXPECT_GT(tree.node_count(), 5000 - 400) << game->name();  // full up to one expansion
    EXPECT_GT(r.simulations, 20) << game->name();
    EXPECT_LT(r.simulations, 5000) << game->name();
    EXPECT_EQ(std::accumulate(r.visits.begin(), r.visits.end(), 0), r.simulations);
    EXPECT_TRUE(contains(std::vector<Action>(r.legal.begin(), r.legal.end()), r.action));
    tree.advance(r.action);
    const SearchResult next = tree.run(uniform, 100000);
    EXPECT_GT(next.simulations, 0) << game->name();
    EXPECT_LE(tree.node_count(), 5000) << game->name();
    // Below the limit nothing changes.
    SearchTree roomy(*state, quiet_config());
    const SearchResult small = roomy.run(uniform, 100);
    EXPECT_FALSE(small.tree_full);
    EXPECT_EQ(small.simulations, 100);
  }
  SearchConfig bad = quiet_config();
  bad.max_tree_nodes = 1;
  EXPECT_THROW(SearchTree(*mg::mg_game().initial_state(), bad), std::invalid_argument);
}

TEST(SearchTest, MisuseIsALogicError) {
  const auto state = mg(kMgWinInOne);
  UniformEvaluator uniform;
  SearchTree tree(*state, quiet_config());
  EXPECT_THROW(tree.select_leaf(), std::logic_error);
  EXPECT_THROW(tree.result(), std::logic_error);
  tree.start_search(10);
  ASSERT_NE(tree.select_leaf(), nullptr);
  EXPECT_THROW(tree.select_leaf(), std::logic_error);
  EXPECT_THROW(tree.receive(EvalResult{0.0f, {1.0f}}), std::logic_error);  // wrong prior count
  EXPECT_THROW(tree.advance(state->parse_action("c5-c7")), std::logic_error);
  // A terminal root cannot be searched.
  auto won = state->clone();
  won->apply(won->parse_action("c5-c7"));
  SearchTree done(*won, quiet_config());
  EXPECT_THROW(done.start_search(10), std::logic_error);
  SearchConfig bad = quiet_config();
  bad.dirichlet_weight = 2.0f;
  EXPECT_THROW(SearchTree(*state, bad), std::invalid_argument);
}

TEST(SearchTest, SameSeedSameSearch) {
  const auto state = mg::mg_game().initial_state();
  SearchConfig config = quiet_config();
  config.dirichlet_weight = 0.25f;
  config.temperature = 1.0f;
  config.seed = 42;
  RolloutEvaluator a(5), b(5);
  SearchTree first(*state, config), second(*state, config);
  const SearchResult r1 = first.run(a, 200);
  const SearchResult r2 = second.run(b, 200);
  EXPECT_EQ(r1.visits, r2.visits);
  EXPECT_EQ(r1.action, r2.action);
  EXPECT_EQ(r1.principal_variation, r2.principal_variation);
  EXPECT_FLOAT_EQ(r1.root_value, r2.root_value);

  config.seed = 43;
  SearchTree other(*state, config);
  UniformEvaluator uniform;
  other.run(uniform, 1);
  SearchTree same(*state, config);
  same.run(uniform, 1);
  EXPECT_EQ(other.children()[0].prior, same.children()[0].prior);
  EXPECT_NE(other.children()[0].prior, first.children()[0].prior);
}

TEST(SearchTest, DirichletNoiseOnlyAtTheRootAndOnlyWhenEnabled) {
  const auto state = mg::mg_game().initial_state();
  UniformEvaluator uniform;
  const int n = static_cast<int>(legal_vector(*state).size());
  const float uniform_prior = 1.0f / static_cast<float>(n);

  SearchConfig off = quiet_config();
  SearchTree quiet(*state, off);
  quiet.run(uniform, 100);
  for (const ChildStats& c : quiet.children()) EXPECT_EQ(c.prior, uniform_prior);

  SearchConfig on = quiet_config();
  on.dirichlet_weight = 0.25f;
  on.seed = 9;
  SearchTree noisy(*state, on);
  SearchResult r = noisy.run(uniform, 100);
  auto root = noisy.children();
  float sum = 0.0f;
  bool changed = false;
  for (const ChildStats& c : root) {
    sum += c.prior;
    changed |= std::abs(c.prior - uniform_prior) > 1e-4f;
    EXPECT_GE(c.prior, 0.75f * uniform_prior - 1e-6f);
  }
  EXPECT_NEAR(sum, 1.0f, 1e-5f);
  EXPECT_TRUE(changed);
  // Below the root the priors are the evaluator's.
  const auto below = noisy.children({r.principal_variation.front()});
  ASSERT_FALSE(below.empty());
  for (const ChildStats& c : below) EXPECT_EQ(c.prior, 1.0f / static_cast<float>(below.size()));
  // A second search on the same root replaces the noise instead of compounding it.
  noisy.run(uniform, 10);
  for (const ChildStats& c : noisy.children()) EXPECT_GE(c.prior, 0.75f * uniform_prior - 1e-6f);
  // After a move the new root gets fresh noise, its old priors restored first (none were noisy).
  noisy.advance(r.principal_variation.front());
  noisy.run(uniform, 10);
  sum = 0.0f;
  for (const ChildStats& c : noisy.children()) sum += c.prior;
  EXPECT_NEAR(sum, 1.0f, 1e-5f);
  // A search started without root noise (a fast search) restores the clean priors.
  noisy.start_search(5, false);
  while (const PendingLeaf* leaf = noisy.select_leaf()) {
    EvalResult e;
    const EvalRequest req = leaf->request();
    uniform.evaluate(&req, 1, &e);
    noisy.receive(e);
  }
  const auto clean = noisy.children();
  for (const ChildStats& c : clean) EXPECT_EQ(c.prior, 1.0f / static_cast<float>(clean.size()));
}

TEST(SearchTest, TemperatureSamplesFromTheVisitDistribution) {
  const auto state = mg::mg_game().initial_state();
  UniformEvaluator uniform;
  SearchConfig config = quiet_config();
  config.temperature = 1.0f;
  config.temperature_plies = 10;
  SearchTree tree(*state, config);
  const SearchResult r = tree.run(uniform, 100);
  EXPECT_EQ(r.temperature, 1.0f);
  for (std::size_t i = 0; i < r.visits.size(); ++i) EXPECT_NEAR(r.sampling[i], r.policy[i], 1e-5);
  const auto it = std::find(r.legal.begin(), r.legal.end(), r.action);
  ASSERT_NE(it, r.legal.end());
  EXPECT_GT(r.visits[static_cast<std::size_t>(it - r.legal.begin())], 0);

  config.temperature_plies = 0;  // from ply 0 on: final_temperature 0, the most visited move
  SearchTree greedy(*state, config);
  const SearchResult g = greedy.run(uniform, 100);
  EXPECT_EQ(g.temperature, 0.0f);
  EXPECT_EQ(*std::max_element(g.sampling.begin(), g.sampling.end()), 1.0f);
}

// A Nim variant where the side to move does not always alternate: players take 1, 2 or 3 stones,
// taking the last stone wins, and a player who leaves a multiple of 4 stones moves again.
class NimState final : public GameState {
 public:
  NimState(const Game& game, int pile, int to_move, int ply)
      : game_(&game), pile_(pile), to_move_(to_move), ply_(ply) {}
  std::unique_ptr<GameState> clone() const override { return std::make_unique<NimState>(*this); }
  void copy_from(const GameState& other) override {
    *this = dynamic_cast<const NimState&>(other);
  }
  const Game& game() const override { return *game_; }
  int current_player() const override { return to_move_; }
  int ply() const override { return ply_; }
  void legal_actions(ActionList& out) const override {
    out.clear();
    for (int take = 1; take <= 3 && take <= pile_; ++take) out.push_back(take - 1);
  }
  bool is_legal(Action a) const override { return a >= 0 && a < 3 && a + 1 <= pile_; }
  void apply(Action a) override {
    if (!is_legal(a)) throw std::logic_error("nim: illegal");
    pile_ -= a + 1;
    ++ply_;
    if (pile_ == 0) winner_ = to_move_;
    else if (pile_ % 4 != 0) to_move_ = 1 - to_move_;
  }
  bool is_terminal() const override { return pile_ == 0; }
  double result(int player) const override { return player == winner_ ? 1.0 : -1.0; }
  int score(int player) const override { return player == winner_ ? 1 : 0; }
  std::string to_string() const override { return std::to_string(pile_); }
  std::string action_to_string(Action a) const override { return std::to_string(a + 1); }
  Action parse_action(std::string_view) const override { throw GameError("nim: no notation"); }
  std::uint64_t hash() const override {
    return static_cast<std::uint64_t>(pile_ * 2 + to_move_) * 0x9E3779B97F4A7C15ULL;
  }
  void encode(float*) const override {}
  std::unique_ptr<GameState> transformed(int) const override { return clone(); }
  std::string pretty() const override { return to_string(); }
  // Three cells, "take 1" to "take 3", never drawn: nim is no registered game.
  std::vector<CellView> board_view() const override { return std::vector<CellView>(3); }
  std::vector<int> action_cells(Action a) const override { return {a}; }

 private:
  const Game* game_;
  int pile_;
  int to_move_;
  int ply_;
  int winner_ = -1;
};

class NimGame final : public Game {
 public:
  std::string name() const override { return "nim"; }
  int num_actions() const override { return 3; }
  PlaneShape input_shape() const override { return {0, 0, 0}; }
  int encoding_version() const override { return 0; }
  int num_symmetries() const override { return 1; }
  int transform_cell(int, int row, int col) const override { return row + col; }
  Action transform_action(int, Action a) const override { return a; }
  std::unique_ptr<GameState> initial_state() const override { return start(10); }
  std::unique_ptr<GameState> parse_state(std::string_view) const override {
    throw GameError("nim: no notation");
  }
  int max_game_length() const override { return 100; }
  ClockFacts clock_facts() const override { return {10, -1}; }
  std::string display_name() const override { return "Nim"; }
  std::string side_name(int player) const override { return player == 0 ? "first" : "second"; }
  int default_opening_plies() const override { return 0; }
  bool has_score() const override { return false; }
  bool looks_like_move(std::string_view) const override { return true; }
  std::vector<PerftBenchmark> perft_benchmarks() const override { return {}; }
  std::string planes_description() const override { return "one plane: the stones left"; }
  std::string actions_description() const override { return "take 1, 2 or 3 stones"; }
  const BoardLayout& board_layout() const override {
    static const BoardLayout layout{CellShape::kSquare, {{"1", 0, 0}, {"2", 1, 0}, {"3", 2, 0}}, {}};
    return layout;
  }
  std::unique_ptr<GameState> start(int pile) const {
    return std::make_unique<NimState>(*this, pile, 0, 0);
  }
};

// +1 when the side to move with `pile` stones wins with best play, else -1.
int nim_value(int pile) {
  int best = -1;
  for (int take = 1; take <= 3 && take <= pile; ++take) {
    const int left = pile - take;
    const int v = left == 0 ? 1 : left % 4 == 0 ? nim_value(left) : -nim_value(left);
    best = std::max(best, v);
  }
  return best;
}

TEST(SearchTest, ProvesNimWhereTheMoverSometimesMovesAgain) {
  const NimGame nim;
  int wins = 0, losses = 0, repeats = 0;
  for (int pile = 1; pile <= 12; ++pile) {
    const auto state = nim.start(pile);
    UniformEvaluator uniform;
    SearchTree tree(*state, quiet_config());
    const SearchResult r = tree.run(uniform, 3000);
    const int expected = nim_value(pile);
    ASSERT_EQ(r.proven, expected > 0 ? Proven::kWin : Proven::kLoss) << "pile " << pile;
    if (expected > 0) {
      ++wins;
      auto next = state->clone();
      next->apply(r.action);
      const bool again = next->current_player() == state->current_player();
      repeats += again;
      const int v = next->is_terminal() ? 1 : again ? nim_value(pile - r.action - 1)
                                                    : -nim_value(pile - r.action - 1);
      EXPECT_EQ(v, 1) << "pile " << pile << " took " << r.action + 1;
    } else {
      ++losses;
      EXPECT_LT(r.root_value, 0.0f);
    }
  }
  EXPECT_GT(wins, 0);
  EXPECT_GT(losses, 0);
  EXPECT_GT(repeats, 0);  // some winning lines need the extra move
}

// A proven root reports its proof, not the visits up to it (docs/ARCHITECTURE.md, "Search": the
// search stops at the proof, in self-play's settings often on the winning move's first visit).
TEST(SearchTest, AProvenRootTrainsOnItsProofNotOnTheVisitsBeforeIt) {
  const auto check = [](const GameState& state, const SearchConfig& config, int simulations,
                        Proven expected) {
    UniformEvaluator uniform;
    SearchTree tree(state, config);
    const SearchResult r = tree.run(uniform, simulations);
    ASSERT_EQ(r.proven, expected) << state.to_string();
    EXPECT_EQ(r.root_value, expected == Proven::kWin ? 1.0f : expected == Proven::kLoss ? -1.0f
                                                                                          : 0.0f);
    const std::vector<ChildStats> children = tree.children();
    ASSERT_EQ(children.size(), r.policy.size());
    double kept = 0.0, visits = 0.0, others = 0.0;
    for (const ChildStats& c : children)
      if (c.proven == expected) visits += c.visits;
      else others += c.visits;
    EXPECT_GT(others, 0) << "the search tried no other move: the test shows nothing";
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (children[i].proven != expected) {
        EXPECT_EQ(r.policy[i], 0.0f) << state.action_to_string(children[i].action);
        continue;
      }
      kept += r.policy[i];
      EXPECT_NEAR(r.policy[i], children[i].visits / visits, 1e-6);
    }
    EXPECT_NEAR(kept, 1.0, 1e-6);
  };
  // Self-play's defaults (noise, first-play urgency) and a position with many moves, one wins.
  SearchConfig selfplay;
  selfplay.seed = 7;
  const auto win = mg("ww..wtw./w..w.w../...Ww.W./.wwwW.W./.W.t...W/W.TW...T/.TW..... D");
  check(*win, selfplay, 64, Proven::kWin);
  SearchConfig gumbel = selfplay;
  gumbel.root = RootPolicy::kGumbel;
  check(*win, gumbel, 64, Proven::kWin);
  // Tic-tac-toe after b2 c3 c2: a draw, but five of the six moves lose.
  const Game& ttt = game_by_name("ttt");
  auto draw = ttt.initial_state();
  for (const char* move : {"b2", "c3", "c2"}) draw->apply(draw->parse_action(move));
  check(*draw, quiet_config(), 5000, Proven::kDraw);
  // Every move of a lost root loses: its visits stay the target, its value is the loss.
  UniformEvaluator uniform;
  SearchTree lost(*mg(kMgLost), quiet_config());
  const SearchResult r = lost.run(uniform, 200);
  ASSERT_EQ(r.proven, Proven::kLoss);
  EXPECT_EQ(r.root_value, -1.0f);
  double total = 0.0;
  for (int v : r.visits) total += v;
  for (std::size_t i = 0; i < r.visits.size(); ++i)
    EXPECT_NEAR(r.policy[i], r.visits[i] / total, 1e-6);
}

// The rule itself, on the weights a self-play record is made of (visits, or this search's visits).
TEST(SearchTest, SettleTargetKeepsWhatTheProofsAllow) {
  constexpr Proven U = Proven::kUnknown, W = Proven::kWin, D = Proven::kDraw, L = Proven::kLoss;
  const auto settled = [](std::vector<double> w, const std::vector<Proven>& children, Proven root) {
    settle_target(w, children, root);
    return w;
  };
  using V = std::vector<double>;
  EXPECT_EQ(settled({5, 3, 2}, {U, L, U}, U), (V{5, 0, 2})) << "a blunder proven lost";
  EXPECT_EQ(settled({5, 3, 2}, {L, L, U}, U), (V{0, 0, 2}));
  EXPECT_EQ(settled({5, 3, 0}, {L, L, U}, U), (V{5, 3, 0})) << "nothing else has weight";
  EXPECT_EQ(settled({5, 3, 1}, {U, L, W}, W), (V{0, 0, 1})) << "the winning move's one visit";
  EXPECT_EQ(settled({0, 3, 0}, {W, L, W}, W), (V{1, 0, 1})) << "proven by an earlier search";
  EXPECT_EQ(settled({4, 3, 2}, {D, L, D}, D), (V{4, 0, 2}));
  EXPECT_EQ(settled({4, 3, 2}, {L, L, L}, L), (V{4, 3, 2})) << "every move loses";
}

// A timed search of a root with one legal action stops once the root is evaluated: the time is for
// the moves that have something to decide (it used to spend its whole budget on DVONN's last
// placement). A search of fixed simulations keeps its statistics.
TEST(SearchTree, ATimedSearchOfAForcedMoveStopsAtOnce) {
  // DVONN's last placement (K5), with the movement phase after it.
  const Game& dvonn = game_by_name("dvonn");
  const auto forced = dvonn.parse_state(
      "R1*,B1,B1,W1,B1,W1,B1,W1,B1/R1*,W1,W1,B1,W1,B1,W1,B1,W1,W1/R1*,B1,B1,W1,B1,W1,B1,W1,B1,B1,"
      "W1/W1,W1,B1,W1,B1,W1,B1,W1,W1,B1/B1,W1,B1,W1,B1,W1,B1,B1,. W 48");
  ActionList legal;
  forced->legal_actions(legal);
  ASSERT_EQ(legal.size(), 1);
  UniformEvaluator uniform;
  SearchConfig config;
  config.dirichlet_weight = 0.0f;
  SearchTree timed(*forced, config);
  const auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);
  const SearchResult r = timed.run_until(uniform, far, 100000);
  EXPECT_EQ(forced->action_to_string(r.action), "K5");
  EXPECT_LE(r.simulations, 1);
  SearchTree fixed(*forced, config);
  EXPECT_EQ(fixed.run(uniform, 50).simulations, 50);
}

}  // namespace
}  // namespace oppidum::mcts
