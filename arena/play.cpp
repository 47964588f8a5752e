#include "arena/play.h"

#include <stdexcept>
#include <string>

#include "arena/match.h"
#include "mcts/seed.h"

namespace oppidum::arena {

namespace {

// Ends game 0 for both players however play_game leaves.
struct GameEnder {
  std::array<Player*, 2> players;
  ~GameEnder() {
    players[0]->game_ended(0);
    if (players[1] != players[0]) players[1]->game_ended(0);
  }
};

}  // namespace

Action choose_in_game(Player& player, const GameState& state, std::uint64_t seed) {
  try {
    return player.choose_move_in_game(
        0, state, mcts::derive_seed(seed, kMoveStream, static_cast<std::uint64_t>(state.ply())));
  } catch (const Forfeit& e) {  // an external program's: say whose
    throw Forfeit(player.spec() + " forfeits: " + e.what());
  }
}

PlayedGame play_game(const GameState& start, std::array<Player*, 2> players, std::uint64_t seed,
                     int max_plies, const std::function<void(const GameState&, Action)>& on_move) {
  for (const Player* player : players)
    if (player->needs_initial_position() &&
        start.to_string() != start.game().initial_state()->to_string())
      throw std::invalid_argument(player->spec() +
                                  " plays only from the initial position, not from " +
                                  start.to_string());
  PlayedGame game;
  auto state = start.clone();
  const GameEnder ender{players};
  const int limit = max_plies > 0 ? max_plies : state->game().max_game_length();
  while (!state->is_terminal() && state->ply() < limit) {
    Player& player = *players[static_cast<std::size_t>(state->current_player())];
    const Action action = choose_in_game(player, *state, seed);
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
