// DVONN's evaluation for the classical engine (games/classic_eval.h states the contract; the
// alpha-beta player's games/dvonn/evaluation.h is a separate, fixed one). Linear in the features
// below, all mover minus opponent unless said otherwise; each phase has its own features (the
// other phase's are 0), and the weights are fitted by `oppidum tune`
// (games/dvonn/classic_weights.h).
//
// Moving phase:
//   height        controlled height (the sum of the heights of own-topped stacks: the final score)
//   height_late   controlled height times the share of the 49 spaces already emptied (the count
//                 matters more as the end nears)
//   stacks        own-topped stacks
//   mobile        own-topped stacks with a legal move
//   near_dvonn    own-topped stacks holding or next to a DVONN piece (safe from being cut off)
//   dvonn_top     own-topped stacks holding a DVONN piece
//   far_height    own height in stacks three or more steps (over stacks) from every DVONN piece:
//                 what a disconnection would take away
//   attacks       opponent-topped stacks an own stack can land on (the reach of a stack of height
//                 h is the space h steps away along each axis, as the rules say)
//   move_tempo    1 (the side to move's advantage)
// Placement phase:
//   next_dvonn    own pieces next to a DVONN piece
//   free_side     own pieces with a free side (on the edge or next to an empty space)
//   edge          own pieces on the edge of the board
//   near_enemy    own pieces next to an opponent's piece
//   place_tempo   1
#pragma once

#include "games/classic_eval.h"
#include "games/dvonn/position.h"

namespace oppidum::dvonn {

bool classic_features(const Position& pos, ClassicFeatures& out);
int classic_evaluate(const Position& pos);
const ClassicModel& classic_model(const Position& pos);
// DVONN has no single-move threat that decides the game: false.
inline bool classic_threatened(const Position&) { return false; }
// No null moves: a DVONN move can be forced to hurt its mover (a stack that must move away from
// the DVONN pieces, a jump onto an own stack), so standing still bounds nothing. Not measured.
inline bool classic_null_move(Position&) { return false; }

}  // namespace oppidum::dvonn
