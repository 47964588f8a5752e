#include "games/mg/game.h"

#include "games/mg/position.h"
#include "games/state_adapter.h"

namespace oppidum::mg {
namespace {

class MgGame final : public Game {
 public:
  std::string name() const override { return "mg"; }
  int num_actions() const override { return kNumActions; }
  PlaneShape input_shape() const override { return {kPlanes, kRows, kCols}; }
  int encoding_version() const override { return 1; }
  int num_symmetries() const override { return kNumSymmetries; }
  int transform_cell(int symmetry, int row, int col) const override {
    return mg::transform_cell(symmetry, row, col);
  }
  Action transform_action(int symmetry, Action action) const override {
    return mg::transform_action(symmetry, action);
  }
  std::unique_ptr<GameState> initial_state() const override {
    return std::make_unique<StateAdapter<Position>>(*this, Position::initial());
  }
  std::unique_ptr<GameState> parse_state(std::string_view text) const override {
    return std::make_unique<StateAdapter<Position>>(*this, Position::parse(text));
  }
  // Games between strong players rarely pass 150 plies; self-play adjudicates a draw at its own
  // configurable limit below this.
  int max_game_length() const override { return 512; }
};

}  // namespace

const Game& mg_game() {
  static const MgGame game;
  return game;
}

}  // namespace oppidum::mg
