// The game contract's facts and board description (games/game.h) as the JSON the page reads: one
// game for `GET /api/games`, the view of a position, and a move with the cells it is clicked on.
// docs/WEB.md ("API") gives the shapes.
#pragma once

#include <nlohmann/json.hpp>

#include "games/game.h"

namespace oppidum::web {

// {name, display_name, sides: [2], has_score, opening_plies, board: {shape, cells: [{name, x, y}],
// labels: [{text, x, y}]}}
nlohmann::json game_json(const Game& game);
// One entry per layout cell: {} when empty, else {pieces: [bottom .. top], label?}.
nlohmann::json board_json(const GameState& state);
// The names of the cells a legal action is clicked on, in order ([] for a pass).
nlohmann::json cells_json(const GameState& state, Action action);
// {move, cells} of a legal action.
nlohmann::json move_json(const GameState& state, Action action);

}  // namespace oppidum::web
