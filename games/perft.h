// Perft: the number of leaf action sequences of a given length, the standard check of move
// generation against independent implementations. A terminal position has no actions, so it
// contributes 0 at every depth of 1 or more. `bulk` counts the last ply without applying it.
#pragma once

#include <cstdint>

#include "games/game.h"

namespace oppidum {

// For a concrete position type (fast path: copy-make, no virtual calls).
template <class P>
std::uint64_t perft(const P& pos, int depth, bool bulk = true) {
  if (depth == 0) return 1;
  if (bulk && depth == 1) return static_cast<std::uint64_t>(pos.count_legal_actions());
  ActionList actions;
  pos.legal_actions(actions);
  std::uint64_t n = 0;
  // The last one or two plies without a recursive call per child (a call that would only
  // return 1 or count): every leaf still applied, or counted in bulk.
  if (depth == 1) {
    for (Action a : actions) {
      P next = pos;
      next.apply(a);
      ++n;
    }
    return n;
  }
  if (bulk && depth == 2) {
    for (Action a : actions) {
      P next = pos;
      next.apply(a);
      n += static_cast<std::uint64_t>(next.count_legal_actions());
    }
    return n;
  }
  for (Action a : actions) {
    P next = pos;
    next.apply(a);
    n += perft(next, depth - 1, bulk);
  }
  return n;
}

// Through the game contract (slower; used to check the contract agrees with the fast path).
std::uint64_t perft(const GameState& state, int depth);

}  // namespace oppidum
