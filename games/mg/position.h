// Murus Gallicus (Phil Leduc, 2009) on bitboards; the rules are those of docs/RULES.md.
//
// Board: 8 columns a..h, 7 rows 1..7; square index = row * 8 + col (a1 = 0, h7 = 55), so the board
// fits one 64-bit word. Light (player 0) owns row 1 and moves first; Dark (player 1) owns row 7.
// A tower is two own stones on one square, a wall one stone; stacks never exceed two or mix colours.
// A turn is one action, never a pass:
// - distribute a tower in one of 8 directions: one stone to the adjacent square s1, one to s2 behind
//   it; each must be on the board and empty or an own wall (which becomes a tower). Notation `c1-c3`.
// - sacrifice: a tower drops a stone to remove an adjacent enemy wall (never a tower). `d5xe6`.
// The mover wins at once when a distribution puts a stone on the opponent's home row; the side to
// move loses when it has no action. There are no draws.
//
// Actions are in the side to move's frame (Dark sees the board turned upside down, row r <-> 8-r):
// action = (kind * 8 + direction) * 56 + frame_square, kind 0 = distribute, 1 = sacrifice,
// directions 0..7 = N NE E SE S SW W NW in that frame (N = towards the opponent). 896 actions.
//
// Input planes (5 x 7 x 8, frame rows, row 0 = the mover's home row): own towers, own walls,
// opponent towers, opponent walls, all ones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "games/game.h"

namespace oppidum::mg {

inline constexpr int kCols = 8;
inline constexpr int kRows = 7;
inline constexpr int kSquares = kCols * kRows;
inline constexpr int kDirections = 8;
inline constexpr int kNumActions = 2 * kDirections * kSquares;  // 896
inline constexpr int kPlanes = 5;
inline constexpr int kNumSymmetries = 2;  // identity, left-right mirror
inline constexpr int kStonesPerSide = 16;

using Bitboard = std::uint64_t;

inline constexpr Bitboard kBoard = (Bitboard{1} << kSquares) - 1;

enum Kind : int { kDistribute = 0, kSacrifice = 1 };

// Column and row steps of the directions N NE E SE S SW W NW (absolute board, Light's frame).
inline constexpr int kDirCol[kDirections] = {0, 1, 1, 1, 0, -1, -1, -1};
inline constexpr int kDirRow[kDirections] = {1, 1, 0, -1, -1, -1, 0, 1};

inline constexpr int make_action(Kind kind, int direction, int frame_square) {
  return (kind * kDirections + direction) * kSquares + frame_square;
}

// Direction image under a symmetry (1 = left-right mirror) and under the frame flip (up-down).
inline constexpr int mirror_direction(int d) { return (kDirections - d) % kDirections; }
inline constexpr int flip_direction(int d) { return (kDirections + 4 - d) % kDirections; }
inline constexpr int flip_square(int sq) { return (kRows - 1 - sq / kCols) * kCols + sq % kCols; }
inline constexpr int mirror_square(int sq) { return sq / kCols * kCols + (kCols - 1 - sq % kCols); }

Action transform_action(int symmetry, Action action);
// The squares a1..h7 in square order, row 7 at the top, files below the board and ranks on its left.
const BoardLayout& board_layout();
// Image (row * 8 + col) of plane cell (row, col) under a symmetry.
int transform_cell(int symmetry, int row, int col);

class Position {
 public:
  static Position initial();
  // One line in the notation of docs/RULES.md; throws GameError saying what and where.
  static Position parse(std::string_view text);

  int side_to_move() const { return side_; }
  int ply() const { return ply_; }

  void legal_actions(ActionList& out) const;
  int count_legal_actions() const;
  bool is_legal(Action action) const;
  // Precondition: is_legal(action).
  void apply(Action action);
  bool is_terminal() const;
  // The loser is the side to move of a terminal position.
  double result(int player) const;
  int score(int player) const;

  std::string to_string() const;
  std::string action_to_string(Action action) const;
  Action parse_action(std::string_view move) const;

  std::uint64_t hash() const;
  void encode(float* planes) const;
  Position transformed(int symmetry) const;
  std::string pretty() const;
  bool is_consistent() const;
  // The web page's board (games/game.h): cell i is square i; a tower shows two stones, a wall one.
  std::vector<CellView> board_view() const;
  // A distribution is clicked on its tower and then the far square, a sacrifice on its tower and
  // then the enemy wall (one square away, so never the same clicks as a distribution).
  std::vector<int> action_cells(Action action) const;

  Bitboard towers(int player) const { return towers_[player]; }
  Bitboard walls(int player) const { return walls_[player]; }
  int stones(int player) const;
  // True when the side to move has lost because the opponent reached its home row.
  bool broken_through() const;
  // The same stones with the other side to move: not a move of the game (Murus Gallicus has no
  // pass), but the classical engine's null move (games/classic_eval.h, classic_null_move).
  void pass_turn_for_search() {
    side_ = 1 - side_;
    ++ply_;
  }

 private:
  // Towers of the side to move that can distribute in direction d (absolute), and that can
  // sacrifice against an enemy wall in direction d.
  Bitboard distributors(int direction) const;
  Bitboard sacrificers(int direction) const;
  // Absolute square and direction of an action of the side to move.
  void decode(Action action, Kind& kind, int& direction, int& from) const;
  // Why a move in notation cannot be played here; empty if it can.
  std::string illegal_reason(Kind kind, int from, int direction, int target) const;

  Bitboard towers_[2] = {0, 0};
  Bitboard walls_[2] = {0, 0};
  int side_ = 0;
  int ply_ = 0;
};

}  // namespace oppidum::mg
