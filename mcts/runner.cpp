#include "mcts/runner.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "mcts/seed.h"

namespace oppidum::mcts {

struct GameRunner::ActiveGame {
  int index = 0;
  std::array<int, 2> agents = {0, 0};
  std::unique_ptr<GameState> start;
  std::unique_ptr<GameState> state;
  std::vector<std::unique_ptr<SearchTree>> trees;  // one per distinct agent of this game
  std::array<int, 2> tree_of_player = {0, 0};
  std::vector<MoveStats> moves;
  bool searching = false;  // the side to move's tree has a search in progress
  bool full_search = true;  // the search in progress has the full budget
  int resigned = -1;        // the player who resigned
};

// The leaves that go to one evaluator in one round.
struct GameRunner::Batch {
  Evaluator* evaluator = nullptr;
  std::vector<EvalRequest> requests;
  std::vector<SearchTree*> trees;  // the tree waiting for each request
  std::vector<EvalResult> results;
};

void RunnerConfig::validate() const {
  auto check = [](bool ok, const char* field, const char* rule, long long value) {
    if (!ok)
      throw std::invalid_argument(std::string("runner config: ") + field + " must be " + rule +
                                  ", not " + std::to_string(value));
  };
  check(num_games >= 0, "num_games", "0 or more", num_games);
  check(concurrent_games >= 1, "concurrent_games", "at least 1", concurrent_games);
  check(max_plies >= 0, "max_plies", "0 (the game's bound) or more", max_plies);
}

GameRunner::GameRunner(std::vector<Agent> agents, const RunnerConfig& config)
    : agents_(std::move(agents)), config_(config) {
  config_.validate();
  if (agents_.empty()) throw std::invalid_argument("GameRunner: no agent to play the games");
  for (const Agent& agent : agents_) {
    if (agent.evaluator == nullptr)
      throw std::invalid_argument("GameRunner: agent \"" + agent.name + "\" has no evaluator");
    agent.search.validate();
  }
}

std::unique_ptr<GameRunner::ActiveGame> GameRunner::start_game(GameDriver& driver,
                                                               int index) const {
  GameSetup setup = driver.setup_game(index);
  const std::string where = "GameRunner: the setup of game " + std::to_string(index);
  if (!setup.start) throw std::invalid_argument(where + " has no start position");
  for (int agent : setup.agents)
    if (agent < 0 || agent >= static_cast<int>(agents_.size()))
      throw std::invalid_argument(where + " names agent " + std::to_string(agent) + " of " +
                                  std::to_string(agents_.size()));
  auto game = std::make_unique<ActiveGame>();
  game->index = index;
  game->agents = setup.agents;
  game->start = std::move(setup.start);
  game->state = game->start->clone();
  for (int player = 0; player < 2; ++player) {
    const int agent = setup.agents[static_cast<std::size_t>(player)];
    if (player == 1 && agent == setup.agents[0]) {
      game->tree_of_player[1] = game->tree_of_player[0];
      continue;
    }
    SearchConfig search = agents_[static_cast<std::size_t>(agent)].search;
    search.seed = derive_seed(config_.seed, kSearchStream + static_cast<std::uint64_t>(agent),
                              static_cast<std::uint64_t>(index));
    game->trees.push_back(std::make_unique<SearchTree>(*game->state, search));
    game->tree_of_player[static_cast<std::size_t>(player)] =
        static_cast<int>(game->trees.size()) - 1;
  }
  return game;
}

bool GameRunner::game_over(const ActiveGame& game) const {
  const int limit = config_.max_plies > 0 ? config_.max_plies : game.state->game().max_game_length();
  return game.resigned >= 0 || game.state->is_terminal() || game.state->ply() >= limit;
}

bool GameRunner::step_game(ActiveGame& game, GameDriver& driver, std::vector<Batch>& batches) {
  while (!game_over(game)) {
    const auto player = static_cast<std::size_t>(game.state->current_player());
    const Agent& agent = agents_[static_cast<std::size_t>(game.agents[player])];
    SearchTree& tree = *game.trees[static_cast<std::size_t>(game.tree_of_player[player])];
    if (!game.searching) {
      const SearchBudget budget = driver.search_budget(game.index, *game.state, agent);
      tree.start_search(budget.simulations, budget.root_noise);
      game.full_search = budget.full_search;
      game.searching = true;
    }
    if (const PendingLeaf* leaf = tree.select_leaf()) {
      auto batch = std::find_if(batches.begin(), batches.end(),
                                [&](const Batch& b) { return b.evaluator == agent.evaluator; });
      if (batch == batches.end()) {
        batches.emplace_back();
        batch = batches.end() - 1;
        batch->evaluator = agent.evaluator;
      }
      batch->requests.push_back(leaf->request());
      batch->trees.push_back(&tree);
      return true;
    }
    game.searching = false;
    play_move(game, driver, tree);
    if (!game_over(game)) {
      const int resigns = driver.resignation(game.index, game.moves);
      if (resigns != -1 && resigns != 0 && resigns != 1)
        throw std::logic_error("GameDriver::resignation returned player " + std::to_string(resigns));
      game.resigned = resigns;
    }
  }
  return false;
}

void GameRunner::play_move(ActiveGame& game, GameDriver& driver, SearchTree& tree) {
  const SearchResult search = tree.result();
  const Action action = driver.choose_move(game.index, *game.state, search);
  MoveStats move;
  move.action = action;
  move.player = game.state->current_player();
  move.legal.assign(search.legal.begin(), search.legal.end());
  move.visits = search.visits;
  move.search_visits = search.search_visits;
  move.policy = search.policy;
  move.improved_policy = search.improved_policy;
  move.proven = search.proven;
  move.child_proven = search.child_proven;
  move.root_value = search.root_value;
  move.simulations = search.simulations;
  move.full_search = game.full_search;
  game.state->apply(action);  // throws std::logic_error for an illegal choice
  for (auto& t : game.trees) t->advance(action);
  game.moves.push_back(std::move(move));
  ++stats_.moves;
}

FinishedGame GameRunner::finish(ActiveGame& game) const {
  FinishedGame done;
  done.index = game.index;
  done.agents = game.agents;
  done.resigned = game.resigned;
  done.adjudicated = game.resigned < 0 && !game.state->is_terminal();
  if (game.resigned >= 0) done.result = game.resigned == 0 ? -1.0 : 1.0;
  else done.result = done.adjudicated ? 0.0 : game.state->result(0);
  done.start = std::move(game.start);
  done.final_state = std::move(game.state);
  done.moves = std::move(game.moves);
  return done;
}

RunnerStats GameRunner::run(GameDriver& driver, const std::atomic<bool>* stop) {
  stats_ = RunnerStats{};
  std::vector<std::unique_ptr<ActiveGame>> active;
  std::vector<std::unique_ptr<ActiveGame>> waiting;  // games with a leaf in this round's batches
  std::vector<Batch> batches;
  int next_index = 0;
  auto report = [&](ActiveGame& game) {
    driver.game_finished(finish(game));
    ++stats_.games;
  };
  while (stop == nullptr || !stop->load()) {
    // Step the games in progress, then fill the free places with new games.
    batches.clear();
    waiting.clear();
    for (auto& game : active) {
      if (step_game(*game, driver, batches)) waiting.push_back(std::move(game));
      else report(*game);
    }
    while (static_cast<int>(waiting.size()) < config_.concurrent_games &&
           next_index < config_.num_games) {
      auto game = start_game(driver, next_index++);
      if (step_game(*game, driver, batches)) waiting.push_back(std::move(game));
      else report(*game);
    }
    active.swap(waiting);
    if (active.empty()) break;

    for (Batch& batch : batches) {
      const int n = static_cast<int>(batch.requests.size());
      batch.results.resize(batch.requests.size());
      batch.evaluator->evaluate(batch.requests.data(), n, batch.results.data());
      for (std::size_t i = 0; i < batch.trees.size(); ++i) batch.trees[i]->receive(batch.results[i]);
      ++stats_.evaluator_calls;
      stats_.evaluations += n;
      stats_.max_batch = std::max(stats_.max_batch, n);
    }
    ++stats_.rounds;
  }
  return stats_;
}

}  // namespace oppidum::mcts
