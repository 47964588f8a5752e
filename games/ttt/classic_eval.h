// Tic-tac-toe's evaluation for the classical engine (games/classic_eval.h states the contract):
// one feature, the alpha-beta evaluation itself (games/ttt/evaluation.h), with weight 1. The
// search sees the whole game anyway; the game is here so the engine runs on every registered game.
#pragma once

#include "games/classic_eval.h"
#include "games/ttt/evaluation.h"

namespace oppidum::ttt {

inline bool classic_features(const Position& pos, ClassicFeatures& out) {
  out.count = 1;
  out.values.fill(0.0f);
  out.values[0] = static_cast<float>(evaluate(pos));
  return true;
}

inline int classic_evaluate(const Position& pos) { return evaluate(pos); }

// A threat at the horizon is no question here: the search sees the whole game.
inline bool classic_threatened(const Position&) { return false; }

// No null moves: the search sees the whole game without them.
inline bool classic_null_move(Position&) { return false; }

inline const ClassicModel& classic_model(const Position&) {
  static const ClassicModel model{{"evaluation"}, {1.0}, "fixed"};
  return model;
}

}  // namespace oppidum::ttt
