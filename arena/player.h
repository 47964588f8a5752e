// Players: what sits on one side of an arena game, made from a spec string (arena/spec.h).
//
//   random                         a uniformly random legal move
//   uct:sims=N[,cpuct=C,rollouts=K] PUCT search (cpuct default 3, 1 rollout per leaf) with uniform
//                                  priors and random-rollout values
//                                  (mcts::RolloutEvaluator): the classic UCT baseline
//   alphabeta:depth=N              negamax alpha-beta to a fixed depth with the static evaluation
//                                  of arena/evaluation.h (docs/BASELINES.md)
//   net:checkpoint=PATH,sims=N[,cpuct=C]  PUCT search with a trained network; the network comes
//                                  from a factory the app passes in (arena/ never sees model/)
//   human                          a person at the terminal (arena/players.h)
//
// Two kinds of players, one interface:
// - Search players (uct, net) expose a `SearchAgent` (an evaluator and search settings). A match
//   runs them through mcts::GameRunner, so many games share one thread and their leaf evaluations
//   go to the evaluator in batches, and each agent keeps its own tree across the moves of a game.
// - Direct players (random, alphabeta, human) only choose a move from a position.
// Every player also answers `choose_move` (a search player runs one fresh search), which is how
// `oppidum play` and any sequential loop use them.
//
// Randomness: `choose_move` and `search_agent` take a seed and draw nothing else, so a player is a
// pure function of (position, seed) apart from a human's input. Players other than `human` are
// safe to share between threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "arena/spec.h"
#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/search.h"

namespace oppidum::arena {

// The search side of a search player, for one batch of games.
struct SearchAgent {
  std::shared_ptr<mcts::Evaluator> evaluator;
  mcts::SearchConfig search;  // search.simulations is the budget of every move
};

class Player {
 public:
  virtual ~Player() = default;

  // The canonical spec, e.g. "uct:sims=1000": the player's name in results and records.
  virtual std::string spec() const = 0;

  // Search players: the agent a match runs, its evaluator seeded by `seed` where it draws random
  // numbers. Direct players: nullopt.
  virtual std::optional<SearchAgent> search_agent(std::uint64_t seed) const {
    (void)seed;
    return std::nullopt;
  }

  // The move to play in `state` (not terminal). The same state and seed give the same move.
  virtual Action choose_move(const GameState& state, std::uint64_t seed) = 0;

  // True for players that read from a person; a match refuses them.
  virtual bool interactive() const { return false; }
  // True when playing many games at once pays off (a network behind a batching server): a match
  // then gives each worker thread many games in one runner.
  virtual bool wants_batching() const { return false; }
};

// Makes the evaluator of a `net:` player from a checkpoint path. Throws (any std::exception) when
// the checkpoint cannot be loaded or is for another game. The same evaluator may be shared by
// several players and threads, so it must be thread-safe (mcts::Evaluator's contract).
using NetEvaluatorFactory =
    std::function<std::shared_ptr<mcts::Evaluator>(const Game& game, const std::string& checkpoint)>;

struct PlayerOptions {
  NetEvaluatorFactory net_factory;  // empty: `net:` specs are refused with a clear error
  std::istream* human_in = nullptr;   // the `human` player reads moves here (default std::cin)
  std::ostream* human_out = nullptr;  // and draws the board here (default std::cout)
};

// The players a spec can name, for error messages and --help.
inline constexpr const char* kPlayerList =
    "random, uct:sims=N, alphabeta:depth=N, net:checkpoint=PATH,sims=N, human";

// Makes the player named by `spec` for `game`; throws PlayerSpecError saying what is wrong with the
// spec (unknown player, unknown key, value out of range, no network factory for `net:`).
std::unique_ptr<Player> make_player(const Game& game, std::string_view spec,
                                    const PlayerOptions& options = {});

// The search settings of arena players: no root noise and always the most visited move, so a
// search player is at its strongest and the openings alone vary the games.
mcts::SearchConfig arena_search_config(int simulations, float cpuct);

}  // namespace oppidum::arena
