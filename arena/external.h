// The external player: another program that plays over the engine line protocol
// (docs/FORMATS.md, "Engine protocol"; the one of the 2011 CodeCup DVONN competition), e.g.
//
//   external:cmd="./build/bin/oppidum engine --game mg --player alphabeta:depth=2",timeout_ms=5000
//
// Keys: cmd (required; run by /bin/sh -c), protocol (only `codecup`, the default), timeout_ms (the
// time the program has for each move, 1..3600000, default 10000), clock (seconds, 0.01..86400:
// the program's clock for a whole game, as the CodeCup kept it; default none), openings (1: the
// program reads the Opening line, so a match may start it from any opening; default 0), name
// (the player's name in results and records; default the command with its whitespace runs
// replaced by `_`). The canonical spec is `external:<name>`: a label without whitespace, not a
// spec to parse again.
//
// Clock (clock=S): the referee charges the program, per game, the time from its line(s) to the
// program to the program's answer, for every move; for its first move, from the moment the
// program starts reading its first lines (fewer bytes left in its input pipe than were written:
// FIONREAD), so its start-up is not charged but all its thinking is; a program whose moves of a
// game take more than S + kTimeGrace (arena/time_control.h) loses on time (`time: ...`) as soon
// as that time is out. timeout_ms still bounds every move.
//
// Openings (openings=1): before its first move of a game that does not start from the initial
// position, the program reads one line `Opening <move> <move> ...` (the opening's moves from the
// initial position, docs/FORMATS.md "Engine protocol"), then what it would read at that point of
// a game: `Start` when it is to move in the opening's position, else the opponent's moves since.
// Without it such games cannot be set up (needs_initial_position).
//
// Sessions. The player keeps one session per game in progress and per side, keyed by the game id
// of Player::choose_move_in_game (so the two games of a pair running side by side, or the games of
// several threads, each have their own process, and one player object may even play both sides).
// A session starts with the first move asked of it: the program is started under a keeper (below)
// with pipes on its standard input and output (its standard error is the arena's). It is
// then sent what happened since its last move: `Start` when it is the first player and the game is
// at its initial position, otherwise the opponent's moves, one line each: usually one; two for
// DVONN's Black after White's last placement and first move; none for White asked for that first
// move right after its last placement (the program writes both without reading in between). The
// player does not need the move list: it finds the opponent's moves by a search over the opponent's
// legal moves from the position after the program's own last move (or the initial position), as
// many plies deep as the ply counts differ, until the position equals the one it is asked about. A
// DVONN pass is an explicit move (`PASS`) like any other. Then one answer line is read (blank lines
// before it are skipped, within the same time), parsed and checked in that position.
//
// Forfeits (Player's Forfeit exception, with the reason): a line that is not move notation
// (`garbage: ...`), a well-formed but illegal move (`illegal move: ...`), no line within
// timeout_ms (`timeout: ...`), the program closing its output or ending (`no move: ...`). A reason
// quotes at most 60 bytes of the program's line, every byte made printable (games/quote.h), so the
// message is one readable line and never cut short by a NUL. The program is killed at once, with
// everything it started, and its session dropped.
//
// End of a game: game_ended(id) sends `Quit` to the sessions of that game, closes their input,
// waits up to a second for them to exit and then kills them with everything they started; the
// opponent's last move of a game is not relayed. The destructor kills the programs of any games
// still open.
//
// Keepers. Every process a program starts ends with its session, also one that left the program's
// process group or session (`setsid`) and one whose parent has exited. The program (`/bin/sh -c
// CMD`) runs as the child of a keeper: a /bin/sh of its own process group, made a child subreaper
// (prctl PR_SET_CHILD_SUBREAPER) before it is executed, so that every orphan of the program's tree
// becomes its child instead of init's. The keeper reports the program's exit status on a pipe and
// then waits until the referee ends the session: on every way out (forfeit, game end, destructor)
// the referee walks /proc for the keeper's descendants, stopping each one it finds (SIGSTOP, so
// none can start another meanwhile) until a walk finds no new one, then sends SIGKILL to all of
// them and the keeper, and reaps the keeper. The referee's own process is no subreaper, so its
// other children are untouched. Every live keeper is also in a small process-wide registry, so
// that kill_all_external_engines() (a signal handler's call) can end them all at once. A referee
// killed with SIGKILL cannot end anything; then each keeper, once its program has ended (programs
// end at the end of their input), kills its process group, and what left the group stays. So does
// what a program moves to a session of its own and orphans by killing its keeper (the same user
// may): a referee's care, not a sandbox (docs/FORMATS.md).
//
// Games from a position other than the initial one cannot be set up over the plain protocol, so
// needs_initial_position() is true without openings=1 (a match then plays without random
// openings).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "arena/player.h"
#include "arena/spec.h"
#include "games/game.h"

namespace oppidum::arena {

struct ExternalConfig {
  std::string command;     // run by /bin/sh -c
  std::string name;        // empty: derived from the command
  int timeout_ms = 10000;  // per move, from sending the opponent's move (or Start) to the answer
  double clock_seconds = 0;  // per game (0: no clock)
  bool openings = false;     // the program reads the Opening line
};

// Makes the config of an `external:` spec (its keys read from `spec`); throws PlayerSpecError.
ExternalConfig parse_external_spec(PlayerSpec spec);

// Kills every external program running in this process (of every ExternalPlayer) with everything
// it started, as a session's end does (see Keepers above), and every program started after it:
// meant for a process that is stopping (`oppidum arena` on a signal). Touches only lock-free
// atomics and buffers on the stack and calls only system calls (open, read, getdents64, kill;
// errno is kept), so a signal handler may call it; the players still reap their keepers as usual
// (a killed program forfeits the move it was asked for). Programs beyond the registry's capacity
// (4096 at once) are not reached.
void kill_all_external_engines() noexcept;

class ExternalPlayer final : public Player {
 public:
  explicit ExternalPlayer(ExternalConfig config);
  ~ExternalPlayer() override;

  std::string spec() const override;
  // Throws std::logic_error: an external program needs a game id (choose_move_in_game).
  Action choose_move(const GameState& state, std::uint64_t seed) override;
  // Throws Forfeit (see above); std::runtime_error when the program cannot be started at all (no
  // pipes, no process), std::logic_error when `state` does not follow from the session's last
  // position by one move.
  Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) override;
  void game_ended(int game_id) noexcept override;
  bool needs_initial_position() const override { return !config_.openings; }
  // Keeps the opening of the game for the Opening line (openings=1; else nothing).
  void game_started(int game_id, const std::vector<Action>& opening) override;

 private:
  class Session;

  ExternalConfig config_;
  std::mutex mutex_;
  std::map<std::pair<int, int>, std::unique_ptr<Session>> sessions_;  // by (game id, side)
  std::map<int, std::vector<Action>> openings_;  // openings=1: by game id, until its end
};

}  // namespace oppidum::arena
