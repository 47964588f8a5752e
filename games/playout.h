// Uniformly random playouts on a concrete position type: the rules benchmark and the conformance
// tests use them. Games longer than `max_plies` stop there (Murus Gallicus has no draw rule, so a
// random game could in principle wander for a long time).
#pragma once

#include <random>

#include "games/game.h"

namespace oppidum {

// Plays random actions from `pos` until it is terminal or `max_plies` actions were played; returns
// the number of actions played.
template <class P, class Rng>
int random_playout(P& pos, Rng& rng, int max_plies) {
  ActionList actions;
  int plies = 0;
  for (; plies < max_plies; ++plies) {
    pos.legal_actions(actions);
    if (actions.empty()) break;
    std::uniform_int_distribution<int> pick(0, actions.size() - 1);
    pos.apply(actions[pick(rng)]);
  }
  return plies;
}

}  // namespace oppidum
