#include "games/mg/evaluation.h"

#include "util/bits.h"

namespace oppidum::mg {
namespace {

constexpr Bitboard kColA = 0x0101010101010101ULL & kBoard;
constexpr Bitboard kColH = kColA << 7;
constexpr Bitboard row_mask(int row) { return Bitboard{0xFF} << (row * kCols); }

// Every stone moved one step in direction d; stones leaving the board vanish.
constexpr Bitboard shift(Bitboard b, int d) {
  if (kDirCol[d] == 1) b &= ~kColH;
  if (kDirCol[d] == -1) b &= ~kColA;
  const int delta = kDirRow[d] * kCols + kDirCol[d];
  return (delta > 0 ? b << delta : b >> -delta) & kBoard;
}

constexpr int opposite(int d) { return (d + 4) % kDirections; }

using util::popcount;

// Towers of `player` that can distribute in direction d.
OPPIDUM_ALWAYS_INLINE Bitboard distributors(const Position& pos, int player, int d) {
  const Bitboard free =
      kBoard & ~(pos.towers(0) | pos.towers(1) | pos.walls(1 - player));
  const int back = opposite(d);
  const Bitboard s1_ok = shift(free, back);
  return pos.towers(player) & s1_ok & shift(s1_ok, back);
}

// Row index of `row` seen from `player`'s home row (0 = home row, 6 = the enemy home row).
constexpr int relative_row(int player, int row) { return player == 0 ? row : kRows - 1 - row; }

OPPIDUM_ALWAYS_INLINE int count_distributions(const Position& pos, int player) {
  int count = 0;
  for (int d = 0; d < kDirections; ++d) count += popcount(distributors(pos, player, d));
  return count;
}

OPPIDUM_ALWAYS_INLINE int side_score(const Position& pos, int player) {
  constexpr int kTower = 24, kWall = 10, kTowerStep = 3, kWallStep = 1;
  constexpr int kLaunchRow = kRows - 3;  // the last row a breakthrough starts from
  int score = kTower * popcount(pos.towers(player)) + kWall * popcount(pos.walls(player));
  for (int row = 0; row < kRows; ++row) {
    const int rel = relative_row(player, row);
    const int tower_rows = rel < kLaunchRow ? rel : kLaunchRow;
    score += kTowerStep * tower_rows * popcount(pos.towers(player) & row_mask(row));
    score += kWallStep * rel * popcount(pos.walls(player) & row_mask(row));
  }
  return score + count_distributions(pos, player);
}

}  // namespace

OPPIDUM_POPCNT_CLONES int distributions(const Position& pos, int player) {
  return count_distributions(pos, player);
}

OPPIDUM_POPCNT_CLONES Bitboard breakthrough_towers(const Position& pos, int player) {
  // A distribution reaches the enemy home row only from the launch row, forward or diagonally
  // forward (its second square lands on the home row).
  const int launch_row = player == 0 ? kRows - 3 : 2;
  const int forward[3] = {player == 0 ? 0 : 4, player == 0 ? 1 : 3, player == 0 ? 7 : 5};
  Bitboard towers = 0;
  for (int d : forward) towers |= distributors(pos, player, d);
  return towers & row_mask(launch_row);
}

OPPIDUM_POPCNT_CLONES int evaluate(const Position& pos) {
  constexpr int kThreat = 60;
  const int us = pos.side_to_move();
  const int them = 1 - us;
  if (breakthrough_towers(pos, us) != 0) return kWinNextMove;
  return side_score(pos, us) - side_score(pos, them) -
         kThreat * popcount(breakthrough_towers(pos, them));
}

}  // namespace oppidum::mg
