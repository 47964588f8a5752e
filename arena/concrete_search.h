// What the arena's tree searches (arena/alphabeta.cpp, arena/classic.cpp) share about searching
// the concrete position types: the position of a GameState, the dispatch on its game, proven
// scores of finished games and their storage in a transposition table.
#pragma once

#include <string>

#include "arena/alphabeta.h"
#include "games/game.h"
#include "games/registry.h"
#include "games/state_adapter.h"

namespace oppidum::arena::search {

// Scores beyond this are proven results (wins or losses a known number of plies away).
inline constexpr int kProvenThreshold = kWinScore - 1000;

template <class P>
P position_of(const GameState& state) {
  if (const auto* adapter = dynamic_cast<const StateAdapter<P>*>(&state))
    return adapter->position();
  return P::parse(state.to_string());
}

// Calls f(position) with the concrete position of `state` (games/registry.h).
template <class F>
decltype(auto) with_position(const GameState& state, F&& f) {
  return with_position_type(state.game(), [&](auto tag) {
    using P = typename decltype(tag)::Position;
    return f(position_of<P>(state));
  });
}

// The score of a finished game for its side to move, `ply` plies from the root.
template <class P>
int terminal_score(const P& pos, int ply) {
  const double result = pos.result(pos.side_to_move());
  if (result > 0) return kWinScore - ply;
  if (result < 0) return -(kWinScore - ply);
  return 0;
}

// A child's score (for the child's side to move) seen from the parent's side to move. The games
// alternate every ply, but nothing here relies on it.
template <class P>
int from_parent(const P& parent, const P& child, int child_score) {
  return child.side_to_move() == parent.side_to_move() ? child_score : -child_score;
}

// Proven scores count plies from the root; a table stores them counted from the node.
inline int to_table(int score, int ply) {
  if (score > kProvenThreshold) return score + ply;
  if (score < -kProvenThreshold) return score - ply;
  return score;
}
inline int from_table(int score, int ply) {
  if (score > kProvenThreshold) return score - ply;
  if (score < -kProvenThreshold) return score + ply;
  return score;
}

}  // namespace oppidum::arena::search
