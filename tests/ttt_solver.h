// Tic-tac-toe solved by plain minimax over the whole game, for the tests that check the rules
// against the known solution (ttt_rules_test.cpp) and a trained network against perfect play
// (ttt_learning_test.cpp). Independent of the search code it checks: no pruning, no heuristics.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "games/ttt/position.h"

namespace oppidum::ttt::test_util {

class Solver {
 public:
  // The game-theoretic value for the side to move: +1 win, 0 draw, -1 loss.
  int value(const Position& p) {
    if (p.is_terminal()) return static_cast<int>(p.result(p.side_to_move()));
    if (const auto it = memo_.find(p.hash()); it != memo_.end()) return it->second;
    ActionList actions;
    p.legal_actions(actions);
    int best = -1;
    for (Action a : actions) best = std::max(best, value_of_move(p, a));
    memo_[p.hash()] = best;
    return best;
  }

  // The value for the mover of playing `action` in `p`.
  int value_of_move(const Position& p, Action action) {
    Position next = p;
    next.apply(action);
    return -value(next);
  }

  // The moves that keep the position's value (every best move).
  std::vector<Action> best_moves(const Position& p) {
    const int best = value(p);
    ActionList actions;
    p.legal_actions(actions);
    std::vector<Action> out;
    for (Action a : actions)
      if (value_of_move(p, a) == best) out.push_back(a);
    return out;
  }

 private:
  std::unordered_map<std::uint64_t, int> memo_;  // by hash: distinct positions, distinct hashes
};

}  // namespace oppidum::ttt::test_util
