// Brute-force helpers for the search tests: which moves win at once, which moves let the opponent
// win at once, and seeded random positions that have a given property. They use only the game
// contract, so they work for every game.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "games/game.h"
#include "mcts/rng.h"

namespace oppidum::mcts::test_util {

inline std::vector<Action> legal_vector(const GameState& state) {
  ActionList legal;
  state.legal_actions(legal);
  return {legal.begin(), legal.end()};
}

inline std::unique_ptr<GameState> after(const GameState& state, Action action) {
  auto next = state.clone();
  next->apply(action);
  return next;
}

// True when playing `action` ends the game at once with the mover winning.
inline bool wins_at_once(const GameState& state, Action action) {
  const auto next = after(state, action);
  return next->is_terminal() && next->result(state.current_player()) > 0;
}

// True when, after `action`, `player` has lost or the side to move then can end the game at once
// with `player` losing.
inline bool loses_at_once(const GameState& state, Action action) {
  const int player = state.current_player();
  const auto next = after(state, action);
  if (next->is_terminal()) return next->result(player) < 0;
  for (Action reply : legal_vector(*next)) {
    const auto last = after(*next, reply);
    if (last->is_terminal() && last->result(player) < 0) return true;
  }
  return false;
}

inline std::vector<Action> winning_moves(const GameState& state) {
  std::vector<Action> out;
  for (Action a : legal_vector(state))
    if (wins_at_once(state, a)) out.push_back(a);
  return out;
}

inline std::vector<Action> safe_moves(const GameState& state) {
  std::vector<Action> out;
  for (Action a : legal_vector(state))
    if (!loses_at_once(state, a)) out.push_back(a);
  return out;
}

// Up to `count` positions met in seeded uniformly random games from the initial position (one per
// game at most) for which `keep(state)` holds.
template <class Keep>
std::vector<std::unique_ptr<GameState>> find_positions(const Game& game, std::uint64_t seed,
                                                       int count, int max_games, Keep keep) {
  std::vector<std::unique_ptr<GameState>> found;
  Rng rng(seed);
  for (int g = 0; g < max_games && static_cast<int>(found.size()) < count; ++g) {
    auto state = game.initial_state();
    ActionList legal;
    for (int ply = 0; ply < game.max_game_length(); ++ply) {
      state->legal_actions(legal);
      if (legal.empty()) break;
      if (keep(*state)) {
        found.push_back(state->clone());
        break;
      }
      state->apply(legal[rng.uniform_int(legal.size())]);
    }
  }
  return found;
}

}  // namespace oppidum::mcts::test_util
