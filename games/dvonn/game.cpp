#include "games/dvonn/game.h"

#include "games/dvonn/position.h"
#include "games/state_adapter.h"

namespace oppidum::dvonn {

int DvonnGame::num_actions() const { return kNumActions; }

PlaneShape DvonnGame::input_shape() const { return {kPlanes, kRows, kCols}; }

int DvonnGame::num_symmetries() const { return kNumSymmetries; }

int DvonnGame::transform_cell(int symmetry, int row, int col) const {
  return dvonn::transform_cell(symmetry, row, col);
}

Action DvonnGame::transform_action(int symmetry, Action action) const {
  return dvonn::transform_action(symmetry, action);
}

std::unique_ptr<GameState> DvonnGame::initial_state() const {
  return std::make_unique<StateAdapter<Position>>(*this, Position::initial());
}

std::unique_ptr<GameState> DvonnGame::parse_state(std::string_view text) const {
  return std::make_unique<StateAdapter<Position>>(*this, Position::parse(text));
}

// No DVONN game exceeds 145 plies (see kMaxGameLength), so this bound never cuts a game short.
int DvonnGame::max_game_length() const { return kMaxGameLength; }

const Game& dvonn_game() {
  static const DvonnGame game;
  return game;
}

}  // namespace oppidum::dvonn
