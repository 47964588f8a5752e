// Weights of the classical evaluation of Murus Gallicus (games/mg/classic_eval.h), in evaluation
//   points, written by `oppidum tune`; rerun it rather than editing by hand.
// Data: 93920 positions of 1930 games from:
//   mg-c3k.txt
// K 0.0574201; log loss on the training split 0.62225 -> 0.60677, held out (every 10th game)
//   0.62598 -> 0.61955.
#pragma once

namespace oppidum::mg {

inline constexpr const char* kClassicWeightsSource =
    "oppidum tune: 93920 positions of 1930 games, K 0.0574201, held-out log loss 0.62598"
    " -> 0.61955";
inline constexpr const char* kClassicWeightNames[] = {
    "towers",
    "walls",
    "tower_rows",
    "wall_rows",
    "mobility",
    "threats",
    "launch_towers",
    "home_walls",
    "sacrifices",
    "exposed_walls",
    "tempo",
};
inline constexpr double kClassicWeights[] = {
    1.38334,  // towers
    -2.76667,  // walls
    2.34858,  // tower_rows
    1.58569,  // wall_rows
    1.51782,  // mobility
    -18.2343,  // threats
    4.45929,  // launch_towers
    -1.76747,  // home_walls
    0.140221,  // sacrifices
    0.492348,  // exposed_walls
    0.884469,  // tempo
};

}  // namespace oppidum::mg
