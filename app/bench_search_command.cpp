// `oppidum bench search`: simulations per second of the PUCT search itself, with the uniform
// evaluator (no network), so that the figure is the pure cost of the tree: selection, applying
// moves to a copy of the root, expansion, backup. Two paths, both games, one thread:
// - one tree: seeded games played by one SearchTree each (tree reuse, no root noise, sampled
//   moves for 8 plies, then the most visited), `--simulations` per move;
// - the runner: self-play's path, mcts::GameRunner with `--in-flight` games at once, each leaf
//   sent to the evaluator in one batch per round, as the inference server gets them.
// Fixed seeds: the node and move counts printed are a signature that only a change of behaviour
// moves.
#include <chrono>
#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "arena/player.h"
#include "mcts/evaluator.h"
#include "mcts/runner.h"
#include "mcts/search.h"

namespace oppidum::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchSearchOptions {
  int simulations = 800;
  int moves = 60;
  int tree_games = 30;
  int games = 512;
  int in_flight = 64;
  int runner_simulations = 64;
};

// The arena's noise-free search, sampling with temperature 1 for the first plies so that each
// seed's game is different.
mcts::SearchConfig bench_config(int simulations, std::uint64_t seed) {
  mcts::SearchConfig c = arena::arena_search_config(simulations, mcts::SearchConfig{}.cpuct);
  c.temperature_plies = 8;
  c.temperature = 1.0f;
  c.seed = seed;
  return c;
}

void bench_one_tree(const Game& game, const BenchSearchOptions& o) {
  mcts::UniformEvaluator uniform;
  long long simulations = 0, moves = 0;
  const auto start = Clock::now();
  for (int g = 0; g < o.tree_games; ++g) {
    auto state = game.initial_state();
    mcts::SearchTree tree(*state, bench_config(o.simulations, 1000 + static_cast<std::uint64_t>(g)));
    for (int m = 0; m < o.moves && !state->is_terminal(); ++m, ++moves) {
      const mcts::SearchResult r = tree.run(uniform, o.simulations);
      simulations += r.simulations;
      state->apply(r.action);
      tree.advance(r.action);
    }
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%-6s one tree: %3d games, %5lld moves x %d simulations: %9lld simulations %7.3f s "
              "%10.0f sim/s\n",
              game.name().c_str(), o.tree_games, moves, o.simulations, simulations, s,
              static_cast<double>(simulations) / s);
}

class CountingDriver final : public mcts::GameDriver {
 public:
  explicit CountingDriver(const Game& game) : game_(game) {}
  mcts::GameSetup setup_game(int) override {
    mcts::GameSetup setup;
    setup.start = game_.initial_state();
    return setup;
  }
  void game_finished(mcts::FinishedGame game) override {
    moves += static_cast<long long>(game.moves.size());
    for (const auto& m : game.moves) simulations += m.simulations;
  }
  long long moves = 0, simulations = 0;

 private:
  const Game& game_;
};

void bench_runner(const Game& game, const BenchSearchOptions& o) {
  mcts::UniformEvaluator uniform;
  mcts::RunnerConfig rc;
  rc.num_games = o.games;
  rc.concurrent_games = o.in_flight;
  rc.max_plies = 200;
  rc.seed = 7;
  mcts::GameRunner runner({{"bench", &uniform, bench_config(o.runner_simulations, 7)}}, rc);
  CountingDriver driver(game);
  const auto start = Clock::now();
  const mcts::RunnerStats stats = runner.run(driver);
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%-6s runner:   %3d games (%d in flight), %5lld moves x %d simulations: %9lld "
              "simulations %7.3f s %10.0f sim/s (%lld batches)\n",
              game.name().c_str(), o.games, o.in_flight, driver.moves, o.runner_simulations,
              driver.simulations,
              s, static_cast<double>(driver.simulations) / s,
              static_cast<long long>(stats.evaluator_calls));
}

}  // namespace

void register_bench_search(CLI::App& bench) {
  auto o = std::make_shared<BenchSearchOptions>();
  auto* cmd = bench.add_subcommand(
      "search",
      "Simulations per second of the search itself (uniform evaluator, one thread): one tree "
      "playing a game, and the multi-game runner of self-play; every game.");
  cmd->add_option("--simulations", o->simulations, "simulations per move of the one-tree game")
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--moves", o->moves, "moves per one-tree game at most")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--tree-games", o->tree_games, "one-tree games (seeds 1000, 1001, ...)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--games", o->games, "games the runner plays")->check(CLI::Range(1, 1000000));
  cmd->add_option("--in-flight", o->in_flight, "runner games in flight (the batch)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--runner-simulations", o->runner_simulations, "simulations per runner move")
      ->check(CLI::Range(1, 100000));
  cmd->callback([o] {
    std::printf("oppidum bench search (uniform evaluator, one thread)\n");
    for (const Game* game : all_games()) {
      bench_one_tree(*game, *o);
      bench_runner(*game, *o);
    }
  });
}

}  // namespace oppidum::app
