// The engine side of the engine line protocol (docs/FORMATS.md, "Engine protocol"; compatible with
// the 2011 CodeCup DVONN competition): `oppidum engine` runs one game for one player over standard
// input and output.
//
// The engine reads one line at a time. `Start` (only as the first line) makes it the first player
// (Murus Gallicus Light, DVONN White); a move as the first line makes it the second. An extension:
// a first line `Opening <move> <move> ...` plays those moves from the initial position; the game
// then goes on from there as from a start: `Start` makes the engine the side to move, a move
// makes it the other side. Every other
// line is a move of the opponent in docs/RULES.md notation (Murus Gallicus `c1-c3`, `d5xe6`; DVONN `D4`,
// `A2A1`, `PASS`), checked and applied. Whenever it is then the engine's turn by the rules, it
// writes its move, one line, flushed at once, and keeps writing while it stays its turn: only
// DVONN's White moves twice in a row, its last placement (ply 48) and its first move (ply 49), so
// White writes two lines there and Black reads two. A side that must pass writes `PASS`. When the
// game is over (after either side's move) nothing more is written, and the engine waits for
// `Quit`. `Quit` or the end of input ends the call normally at any time. Blank lines are skipped;
// `Start` and `Quit` are matched without regard to case; surrounding whitespace and a '\r' are
// ignored.
//
// Moves are chosen with Player::choose_move_in_game (game id 0), the seed of the move at ply p
// being derive_seed(seed, kMoveStream, p) as in play_game; game_ended(0) follows however the call
// ends. Nothing but the moves is written to `out`. A player on a clock (`oppidum engine --time`,
// a time key in its spec) keeps its own clock from the moment each line is read to its answer;
// the reserve of the clock's rule (arena/time_control.h) covers the protocol's I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>

#include "arena/player.h"
#include "games/game.h"

namespace oppidum::arena {

// A protocol error: an unplayable opponent move, `Start` after the first line, a move after the
// game ended. The message names the input line and what was wrong.
class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Plays one game of `game` for `player` over the protocol. Throws EngineError for a protocol
// error, and whatever the player throws. `started`: when the program started (a referee's clock
// may run from then: it writes the first line at once); the time from it to this call (the
// start-up) is charged to the player's clock (Player::charge_time).
void run_engine(const Game& game, Player& player, std::istream& in, std::ostream& out,
                std::uint64_t seed,
                std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now());

}  // namespace oppidum::arena
