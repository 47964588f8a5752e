// Players: what sits on one side of an arena game, made from a spec string (arena/spec.h).
//
//   random                         a uniformly random legal move
//   uct:sims=N[,cpuct=C,rollouts=K] PUCT search (cpuct default 3, 1 rollout per leaf) with uniform
//                                  priors and random-rollout values
//                                  (mcts::RolloutEvaluator): the classic UCT baseline
//   alphabeta:depth=N              negamax alpha-beta to a fixed depth with the static evaluation
//                                  of games/<game>/evaluation.h (docs/BASELINES.md)
//   classic:ms=N|depth=N|nodes=N[,hash=MB]  the classical engine (arena/classic.h): PVS with a
//                                  table kept across a game's moves and fitted evaluations; a
//                                  time per move and/or a fixed depth or node budget
//   net:checkpoint=PATH,sims=N[,cpuct=C,root=R]  search with a trained network, root R = puct
//                                  (default) or gumbel (without Gumbel noise); the network comes
//                                  from a factory the app passes in (arena/ never sees model/)
//   human                          a person at the terminal (arena/players.h)
//   external:cmd="PROGRAM"[,protocol=codecup,timeout_ms=T,clock=S,openings=1,name=N]  another
//                                  program speaking the engine line protocol, one process per
//                                  game (arena/external.h)
// Time controls (arena/time_control.h): uct, net and alphabeta also take `ms=T` (milliseconds
// per move) or `clock=S` (seconds per game, spent by a documented rule); sims= and depth= are
// then optional maxima (uct:ms=80, net:checkpoint=PATH,clock=5, alphabeta:clock=5). A Gumbel
// root needs sims= and no time key.
//
// Two kinds of players, one interface:
// - Untimed search players (uct, net) expose a `SearchAgent` (an evaluator and search
//   settings). A match runs them through mcts::GameRunner, so many games share one thread and
//   their leaf evaluations go to the evaluator in batches, and each agent keeps its own tree
//   across the moves of a game.
// - Direct players (random, alphabeta, classic, human, external, and timed uct and net) only
//   choose a move from a position.
// Players that keep something per game (an external program: one process per game; a timed
// player: its clock, and a timed search its tree; the classical engine: its transposition table)
// see the game through choose_move_in_game and game_ended; the others ignore both.
// Every player also answers `choose_move` (a search player runs one fresh search), which is how
// `oppidum play` and any sequential loop use them.
//
// Randomness: `choose_move` and `search_agent` take a seed and draw nothing else, so a player is a
// pure function of (position, seed) apart from a human's input and a time control (a timed search
// goes as far as the machine gets by its deadline). Players other than `human` are
// safe to share between threads (an external player as long as every game in progress has its own
// id).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "arena/spec.h"
#include "arena/time_control.h"
#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/search.h"

namespace oppidum::arena {

// The search side of a search player, for one batch of games.
struct SearchAgent {
  std::shared_ptr<mcts::Evaluator> evaluator;
  mcts::SearchConfig search;  // search.simulations is the budget of every move
};

// Thrown by a player's move choice when the player loses the game by its own fault: an external
// program that sends an illegal move or garbage, sends nothing in time, or ends. A match records
// the game as lost by that player with what() as the reason (GameRecord::forfeit); play_game lets
// it propagate.
class Forfeit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

  // Games with an identity. A match (and play_game) asks for the moves of game `game_id` here and
  // calls game_ended(game_id) once that game is over or abandoned; the ids of the games in progress
  // are distinct. A player that keeps a session per game (an external program) keys it by the id;
  // by default choose_move_in_game is choose_move and game_ended does nothing. May throw Forfeit.
  virtual Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) {
    (void)game_id;
    return choose_move(state, seed);
  }
  // Must not throw.
  virtual void game_ended(int game_id) noexcept { (void)game_id; }
  // True when the player can only play games from the game's initial position (an external
  // program without the Opening line: the protocol cannot set up a position). A match then plays
  // no random openings.
  virtual bool needs_initial_position() const { return false; }
  // Before the first move of game `game_id`, a match tells the players the opening it starts
  // from: the moves from the game's initial position (empty: the initial position itself). An
  // external program that speaks the Opening line hears it; others ignore it.
  virtual void game_started(int game_id, const std::vector<Action>& opening) {
    (void)game_id;
    (void)opening;
  }
  // The player's time control (arena/time_control.h): a match checks a direct player's moves
  // against it (losing on time). Untimed players, and external programs (whose referee keeps
  // their clock), give none.
  virtual TimeControl time_control() const { return {}; }
  // Time the caller's clock counted against this player in game `game_id` outside its moves
  // (`oppidum engine`: the program's start, which the protocol's clock sees); a player on a game
  // clock takes it off that clock, the others ignore it.
  virtual void charge_time(int game_id, double seconds) {
    (void)game_id;
    (void)seconds;
  }

  // A match's stop flag (MatchHooks::stop) while the match runs, nullptr after it. A direct
  // player (alphabeta and classic; uct and net on a time control) ends a move in progress within
  // a few milliseconds of the flag becoming true, with the best move found so far (a search
  // player once its root is evaluated), so that a stopped match (Ctrl-C, the web server's
  // deadline) never waits for a deep search or a long move's time (`ms=` allows an hour).
  virtual void stop_moves_when(const std::atomic<bool>* flag) { (void)flag; }

  // True for players that read from a person; a match refuses them.
  virtual bool interactive() const { return false; }
  // True when playing many games at once pays off (a network behind a batching server): a match
  // then gives each worker thread many games in one runner.
  virtual bool wants_batching() const { return false; }
};

// The flag of Player::stop_moves_when, kept by a player for its searches.
class MoveStopFlag {
 public:
  void set(const std::atomic<bool>* flag) { flag_.store(flag); }
  // The stop predicate of a search starting now (empty: no flag).
  std::function<bool()> predicate() const {
    const std::atomic<bool>* flag = flag_.load();
    if (flag == nullptr) return {};
    return [flag] { return flag->load(std::memory_order_relaxed); };
  }

 private:
  std::atomic<const std::atomic<bool>*> flag_{nullptr};
};

// Makes the evaluator of a `net:` player from a checkpoint path. Throws (any std::exception) when
// the checkpoint cannot be loaded or is for another game. The same evaluator may be shared by
// several players and threads, so it must be thread-safe (mcts::Evaluator's contract).
using NetEvaluatorFactory =
    std::function<std::shared_ptr<mcts::Evaluator>(const Game& game, const std::string& checkpoint)>;

struct PlayerOptions {
  NetEvaluatorFactory net_factory;  // empty: `net:` specs are refused with a clear error
  // A time control for a searching player (uct, net, alphabeta, classic) whose spec has no time
  // key (`oppidum engine --time`, `gauntlet --clock`); the other players ignore it.
  TimeControl default_time;
  std::istream* human_in = nullptr;   // the `human` player reads moves here (default std::cin)
  std::ostream* human_out = nullptr;  // and draws the board here (default std::cout)
};

// The most simulations a spec may ask of a search (`sims=`).
inline constexpr std::int64_t kMaxSimulations = 10'000'000;

// The players a spec can name, for error messages and --help: the programs, and a person.
#define OPPIDUM_PROGRAM_PLAYERS                                                                  \
  "random, uct:sims=N, alphabeta:depth=N, classic:ms=N, net:checkpoint=PATH,sims=N (each also " \
  "with ms=T or clock=S instead of or beside sims/depth), external:cmd=\"PROGRAM\""
inline constexpr const char* kProgramList = OPPIDUM_PROGRAM_PLAYERS;
inline constexpr const char* kPlayerList = OPPIDUM_PROGRAM_PLAYERS ", human";
#undef OPPIDUM_PROGRAM_PLAYERS

// Makes the player named by `spec` for `game`; throws PlayerSpecError saying what is wrong with the
// spec (unknown player, unknown key, value out of range, no network factory for `net:`).
std::unique_ptr<Player> make_player(const Game& game, std::string_view spec,
                                    const PlayerOptions& options = {});

// The keys by which a spec names its own search budget: a fixed one or a time control.
inline constexpr const char* kBudgetKeys[] = {"sims", "depth", "nodes", "ms", "clock"};
// True when `spec` gives one of kBudgetKeys (`gauntlet --clock` leaves such a player as it is).
bool names_budget(const PlayerSpec& spec);

// The search settings of arena players: no root noise and always the most visited move, so a
// search player is at its strongest and the openings alone vary the games.
mcts::SearchConfig arena_search_config(int simulations, float cpuct);

}  // namespace oppidum::arena
