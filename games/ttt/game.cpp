#include "games/ttt/game.h"

#include "games/state_adapter.h"
#include "games/ttt/position.h"

namespace oppidum::ttt {
namespace {

class TttGame final : public Game {
 public:
  std::string name() const override { return "ttt"; }
  int num_actions() const override { return kNumActions; }
  PlaneShape input_shape() const override { return {kPlanes, kRows, kCols}; }
  int encoding_version() const override { return 1; }
  int num_symmetries() const override { return kNumSymmetries; }
  int transform_cell(int symmetry, int row, int col) const override {
    return ttt::transform_cell(symmetry, row, col);
  }
  Action transform_action(int symmetry, Action action) const override {
    return ttt::transform_action(symmetry, action);
  }
  std::unique_ptr<GameState> initial_state() const override {
    return std::make_unique<StateAdapter<Position>>(*this, Position::initial());
  }
  std::unique_ptr<GameState> parse_state(std::string_view text) const override {
    return std::make_unique<StateAdapter<Position>>(*this, Position::parse(text));
  }
  // Nine cells, one mark a ply: no game is longer.
  int max_game_length() const override { return kCells; }
  ClockFacts clock_facts() const override { return {kCells, -1}; }
  std::string display_name() const override { return "Tic-tac-toe"; }
  std::string side_name(int player) const override { return player == 0 ? "X" : "O"; }
  // Nine openings (three up to symmetry); a second random mark would already give away wins.
  int default_opening_plies() const override { return 1; }
  bool has_score() const override { return false; }
  const BoardLayout& board_layout() const override { return ttt::board_layout(); }
  std::vector<PerftBenchmark> perft_benchmarks() const override {
    return {{"ttt start", "", 9}};
  }
  std::string planes_description() const override {
    return "3 planes of 3 rows x 3 columns, plane-major, then rows (row 0 = rank 1), then "
           "columns a..c. 'own' is the side to move. Planes: 0 own marks, 1 opponent marks, "
           "2 all ones.";
  }
  std::string actions_description() const override {
    return "9 actions, absolute: action = (rank - 1) * 3 + file (a = 0), so a1 = 0, b1 = 1, "
           "c3 = 8; an action marks that cell.";
  }
  // A cell: file a-c, rank 1-3.
  bool looks_like_move(std::string_view text) const override {
    return text.size() == 2 && ((text[0] >= 'a' && text[0] <= 'c') ||
                                (text[0] >= 'A' && text[0] <= 'C')) &&
           text[1] >= '1' && text[1] <= '3';
  }
};

}  // namespace

const Game& ttt_game() {
  static const TttGame game;
  return game;
}

}  // namespace oppidum::ttt
