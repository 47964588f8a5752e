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
  // 49 placements and about 40 moves; the movement phase starts at ply 49.
  ClockFacts clock_facts() const override { return {90, 49}; }
  std::string display_name() const override { return "DVONN"; }
  std::string side_name(int player) const override { return player == 0 ? "White" : "Black"; }
  // The three DVONN pieces and three others.
  int default_opening_plies() const override { return 6; }
  bool has_score() const override { return true; }
  bool looks_like_move(std::string_view text) const override;
  std::vector<PerftBenchmark> perft_benchmarks() const override;
  std::string planes_description() const override;
  std::string actions_description() const override;
  const BoardLayout& board_layout() const override;
};

// The one DvonnGame instance.
const Game& dvonn_game();

}  // namespace oppidum::dvonn
