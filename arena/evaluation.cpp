#include "arena/evaluation.h"

namespace oppidum::arena {
namespace {

using mg::Bitboard;

constexpr Bitboard kColA = 0x0101010101010101ULL & mg::kBoard;
constexpr Bitboard kColH = kColA << 7;
constexpr Bitboard row_mask(int row) { return Bitboard{0xFF} << (row * mg::kCols); }

// Every stone moved one step in direction d; stones leaving the board vanish.
constexpr Bitboard shift(Bitboard b, int d) {
  if (mg::kDirCol[d] == 1) b &= ~kColH;
  if (mg::kDirCol[d] == -1) b &= ~kColA;
  const int delta = mg::kDirRow[d] * mg::kCols + mg::kDirCol[d];
  return (delta > 0 ? b << delta : b >> -delta) & mg::kBoard;
}

constexpr int opposite(int d) { return (d + 4) % mg::kDirections; }

int popcount(std::uint64_t b) { return __builtin_popcountll(b); }

// Towers of `player` that can distribute in direction d.
Bitboard distributors(const mg::Position& pos, int player, int d) {
  const Bitboard free =
      mg::kBoard & ~(pos.towers(0) | pos.towers(1) | pos.walls(1 - player));
  const int back = opposite(d);
  const Bitboard s1_ok = shift(free, back);
  return pos.towers(player) & s1_ok & shift(s1_ok, back);
}

// Row index of `row` seen from `player`'s home row (0 = home row, 6 = the enemy home row).
constexpr int relative_row(int player, int row) { return player == 0 ? row : mg::kRows - 1 - row; }

int mg_side(const mg::Position& pos, int player) {
  constexpr int kTower = 24, kWall = 10, kTowerStep = 3, kWallStep = 1;
  constexpr int kLaunchRow = mg::kRows - 3;  // the last row a breakthrough starts from
  int score = kTower * popcount(pos.towers(player)) + kWall * popcount(pos.walls(player));
  for (int row = 0; row < mg::kRows; ++row) {
    const int rel = relative_row(player, row);
    const int tower_rows = rel < kLaunchRow ? rel : kLaunchRow;
    score += kTowerStep * tower_rows * popcount(pos.towers(player) & row_mask(row));
    score += kWallStep * rel * popcount(pos.walls(player) & row_mask(row));
  }
  return score + mg_distributions(pos, player);
}

}  // namespace

int mg_distributions(const mg::Position& pos, int player) {
  int count = 0;
  for (int d = 0; d < mg::kDirections; ++d) count += popcount(distributors(pos, player, d));
  return count;
}

Bitboard mg_breakthrough_towers(const mg::Position& pos, int player) {
  // A distribution reaches the enemy home row only from the launch row, forward or diagonally
  // forward (its second square lands on the home row).
  const int launch_row = player == 0 ? mg::kRows - 3 : 2;
  const int forward[3] = {player == 0 ? 0 : 4, player == 0 ? 1 : 3, player == 0 ? 7 : 5};
  Bitboard towers = 0;
  for (int d : forward) towers |= distributors(pos, player, d);
  return towers & row_mask(launch_row);
}

int evaluate_mg(const mg::Position& pos) {
  constexpr int kThreat = 60;
  const int us = pos.side_to_move();
  const int them = 1 - us;
  if (mg_breakthrough_towers(pos, us) != 0) return kWinNextMove;
  return mg_side(pos, us) - mg_side(pos, them) -
         kThreat * popcount(mg_breakthrough_towers(pos, them));
}

namespace {

int dvonn_placement_side(const dvonn::Position& pos, int player) {
  constexpr int kNextToDvonn = 3, kFreeSide = 1;
  const dvonn::Bitboard own = pos.topped_by(player);
  const dvonn::Bitboard empty = dvonn::kValid & ~pos.occupied();
  // A space has a free side when it is on the edge (fewer than six neighbours) or next to an empty
  // space.
  dvonn::Bitboard free_side = dvonn::neighbours(empty);
  for (dvonn::Bitboard b = own & ~free_side; b; b &= b - 1) {
    const dvonn::Bitboard cell = b & (~b + 1);
    if (popcount(dvonn::neighbours(cell)) < dvonn::kNumDirections) free_side |= cell;
  }
  return kNextToDvonn * popcount(own & dvonn::neighbours(pos.holds_dvonn())) +
         kFreeSide * popcount(own & free_side);
}

int dvonn_moving_side(const dvonn::Position& pos, int player) {
  constexpr int kHeight = 10, kMobile = 4, kSafe = 3;
  const dvonn::Bitboard own = pos.topped_by(player);
  int height = 0;
  for (dvonn::Bitboard b = own; b; b &= b - 1) height += pos.height(__builtin_ctzll(b));
  const dvonn::Bitboard dvonn_cells = pos.holds_dvonn();
  return kHeight * height + kMobile * popcount(pos.mobile(player)) +
         kSafe * popcount(own & (dvonn_cells | dvonn::neighbours(dvonn_cells)));
}

}  // namespace

int evaluate_dvonn(const dvonn::Position& pos) {
  const int us = pos.side_to_move();
  if (pos.in_placement()) return dvonn_placement_side(pos, us) - dvonn_placement_side(pos, 1 - us);
  return dvonn_moving_side(pos, us) - dvonn_moving_side(pos, 1 - us);
}

}  // namespace oppidum::arena
