// The DVONN entry of the game contract (see games/dvonn/position.h for the rules, the action
// layout and the input planes).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "games/game.h"

namespace oppidum::dvonn {

class DvonnGame final : public Game {
 public:
  std::string name() const override { return "dvonn"; }
  int num_actions() const override;
  PlaneShape input_shape() const override;
  int encoding_version() const override { return 1; }
  int num_symmetries() const override;
  int transform_cell(int symmetry, int row, int col) const override;
  Action transform_action(int symmetry, Action action) const override;
  std::unique_ptr<GameState> initial_state() const override;
  std::unique_ptr<GameState> parse_state(std::string_view text) const override;
  int max_game_length() const override;
};

// The one DvonnGame instance.
const Game& dvonn_game();

}  // namespace oppidum::dvonn
