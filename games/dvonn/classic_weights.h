// Hand-set starting weights of DVONN's classical evaluation (games/dvonn/classic_eval.h), in the
// points of games/dvonn/evaluation.h (one unit of controlled height = 10). `oppidum tune`
// overwrites this file with fitted weights.
#pragma once

namespace oppidum::dvonn {

inline constexpr const char* kClassicWeightsSource = "hand-set";
inline constexpr const char* kClassicWeightNames[] = {
    "height", "height_late", "stacks", "mobile", "near_dvonn", "dvonn_top", "far_height",
    "attacks", "move_tempo", "next_dvonn", "free_side", "edge", "near_enemy", "place_tempo"};
inline constexpr double kClassicWeights[] = {10, 0, 0, 4, 3, 0, 0, 0, 0, 3, 1, 0, 0, 0};

}  // namespace oppidum::dvonn
