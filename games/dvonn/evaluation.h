// DVONN's static evaluation for the alpha-beta player (arena/alphabeta.h finds `evaluate` by
// argument-dependent lookup): simple, documented, hand-set weights (the reasoning is in
// docs/BASELINES.md). A score for the side to move of a non-terminal position, positive when good
// for the mover, in points where a piece of controlled height is worth 10, within
// +-kMaxEvaluation (games/game.h).
//
// Per side (mover minus opponent). Placement phase: 3 per own piece next to a DVONN piece (safe
// from being cut off), 1 per own piece with a free side (on the edge or next to an empty space: it
// can move early). Moving phase: 10 per unit of controlled height (the final score), 4 per own
// stack that can move, 3 per own stack next to or holding a DVONN piece.
#pragma once

#include "games/dvonn/position.h"
#include "games/game.h"

namespace oppidum::dvonn {

int evaluate(const Position& pos);

}  // namespace oppidum::dvonn
