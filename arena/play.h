// One game between two players, move by move on the calling thread: the loop behind
// `oppidum play` (a person against a program), where batching does not matter. Search players run
// a fresh search for each move (Player::choose_move).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "arena/player.h"
#include "games/game.h"

namespace oppidum::arena {

struct PlayedGame {
  std::vector<Action> moves;               // played from the start position
  std::unique_ptr<GameState> final_state;
  double result = 0.0;                     // for player 0: +1, 0, -1
  bool adjudicated = false;                // stopped at the ply limit: a draw
};

// Plays from `start` until the game ends or reaches `max_plies` (0: the game's bound).
// `players[p]` moves for player p; each move is seeded by derive_seed(seed, kMoveStream, ply).
// `on_move(before, action)` sees every move before it is applied. The game has id 0 for the
// players (Player::choose_move_in_game; both get game_ended(0) however the call ends). A player
// that needs the initial position refuses another `start` (std::invalid_argument). Exceptions from
// a player (a person quitting: QuitGame; an external program's Forfeit) propagate.
PlayedGame play_game(const GameState& start, std::array<Player*, 2> players, std::uint64_t seed,
                     int max_plies = 0,
                     const std::function<void(const GameState&, Action)>& on_move = {});

// The action `player` chooses at `state` as game 0, seeded by derive_seed(seed, kMoveStream, ply)
// as every move of play_game is (so `engine` answers a position as `play` would). An external
// program's Forfeit is thrown again with the player's spec in front ("SPEC forfeits: REASON").
Action choose_in_game(Player& player, const GameState& state, std::uint64_t seed);

}  // namespace oppidum::arena
