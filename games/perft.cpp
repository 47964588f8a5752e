#include "games/perft.h"

namespace oppidum {

std::uint64_t perft(const GameState& state, int depth) {
  if (depth == 0) return 1;
  ActionList actions;
  state.legal_actions(actions);
  if (depth == 1) return static_cast<std::uint64_t>(actions.size());
  std::uint64_t n = 0;
  for (Action a : actions) {
    auto next = state.clone();
    next->apply(a);
    n += perft(*next, depth - 1);
  }
  return n;
}

}  // namespace oppidum
