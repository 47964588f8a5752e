#include "web/board_json.h"

#include <string>
#include <vector>

namespace oppidum::web {
using nlohmann::json;

json game_json(const Game& game) {
  const BoardLayout& layout = game.board_layout();
  json cells = json::array(), labels = json::array();
  for (const BoardCell& c : layout.cells) cells.push_back({{"name", c.name}, {"x", c.x}, {"y", c.y}});
  for (const BoardLabel& l : layout.labels)
    labels.push_back({{"text", l.text}, {"x", l.x}, {"y", l.y}});
  return {{"name", game.name()},
          {"display_name", game.display_name()},
          {"sides", {game.side_name(0), game.side_name(1)}},
          {"has_score", game.has_score()},
          {"opening_plies", game.default_opening_plies()},
          {"board",
           {{"shape", layout.shape == CellShape::kHexagon ? "hexagon" : "square"},
            {"cells", cells},
            {"labels", labels}}}};
}

json board_json(const GameState& state) {
  json out = json::array();
  for (const CellView& v : state.board_view()) {
    json cell = json::object();
    if (!v.pieces.empty()) cell["pieces"] = v.pieces;
    if (!v.label.empty()) cell["label"] = v.label;
    out.push_back(std::move(cell));
  }
  return out;
}

json cells_json(const GameState& state, Action action) {
  const std::vector<BoardCell>& cells = state.game().board_layout().cells;
  json names = json::array();
  for (const int cell : state.action_cells(action))
    names.push_back(cells.at(static_cast<std::size_t>(cell)).name);
  return names;
}

json move_json(const GameState& state, Action action) {
  return {{"move", state.action_to_string(action)}, {"cells", cells_json(state, action)}};
}

}  // namespace oppidum::web
