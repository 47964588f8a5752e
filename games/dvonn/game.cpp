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

// PASS, a placement (D4) or a move (A2A1): columns A-K, rows 1-5.
bool DvonnGame::looks_like_move(std::string_view text) const {
  const auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; };
  std::string up;
  for (char c : text) up += upper(c);
  if (up == "PASS") return true;
  const auto space = [&](std::size_t at) {
    return up[at] >= 'A' && up[at] <= 'K' && up[at + 1] >= '1' && up[at + 1] <= '5';
  };
  return (up.size() == 2 && space(0)) || (up.size() == 4 && space(0) && space(2));
}

const BoardLayout& DvonnGame::board_layout() const { return dvonn::board_layout(); }

const Game& dvonn_game() {
  static const DvonnGame game;
  return game;
}

}  // namespace oppidum::dvonn
