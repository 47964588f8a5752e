// Weights of the classical evaluation of Murus Gallicus (games/mg/classic_eval.h), in evaluation
//   points. Set by hand, not by `oppidum tune`: they are the alpha-beta player's weights
//   (games/mg/evaluation.h: tower 24, wall 10, 3 per tower row, 1 per wall row, 1 per
//   distribution, -60 per enemy breakthrough threat), with the classical features alpha-beta lacks
//   at 0. Every fit tried so far (94 k positions of the engine's own games, 1.43 M of a network's
//   self-play) predicts game results better and played worse: the hand weights won 84.2% against
//   `alphabeta:depth=7` where the fitted ones won 78.5% (400 games each, docs/BASELINES.md).
//   `oppidum tune --game mg` refits from these weights and writes this file.
#pragma once

namespace oppidum::mg {

inline constexpr const char* kClassicWeightsSource =
    "hand-set: the alpha-beta evaluation's weights (fits played worse, docs/BASELINES.md)";
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
    24,   // towers
    10,   // walls
    3,    // tower_rows
    1,    // wall_rows
    1,    // mobility
    -60,  // threats
    0,    // launch_towers
    0,    // home_walls
    0,    // sacrifices
    0,    // exposed_walls
    0,    // tempo
};

}  // namespace oppidum::mg
