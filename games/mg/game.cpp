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
  std::string display_name() const override { return "Murus Gallicus"; }
  std::string side_name(int player) const override { return player == 0 ? "Light" : "Dark"; }
  int default_opening_plies() const override { return 4; }  // 20*20*~17*17 openings
  bool has_score() const override { return false; }
  // c1-c3 (a distribution) or c1xc2 (a sacrifice): files a-h, ranks 1-7.
  bool looks_like_move(std::string_view text) const override {
    const auto file = [](char c) { return (c >= 'a' && c <= 'h') || (c >= 'A' && c <= 'H'); };
    const auto rank = [](char c) { return c >= '1' && c <= '7'; };
    return text.size() == 5 && file(text[0]) && rank(text[1]) &&
           (text[2] == '-' || text[2] == 'x' || text[2] == 'X') && file(text[3]) && rank(text[4]);
  }
  const BoardLayout& board_layout() const override { return mg::board_layout(); }
};

}  // namespace

const Game& mg_game() {
  static const MgGame game;
  return game;
}

}  // namespace oppidum::mg
