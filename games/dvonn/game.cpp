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

// The start (placement) and a fixed position right after the 49 placements, from seeded random
// placements (seed 7).
std::vector<Game::PerftBenchmark> DvonnGame::perft_benchmarks() const {
  return {{"dvonn start (placement)", "", 4},
          {"dvonn after placement (seed 7)",
           "B1,W1,B1,B1,W1,R1*,W1,W1,W1/W1,B1,B1,B1,W1,B1,B1,B1,W1,W1/"
           "W1,B1,W1,B1,W1,W1,W1,B1,B1,B1,B1/W1,W1,B1,W1,W1,B1,R1*,W1,B1,W1/"
           "W1,B1,B1,B1,B1,W1,R1*,B1,W1 W 49",
           5}};
}

std::string DvonnGame::planes_description() const {
  return "20 planes of 5 rows x 11 columns on the grid cell = row * 11 + col (row 0..4 = board "
         "rows 1..5, col 0..10 = columns A..K; J1, K1, K2, A4, A5, B5 are off the board and 0 "
         "except in planes 16 and 17). 'own' is the colour of the side to move. Planes: 0 space on "
         "the board, 1 empty space, 2 lone DVONN piece, 3 stack holding a DVONN piece, 4..8 "
         "own-topped stack of height 1, 2, 3, 4, 5 or more, 9 own-topped stack height / 10, 10..14 "
         "opponent-topped stack of height 1, 2, 3, 4, 5 or more, 15 opponent-topped stack height / "
         "10, 16 all ones in the placement phase, 17 all ones while the next placement is a DVONN "
         "piece, 18 own stack with a legal move, 19 opponent stack that would have a legal move on "
         "the opponent's turn.";
}

std::string DvonnGame::actions_description() const {
  return "344 actions, absolute (not relative to the side to move). Spaces k = 0..48 in reading "
         "order A1..I1, A2..J2, A3..K3, B4..K4, C5..K5. Actions 0..48: place a piece on space k; "
         "49 + d * 49 + k: move the stack on space k in direction d by its height, with d 0 E (+1 "
         "column), 1 NE (+1 column, +1 row), 2 N (+1 row), 3 W (-1 column), 4 SW (-1 column, -1 "
         "row), 5 S (-1 row); 343: PASS. Example: A2A1 is 49 + 5 * 49 + 9 = 303.";
}

const Game& dvonn_game() {
  static const DvonnGame game;
  return game;
}

}  // namespace oppidum::dvonn
