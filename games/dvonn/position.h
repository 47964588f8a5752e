// DVONN (Kris Burm, project GIPF) as a small value type; the rules are those of docs/RULES.md.
//
// Board: 49 spaces in rows of 9, 10, 11, 10, 9: row 1 A1..I1, row 2 A2..J2, row 3 A3..K3, row 4
// B4..K4, row 5 C5..K5. They sit on a 5 x 11 grid, grid index = row * 11 + col (row 0..4 for rows
// 1..5, col 0..10 for A..K), so one 64-bit word holds a set of spaces (55 bits, `kValid` marks the
// 49 real ones). The neighbours of (c, r) are (c+1, r), (c+1, r+1), (c, r+1), (c-1, r),
// (c-1, r-1), (c, r-1): grid steps +1, +12, +11, -1, -12, -11.
//
// Pieces: 23 white, 23 black, 3 red DVONN pieces; White (player 0) starts.
// - Phase 1, plies 0..48: plies 0, 1, 2 place the DVONN pieces (White, Black, White), then Black,
//   White, ... place their own pieces on empty spaces; White places the 49th. Side = ply % 2.
// - Phase 2, from ply 49, White first; every ply (a pass included) changes the side to move.
//   A stack topped by one's colour moves (a lone DVONN piece never does) unless all six neighbours
//   exist and are occupied. A stack of height h moves exactly h spaces along one of the six axes,
//   passing over anything, and lands on an occupied space; it goes on top. After the move (and
//   after a pass: a set-up position may hold one) every 6-connected group of stacks holding no
//   DVONN piece is removed, whatever its colours.
//   A side with no move passes (then PASS is its only action); the game ends when neither side can
//   move. Score = total height of the stacks a side tops; the higher score wins, equal is a draw.
//
// Actions (344): 0..48 place on space k, where k numbers the 49 spaces in reading order A1..I1,
// A2..J2, A3..K3, B4..K4, C5..K5 (increasing grid index); 49 + d * 49 + k moves the stack on space k
// in direction d (its height fixes the distance), d = 0 E (+1,0), 1 NE (+1,+1), 2 N (0,+1),
// 3 W (-1,0), 4 SW (-1,-1), 5 S (0,-1) as (column, row) steps; 343 = PASS. Actions are absolute
// (not in the side to move's frame). Move notation: `D4`, `A2A1`, `PASS` (lower case accepted).
//
// Symmetries (on grid coordinates (c, r)): 0 identity; 1 rotation by 180 degrees (10-c, 4-r);
// 2 mirror swapping rows 1 and 5 (c-r+2, 4-r); 3 mirror swapping left and right (8-c+r, r).
// All are involutions and 3 = 1 after 2. On the 6 grid cells off the board, transform_cell uses a
// fixed permutation of those cells so that it is a bijection of the whole 5 x 11 plane.
//
// Input planes (kPlanes x 5 x 11 floats, row-major, plane p cell (r, c) at p*55 + r*11 + c),
// "own" = the side to move's colour; cells off the board are 0 except in planes 16 and 17:
//   0 space on the board                1 empty space
//   2 lone DVONN piece                  3 stack holding a DVONN piece (lone ones included)
//   4..8 own-topped stack of height 1, 2, 3, 4, >= 5          9 own-topped stack: height / 10
//   10..14 opponent-topped stack of height 1, 2, 3, 4, >= 5   15 opponent-topped: height / 10
//   16 all ones in the placement phase  17 all ones while the next placement is a DVONN piece
//   18 own-topped stack with a legal move now (phase 2 only)
//   19 opponent-topped stack that would have a legal move if the opponent were to move (phase 2)
//
// Position notation (docs/RULES.md): rows 1..5 joined by '/', spaces of a row joined by ','; a space is
// '.' or <W|B|R><height>[*] ('*': the stack holds a DVONN piece; a lone DVONN piece is written
// `R1*`, `R1` is accepted), then side (W|B) and ply, the three fields separated by blanks
// (util/text.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "games/game.h"

namespace oppidum::dvonn {

using Bitboard = std::uint64_t;

inline constexpr int kRows = 5;
inline constexpr int kCols = 11;
inline constexpr int kGridCells = kRows * kCols;  // 55
inline constexpr int kNumSpaces = 49;
inline constexpr int kNumDirections = 6;
inline constexpr int kPlacementPlies = 49;  // phase 2 starts at this ply
inline constexpr int kDvonnPieces = 3;
inline constexpr int kMoveActionBase = kNumSpaces;
inline constexpr Action kPassAction = kNumSpaces + kNumDirections * kNumSpaces;  // 343
inline constexpr int kNumActions = kPassAction + 1;                               // 344
inline constexpr int kNumSymmetries = 4;
inline constexpr int kPlanes = 20;
// Each move merges two stacks, so there are at most 48 moves; a pass is always followed by a move,
// so at most 48 passes: no game is longer than 49 + 96 = 145 plies.
inline constexpr int kMaxGameLength = 200;

// Column and row steps of the six directions E NE N W SW S.
inline constexpr int kDirCol[kNumDirections] = {1, 1, 0, -1, -1, 0};
inline constexpr int kDirRow[kNumDirections] = {0, 1, 1, 0, -1, -1};

inline constexpr bool on_board(int row, int col) {
  return row >= 0 && row < kRows && col >= (row > 2 ? row - 2 : 0) &&
         col <= (row < 2 ? 8 + row : kCols - 1);
}

inline constexpr Bitboard kValid = [] {
  Bitboard b = 0;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c)
      if (on_board(r, c)) b |= Bitboard{1} << (r * kCols + c);
  return b;
}();

// Space number k (0..48, reading order) of a grid cell, or -1 off the board; and the inverse.
inline constexpr std::array<std::int8_t, kGridCells> kSpaceOfCell = [] {
  std::array<std::int8_t, kGridCells> t{};
  int k = 0;
  for (int g = 0; g < kGridCells; ++g)
    t[g] = static_cast<std::int8_t>(on_board(g / kCols, g % kCols) ? k++ : -1);
  return t;
}();
inline constexpr std::array<std::int8_t, kNumSpaces> kCellOfSpace = [] {
  std::array<std::int8_t, kNumSpaces> t{};
  int k = 0;
  for (int g = 0; g < kGridCells; ++g)
    if (on_board(g / kCols, g % kCols)) t[k++] = static_cast<std::int8_t>(g);
  return t;
}();

inline constexpr Action placement_action(int space) { return space; }
inline constexpr Action move_action(int space, int direction) {
  return kMoveActionBase + direction * kNumSpaces + space;
}

// All cells next to a cell of `b` (the six steps need no column masks: every step that wraps
// around a grid row end from a real space lands off the board).
inline constexpr Bitboard neighbours(Bitboard b) {
  return ((b << 1) | (b >> 1) | (b << 11) | (b >> 11) | (b << 12) | (b >> 12)) & kValid;
}

// Image of grid cell (row, col) under a symmetry: row * 11 + col of the image. Defined on the
// whole 5 x 11 grid (a bijection), the real spaces mapping onto real spaces.
int transform_cell(int symmetry, int row, int col);
// Image of a direction under a symmetry.
int transform_direction(int symmetry, int direction);
Action transform_action(int symmetry, Action action);

// "A1".."K5" for a grid cell on the board.
std::string cell_name(int cell);
// The 49 spaces in space order as hexagons, row 5 at the top, each labelled with its name.
const BoardLayout& board_layout();

class Position {
 public:
  enum Top : std::uint8_t { kWhite = 0, kBlack = 1, kRed = 2 };

  static Position initial();
  // One line in the notation of docs/RULES.md; throws GameError saying what and where.
  static Position parse(std::string_view text);

  int side_to_move() const {
    return ply_ < kPlacementPlies ? ply_ % 2 : (ply_ - kPlacementPlies) % 2;
  }
  int ply() const { return ply_; }
  bool in_placement() const { return ply_ < kPlacementPlies; }

  // Legal actions in increasing order; empty exactly when the game is over.
  void legal_actions(ActionList& out) const;
  int count_legal_actions() const;
  bool is_legal(Action action) const;
  // Precondition: is_legal(action).
  void apply(Action action);
  bool is_terminal() const;
  // +1 / 0 / -1 for `player` by the current scores (the game result once terminal).
  double result(int player) const;
  int score(int player) const;

  std::string to_string() const;
  std::string action_to_string(Action action) const;
  // Parses a move and checks it is legal here; throws GameError saying what is wrong or why the
  // move is illegal.
  Action parse_action(std::string_view move) const;

  // Zobrist hash of the stacks, the side to move and the phase (not the ply).
  std::uint64_t hash() const;
  // Writes kPlanes * 55 floats.
  void encode(float* planes) const;
  Position transformed(int symmetry) const;
  std::string pretty() const;
  bool is_consistent() const;
  // The web page's board (games/game.h): cell k is space k. A stack shows its top piece, over a
  // DVONN piece when it holds one, and its height as the label.
  std::vector<CellView> board_view() const;
  // A placement is clicked on its space, a move on the stack and then where it lands, PASS on
  // nothing. Placements and moves never share a position, so no clicks start another's.
  std::vector<int> action_cells(Action action) const;

  // Board queries (grid cells).
  Bitboard occupied() const { return white_ | black_ | red_; }
  Bitboard topped_by(int player) const { return player == 0 ? white_ : black_; }
  Bitboard lone_dvonn() const { return red_; }
  Bitboard holds_dvonn() const { return dvonn_; }
  int height(int cell) const { return height_[cell]; }
  // Stacks of `player` that have at least one legal move (ignoring whose turn it is; phase 2).
  Bitboard mobile(int player) const;

 private:
  // Landing cell of the stack on `cell` moving in direction d, or -1 if off the board or empty.
  int landing(int cell, int direction) const;
  // Why the move from `from` to `to` is illegal here (phase 2, game not over); empty if legal.
  std::string illegal_move_reason(int from, int to) const;
  std::string token(int cell) const;
  // Moves the stack of a (legal, non-pass) move action of `side` onto its landing space.
  void move_stack(Action action, int side);

  std::array<std::uint8_t, kGridCells> height_{};  // 0 = empty
  Bitboard white_ = 0;  // stacks topped by a white piece
  Bitboard black_ = 0;  // stacks topped by a black piece
  Bitboard red_ = 0;    // lone DVONN pieces
  Bitboard dvonn_ = 0;  // stacks holding at least one DVONN piece (lone ones included)
  int ply_ = 0;
};

}  // namespace oppidum::dvonn
