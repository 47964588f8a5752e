// Tic-tac-toe as a small value type: the solved game that lets a test show a trained network
// playing perfectly (a draw from the start with best play on both sides).
//
// Rules: a 3 x 3 board, X (player 0) moves first, then O (player 1); a move puts the mover's mark
// on an empty cell. A player who gets three marks in a row (a rank, a file or a diagonal) wins at
// once; a full board without such a line is a draw. There is no pass.
//
// Cells and actions: files a..c left to right, ranks 1..3 bottom to top; cell (and action) index =
// (rank - 1) * 3 + file, so a1 = 0, b1 = 1, c1 = 2, a2 = 3, ..., c3 = 8 (9 actions). Actions are
// absolute (not in the side to move's frame): the board has no direction. Move notation: the cell,
// `b2` (upper case accepted).
//
// Position notation: ranks 3, 2, 1 joined by '/', each three cells from `x`, `o` and `.`, then a
// blank and the side to move (`x` or `o`; the blank rule of util/text.h); the start is
// `.../.../... x`. Upper case X and O are accepted on input. The side to move is implied by the
// marks (X moves first), and the notation must agree with it; every accepted position is one that
// a game can reach: X has as many marks as O or one more, at most one side has a line, and the
// side with a line made the last move. The ply is the number of marks.
//
// Symmetries (the 8 of the square, on (row, col) = (rank - 1, file)): 0 identity; 1 quarter turn,
// (r, c) -> (c, 2 - r), a1 -> c1; 2 half turn, (r, c) -> (2 - r, 2 - c); 3 three quarter turns,
// (r, c) -> (2 - c, r); 4 mirror swapping files a and c, (r, c) -> (r, 2 - c); 5 mirror swapping
// ranks 1 and 3, (r, c) -> (2 - r, c); 6 mirror in the diagonal a1-c3, (r, c) -> (c, r); 7 mirror
// in the diagonal a3-c1, (r, c) -> (2 - c, 2 - r). Symmetries 1 and 3 are each other's inverse,
// the others their own.
//
// Input planes (kPlanes x 3 x 3 floats, row-major, plane p cell (r, c) at p * 9 + r * 3 + c, row 0
// = rank 1; "own" = the side to move's marks):
//   0 own marks   1 opponent marks   2 all ones (marks the board's edge for padded convolutions)
// Encoding version 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "games/game.h"

namespace oppidum::ttt {

inline constexpr int kRows = 3;
inline constexpr int kCols = 3;
inline constexpr int kCells = kRows * kCols;
inline constexpr int kNumActions = kCells;  // 9
inline constexpr int kPlanes = 3;
inline constexpr int kNumSymmetries = 8;
inline constexpr int kNumLines = 8;

// A set of cells: bit k is cell k.
using Cells = std::uint16_t;

inline constexpr Cells kFullBoard = (1 << kCells) - 1;

// The eight lines: ranks 1..3, files a..c, the diagonals a1-c3 and a3-c1.
inline constexpr Cells kLines[kNumLines] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};

// Image (row * 3 + col) of cell (row, col) under a symmetry.
int transform_cell(int symmetry, int row, int col);
Action transform_action(int symmetry, Action action);

// "a1".."c3".
std::string cell_name(int cell);

class Position {
 public:
  static Position initial() { return Position(); }
  // One line in the notation above; throws GameError saying what and where.
  static Position parse(std::string_view text);

  // X moves first, so the marks say whose turn it is.
  int side_to_move() const { return ply() % 2; }
  int ply() const { return __builtin_popcount(marks_[0] | marks_[1]); }

  // The empty cells in increasing order; empty exactly when the game is over.
  void legal_actions(ActionList& out) const;
  int count_legal_actions() const;
  bool is_legal(Action action) const;
  // Precondition: is_legal(action).
  void apply(Action action);
  bool is_terminal() const { return winner() >= 0 || (marks_[0] | marks_[1]) == kFullBoard; }
  // +1 / 0 / -1 for `player` once terminal (0 before).
  double result(int player) const;
  // 1 for the winner of a finished game, 0 otherwise (a draw, or the game goes on).
  int score(int player) const;

  std::string to_string() const;
  std::string action_to_string(Action action) const;
  // Parses a cell and checks it is empty and the game goes on; throws GameError saying why not.
  Action parse_action(std::string_view move) const;

  // Zobrist hash of the marks (they fix the side to move).
  std::uint64_t hash() const;
  // Writes kPlanes * 9 floats.
  void encode(float* planes) const;
  Position transformed(int symmetry) const;
  std::string pretty() const;
  bool is_consistent() const;

  Cells marks(int player) const { return marks_[player]; }
  Cells empty_cells() const { return kFullBoard & ~(marks_[0] | marks_[1]); }
  // The board description (games/game.h): a mark is one piece of its player, labelled X or O;
  // a move is its cell.
  std::vector<CellView> board_view() const;
  std::vector<int> action_cells(Action action) const { return {action}; }
  // The player with three in a row, or -1.
  int winner() const;

 private:
  Cells marks_[2] = {0, 0};
};

// The 3 x 3 squares a1..c3 in cell order, rank 3 at the top, with the files and ranks beside them.
const BoardLayout& board_layout();

// Whether `marks` hold a whole line.
inline bool has_line(Cells marks) {
  for (Cells line : kLines)
    if ((marks & line) == line) return true;
  return false;
}

}  // namespace oppidum::ttt
