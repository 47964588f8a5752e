// DVONN rules: the situations of docs/RULES.md one by one (placement order, mobility, exact distance,
// landing, DVONN stacks, disconnection, passing, the end and the score), the notations and their
// error messages, random game length, and the board symmetries.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/dvonn/game.h"
#include "games/dvonn/position.h"
#include "games/game.h"

namespace oppidum::dvonn {
namespace {

int cell(const std::string& name) { return (name[1] - '1') * kCols + (name[0] - 'A'); }
Bitboard bit(const std::string& name) { return Bitboard{1} << cell(name); }

// A position line with the given stacks ("C3" -> "W2*"), everything else empty.
std::string position_text(const std::map<std::string, std::string>& stacks, char side, int ply) {
  std::string text;
  for (int r = 0; r < kRows; ++r) {
    if (r > 0) text += '/';
    bool first = true;
    for (int c = 0; c < kCols; ++c) {
      if (!on_board(r, c)) continue;
      if (!first) text += ',';
      first = false;
      const auto it = stacks.find(cell_name(r * kCols + c));
      text += it == stacks.end() ? "." : it->second;
    }
  }
  return text + " " + side + " " + std::to_string(ply);
}

Position make(const std::map<std::string, std::string>& stacks, char side, int ply) {
  return Position::parse(position_text(stacks, side, ply));
}

std::set<std::string> legal_moves(const Position& p) {
  ActionList actions;
  p.legal_actions(actions);
  std::set<std::string> moves;
  for (Action a : actions) moves.insert(p.action_to_string(a));
  return moves;
}

// The message of the GameError thrown by f, or "" if none was thrown.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const GameError& e) {
    return e.what();
  }
  return "";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { Position::parse(text); });
}

std::string move_error(const Position& p, const std::string& move) {
  return error_of([&] { p.parse_action(move); });
}

Position play(Position p, const std::vector<std::string>& moves) {
  for (const auto& m : moves) p.apply(p.parse_action(m));
  return p;
}

// Seeded random placements up to the start of phase 2.
Position random_full_board(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Position p = Position::initial();
  ActionList actions;
  while (p.in_placement()) {
    p.legal_actions(actions);
    p.apply(actions[std::uniform_int_distribution<int>(0, actions.size() - 1)(rng)]);
  }
  return p;
}

// Spaces with fewer than six neighbours on the board.
Bitboard edge_spaces() {
  Bitboard edge = 0;
  for (int g = 0; g < kGridCells; ++g) {
    if (!((kValid >> g) & 1)) continue;
    if (__builtin_popcountll(neighbours(Bitboard{1} << g)) < 6) edge |= Bitboard{1} << g;
  }
  return edge;
}

// Visits every position of seeded random games.
template <class F>
void for_random_positions(int games, std::uint64_t seed, F&& visit) {
  std::mt19937_64 rng(seed);
  ActionList actions;
  for (int g = 0; g < games; ++g) {
    Position p = Position::initial();
    while (true) {
      visit(p);
      p.legal_actions(actions);
      if (actions.empty()) break;
      p.apply(actions[std::uniform_int_distribution<int>(0, actions.size() - 1)(rng)]);
    }
  }
}

const char* const kEmptyBoard =
    ".,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./"
    ".,.,.,.,.,.,.,.,.";

// --- Board geometry ---------------------------------------------------------------------------

TEST(DvonnBoard, FortyNineSpacesInRowsOfNineToEleven) {
  EXPECT_EQ(__builtin_popcountll(kValid), 49);
  const int row_lengths[kRows] = {9, 10, 11, 10, 9};
  for (int r = 0; r < kRows; ++r) {
    int n = 0;
    for (int c = 0; c < kCols; ++c) n += on_board(r, c);
    EXPECT_EQ(n, row_lengths[r]) << "row " << r + 1;
  }
  EXPECT_EQ(cell_name(kCellOfSpace[0]), "A1");
  EXPECT_EQ(cell_name(kCellOfSpace[8]), "I1");
  EXPECT_EQ(cell_name(kCellOfSpace[9]), "A2");
  EXPECT_EQ(cell_name(kCellOfSpace[29]), "K3");
  EXPECT_EQ(cell_name(kCellOfSpace[30]), "B4");
  EXPECT_EQ(cell_name(kCellOfSpace[40]), "C5");
  EXPECT_EQ(cell_name(kCellOfSpace[48]), "K5");
  for (int k = 0; k < kNumSpaces; ++k) EXPECT_EQ(kSpaceOfCell[kCellOfSpace[k]], k);
}

TEST(DvonnBoard, BitboardNeighboursMatchTheSixAxes) {
  for (int g = 0; g < kGridCells; ++g) {
    const int r = g / kCols, c = g % kCols;
    if (!on_board(r, c)) continue;
    Bitboard expected = 0;
    for (int d = 0; d < kNumDirections; ++d) {
      const int r2 = r + kDirRow[d], c2 = c + kDirCol[d];
      if (on_board(r2, c2)) expected |= Bitboard{1} << (r2 * kCols + c2);
    }
    EXPECT_EQ(neighbours(Bitboard{1} << g), expected) << cell_name(g);
  }
  // A1 touches B1, A2 and B2 (docs/RULES.md).
  EXPECT_EQ(neighbours(bit("A1")), bit("B1") | bit("A2") | bit("B2"));
}

// --- Placement --------------------------------------------------------------------------------

TEST(DvonnPlacement, StartHasFortyNinePlacements) {
  const Position p = Position::initial();
  EXPECT_EQ(p.to_string(), std::string(kEmptyBoard) + " W 0");
  EXPECT_EQ(p.side_to_move(), 0);
  EXPECT_EQ(p.ply(), 0);
  ActionList actions;
  p.legal_actions(actions);
  ASSERT_EQ(actions.size(), 49);
  for (int k = 0; k < 49; ++k) EXPECT_EQ(actions[k], k);
  EXPECT_EQ(p.count_legal_actions(), 49);
  EXPECT_FALSE(p.is_terminal());
  EXPECT_FALSE(p.is_legal(kPassAction));
  EXPECT_EQ(dvonn_game().initial_state()->to_string(), p.to_string());
}

TEST(DvonnPlacement, DvonnPiecesComeFirstThenBlackAndWhiteAlternate) {
  Position p = Position::initial();
  const std::vector<std::string> cells = {"D3", "A1", "K5", "E3", "F3", "G3"};
  const int sides[] = {0, 1, 0, 1, 0, 1};
  const char* const tokens[] = {"R1*", "R1*", "R1*", "B1", "W1", "B1"};
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(p.side_to_move(), sides[i]) << "ply " << i;
    const Position before = p;
    p.apply(p.parse_action(cells[i]));
    EXPECT_EQ(p.height(cell(cells[i])), 1);
    // The token the space now shows.
    const std::string text = p.to_string();
    EXPECT_NE(text.find(tokens[i]), std::string::npos) << text;
    EXPECT_EQ(p.lone_dvonn() != before.lone_dvonn(), i < 3);
  }
  EXPECT_EQ(p.lone_dvonn(), bit("D3") | bit("A1") | bit("K5"));
  EXPECT_EQ(p.topped_by(1), bit("E3") | bit("G3"));
  EXPECT_EQ(p.topped_by(0), bit("F3"));
  EXPECT_EQ(p.to_string(),
            "R1*,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./.,.,.,R1*,B1,W1,B1,.,.,.,./"
            ".,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,R1* W 6");
}

TEST(DvonnPlacement, WhitePlacesTheLastPieceAndMovesFirst) {
  Position p = Position::initial();
  ActionList actions;
  std::mt19937_64 rng(3);
  for (int ply = 0; ply < 49; ++ply) {
    EXPECT_EQ(p.side_to_move(), ply % 2);
    EXPECT_TRUE(p.in_placement());
    p.legal_actions(actions);
    EXPECT_EQ(actions.size(), 49 - ply);
    p.apply(actions[std::uniform_int_distribution<int>(0, actions.size() - 1)(rng)]);
  }
  EXPECT_FALSE(p.in_placement());
  EXPECT_EQ(p.ply(), 49);
  EXPECT_EQ(p.side_to_move(), 0);
  EXPECT_EQ(p.occupied(), kValid);
  EXPECT_EQ(__builtin_popcountll(p.topped_by(0)), 23);
  EXPECT_EQ(__builtin_popcountll(p.topped_by(1)), 23);
  EXPECT_EQ(__builtin_popcountll(p.lone_dvonn()), 3);
  p.legal_actions(actions);
  for (Action a : actions) EXPECT_GE(a, kMoveActionBase);
  EXPECT_EQ(move_error(p, "D4"), "DVONN move 'D4': placement is over: move a stack, like A2A1, "
                                 "or PASS when no move exists");
}

TEST(DvonnPlacement, OnlyEdgeSpacesCanMoveOnTheFullBoard) {
  const Bitboard edge = edge_spaces();
  EXPECT_EQ(__builtin_popcountll(edge), 24);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const Position p = random_full_board(seed);
    for (int player = 0; player < 2; ++player)
      EXPECT_EQ(p.mobile(player), p.topped_by(player) & edge) << p.to_string();
    // Every white edge piece may step onto each of its neighbours (all occupied).
    int expected = 0;
    Bitboard white_edge = p.topped_by(0) & edge;
    for (int g = 0; g < kGridCells; ++g)
      if ((white_edge >> g) & 1) expected += __builtin_popcountll(neighbours(Bitboard{1} << g));
    std::set<int> from_cells;
    ActionList actions;
    p.legal_actions(actions);
    if (expected == 0) {
      // White has no edge piece: it must pass.
      ASSERT_EQ(actions.size(), 1);
      EXPECT_EQ(actions[0], kPassAction);
      continue;
    }
    EXPECT_EQ(actions.size(), expected) << p.to_string();
    for (Action a : actions) {
      const int from = kCellOfSpace[(a - kMoveActionBase) % kNumSpaces];
      EXPECT_TRUE((edge >> from) & 1) << p.action_to_string(a);
    }
  }
}

// --- Moving -----------------------------------------------------------------------------------

TEST(DvonnMoves, SurroundedStacksCannotMove) {
  // D3 is white and its six neighbours C3, E3, D4, E4, D2, C2 are all occupied.
  std::map<std::string, std::string> stacks = {{"D3", "W1"}, {"C3", "R1*"}, {"E3", "B1"},
                                                {"D4", "B1"}, {"E4", "B1"}, {"D2", "B1"},
                                                {"C2", "B1"}};
  const Position closed = make(stacks, 'W', 49);
  EXPECT_EQ(closed.mobile(0), 0u);
  EXPECT_EQ(legal_moves(closed), std::set<std::string>{"PASS"});
  EXPECT_FALSE(closed.is_legal(move_action(kSpaceOfCell[cell("D3")], 0)));
  EXPECT_EQ(move_error(closed, "D3E3"),
            "DVONN move 'D3E3': the stack on D3 is surrounded on all six sides (White has no "
            "legal move and must PASS)");

  stacks.erase("E4");  // one free side is enough
  const Position open = make(stacks, 'W', 49);
  EXPECT_EQ(legal_moves(open), (std::set<std::string>{"D3C3", "D3E3", "D3D4", "D3D2", "D3C2"}));
}

TEST(DvonnMoves, AStackOfHeightHMovesExactlyHSpacesOntoAPiece) {
  // C3 is a white stack of two; pieces lie at distance 1 and 2 around it.
  const Position p = make({{"C3", "W2"},
                           {"D3", "B1"},
                           {"E3", "B1"},   // E, distance 2
                           {"C1", "R1*"},  // S, distance 2: a DVONN piece is a valid landing
                           {"C4", "B1"},
                           {"C5", "B1"},   // N, distance 2
                           {"A1", "B1"},   // SW, distance 2
                           {"B2", "B1"}},  // SW, distance 1
                          'W', 49);
  EXPECT_EQ(legal_moves(p), (std::set<std::string>{"C3E3", "C3C1", "C3C5", "C3A1"}));
  EXPECT_EQ(p.count_legal_actions(), 4);
  EXPECT_EQ(move_error(p, "C3D3"),
            "DVONN move 'C3D3': a stack of height 2 moves exactly 2 spaces; C3 to D3 is 1");
  EXPECT_EQ(move_error(p, "C3A3"), "DVONN move 'C3A3': A3 is empty: a move must land on a piece");
  EXPECT_EQ(move_error(p, "C3E4"), "DVONN move 'C3E4': C3 to E4 is not on one of the six axes");
  // E5 is on the NE axis at distance 2 but empty.
  EXPECT_EQ(move_error(p, "C3E5"), "DVONN move 'C3E5': E5 is empty: a move must land on a piece");
  EXPECT_EQ(move_error(p, "C3C3"), "DVONN move 'C3C3': a move must leave C3");
  EXPECT_EQ(move_error(p, "D3E3"), "DVONN move 'D3E3': the stack on D3 is topped by Black");
  EXPECT_EQ(move_error(p, "F3E3"), "DVONN move 'F3E3': no stack on F3");
  EXPECT_EQ(move_error(p, "C1C2"), "DVONN move 'C1C2': C1 holds a lone DVONN piece, which never "
                                   "moves");
  EXPECT_EQ(move_error(p, "PASS"), "DVONN move 'PASS': White has a legal move and may not pass");
  // Landing on the DVONN piece: the stack keeps the DVONN piece and belongs to White.
  const Position after = play(p, {"c3c1"});
  EXPECT_EQ(after.height(cell("C1")), 3);
  EXPECT_TRUE(after.holds_dvonn() & bit("C1"));
  EXPECT_FALSE(after.lone_dvonn() & bit("C1"));
  EXPECT_TRUE(after.topped_by(0) & bit("C1"));
  EXPECT_EQ(after.score(0), 3);
}

TEST(DvonnMoves, LoneDvonnPiecesNeverMove) {
  const Position p = make({{"A1", "R1*"}, {"B1", "R1*"}, {"C1", "B1"}, {"D1", "W1"}}, 'W', 49);
  // White's D1 can step onto C1; nothing ever moves A1 or B1.
  EXPECT_EQ(legal_moves(p), std::set<std::string>{"D1C1"});
  const Position black = make({{"A1", "R1*"}, {"B1", "R1*"}, {"C1", "B1"}}, 'B', 50);
  EXPECT_EQ(legal_moves(black), std::set<std::string>{"C1B1"});
  const Position reds = make({{"A1", "R1"}, {"B1", "R1"}, {"C1", "R1"}}, 'W', 49);
  EXPECT_TRUE(reds.is_terminal());
  EXPECT_EQ(reds.to_string(), position_text({{"A1", "R1*"}, {"B1", "R1*"}, {"C1", "R1*"}}, 'W', 49));
}

TEST(DvonnMoves, StacksHoldingDvonnMoveWholeAndBelongToTheirTop) {
  // B1 is a white stack of two over a DVONN piece; Black covers it and owns it.
  Position p = make({{"A1", "B1"}, {"B1", "W2*"}, {"C1", "B1"}, {"D1", "W1"}}, 'B', 50);
  p = play(p, {"C1B1"});
  EXPECT_EQ(p.to_string(), position_text({{"A1", "B1"}, {"B1", "B3*"}}, 'W', 51))
      << "D1 lost contact with every DVONN piece";
  EXPECT_EQ(p.score(1), 4);
  EXPECT_EQ(p.score(0), 0);
  // Now a black stack of three holding the DVONN piece: it moves whole, three spaces.
  Position q = make({{"B1", "B3*"}, {"E1", "W1"}, {"C1", "W1"}, {"D1", "W1"}}, 'B', 50);
  EXPECT_EQ(legal_moves(q), std::set<std::string>{"B1E1"});
  q = play(q, {"B1E1"});
  EXPECT_EQ(q.to_string(), position_text({{"E1", "B4*"}, {"C1", "W1"}, {"D1", "W1"}}, 'W', 51));
  EXPECT_TRUE(q.holds_dvonn() == bit("E1"));
}

TEST(DvonnMoves, GroupsWithoutDvonnAreRemovedWhateverTheirColours) {
  // A1-B1-C1-D1-E1 in a line, the DVONN piece at A1. Black C1 onto B1 cuts D1 and E1 off.
  Position p = make({{"A1", "R1*"}, {"B1", "W1"}, {"C1", "B1"}, {"D1", "B1"}, {"E1", "W1"}},
                    'B', 50);
  p = play(p, {"C1B1"});
  EXPECT_EQ(p.to_string(), position_text({{"A1", "R1*"}, {"B1", "B2"}}, 'W', 51));
  EXPECT_EQ(p.score(1), 2);

  // The moved stack itself is removed when it lands in a group without DVONN.
  Position q = make({{"A1", "R1*"}, {"B1", "W1"}, {"C1", "B1"}}, 'W', 51);
  q = play(q, {"B1C1"});
  EXPECT_EQ(q.to_string(), position_text({{"A1", "R1*"}}, 'B', 52));
  EXPECT_TRUE(q.is_terminal());
  EXPECT_EQ(q.score(0), 0);
  EXPECT_EQ(q.score(1), 0);
  EXPECT_EQ(q.result(0), 0.0) << "equal scores are a draw";

  // Contact through any chain of stacks keeps a group: the DVONN piece inside a stack counts.
  Position r = make({{"A1", "W2*"}, {"B1", "B1"}, {"C1", "W1"}, {"C2", "B1"}, {"E1", "B1"},
                     {"E2", "W1"}},
                    'W', 51);
  r = play(r, {"C1C2"});  // C2 is a neighbour of B1, so it stays
  EXPECT_EQ(r.to_string(), position_text({{"A1", "W2*"}, {"B1", "B1"}, {"C2", "W2"}}, 'B', 52))
      << "E1 and E2 were never connected and go at the first move";
}

// --- Passing and the end ----------------------------------------------------------------------

TEST(DvonnPass, APlayerWithoutMovesMustPassAndOnlyThen) {
  // White's only stack is B1 (height 5): every landing is off the board or empty.
  Position p = make({{"A1", "B1"}, {"B1", "W5*"}, {"C1", "B1"}}, 'W', 51);
  EXPECT_FALSE(p.is_terminal());
  EXPECT_EQ(legal_moves(p), std::set<std::string>{"PASS"});
  EXPECT_EQ(p.count_legal_actions(), 1);
  EXPECT_TRUE(p.is_legal(kPassAction));
  EXPECT_EQ(p.parse_action("pass"), kPassAction);
  EXPECT_EQ(move_error(p, "B1G1"), "DVONN move 'B1G1': G1 is empty: a move must land on a piece "
                                   "(White has no legal move and must PASS)");
  p.apply(kPassAction);
  EXPECT_EQ(p.ply(), 52);
  EXPECT_EQ(p.side_to_move(), 1);
  EXPECT_EQ(legal_moves(p), (std::set<std::string>{"A1B1", "C1B1"}));
  EXPECT_FALSE(p.is_legal(kPassAction));
  EXPECT_EQ(move_error(p, "PASS"), "DVONN move 'PASS': Black has a legal move and may not pass");
  p = play(p, {"A1B1", "PASS", "C1B1"});
  EXPECT_EQ(p.to_string(), position_text({{"B1", "B7*"}}, 'W', 55));
  EXPECT_TRUE(p.is_terminal());
  EXPECT_EQ(p.count_legal_actions(), 0);
  EXPECT_EQ(move_error(p, "PASS"), "DVONN move 'PASS': the game is over");
  EXPECT_EQ(p.score(1), 7);
  EXPECT_EQ(p.result(1), 1.0);
  EXPECT_EQ(p.result(0), -1.0);
}

// In a set-up position a group may be cut off already; the removal step after every ply of
// phase 2, a pass included, takes it off (a cut-off stack never moves back into play).
TEST(DvonnPass, APassRemovesGroupsCutOffInASetUpPosition) {
  // White's A1 (height 5) cannot move; Black's G3 (height 2) is cut off, and so is A1.
  Position p = make({{"A1", "W5"}, {"E3", "R1*"}, {"G3", "B2"}}, 'W', 51);
  EXPECT_EQ(legal_moves(p), std::set<std::string>{"PASS"});
  p = play(p, {"PASS"});
  EXPECT_EQ(p.to_string(), position_text({{"E3", "R1*"}}, 'B', 52));
  EXPECT_TRUE(p.is_terminal()) << "G3E3 would bring a cut-off stack back";
  EXPECT_EQ(p.result(0), 0.0);

  // Black's B2 on A3 could jump onto C3 only if it stayed: after the pass it is gone.
  Position q = make({{"A3", "B2"}, {"C3", "B1"}, {"D3", "R1*"}}, 'W', 49);
  EXPECT_EQ(legal_moves(q), std::set<std::string>{"PASS"});
  q = play(q, {"PASS"});
  EXPECT_EQ(q.to_string(), position_text({{"C3", "B1"}, {"D3", "R1*"}}, 'B', 50));
}

TEST(DvonnPass, WhiteMayHaveToPassOnTheFirstTurnOfPhaseTwo) {
  // All 24 edge spaces hold Black's 23 pieces and one DVONN piece; White fills the middle.
  const Bitboard edge = edge_spaces();
  std::vector<std::string> edge_cells, inner_cells;
  for (int g = 0; g < kGridCells; ++g) {
    if (!((kValid >> g) & 1)) continue;
    ((edge >> g) & 1 ? edge_cells : inner_cells).push_back(cell_name(g));
  }
  ASSERT_EQ(edge_cells.size(), 24u);
  ASSERT_EQ(inner_cells.size(), 25u);
  // Placements: DVONN on an edge space and two inner ones, then Black and White alternate.
  std::vector<std::string> moves = {edge_cells[0], inner_cells[0], inner_cells[1]};
  for (int i = 0; i < 23; ++i) {
    moves.push_back(edge_cells[1 + i]);
    moves.push_back(inner_cells[2 + i]);
  }
  const Position p = play(Position::initial(), moves);
  EXPECT_EQ(p.ply(), 49);
  EXPECT_EQ(p.side_to_move(), 0);
  EXPECT_EQ(p.mobile(0), 0u);
  EXPECT_EQ(legal_moves(p), std::set<std::string>{"PASS"});
  EXPECT_EQ(Position::parse(p.to_string()).to_string(), p.to_string());
  Position q = p;
  q.apply(kPassAction);
  EXPECT_EQ(q.side_to_move(), 1);
  EXPECT_EQ(q.ply(), 50);
  EXPECT_GT(q.count_legal_actions(), 0);
  EXPECT_FALSE(q.is_legal(kPassAction));
}

TEST(DvonnEnd, TheGameEndsWhenNeitherPlayerCanMove) {
  // Black to move cannot move, but White can: Black passes, the game goes on.
  const Position p = make({{"A1", "R1*"}, {"B1", "W1"}, {"G1", "B3"}}, 'B', 50);
  EXPECT_FALSE(p.is_terminal());
  EXPECT_EQ(legal_moves(p), std::set<std::string>{"PASS"});
  // Neither can move: over, scored by the height of the stacks each side tops.
  const Position end = make({{"A1", "W2*"}, {"E1", "B3"}, {"K5", "R1*"}}, 'B', 60);
  EXPECT_TRUE(end.is_terminal());
  EXPECT_EQ(end.count_legal_actions(), 0);
  EXPECT_EQ(end.score(0), 2);
  EXPECT_EQ(end.score(1), 3);
  EXPECT_EQ(end.result(1), 1.0);
  EXPECT_EQ(end.result(0), -1.0);
  for (Action a = 0; a < kNumActions; ++a) EXPECT_FALSE(end.is_legal(a));
  EXPECT_EQ(move_error(end, "A1B1"), "DVONN move 'A1B1': the game is over");
  const Position draw = make({{"A1", "W3*"}, {"E1", "B3"}, {"K5", "R1*"}}, 'W', 61);
  EXPECT_TRUE(draw.is_terminal());
  EXPECT_EQ(draw.result(0), 0.0);
  EXPECT_EQ(draw.result(1), 0.0);
  // The adapter agrees.
  const auto s = dvonn_game().parse_state(end.to_string());
  EXPECT_TRUE(s->is_terminal());
  EXPECT_EQ(s->score(1), 3);
}

// --- Notation ---------------------------------------------------------------------------------

TEST(DvonnNotation, PositionsAndMovesRoundTrip) {
  int positions = 0;
  for_random_positions(100, 11, [&](const Position& p) {
    ++positions;
    const std::string text = p.to_string();
    const Position q = Position::parse(text);
    ASSERT_EQ(q.to_string(), text);
    ASSERT_EQ(q.hash(), p.hash());
    ActionList actions;
    p.legal_actions(actions);
    for (Action a : actions) {
      const std::string move = p.action_to_string(a);
      ASSERT_EQ(p.parse_action(move), a) << text << " " << move;
      std::string lower = move;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      ASSERT_EQ(p.parse_action(" " + lower + " "), a);
    }
  });
  EXPECT_GT(positions, 5000);
  EXPECT_EQ(Position::parse("R1,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./"
                            ".,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,. B 1")
                .to_string(),
            "R1*,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./"
            ".,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,. B 1");
  // Multi-digit heights.
  const Position tall = make({{"A1", "W12*"}, {"B1", "B10"}}, 'W', 49);
  EXPECT_EQ(tall.height(cell("A1")), 12);
  EXPECT_EQ(tall.to_string(), position_text({{"A1", "W12*"}, {"B1", "B10"}}, 'W', 49));
  EXPECT_EQ(Position::initial().action_to_string(0), "A1");
  EXPECT_EQ(Position::initial().action_to_string(48), "K5");
  EXPECT_EQ(Position::initial().action_to_string(kPassAction), "PASS");
}

TEST(DvonnNotation, MalformedPositionsSayWhatAndWhere) {
  const std::string board = kEmptyBoard;
  struct Case {
    std::string text;
    std::string expected;  // a part of the message
  };
  const std::vector<Case> cases = {
      {"", "expected three fields"},
      {board, "expected three fields"},
      {board + " W", "expected three fields"},
      {board + " W 0 x", "expected three fields"},
      {".,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,. W 0",
       "the board has 4 rows separated by '/', expected 5"},
      {".,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./"
       ".,.,.,.,.,.,.,.,. W 0",
       "row 2 has 9 spaces separated by ',', expected 10 (A2..J2)"},
      {position_text({{"D3", "X1"}}, 'W', 49), "row 3, space 4 (D3): bad token 'X1'"},
      {position_text({{"D3", "w1"}}, 'W', 49), "row 3, space 4 (D3): bad token 'w1'"},
      {position_text({{"D3", ""}}, 'W', 49), "row 3, space 4 (D3): bad token ''"},
      {position_text({{"C5", "W"}}, 'W', 49), "row 5, space 1 (C5): bad token 'W': a height"},
      {position_text({{"C5", "W0"}}, 'W', 49), "row 5, space 1 (C5): bad height '0'"},
      {position_text({{"C5", "W50"}}, 'W', 49), "bad height '50'"},
      {position_text({{"C5", "W05"}}, 'W', 49), "bad height '05'"},
      {position_text({{"C5", "W123456789012"}}, 'W', 49), "bad height"},
      {position_text({{"C5", "W2**"}}, 'W', 49), "bad token 'W2**': unexpected '*'"},
      {position_text({{"C5", "W2x"}}, 'W', 49), "bad token 'W2x': unexpected 'x'"},
      {position_text({{"B4", "R2"}}, 'W', 49),
       "row 4, space 1 (B4): 'R2': R marks a lone DVONN piece, so its height must be 1"},
      {position_text({{"B4", "R2*"}}, 'W', 49), "its height must be 1"},
      {position_text({{"B4", "W1*"}}, 'W', 49), "a single white piece cannot hold a DVONN piece"},
      {board + " X 0", "bad side to move 'X'"},
      {board + " w 0", "bad side to move 'w'"},
      {board + " W -1", "bad ply '-1'"},
      {board + " W x", "bad ply 'x'"},
      {board + " W 01", "bad ply '01'"},
      {board + " W 1234567", "bad ply"},
      {board + " B 0", "at ply 0 White is to move, not Black"},
      {board + " W 1", "at ply 1 Black is to move, not White"},
      {board + " W 2", "at ply 2 of the placement phase exactly 2 pieces are on the board, found 0"},
      {position_text({{"A1", "W1"}, {"B1", "R1*"}}, 'W', 2), "2 DVONN pieces are on the board"},
      {position_text({{"A1", "W1"}, {"B1", "R1*"}, {"C1", "R1*"}, {"D1", "R1*"}}, 'W', 4),
       "after 4 placements White has placed 0 and Black 1"},
      {position_text({{"A1", "B2"}, {"B1", "R1*"}, {"C1", "R1*"}}, 'B', 3),
       "every height must be 1"},
      {position_text({{"A1", "W1"}}, 'B', 50), "no stack holds a DVONN piece"},
      {position_text({{"A1", "W30*"}, {"B1", "B20"}}, 'W', 49), "the stacks hold 50 pieces"},
      {position_text({{"A1", "R1*"}, {"B1", "R1*"}, {"C1", "R1*"}, {"D1", "W2*"}}, 'W', 49),
       "4 stacks hold DVONN pieces; there are only 3"},
      {position_text({{"A1", "R1*"}}, 'B', 49), "at ply 49 White is to move, not Black"},
      {position_text({{"A1", "R1*"}}, 'W', 50), "at ply 50 Black is to move, not White"},
  };
  for (const auto& c : cases) {
    const std::string message = parse_error(c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "input: " << c.text << "\nmessage: " << message << "\nexpected: " << c.expected;
    EXPECT_EQ(message.rfind("bad DVONN position: ", 0), 0u) << message;
  }
  // The adapter throws the same.
  EXPECT_THROW(dvonn_game().parse_state(board + " W 7"), GameError);
  // Tabs and extra spaces between the fields are fine.
  EXPECT_EQ(Position::parse("  " + board + "\tW   0 ").to_string(), board + " W 0");
}

TEST(DvonnNotation, MalformedAndIllegalMovesSayWhy) {
  const Position start = Position::initial();
  struct Case {
    std::string move;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", "expected a placement like D4, a move like A2A1, or PASS"},
      {"D", "expected a placement like D4"},
      {"D44", "expected a placement like D4"},
      {"PAS", "expected a placement like D4"},
      {"PASSS", "expected a placement like D4"},
      {"Z1", "'Z1' is not a space name"},
      {"D0", "'D0' is not a space name"},
      {"D6", "'D6' is not a space name"},
      {"A5", "A5 is not on the board: row 5 runs from C5 to K5"},
      {"K1", "K1 is not on the board: row 1 runs from A1 to I1"},
      {"A1A9", "'A9' is not a space name"},
      {"A2A1", "during placement only placements are legal"},
      {"PASS", "during placement only placements are legal"},
  };
  for (const auto& c : cases) {
    const std::string message = move_error(start, c.move);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "move: " << c.move << "\nmessage: " << message;
  }
  const Position one = play(start, {"d4"});
  EXPECT_EQ(move_error(one, "D4"), "DVONN move 'D4': D4 is occupied");
  EXPECT_EQ(one.parse_action("e4"), placement_action(kSpaceOfCell[cell("E4")]));
}

// A 1 MB position or move is quoted in at most about 100 bytes; the message still says what is
// wrong and how large the input was.
TEST(DvonnNotation, HugeBadInputGivesAShortMessage) {
  const std::string huge(1 << 20, 'W');
  const std::string fields = parse_error(huge);
  EXPECT_LT(fields.size(), 400u) << fields.substr(0, 500);
  EXPECT_NE(fields.find("expected three fields"), std::string::npos) << fields.substr(0, 500);
  EXPECT_NE(fields.find("WWW... (1048576 bytes)'"), std::string::npos) << fields.substr(0, 500);
  const std::string token =
      parse_error(position_text({{"D3", "W" + std::string(1 << 20, '1')}}, 'W', 49));
  EXPECT_LT(token.size(), 400u) << token.substr(0, 500);
  EXPECT_NE(token.find("row 3, space 4 (D3): bad height '111"), std::string::npos)
      << token.substr(0, 500);
  const std::string side = parse_error(std::string(kEmptyBoard) + " " + huge + " 0");
  EXPECT_LT(side.size(), 400u) << side.substr(0, 500);
  EXPECT_NE(side.find("bad side to move 'WWW"), std::string::npos) << side.substr(0, 500);
  const std::string move = move_error(Position::initial(), huge);
  EXPECT_LT(move.size(), 400u) << move.substr(0, 500);
  EXPECT_EQ(move.rfind("DVONN move 'WWW", 0), 0u) << move.substr(0, 500);
  EXPECT_NE(move.find("... (1048576 bytes)': expected a placement like D4"), std::string::npos)
      << move.substr(0, 500);
  EXPECT_EQ(move_error(Position::initial(), "\x01"),
            "DVONN move '\\x01': expected a placement like D4, a move like A2A1, or PASS");
}

// --- Random games -----------------------------------------------------------------------------

TEST(DvonnRandomGames, LastAboutSeventyFiveToEightyFivePlies) {
  std::mt19937_64 rng(20260101);
  const int games = 2000;
  long long total = 0;
  int shortest = 1000, longest = 0, passes = 0, draws = 0, white_wins = 0;
  ActionList actions;
  for (int g = 0; g < games; ++g) {
    Position p = Position::initial();
    while (true) {
      p.legal_actions(actions);
      if (actions.empty()) break;
      const Action a = actions[std::uniform_int_distribution<int>(0, actions.size() - 1)(rng)];
      passes += a == kPassAction;
      p.apply(a);
    }
    ASSERT_TRUE(p.is_terminal());
    ASSERT_LE(p.ply(), 145) << "no game can be longer (see kMaxGameLength)";
    total += p.ply();
    shortest = std::min(shortest, p.ply());
    longest = std::max(longest, p.ply());
    draws += p.result(0) == 0.0;
    white_wins += p.result(0) == 1.0;
  }
  const double mean = static_cast<double>(total) / games;
  std::printf("random DVONN games: mean %.2f plies (min %d, max %d), %.2f passes per game, "
              "White wins %d, draws %d of %d\n",
              mean, shortest, longest, static_cast<double>(passes) / games, white_wins, draws,
              games);
  EXPECT_GE(mean, 70.0);
  EXPECT_LE(mean, 90.0);
  EXPECT_GE(shortest, 49);
  EXPECT_LE(longest, dvonn_game().max_game_length());
}

TEST(DvonnRandomGames, FastPathsAgreeWithFullGeneration) {
  for_random_positions(30, 5, [&](const Position& p) {
    ActionList actions;
    p.legal_actions(actions);
    ASSERT_EQ(p.count_legal_actions(), actions.size()) << p.to_string();
    ASSERT_EQ(actions.empty(), p.is_terminal());
    ASSERT_TRUE(std::is_sorted(actions.begin(), actions.end()));
    for (Action a = -2; a < kNumActions + 2; ++a)
      ASSERT_EQ(p.is_legal(a), actions.contains(a)) << p.to_string() << " action " << a;
    ASSERT_TRUE(p.is_consistent());
    if (!p.in_placement()) {
      // Mobility: a stack is mobile exactly when some legal move starts on it.
      Bitboard from = 0;
      for (Action a : actions)
        if (a != kPassAction) from |= Bitboard{1} << kCellOfSpace[(a - kMoveActionBase) % 49];
      ASSERT_EQ(from, p.mobile(p.side_to_move()));
    }
  });
}

TEST(DvonnHash, DependsOnStacksSideAndPhaseNotPly) {
  const Position a = make({{"A1", "R1*"}, {"B1", "W1"}, {"C1", "B1"}}, 'W', 51);
  const Position b = make({{"A1", "R1*"}, {"B1", "W1"}, {"C1", "B1"}}, 'W', 61);
  const Position c = make({{"A1", "R1*"}, {"B1", "W1"}, {"C1", "B1"}}, 'B', 52);
  const Position d = make({{"A1", "R1*"}, {"B1", "B1"}, {"C1", "W1"}}, 'W', 51);
  const Position e = make({{"A1", "R1*"}, {"B1", "W2*"}, {"C1", "B1"}}, 'W', 51);
  const Position f = make({{"A1", "R1*"}, {"B1", "W2"}, {"C1", "B1"}}, 'W', 51);
  EXPECT_EQ(a.hash(), b.hash());
  const std::set<std::uint64_t> hashes = {a.hash(), c.hash(), d.hash(), e.hash(), f.hash(),
                                          Position::initial().hash()};
  EXPECT_EQ(hashes.size(), 6u);
}

// --- Symmetries -------------------------------------------------------------------------------

TEST(DvonnSymmetry, FourMapsOfTheBoardOntoItself) {
  for (int s = 0; s < kNumSymmetries; ++s) {
    std::set<int> images;
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) {
        const int image = transform_cell(s, r, c);
        ASSERT_GE(image, 0);
        ASSERT_LT(image, kGridCells);
        images.insert(image);
        EXPECT_EQ(on_board(image / kCols, image % kCols), on_board(r, c));
        EXPECT_EQ(transform_cell(s, image / kCols, image % kCols), r * kCols + c)
            << "symmetry " << s << " is an involution";
        EXPECT_EQ(transform_cell(3, r, c),
                  transform_cell(1, transform_cell(2, r, c) / kCols, transform_cell(2, r, c) % kCols));
        EXPECT_EQ(dvonn_game().transform_cell(s, r, c), image);
        if (!on_board(r, c)) continue;
        // Neighbours map to neighbours along the transformed direction.
        for (int d = 0; d < kNumDirections; ++d) {
          const int r2 = r + kDirRow[d], c2 = c + kDirCol[d];
          if (!on_board(r2, c2)) continue;
          const int d2 = transform_direction(s, d);
          EXPECT_EQ(transform_cell(s, r2, c2), image + kDirRow[d2] * kCols + kDirCol[d2]);
        }
      }
    EXPECT_EQ(images.size(), static_cast<std::size_t>(kGridCells)) << "a bijection";
    std::set<int> directions;
    for (int d = 0; d < kNumDirections; ++d) directions.insert(transform_direction(s, d));
    EXPECT_EQ(directions.size(), 6u);
    std::set<Action> actions;
    for (Action a = 0; a < kNumActions; ++a) actions.insert(transform_action(s, a));
    EXPECT_EQ(actions.size(), static_cast<std::size_t>(kNumActions));
    EXPECT_EQ(transform_action(s, kPassAction), kPassAction);
  }
  // The rules' spot checks: rotation sends A1 to K5, the row mirror A1 to C5, left-right A1 to I1.
  EXPECT_EQ(cell_name(transform_cell(1, 0, 0)), "K5");
  EXPECT_EQ(cell_name(transform_cell(2, 0, 0)), "C5");
  EXPECT_EQ(cell_name(transform_cell(3, 0, 0)), "I1");
  EXPECT_EQ(cell_name(transform_cell(3, 2, 0)), "K3");
}

TEST(DvonnSymmetry, LegalActionsAndPlanesTransformTogether) {
  std::vector<float> original(kPlanes * kGridCells), transformed(original.size()),
      expected(original.size());
  int checked = 0;
  for_random_positions(40, 17, [&](const Position& p) {
    p.encode(original.data());
    ActionList actions;
    p.legal_actions(actions);
    for (int s = 0; s < kNumSymmetries; ++s) {
      const Position t = p.transformed(s);
      ASSERT_TRUE(t.is_consistent());
      std::set<Action> mapped, legal;
      for (Action a : actions) mapped.insert(transform_action(s, a));
      ActionList t_actions;
      t.legal_actions(t_actions);
      legal.insert(t_actions.begin(), t_actions.end());
      ASSERT_EQ(legal, mapped) << p.to_string() << " symmetry " << s;
      for (Action a : actions)
        ASSERT_EQ(t.action_to_string(transform_action(s, a)).size(), p.action_to_string(a).size());
      t.encode(transformed.data());
      for (int plane = 0; plane < kPlanes; ++plane)
        for (int r = 0; r < kRows; ++r)
          for (int c = 0; c < kCols; ++c)
            expected[plane * kGridCells + transform_cell(s, r, c)] =
                original[plane * kGridCells + r * kCols + c];
      ASSERT_EQ(transformed, expected) << p.to_string() << " symmetry " << s;
      ASSERT_EQ(t.transformed(s).to_string(), p.to_string());
      ASSERT_EQ(t.score(0), p.score(0));
      ASSERT_EQ(t.is_terminal(), p.is_terminal());
      ++checked;
    }
  });
  EXPECT_GT(checked, 4 * 3000);
}

// --- Planes -----------------------------------------------------------------------------------

TEST(DvonnPlanes, SideToMovePointOfView) {
  std::vector<float> planes(kPlanes * kGridCells);
  auto at = [&](int plane, const std::string& name) { return planes[plane * kGridCells + cell(name)]; };
  // Placement, ply 0: the next piece is a DVONN piece.
  Position::initial().encode(planes.data());
  EXPECT_EQ(at(0, "A1"), 1.0f);
  EXPECT_EQ(planes[0 * kGridCells + 10], 0.0f) << "K1 is off the board";
  EXPECT_EQ(at(1, "A1"), 1.0f);
  EXPECT_EQ(planes[16 * kGridCells + 10], 1.0f);
  EXPECT_EQ(at(17, "K5"), 1.0f);
  // Phase 2 from Black's side: own = black.
  const Position p = make({{"A1", "R1*"}, {"B1", "W2*"}, {"C1", "B7"}, {"D1", "W1"}}, 'B', 50);
  p.encode(planes.data());
  EXPECT_EQ(at(1, "A1"), 0.0f);
  EXPECT_EQ(at(1, "E1"), 1.0f);
  EXPECT_EQ(at(2, "A1"), 1.0f);
  EXPECT_EQ(at(3, "A1"), 1.0f);
  EXPECT_EQ(at(3, "B1"), 1.0f);
  EXPECT_EQ(at(2, "B1"), 0.0f);
  EXPECT_EQ(at(8, "C1"), 1.0f) << "own stack of 5 or more";
  EXPECT_FLOAT_EQ(at(9, "C1"), 0.7f);
  EXPECT_EQ(at(11, "B1"), 1.0f) << "opponent stack of 2";
  EXPECT_FLOAT_EQ(at(15, "B1"), 0.2f);
  EXPECT_EQ(at(10, "D1"), 1.0f);
  EXPECT_EQ(at(16, "A1"), 0.0f);
  EXPECT_EQ(at(17, "A1"), 0.0f);
  EXPECT_EQ(at(18, "C1"), 0.0f) << "C1 (height 7) has no landing";
  EXPECT_EQ(at(19, "B1"), 1.0f) << "White's B1 could land on D1";
  EXPECT_EQ(at(19, "D1"), 1.0f);
  const PlaneShape shape = dvonn_game().input_shape();
  EXPECT_EQ(shape.planes, kPlanes);
  EXPECT_EQ(shape.height, 5);
  EXPECT_EQ(shape.width, 11);
  EXPECT_EQ(dvonn_game().num_actions(), 344);
  EXPECT_EQ(dvonn_game().name(), "dvonn");
  EXPECT_EQ(dvonn_game().num_symmetries(), 4);
}

TEST(DvonnPretty, DrawsTheHexBoardWithCoordinates) {
  const Position p = make({{"A1", "R1*"}, {"B1", "W12*"}, {"K5", "B3"}}, 'W', 49);
  const std::string text = p.pretty();
  for (const char* label : {"A1", "I1", "A2", "J2", "A3", "K3", "B4", "K4", "C5", "K5", "W12*",
                            "R1*", "B3", "White"})
    EXPECT_NE(text.find(label), std::string::npos) << label << "\n" << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 7);
}

}  // namespace
}  // namespace oppidum::dvonn
