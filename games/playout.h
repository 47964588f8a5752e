// Uniformly random playouts on a concrete position type: the rules benchmark and the conformance
// tests use them. Games longer than `max_plies` stop there (Murus Gallicus has no draw rule, so a
// random game could in principle wander for a long time). And seeded random positions of any game:
// for the benchmarks, the tests and the trainer's learnable batches.
#pragma once

#include <memory>
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

// The position after rng() % max_plies uniformly random moves from the initial one (fewer where
// the game ends sooner), every draw taken from `rng` as `rng() % n`; `legal` gets its legal actions
// (empty: the game is over there).
inline std::unique_ptr<GameState> random_position(const Game& game, std::mt19937_64& rng,
                                                  int max_plies, ActionList& legal) {
  auto state = game.initial_state();
  const int plies = static_cast<int>(rng() % static_cast<unsigned>(max_plies));
  for (int p = 0; p < plies; ++p) {
    state->legal_actions(legal);
    if (legal.empty()) break;
    state->apply(legal[static_cast<int>(rng() % static_cast<unsigned>(legal.size()))]);
  }
  state->legal_actions(legal);
  return state;
}

}  // namespace oppidum
