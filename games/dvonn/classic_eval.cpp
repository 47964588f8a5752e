#include "games/dvonn/classic_eval.h"

#include <array>
#include <iterator>

#include "games/dvonn/classic_weights.h"
#include "util/bits.h"

namespace oppidum::dvonn {
namespace {

enum Feature : int {
  kHeight, kHeightLate, kStacks, kMobile, kNearDvonn, kDvonnTop, kFarHeight, kAttacks, kMoveTempo,
  kNextDvonn, kFreeSide, kEdge, kNearEnemy, kPlaceTempo, kNumFeatures
};
static_assert(std::size(kClassicWeightNames) == kNumFeatures &&
                  std::size(kClassicWeights) == kNumFeatures,
              "games/dvonn/classic_weights.h does not match the features");

using util::popcount;
Bitboard bit(int cell) { return Bitboard{1} << cell; }

// The space a stack of height h on `cell` reaches along direction d, or -1 off the board; heights
// beyond the board's width never reach a space.
constexpr int kMaxReach = 11;
constexpr auto kReach = [] {
  std::array<std::array<std::array<std::int8_t, kMaxReach>, kNumDirections>, kGridCells> t{};
  for (int cell = 0; cell < kGridCells; ++cell)
    for (int d = 0; d < kNumDirections; ++d)
      for (int h = 0; h < kMaxReach; ++h) {
        const int row = cell / kCols + h * kDirRow[d], col = cell % kCols + h * kDirCol[d];
        t[cell][d][h] = static_cast<std::int8_t>(on_board(row, col) ? row * kCols + col : -1);
      }
  return t;
}();

// Cells with six neighbours on the board.
const Bitboard kInterior = [] {
  Bitboard b = 0;
  for (int cell = 0; cell < kGridCells; ++cell)
    if ((kValid & bit(cell)) && popcount(neighbours(bit(cell))) == kNumDirections) b |= bit(cell);
  return b;
}();

struct MovingSide {
  int height = 0, height_late = 0, stacks = 0, mobile = 0, near_dvonn = 0, dvonn_top = 0,
      far_height = 0, attacks = 0;
};

MovingSide moving_side(const Position& pos, int player, Bitboard far, int emptied) {
  MovingSide s;
  const Bitboard own = pos.topped_by(player);
  const Bitboard occ = pos.occupied();
  const Bitboard enemy = pos.topped_by(1 - player);
  const Bitboard dvonn = pos.holds_dvonn();
  // Surrounded stacks cannot move: six neighbours on the board, all occupied.
  const Bitboard free = own & ~(kInterior & ~neighbours(kValid & ~occ));
  Bitboard attacked = 0;
  for (Bitboard b = own; b; b &= b - 1) {
    const int cell = __builtin_ctzll(b);
    const int h = pos.height(cell);
    s.height += h;
    if (far & bit(cell)) s.far_height += h;
    if (!(free & bit(cell)) || h >= kMaxReach) continue;
    bool moves = false;
    for (int d = 0; d < kNumDirections; ++d) {
      const int to = kReach[cell][d][h];
      if (to < 0 || !(occ & bit(to))) continue;
      moves = true;
      attacked |= enemy & bit(to);
    }
    s.mobile += moves;
  }
  s.height_late = s.height * emptied / kNumSpaces;
  s.stacks = popcount(own);
  s.near_dvonn = popcount(own & (dvonn | neighbours(dvonn)));
  s.dvonn_top = popcount(own & dvonn);
  s.attacks = popcount(attacked);
  return s;
}

struct PlacementSide {
  int next_dvonn = 0, free_side = 0, edge = 0, near_enemy = 0;
};

PlacementSide placement_side(const Position& pos, int player) {
  PlacementSide s;
  const Bitboard own = pos.topped_by(player);
  const Bitboard empty = kValid & ~pos.occupied();
  s.next_dvonn = popcount(own & neighbours(pos.lone_dvonn()));
  s.free_side = popcount(own & (neighbours(empty) | ~kInterior));
  s.edge = popcount(own & ~kInterior);
  s.near_enemy = popcount(own & neighbours(pos.topped_by(1 - player)));
  return s;
}

}  // namespace

bool classic_features(const Position& pos, ClassicFeatures& out) {
  out.count = kNumFeatures;
  out.values.fill(0.0f);
  auto set = [&out](Feature f, int value) { out.values[f] = static_cast<float>(value); };
  const int us = pos.side_to_move();
  if (pos.in_placement()) {
    const PlacementSide a = placement_side(pos, us), b = placement_side(pos, 1 - us);
    set(kNextDvonn, a.next_dvonn - b.next_dvonn);
    set(kFreeSide, a.free_side - b.free_side);
    set(kEdge, a.edge - b.edge);
    set(kNearEnemy, a.near_enemy - b.near_enemy);
    set(kPlaceTempo, 1);
    return true;
  }
  // Stacks within two steps (over stacks) of a DVONN piece; the rest is `far`.
  const Bitboard occ = pos.occupied();
  const Bitboard dvonn = pos.holds_dvonn();
  const Bitboard ring1 = neighbours(dvonn) & occ;
  const Bitboard near = dvonn | ring1 | (neighbours(ring1) & occ);
  const Bitboard far = occ & ~near;
  const int emptied = kNumSpaces - popcount(occ);
  const MovingSide a = moving_side(pos, us, far, emptied);
  const MovingSide b = moving_side(pos, 1 - us, far, emptied);
  set(kHeight, a.height - b.height);
  set(kHeightLate, a.height_late - b.height_late);
  set(kStacks, a.stacks - b.stacks);
  set(kMobile, a.mobile - b.mobile);
  set(kNearDvonn, a.near_dvonn - b.near_dvonn);
  set(kDvonnTop, a.dvonn_top - b.dvonn_top);
  set(kFarHeight, a.far_height - b.far_height);
  set(kAttacks, a.attacks - b.attacks);
  set(kMoveTempo, 1);
  return true;
}

const ClassicModel& classic_model(const Position&) {
  static const ClassicModel model =
      classic_model_of(kClassicWeightNames, kClassicWeights, kClassicWeightsSource);
  return model;
}

int classic_evaluate(const Position& pos) {
  ClassicFeatures features;
  classic_features(pos, features);
  return classic_score(classic_model(pos), features, kWinNextMove - 1);
}

}  // namespace oppidum::dvonn
