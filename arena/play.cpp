#include "arena/play.h"

#include <stdexcept>
#include <string>

#include "arena/match.h"
#include "mcts/seed.h"

namespace oppidum::arena {

PlayedGame play_game(const GameState& start, std::array<Player*, 2> players, std::uint64_t seed,
                     int max_plies, const std::function<void(const GameState&, Action)>& on_move) {
  PlayedGame game;
  auto state = start.clone();
  const int limit = max_plies > 0 ? max_plies : state->game().max_game_length();
  while (!state->is_terminal() && state->ply() < limit) {
    Player& player = *players[static_cast<std::size_t>(state->current_player())];
    const Action action = player.choose_move(
        *state, mcts::derive_seed(seed, kMoveStream, static_cast<std::uint64_t>(state->ply())));
    if (!state->is_legal(action))
      throw std::logic_error(player.spec() + " chose the illegal action " + std::to_string(action) +
                             " in " + state->to_string());
    if (on_move) on_move(*state, action);
    state->apply(action);
    game.moves.push_back(action);
  }
  game.adjudicated = !state->is_terminal();
  game.result = game.adjudicated ? 0.0 : state->result(0);
  game.final_state = std::move(state);
  return game;
}

}  // namespace oppidum::arena
