#include "games/dvonn/evaluation.h"

#include "util/bits.h"

namespace oppidum::dvonn {
namespace {

using util::popcount;

int placement_side(const Position& pos, int player) {
  constexpr int kNextToDvonn = 3, kFreeSide = 1;
  const Bitboard own = pos.topped_by(player);
  const Bitboard empty = kValid & ~pos.occupied();
  // A space has a free side when it is on the edge (fewer than six neighbours) or next to an empty
  // space.
  Bitboard free_side = neighbours(empty);
  for (Bitboard b = own & ~free_side; b; b &= b - 1) {
    const Bitboard cell = b & (~b + 1);
    if (popcount(neighbours(cell)) < kNumDirections) free_side |= cell;
  }
  return kNextToDvonn * popcount(own & neighbours(pos.holds_dvonn())) +
         kFreeSide * popcount(own & free_side);
}

int moving_side(const Position& pos, int player) {
  constexpr int kHeight = 10, kMobile = 4, kSafe = 3;
  const Bitboard own = pos.topped_by(player);
  int height = 0;
  for (Bitboard b = own; b; b &= b - 1) height += pos.height(__builtin_ctzll(b));
  const Bitboard dvonn_cells = pos.holds_dvonn();
  return kHeight * height + kMobile * popcount(pos.mobile(player)) +
         kSafe * popcount(own & (dvonn_cells | neighbours(dvonn_cells)));
}

}  // namespace

int evaluate(const Position& pos) {
  const int us = pos.side_to_move();
  if (pos.in_placement()) return placement_side(pos, us) - placement_side(pos, 1 - us);
  return moving_side(pos, us) - moving_side(pos, 1 - us);
}

}  // namespace oppidum::dvonn
