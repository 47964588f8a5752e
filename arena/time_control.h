// Time controls of the searching players (`ms=` and `clock=` in a player spec) and the rule that
// spends a game clock: one place that turns a spec's time keys, the clock left and the position
// into a deadline, for any player (uct, net, alphabeta, and any player that searches to a
// deadline).
//
// Keys (at most one of them in a spec):
//   ms=T     every move gets T milliseconds (1..3600000): its search stops at the move's start + T
//   clock=S  the player has S seconds (0.01..86400) for all its moves of a game, spent by the
//            rule below
// Without a time key a player searches by its fixed budget (sims=, depth=), exactly as before,
// so every recorded result stays reproducible. With one, the fixed budget becomes a maximum (a
// timed search is not reproducible: it depends on the machine's speed and load).
//
// The rule for a game clock (move_budget), with `left` the seconds left on the clock at the
// move's start and the game's ClockFacts (games/game.h):
//   usable     = left - reserve, reserve = kReserveShare * clock + kReserveSeconds (what the
//                search's stop, the process and the protocol's I/O may cost beyond the budget)
//   moves_left = max(kMinMovesLeft, ceil(max(typical_plies - ply, typical_plies / 4) / 2)), the
//                player's own moves still expected
//   budget     = usable / moves_left
//                x kPhaseFactor for a move within the first two plies of the phase start (DVONN:
//                  the first move of each side after the placement)
//                x kDecidedFactor when the player's previous search in this game found the result
//                  decided (a proven win or loss, a mate score), so a won game is played out fast
//   and at least kMinBudgetSeconds (a search then answers from its first evaluation or
//   iteration).
// A move gets at most 0.3 of `usable` (kPhaseFactor / kMinMovesLeft), so the player keeps the
// reserve when the game runs longer than expected: the share of each move shrinks as the clock
// runs down.
//
// Losing on time: a match measures every move of a direct player (arena/match.h) and an
// external program's referee measures its program's moves (arena/external.h); a player whose
// moves of one game took more than its clock + kTimeGrace, or one move more than ms + kTimeGrace,
// loses that game on time (a forfeit, `time: ...`).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "arena/spec.h"
#include "games/game.h"

namespace oppidum::arena {

using SteadyClock = std::chrono::steady_clock;

inline constexpr double kReserveShare = 0.02;
inline constexpr double kReserveSeconds = 0.02;
inline constexpr int kMinMovesLeft = 10;
inline constexpr double kPhaseFactor = 3.0;
inline constexpr double kDecidedFactor = 0.25;
inline constexpr double kMinBudgetSeconds = 0.001;
// What a match or a referee allows beyond a player's clock (or its time per move) before the
// player loses on time: on a loaded machine a thread may wait that long for a core (the tests'
// 2-core box has shown stalls of 190 ms).
inline constexpr double kTimeGrace = 0.25;

// The longest time a move may be given (ms=, an external program's timeout_ms=): an hour.
inline constexpr int kMaxMoveMs = 3'600'000;

// The range of a clock= (and of `engine --time`, `gauntlet --clock`), in seconds.
inline constexpr double kMinClockSeconds = 0.01;
inline constexpr double kMaxClockSeconds = 86'400;

// The time keys of one player spec.
struct TimeControl {
  int move_ms = 0;           // ms=: milliseconds per move; 0: none
  double clock_seconds = 0;  // clock=: seconds per game; 0: none

  bool timed() const { return move_ms > 0 || clock_seconds > 0; }
  // ",ms=80", ",clock=5" or "" for a canonical spec.
  std::string spec_suffix() const;
  // The most a player may take for one move (ms + grace) or one game (clock + grace), for the
  // match's and the referee's time checks; 0 for an untimed player.
  double move_limit_seconds() const;
  double game_limit_seconds() const;
};

// Reads `ms` and `clock` from a spec (both are among the reader's known keys); throws
// PlayerSpecError for a value out of range or both keys at once.
TimeControl read_time_control(SpecReader& reader);

// The seconds one move may take by the rule above: `clock_left` seconds left on a game clock of
// `control.clock_seconds`, or control.move_ms for a time per move (then clock_left and the rest
// are not used). `decided`: the player's last search in this game found the result decided.
double move_budget(const TimeControl& control, const GameState& state, double clock_left,
                   bool decided);

// A player's clocks, one per game in progress (keyed by the game id of
// Player::choose_move_in_game), with the rule's inputs: what every timed player keeps. Safe to
// use from several threads (one thread per game at a time).
class GameClocks {
 public:
  explicit GameClocks(TimeControl control) : control_(control) {}

  // The deadline of the move that starts at `start` in game `game_id` (a new game starts with a
  // full clock).
  SteadyClock::time_point deadline(int game_id, const GameState& state,
                                   SteadyClock::time_point start);
  // Charges the move that started at `start` to the game's clock (up to now), and records
  // whether its search found the result decided.
  void charge(int game_id, SteadyClock::time_point start, bool decided);
  // Takes `seconds` off the clock of game `game_id` (Player::charge_time).
  void charge_seconds(int game_id, double seconds);
  // Forgets the game.
  void end_game(int game_id);
  // Seconds left on the clock of game `game_id` (the full clock for a game not started).
  double seconds_left(int game_id);

 private:
  struct Game {
    double seconds_left = 0;
    bool decided = false;
  };
  Game& game(int game_id);  // under mutex_

  TimeControl control_;
  std::mutex mutex_;
  std::map<int, Game> games_;
};

}  // namespace oppidum::arena
