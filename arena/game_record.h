// Finished arena games as plain text, one game per line (the `--record FILE` format of
// `oppidum arena` and `oppidum play`, described in docs/BASELINES.md):
//
//   <game> <first player's spec> <second player's spec> <result> <move> <move> ... [# forfeit: WHY]
//
// The game is its registered name (games/registry.h; files written before the name was recorded
// start with the first spec, and readers then take the first game in which the moves are legal).
// The first player is the game's side 0 (Murus Gallicus Light, DVONN White, tic-tac-toe X). The result is `1-0` (the first player
// won), `0-1` or `1/2-1/2` (a draw, including a game stopped at the ply limit). The moves are in
// docs/RULES.md notation from the game's initial position, the random opening plies included. A
// game lost by a forfeit (an external program's garbage, illegal or late move, or its exit: the
// moves stop before it) ends with `# forfeit: ` and the reason, one printable line.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "games/game.h"

namespace oppidum::arena {

// "1-0", "0-1" or "1/2-1/2" for a result from the first player's view (+1, -1, 0).
const char* result_notation(double result_first);
// Whether `text` is one of those three.
bool is_result_notation(std::string_view text);
// And back: +1 for "1-0", -1 for "0-1", 0 for anything else (a draw, "1/2-1/2"; split_game_line
// takes no other).
int result_of_notation(std::string_view notation);

// Replays `moves` from the initial position of `game` to write them in notation; throws
// std::logic_error for an illegal move.
// `forfeit`: the reason of a forfeit, empty for a game that ended by the rules or the ply limit.
std::string format_game_line(const Game& game, const std::array<std::string, 2>& specs,
                             const std::vector<Action>& moves, double result_first,
                             const std::string& forfeit = "");

// The marker that starts a record line's forfeit.
inline constexpr const char* kForfeitMarker = "# forfeit: ";

// A record line's fields, as written (the moves in notation, not yet checked against the rules).
struct GameLine {
  const Game* game = nullptr;  // the game it names; null in lines from before the name was written
  std::string first, second, result;
  std::vector<std::string> moves;
  std::string forfeit;  // empty: the game was not lost by a forfeit
};

// The most moves a record line may hold: more than any game of a registered game lasts.
inline constexpr std::size_t kMaxRecordedMoves = 100000;
// The longest move a record line may hold: longer than any move's notation.
inline constexpr std::size_t kMaxRecordedMoveBytes = 64;
// The longest record line read: kMaxRecordedMoves moves of a registered game's notation (at most
// 6 bytes, such as `a1-off`, and a blank) and two specs fit in it.
inline constexpr std::size_t kMaxRecordLineBytes = std::size_t{2} << 20;
// The largest record file `tune` reads (a line at a time, util::for_each_line; millions of games).
inline constexpr std::uint64_t kMaxRecordFileBytes = std::uint64_t{1} << 31;

// Splits a record line; nothing for a blank line, one without a result (`1-0`, `0-1`,
// `1/2-1/2`) where it belongs, a player with a control character, more than kMaxRecordedMoves
// moves or a move longer than kMaxRecordedMoveBytes. The one reader of the format (tune, the web
// page).
std::optional<GameLine> split_game_line(std::string_view line);

// Appends lines to a record file, creating it; throws std::runtime_error naming the file when it
// cannot (the path is not a regular file, the disk is full), and, from the constructor, when the
// file is there but is no record file (its first line no game line): nothing is written to it.
class RecordWriter {
 public:
  explicit RecordWriter(std::string path);
  void write(const std::string& line);

 private:
  void write_line(const std::string& text) const;
  std::string path_;
};

}  // namespace oppidum::arena
