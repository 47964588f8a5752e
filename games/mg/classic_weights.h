// Hand-set starting weights of Murus Gallicus's classical evaluation (games/mg/classic_eval.h), in
// the points of games/mg/evaluation.h (a wall = 10). `oppidum tune` overwrites this file with
// fitted weights.
#pragma once

namespace oppidum::mg {

inline constexpr const char* kClassicWeightsSource = "hand-set";
inline constexpr const char* kClassicWeightNames[] = {
    "towers", "walls", "tower_rows", "wall_rows", "mobility", "threats", "launch_towers",
    "home_walls", "sacrifices", "exposed_walls", "tempo"};
inline constexpr double kClassicWeights[] = {24, 10, 3, 1, 1, -60, 0, 0, 0, 0, 0};

}  // namespace oppidum::mg
