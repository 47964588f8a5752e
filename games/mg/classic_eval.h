// Murus Gallicus's evaluation for the classical engine (games/classic_eval.h states the contract;
// the alpha-beta player's games/mg/evaluation.h is a separate, fixed one). A mover that can break
// through now scores kWinNextMove by rule (no features); otherwise the evaluation is linear in the
// features below, mover minus opponent unless said otherwise, with the weights of
// games/mg/classic_weights.h (for now the alpha-beta evaluation's, set by hand: fits by
// `oppidum tune` played worse):
//   towers, walls        material
//   tower_rows           rows a tower stands ahead of its home row, counted up to the launch row
//                        (two rows before the enemy home row)
//   wall_rows            rows a wall stands ahead of its home row
//   mobility             legal distributions (games/mg/evaluation.h's `distributions`)
//   threats              the opponent's towers that can break through with their next move (the
//                        opponent's count only)
//   launch_towers        towers on the launch row (breakthroughs in the making)
//   home_walls           walls on the own home row (a breakthrough cannot land on them)
//   sacrifices           own towers next to an enemy wall (a wall they can take)
//   exposed_walls        own walls next to an enemy tower (walls the opponent can take)
//   tempo                1 (the side to move's advantage)
#pragma once

#include "games/classic_eval.h"
#include "games/mg/position.h"

namespace oppidum::mg {

bool classic_features(const Position& pos, ClassicFeatures& out);
int classic_evaluate(const Position& pos);
const ClassicModel& classic_model(const Position& pos);
// The opponent can break through with its next move and the mover cannot at once.
bool classic_threatened(const Position& pos);
// A null move (the same stones, the opponent to move): true. Having to move seldom hurts in Murus
// Gallicus (a side usually has dozens of moves; one with none loses, which the search sees
// anyway); the pruning is a measured gain (docs/BASELINES.md), not a proof.
bool classic_null_move(Position& pos);

}  // namespace oppidum::mg
