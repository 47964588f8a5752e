// Weights of the classical evaluation of DVONN (games/dvonn/classic_eval.h), in evaluation points,
//   written by `oppidum tune`; rerun it rather than editing by hand.
// Data: 106724 positions of 1318 games from:
//   dvonn-c3k.txt
// K 0.0147613; log loss on the training split 0.65628 -> 0.63814, held out (every 10th game)
//   0.66224 -> 0.64194.
#pragma once

namespace oppidum::dvonn {

inline constexpr const char* kClassicWeightsSource =
    "oppidum tune: 106724 positions of 1318 games, K 0.0147613, held-out log loss 0.66224"
    " -> 0.64194";
inline constexpr const char* kClassicWeightNames[] = {
    "height",
    "height_late",
    "stacks",
    "mobile",
    "near_dvonn",
    "dvonn_top",
    "far_height",
    "attacks",
    "move_tempo",
    "next_dvonn",
    "free_side",
    "edge",
    "near_enemy",
    "place_tempo",
};
inline constexpr double kClassicWeights[] = {
    -6.95023,  // height
    8.04631,  // height_late
    48.939,  // stacks
    -2.22169,  // mobile
    6.56548,  // near_dvonn
    -4.2594,  // dvonn_top
    -8.72076,  // far_height
    7.46801,  // attacks
    11.6892,  // move_tempo
    15.9177,  // next_dvonn
    -5.74831,  // free_side
    -3.09734,  // edge
    2.69218,  // near_enemy
    0.0491943,  // place_tempo
};

}  // namespace oppidum::dvonn
