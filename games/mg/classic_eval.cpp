#include "games/mg/classic_eval.h"

#include <iterator>

#include "games/mg/classic_weights.h"
#include "games/mg/evaluation.h"
#include "util/bits.h"

namespace oppidum::mg {
namespace {

enum Feature : int {
  kTowers, kWalls, kTowerRows, kWallRows, kMobility, kThreats, kLaunchTowers, kHomeWalls,
  kSacrifices, kExposedWalls, kTempo, kNumFeatures
};
static_assert(std::size(kClassicWeightNames) == kNumFeatures &&
                  std::size(kClassicWeights) == kNumFeatures,
              "games/mg/classic_weights.h does not match the features");

constexpr Bitboard kColA = 0x0101010101010101ULL & kBoard;
constexpr Bitboard kColH = kColA << (kCols - 1);
constexpr Bitboard row_mask(int row) { return Bitboard{0xFF} << (row * kCols); }

using util::popcount;

// The squares next to a square of `b` (eight directions).
OPPIDUM_ALWAYS_INLINE Bitboard around(Bitboard b) {
  const Bitboard west = (b >> 1) & ~kColH, east = (b << 1) & ~kColA;
  const Bitboard row = b | west | east;
  return (row | (row << kCols) | (row >> kCols)) & kBoard & ~b;
}

constexpr int relative_row(int player, int row) { return player == 0 ? row : kRows - 1 - row; }

struct Side {
  int towers = 0, walls = 0, tower_rows = 0, wall_rows = 0, mobility = 0, launch_towers = 0,
      home_walls = 0, sacrifices = 0, exposed_walls = 0;
};

OPPIDUM_ALWAYS_INLINE Side side(const Position& pos, int player) {
  constexpr int kLaunchRow = kRows - 3;
  Side s;
  const Bitboard towers = pos.towers(player), walls = pos.walls(player);
  s.towers = popcount(towers);
  s.walls = popcount(walls);
  for (int row = 0; row < kRows; ++row) {
    const int rel = relative_row(player, row);
    s.tower_rows += (rel < kLaunchRow ? rel : kLaunchRow) * popcount(towers & row_mask(row));
    s.wall_rows += rel * popcount(walls & row_mask(row));
  }
  s.mobility = distributions(pos, player);
  s.launch_towers = popcount(towers & row_mask(player == 0 ? kLaunchRow : kRows - 1 - kLaunchRow));
  s.home_walls = popcount(walls & row_mask(player == 0 ? 0 : kRows - 1));
  s.sacrifices = popcount(towers & around(pos.walls(1 - player)));
  s.exposed_walls = popcount(walls & around(pos.towers(1 - player)));
  return s;
}

}  // namespace

OPPIDUM_POPCNT_CLONES bool classic_features(const Position& pos, ClassicFeatures& out) {
  out.count = kNumFeatures;
  out.values.fill(0.0f);
  const int us = pos.side_to_move();
  if (breakthrough_towers(pos, us) != 0) return false;
  const Side a = side(pos, us), b = side(pos, 1 - us);
  auto set = [&out](Feature f, int value) { out.values[f] = static_cast<float>(value); };
  set(kTowers, a.towers - b.towers);
  set(kWalls, a.walls - b.walls);
  set(kTowerRows, a.tower_rows - b.tower_rows);
  set(kWallRows, a.wall_rows - b.wall_rows);
  set(kMobility, a.mobility - b.mobility);
  set(kThreats, popcount(breakthrough_towers(pos, 1 - us)));
  set(kLaunchTowers, a.launch_towers - b.launch_towers);
  set(kHomeWalls, a.home_walls - b.home_walls);
  set(kSacrifices, a.sacrifices - b.sacrifices);
  set(kExposedWalls, a.exposed_walls - b.exposed_walls);
  set(kTempo, 1);
  return true;
}

const ClassicModel& classic_model(const Position&) {
  static const ClassicModel model =
      classic_model_of(kClassicWeightNames, kClassicWeights, kClassicWeightsSource);
  return model;
}

bool classic_threatened(const Position& pos) {
  const int us = pos.side_to_move();
  return breakthrough_towers(pos, 1 - us) != 0 && breakthrough_towers(pos, us) == 0;
}

bool classic_null_move(Position& pos) {
  pos.pass_turn_for_search();
  return true;
}

int classic_evaluate(const Position& pos) {
  ClassicFeatures features;
  if (!classic_features(pos, features)) return kWinNextMove;
  return classic_score(classic_model(pos), features, kWinNextMove - 1);
}

}  // namespace oppidum::mg
