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
  // Games between good players last about 80 plies; no phases.
  ClockFacts clock_facts() const override { return {80, -1}; }
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
  std::vector<PerftBenchmark> perft_benchmarks() const override {
    return {{"mg start", "", 6}};
  }
  std::string planes_description() const override {
    return "5 planes of 7 rows x 8 columns, plane-major, then rows, then columns a..h. Everything "
           "is in the frame of the side to move: for Light the board as it is (row 0 = board row "
           "1), for Dark the board turned upside down (row 0 = board row 7, columns unchanged), so "
           "the mover's home row is always row 0. Planes: 0 own towers, 1 own walls, 2 opponent "
           "towers, 3 opponent walls, 4 all ones.";
  }
  std::string actions_description() const override {
    return "896 actions in the frame of the side to move (see planes): action = (kind * 8 + "
           "direction) * 56 + frame_square, frame_square = frame_row * 8 + column (a = 0). kind 0 "
           "= distribute the tower on frame_square onto the next two squares in the direction; "
           "kind 1 = sacrifice it to remove the enemy wall on the adjacent square in the "
           "direction. direction 0 N, 1 NE, 2 E, 3 SE, 4 S, 5 SW, 6 W, 7 NW, where N points "
           "towards the opponent's home row and E towards column h. Examples: Light's a1-a3 and "
           "Dark's a7-a5 are both action 0; Light's d5xe6 is 539.";
  }
};

}  // namespace

const Game& mg_game() {
  static const MgGame game;
  return game;
}

}  // namespace oppidum::mg
