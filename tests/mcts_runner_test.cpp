// The multi-game runner: complete legal games in both games, batching across games, the game
// budget, reproducibility, two-agent matches, the driver's move choice, and stopping.
#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/dvonn/game.h"
#include "games/mg/game.h"
#include "mcts/evaluator.h"
#include "mcts/rollout_evaluator.h"
#include "mcts/runner.h"

namespace oppidum::mcts {
namespace {

// Wraps an evaluator and records the size of every batch.
class CountingEvaluator final : public Evaluator {
 public:
  explicit CountingEvaluator(Evaluator& inner) : inner_(inner) {}
  void evaluate(const EvalRequest* requests, int n, EvalResult* results) override {
    for (int i = 0; i < n; ++i) EXPECT_FALSE(requests[i].state->is_terminal());
    batches.push_back(n);
    inner_.evaluate(requests, n, results);
  }
  std::string describe() const override { return "counting " + inner_.describe(); }
  std::vector<int> batches;

 private:
  Evaluator& inner_;
};

// Starts every game from one position with fixed agents (or colours alternating between agents 0
// and 1), and keeps what it is given.
class Driver : public GameDriver {
 public:
  Driver(const GameState& start, bool alternate) : start_(start.clone()), alternate_(alternate) {}
  GameSetup setup_game(int index) override {
    GameSetup s;
    s.start = start_->clone();
    if (alternate_ && index % 2 == 1) s.agents = {1, 0};
    else if (alternate_) s.agents = {0, 1};
    return s;
  }
  void game_finished(FinishedGame game) override { games.push_back(std::move(game)); }
  std::vector<FinishedGame> games;

 private:
  std::unique_ptr<GameState> start_;
  bool alternate_;
};

SearchConfig small_search(int simulations) {
  SearchConfig c;
  c.simulations = simulations;
  c.temperature_plies = 1000;  // sample every move: seeds matter
  return c;
}

// Replays a finished game from its start, checking every move and the reported outcome.
void expect_complete_and_legal(const FinishedGame& g, int max_plies) {
  auto state = g.start->clone();
  for (const MoveStats& m : g.moves) {
    ASSERT_FALSE(state->is_terminal());
    ASSERT_EQ(m.player, state->current_player());
    ActionList legal;
    state->legal_actions(legal);
    ASSERT_EQ(m.legal, std::vector<Action>(legal.begin(), legal.end()));
    ASSERT_EQ(m.visits.size(), m.legal.size());
    ASSERT_TRUE(state->is_legal(m.action));
    EXPECT_GE(m.root_value, -1.0f);
    EXPECT_LE(m.root_value, 1.0f);
    state->apply(m.action);
  }
  EXPECT_EQ(state->to_string(), g.final_state->to_string());
  if (g.adjudicated) {
    EXPECT_FALSE(state->is_terminal());
    EXPECT_GE(state->ply(), max_plies);
    EXPECT_EQ(g.result, 0.0);
  } else {
    EXPECT_TRUE(state->is_terminal());
    EXPECT_EQ(g.result, state->result(0));
  }
}

std::vector<std::vector<Action>> move_lists(const std::vector<FinishedGame>& games) {
  std::vector<std::vector<Action>> out(games.size());
  for (const FinishedGame& g : games) {
    auto& list = out[static_cast<std::size_t>(g.index)];
    for (const MoveStats& m : g.moves) list.push_back(m.action);
  }
  return out;
}

TEST(RunnerTest, PlaysConcurrentGamesToTheEndInBatches) {
  for (const Game* game : {&mg::mg_game(), &dvonn::dvonn_game()}) {
    UniformEvaluator uniform;
    CountingEvaluator counting(uniform);
    RunnerConfig config;
    config.num_games = 6;
    config.concurrent_games = 4;
    config.max_plies = 120;
    GameRunner runner({{"self", &counting, small_search(12)}}, config);
    Driver driver(*game->initial_state(), false);
    const RunnerStats stats = runner.run(driver);
    ASSERT_EQ(driver.games.size(), 6u) << game->name();
    std::set<int> indices;
    for (const FinishedGame& g : driver.games) {
      indices.insert(g.index);
      EXPECT_FALSE(g.moves.empty());
      expect_complete_and_legal(g, config.max_plies);
    }
    EXPECT_EQ(indices.size(), 6u);
    EXPECT_EQ(stats.games, 6);
    EXPECT_GT(stats.max_batch, 1);
    EXPECT_LE(stats.max_batch, 4);
    EXPECT_EQ(*std::max_element(counting.batches.begin(), counting.batches.end()), stats.max_batch);
    EXPECT_EQ(static_cast<std::int64_t>(counting.batches.size()), stats.evaluator_calls);
    EXPECT_EQ(stats.evaluator_calls, stats.rounds);  // one evaluator: one batch per round
  }
}

TEST(RunnerTest, SameSeedSameGames) {
  const auto start = mg::mg_game().initial_state();
  RunnerConfig config;
  config.num_games = 4;
  config.concurrent_games = 3;
  config.max_plies = 60;
  config.seed = 7;
  auto play = [&](std::uint64_t seed) {
    RolloutEvaluator rollouts(5);
    RunnerConfig c = config;
    c.seed = seed;
    GameRunner runner({{"self", &rollouts, small_search(16)}}, c);
    Driver driver(*start, false);
    runner.run(driver);
    std::vector<std::vector<int>> visits;
    std::sort(driver.games.begin(), driver.games.end(),
              [](const FinishedGame& a, const FinishedGame& b) { return a.index < b.index; });
    for (const FinishedGame& g : driver.games)
      for (const MoveStats& m : g.moves) visits.push_back(m.visits);
    return std::make_pair(move_lists(driver.games), visits);
  };
  const auto a = play(7);
  const auto b = play(7);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  const auto c = play(8);
  EXPECT_NE(a.first, c.first);
  // Different games of one run differ too (each has its own seed).
  EXPECT_NE(a.first[0], a.first[1]);
}

TEST(RunnerTest, TwoAgentsPlayAMatchWithTheirOwnEvaluators) {
  UniformEvaluator uniform;
  RolloutEvaluator rollouts(3);
  CountingEvaluator first(uniform), second(rollouts);
  SearchConfig strong = small_search(24);
  strong.temperature = 0.0f;
  strong.dirichlet_weight = 0.0f;
  RunnerConfig config;
  config.num_games = 4;
  config.concurrent_games = 4;
  config.max_plies = 80;
  GameRunner runner({{"uniform", &first, small_search(8)}, {"rollout", &second, strong}}, config);
  Driver driver(*mg::mg_game().initial_state(), true);
  const RunnerStats stats = runner.run(driver);
  ASSERT_EQ(driver.games.size(), 4u);
  for (const FinishedGame& g : driver.games) {
    expect_complete_and_legal(g, config.max_plies);
    const std::array<int, 2> expected =
        g.index % 2 == 1 ? std::array<int, 2>{1, 0} : std::array<int, 2>{0, 1};
    EXPECT_EQ(g.agents, expected);
    // Each side searched with its own budget on its own tree (fewer once a root is proven).
    std::array<int, 2> full = {0, 0};
    for (const MoveStats& m : g.moves) {
      const int agent = g.agents[static_cast<std::size_t>(m.player)];
      const int budget = agent == 0 ? 8 : 24;
      EXPECT_LE(m.simulations, budget);
      full[static_cast<std::size_t>(agent)] += m.simulations == budget;
    }
    EXPECT_GT(full[0], 0);
    EXPECT_GT(full[1], 0);
  }
  EXPECT_FALSE(first.batches.empty());
  EXPECT_FALSE(second.batches.empty());
  EXPECT_EQ(stats.evaluator_calls, static_cast<std::int64_t>(first.batches.size() +
                                                             second.batches.size()));
}

// A sign error anywhere in value backup or move choice shows up here: more simulations must win.
TEST(RunnerTest, MoreSimulationsWinTheMatch) {
  for (const Game* game : {&mg::mg_game(), &dvonn::dvonn_game()}) {
    RolloutEvaluator rollouts(1);
    SearchConfig strong;
    strong.simulations = 64;
    strong.temperature_plies = 4;  // a few sampled moves for variety, then the best
    strong.dirichlet_weight = 0.0f;
    SearchConfig weak = strong;
    weak.simulations = 4;
    RunnerConfig config;
    config.num_games = 12;
    config.concurrent_games = 12;
    GameRunner runner({{"strong", &rollouts, strong}, {"weak", &rollouts, weak}}, config);
    Driver driver(*game->initial_state(), true);
    const RunnerStats stats = runner.run(driver);
    ASSERT_EQ(driver.games.size(), 12u);
    double strong_points = 0.0;
    for (const FinishedGame& g : driver.games) {
      const double first = (g.result + 1.0) / 2.0;  // player 0's points
      strong_points += g.agents[0] == 0 ? first : 1.0 - first;
    }
    EXPECT_GE(strong_points, 8.0) << game->name();
    // Both agents share one evaluator: one batch per round holds both agents' leaves.
    EXPECT_EQ(stats.evaluator_calls, stats.rounds);
  }
}

// A driver that always plays the first legal action, whatever the search prefers.
class FirstMoveDriver final : public Driver {
 public:
  using Driver::Driver;
  Action choose_move(int, const GameState& state, const SearchResult&) override {
    ActionList legal;
    state.legal_actions(legal);
    return legal[0];
  }
};

TEST(RunnerTest, TheDriverChoosesTheMoves) {
  UniformEvaluator uniform;
  RunnerConfig config;
  config.num_games = 2;
  config.concurrent_games = 2;
  config.max_plies = 40;
  GameRunner runner({{"self", &uniform, small_search(4)}}, config);
  FirstMoveDriver driver(*mg::mg_game().initial_state(), false);
  runner.run(driver);
  ASSERT_EQ(driver.games.size(), 2u);
  for (const FinishedGame& g : driver.games) {
    expect_complete_and_legal(g, config.max_plies);
    for (const MoveStats& m : g.moves) EXPECT_EQ(m.action, m.legal.front());
  }
}

// Playout-cap randomisation: the driver gives even plies a full search and odd plies a fast one.
class BudgetDriver final : public Driver {
 public:
  using Driver::Driver;
  SearchBudget search_budget(int, const GameState& state, const Agent&) override {
    const bool full = state.ply() % 2 == 0;
    return {full ? 32 : 3, full, full};
  }
};

TEST(RunnerTest, TheDriverSetsEachSearchsBudget) {
  UniformEvaluator uniform;
  RunnerConfig config;
  config.num_games = 3;
  config.concurrent_games = 3;
  config.max_plies = 30;
  GameRunner runner({{"self", &uniform, small_search(100)}}, config);
  BudgetDriver driver(*mg::mg_game().initial_state(), false);
  runner.run(driver);
  ASSERT_EQ(driver.games.size(), 3u);
  int full = 0, fast = 0;
  for (const FinishedGame& g : driver.games) {
    expect_complete_and_legal(g, config.max_plies);
    for (std::size_t i = 0; i < g.moves.size(); ++i) {
      const MoveStats& m = g.moves[i];
      EXPECT_EQ(m.full_search, i % 2 == 0);
      if (m.simulations == 0) continue;  // a proven root ends its search at once
      EXPECT_EQ(m.simulations, m.full_search ? 32 : 3) << "move " << i;
      (m.full_search ? full : fast)++;
    }
  }
  EXPECT_GT(full, 10);
  EXPECT_GT(fast, 10);
}

TEST(RunnerTest, ForcedEndingsNeedFewEvaluations) {
  // Light wins at once; each search proves it from terminal leaves, without evaluating them.
  const auto start =
      mg::mg_game().parse_state("t......./......../..T...../......../......../......../T....... L");
  UniformEvaluator uniform;
  CountingEvaluator counting(uniform);
  RunnerConfig config;
  config.num_games = 3;
  config.concurrent_games = 3;
  SearchConfig search = small_search(400);
  search.temperature = 0.0f;
  GameRunner runner({{"self", &counting, search}}, config);
  Driver driver(*start, false);
  const RunnerStats stats = runner.run(driver);
  ASSERT_EQ(driver.games.size(), 3u);
  for (const FinishedGame& g : driver.games) {
    ASSERT_EQ(g.moves.size(), 1u);
    EXPECT_EQ(g.result, 1.0);
    EXPECT_FALSE(g.adjudicated);
  }
  EXPECT_LT(stats.evaluations, 3 * 400);
  EXPECT_EQ(stats.max_batch, 3);
}

TEST(RunnerTest, StopEndsTheRunEarly) {
  class StoppingDriver final : public Driver {
   public:
    StoppingDriver(const GameState& start, std::atomic<bool>& stop) : Driver(start, false), stop_(stop) {}
    void game_finished(FinishedGame game) override {
      Driver::game_finished(std::move(game));
      stop_ = true;
    }

   private:
    std::atomic<bool>& stop_;
  };
  std::atomic<bool> stop{false};
  UniformEvaluator uniform;
  RunnerConfig config;
  config.num_games = 50;
  config.concurrent_games = 2;
  config.max_plies = 30;
  GameRunner runner({{"self", &uniform, small_search(4)}}, config);
  StoppingDriver driver(*mg::mg_game().initial_state(), stop);
  const RunnerStats stats = runner.run(driver, &stop);
  EXPECT_GE(driver.games.size(), 1u);
  EXPECT_LE(driver.games.size(), 2u);
  EXPECT_EQ(stats.games, static_cast<std::int64_t>(driver.games.size()));
}

TEST(RunnerTest, BadSetupIsRejected) {
  UniformEvaluator uniform;
  RunnerConfig config;
  EXPECT_THROW(GameRunner({}, config), std::invalid_argument);
  EXPECT_THROW(GameRunner({{"nobody", nullptr, SearchConfig{}}}, config), std::invalid_argument);
  config.concurrent_games = 0;
  EXPECT_THROW(GameRunner({{"self", &uniform, SearchConfig{}}}, config), std::invalid_argument);
  config.concurrent_games = 1;
  GameRunner runner({{"self", &uniform, small_search(2)}}, config);
  Driver driver(*mg::mg_game().initial_state(), true);  // names agent 1, which does not exist
  EXPECT_THROW(runner.run(driver), std::invalid_argument);
}

}  // namespace
}  // namespace oppidum::mcts
