// Tic-tac-toe rules: wins and draws, notation and its errors, symmetries, the input planes, the
// evaluation, and the facts of the solved game (5,478 positions, 255,168 games, a draw with best
// play) from exhaustive searches (tests/ttt_solver.h). Perft is in perft_test.cpp.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "games/ttt/evaluation.h"
#include "games/ttt/game.h"
#include "games/ttt/position.h"
#include "tests/ttt_solver.h"

namespace oppidum::ttt {
namespace {

Position play(const std::vector<std::string>& moves, Position p = Position::initial()) {
  for (const std::string& m : moves) p.apply(p.parse_action(m));
  return p;
}

std::set<std::string> moves_of(const Position& p) {
  ActionList actions;
  p.legal_actions(actions);
  std::set<std::string> out;
  for (Action a : actions) out.insert(p.action_to_string(a));
  return out;
}

std::string parse_error_of(const std::string& text) {
  try {
    Position::parse(text);
  } catch (const GameError& e) {
    return e.what();
  }
  return "";
}

std::string move_error_of(const Position& p, const std::string& move) {
  try {
    p.parse_action(move);
  } catch (const GameError& e) {
    return e.what();
  }
  return "";
}

// Every position a game can reach, by its notation.
std::map<std::string, Position> reachable_positions() {
  std::map<std::string, Position> seen;
  std::vector<Position> stack = {Position::initial()};
  while (!stack.empty()) {
    const Position p = stack.back();
    stack.pop_back();
    if (!seen.emplace(p.to_string(), p).second) continue;
    ActionList actions;
    p.legal_actions(actions);
    for (Action a : actions) stack.push_back(play({p.action_to_string(a)}, p));
  }
  return seen;
}

// The value of each legal move for the mover, by its notation.
std::map<std::string, int> move_values(const Position& p) {
  test_util::Solver solver;
  std::map<std::string, int> values;
  ActionList actions;
  p.legal_actions(actions);
  for (Action a : actions) values[p.action_to_string(a)] = solver.value_of_move(p, a);
  return values;
}

TEST(TttRules, StartPosition) {
  const Position p = Position::initial();
  EXPECT_EQ(p.to_string(), ".../.../... x");
  EXPECT_EQ(p.side_to_move(), 0);
  EXPECT_EQ(p.ply(), 0);
  EXPECT_FALSE(p.is_terminal());
  EXPECT_EQ(moves_of(p), (std::set<std::string>{"a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2",
                                                "c3"}));
  EXPECT_EQ(p.count_legal_actions(), 9);
}

TEST(TttRules, CellsAndActions) {
  EXPECT_EQ(cell_name(0), "a1");
  EXPECT_EQ(cell_name(2), "c1");
  EXPECT_EQ(cell_name(3), "a2");
  EXPECT_EQ(cell_name(8), "c3");
  const Position p = Position::initial();
  for (Action a = 0; a < kNumActions; ++a) EXPECT_EQ(p.parse_action(cell_name(a)), a);
  EXPECT_EQ(p.parse_action("B2"), 4);
  EXPECT_EQ(p.parse_action(" c3 "), 8);
  const Position q = play({"b2", "a1", "c3"});
  EXPECT_EQ(q.to_string(), "..x/.x./o.. o");
  EXPECT_EQ(q.ply(), 3);
  EXPECT_EQ(q.side_to_move(), 1);
  EXPECT_EQ(moves_of(q).size(), 6u);
}

// Each of the eight lines wins for X (on X's third mark) and for O (on O's third).
TEST(TttRules, ThreeInARowWinsOnRanksFilesAndDiagonals) {
  for (int l = 0; l < kNumLines; ++l) {
    std::vector<int> on, off;
    for (int cell = 0; cell < kCells; ++cell) (kLines[l] >> cell & 1 ? on : off).push_back(cell);
    // X on the line, O on the first two other cells.
    Position p;
    for (int cell : {on[0], off[0], on[1], off[1]}) p.apply(cell);
    EXPECT_FALSE(p.is_terminal()) << p.to_string();
    p.apply(on[2]);
    EXPECT_TRUE(p.is_terminal()) << p.to_string();
    EXPECT_EQ(p.winner(), 0);
    EXPECT_EQ(p.result(0), 1.0);
    EXPECT_EQ(p.result(1), -1.0);
    EXPECT_EQ(p.score(0), 1);
    EXPECT_EQ(p.score(1), 0);
    EXPECT_EQ(p.count_legal_actions(), 0);
    // O on the line; X on three other cells that make no line.
    std::vector<int> xs;
    for (std::size_t i = 0; i < off.size() && xs.size() < 3; ++i) {
      xs.push_back(off[i]);
      if (xs.size() == 3 && has_line(static_cast<Cells>((1 << xs[0]) | (1 << xs[1]) | (1 << xs[2]))))
        xs.pop_back();
    }
    ASSERT_EQ(xs.size(), 3u);
    Position q;
    for (int cell : {xs[0], on[0], xs[1], on[1], xs[2]}) q.apply(cell);
    EXPECT_FALSE(q.is_terminal()) << q.to_string();
    q.apply(on[2]);
    EXPECT_TRUE(q.is_terminal()) << q.to_string();
    EXPECT_EQ(q.winner(), 1);
    EXPECT_EQ(q.result(1), 1.0);
    EXPECT_EQ(q.result(0), -1.0);
    EXPECT_EQ(q.score(1), 1);
  }
}

TEST(TttRules, FullBoardWithoutALineIsADraw) {
  const Position p = Position::parse("xox/xoo/oxx o");
  EXPECT_TRUE(p.is_terminal());
  EXPECT_EQ(p.winner(), -1);
  EXPECT_EQ(p.result(0), 0.0);
  EXPECT_EQ(p.result(1), 0.0);
  EXPECT_EQ(p.score(0), 0);
  EXPECT_EQ(p.score(1), 0);
  EXPECT_TRUE(moves_of(p).empty());
  EXPECT_NE(move_error_of(p, "a1").find("the board is full"), std::string::npos);
  // A line made with the ninth mark is a win, not a draw.
  const Position won = Position::parse("xoo/oxx/xox o");
  EXPECT_TRUE(won.is_terminal());
  EXPECT_EQ(won.result(0), 1.0);
}

TEST(TttRules, NoMoveAfterAWin) {
  const Position p = play({"a1", "a2", "b1", "b2", "c1"});
  EXPECT_EQ(p.to_string(), ".../oo./xxx o");
  EXPECT_TRUE(p.is_terminal());
  EXPECT_TRUE(moves_of(p).empty());
  for (Action a = 0; a < kNumActions; ++a) EXPECT_FALSE(p.is_legal(a));
  EXPECT_EQ(move_error_of(p, "c2"),
            "tic-tac-toe move \"c2\": illegal: the game is over, X has three in a row");
  const auto state = ttt_game().parse_state(p.to_string());
  EXPECT_THROW(state->apply(5), std::logic_error);
}

TEST(TttRules, OccupiedCellsAreRefused) {
  const Position p = play({"b2", "a1"});
  EXPECT_FALSE(p.is_legal(4));
  EXPECT_FALSE(p.is_legal(0));
  EXPECT_FALSE(p.is_legal(-1));
  EXPECT_FALSE(p.is_legal(9));
  EXPECT_EQ(move_error_of(p, "b2"), "tic-tac-toe move \"b2\": illegal: b2 already holds an X");
  EXPECT_EQ(move_error_of(p, "A1"), "tic-tac-toe move \"A1\": illegal: a1 already holds an O");
}

TEST(TttRules, BadMovesSayWhatIsWrong) {
  const Position p = Position::initial();
  EXPECT_EQ(move_error_of(p, "d1"), "tic-tac-toe move \"d1\": 'd' at character 1 is not a file (a..c)");
  EXPECT_EQ(move_error_of(p, "a4"), "tic-tac-toe move \"a4\": '4' at character 2 is not a rank (1..3)");
  EXPECT_EQ(move_error_of(p, "a0"), "tic-tac-toe move \"a0\": '0' at character 2 is not a rank (1..3)");
  for (const char* bad : {"", "a", "a1 b2", "a12", "b2-b3", "PASS"})
    EXPECT_NE(move_error_of(p, bad).find("expected a cell"), std::string::npos) << bad;
}

TEST(TttRules, BadPositionsSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected the board"},
      {".../.../...", "expected the board"},
      {".../.../... z", "the side to move must be x or o, not \"z\""},
      {".../.../... xo", "the side to move must be x or o"},
      {"../.../... x", "rank 3 has 2 cells; every rank has exactly 3"},
      {"..../.../... x", "rank 3 has more than 3 cells"},
      {".../.../.../... x", "more than 3 ranks"},
      {".../... x", "the board ends at rank 2 after 3 cells"},
      {".../.../.. x", "the board ends at rank 1 after 2 cells"},
      {".../.q./... x", "unknown character 'q' at b2 (character 6); use x, o or ."},
      {"xx./.../... o", "2 X and 0 O marks cannot happen"},
      {"o../.../... x", "0 X and 1 O marks cannot happen"},
      {"x../.../... x", "with 1 X and 0 O marks it is O's turn, not X's"},
      {"xo./.../... o", "with 1 X and 1 O marks it is X's turn, not O's"},
      {"xxx/ooo/x.o x", "both X and O have three in a row"},
      {"xxx/oo./o.. x", "X has three in a row, so the game ended before O's last mark"},
      {"ooo/xx./x.x o", "O has three in a row, so the game ended before X's last mark"},
  };
  for (const auto& [text, message] : cases) {
    const std::string error = parse_error_of(text);
    EXPECT_NE(error.find(message), std::string::npos) << text << ": " << error;
    EXPECT_EQ(error.rfind("tic-tac-toe position \"", 0), 0u) << error;
  }
  EXPECT_EQ(Position::parse("X.O/.X./... O").to_string(), "x.o/.x./... o");
  EXPECT_EQ(Position::parse("  .../.../... x\n").to_string(), ".../.../... x");
}

// Exactly the 5,478 reachable positions are accepted: every board of x, o and . with either side
// to move is parsed, and what parses is what a game can reach.
TEST(TttRules, TheNotationAcceptsExactlyTheReachablePositions) {
  const auto reachable = reachable_positions();
  EXPECT_EQ(reachable.size(), 5478u);
  std::set<std::uint64_t> hashes;
  int accepted = 0;
  for (int code = 0; code < 19683; ++code) {  // 3^9 boards
    std::string board;
    for (int i = 0, c = code; i < kCells; ++i, c /= 3) {
      if (i > 0 && i % kCols == 0) board += '/';
      board += ".xo"[c % 3];
    }
    for (const char* side : {" x", " o"}) {
      const std::string text = board + side;
      if (!parse_error_of(text).empty()) continue;
      ++accepted;
      const Position p = Position::parse(text);
      EXPECT_TRUE(p.is_consistent()) << text;
      EXPECT_EQ(p.to_string(), text);
      ASSERT_TRUE(reachable.count(text)) << text << " is accepted but no game reaches it";
      hashes.insert(p.hash());
    }
  }
  EXPECT_EQ(accepted, 5478);
  EXPECT_EQ(hashes.size(), 5478u) << "distinct positions have distinct hashes";
}

TEST(TttRules, EncodingIsOwnMarksOpponentMarksAndOnes) {
  const Position p = Position::parse("x.o/.x./... o");  // O to move
  std::vector<float> planes(kPlanes * kCells, -1.0f);
  p.encode(planes.data());
  const auto at = [&](int plane, const char* cell) {
    return planes[plane * kCells + Position::initial().parse_action(cell)];
  };
  EXPECT_EQ(at(0, "c3"), 1.0f);  // O's own mark
  EXPECT_EQ(at(0, "a3"), 0.0f);
  EXPECT_EQ(at(1, "a3"), 1.0f);  // X's marks are the opponent's
  EXPECT_EQ(at(1, "b2"), 1.0f);
  EXPECT_EQ(at(1, "a1"), 0.0f);
  EXPECT_EQ(std::count(planes.begin(), planes.begin() + kCells, 1.0f), 1);
  EXPECT_EQ(std::count(planes.begin() + kCells, planes.begin() + 2 * kCells, 1.0f), 2);
  EXPECT_EQ(std::count(planes.begin() + 2 * kCells, planes.end(), 1.0f), kCells);
  const Game& g = ttt_game();
  EXPECT_EQ(g.input_shape().planes, kPlanes);
  EXPECT_EQ(g.input_shape().height, 3);
  EXPECT_EQ(g.input_shape().width, 3);
}

TEST(TttRules, SymmetriesAreTheEightOfTheSquare) {
  EXPECT_EQ(transform_action(1, 0), 2) << "the quarter turn sends a1 to c1";
  EXPECT_EQ(transform_action(4, 0), 2) << "the file mirror sends a1 to c1";
  EXPECT_EQ(transform_action(5, 0), 6) << "the rank mirror sends a1 to a3";
  EXPECT_EQ(transform_action(6, 1), 3) << "the a1-c3 mirror sends b1 to a2";
  EXPECT_EQ(transform_action(7, 0), 8) << "the a3-c1 mirror sends a1 to c3";
  std::set<std::vector<int>> maps;
  for (int s = 0; s < kNumSymmetries; ++s) {
    std::vector<int> image;
    for (int cell = 0; cell < kCells; ++cell) image.push_back(transform_action(s, cell));
    EXPECT_EQ(std::set<int>(image.begin(), image.end()).size(), 9u) << "a permutation";
    EXPECT_EQ(image[4], 4) << "the centre stays";
    maps.insert(image);
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) EXPECT_EQ(transform_cell(s, r, c), image[r * kCols + c]);
    // Lines go to lines, so wins go to wins.
    std::set<Cells> lines(std::begin(kLines), std::end(kLines));
    for (Cells line : kLines) {
      Cells mapped = 0;
      for (int cell = 0; cell < kCells; ++cell)
        if (line >> cell & 1) mapped |= static_cast<Cells>(1 << image[cell]);
      EXPECT_TRUE(lines.count(mapped)) << "symmetry " << s << " line " << line;
    }
  }
  EXPECT_EQ(maps.size(), 8u) << "eight different maps";
  // The quarter turns undo each other; the others are their own inverse.
  for (int cell = 0; cell < kCells; ++cell) {
    EXPECT_EQ(transform_action(3, transform_action(1, cell)), cell);
    for (int s : {0, 2, 4, 5, 6, 7}) EXPECT_EQ(transform_action(s, transform_action(s, cell)), cell);
  }
  EXPECT_THROW(transform_action(8, 0), std::logic_error);
  EXPECT_THROW(transform_action(0, 9), std::logic_error);
}

TEST(TttRules, SymmetriesMapPositionsWinsAndValues) {
  test_util::Solver solver;
  for (const auto& [text, p] : reachable_positions()) {
    for (int s = 0; s < kNumSymmetries; ++s) {
      const Position t = p.transformed(s);
      ASSERT_TRUE(t.is_consistent()) << text;
      EXPECT_EQ(t.winner(), p.winner()) << text << " symmetry " << s;
      EXPECT_EQ(t.is_terminal(), p.is_terminal());
      EXPECT_EQ(t.side_to_move(), p.side_to_move());
      EXPECT_EQ(solver.value(t), solver.value(p)) << text << " symmetry " << s;
      ActionList actions;
      p.legal_actions(actions);
      std::set<Action> mapped;
      for (Action a : actions) mapped.insert(transform_action(s, a));
      t.legal_actions(actions);
      EXPECT_EQ(std::set<Action>(actions.begin(), actions.end()), mapped);
    }
  }
}

TEST(TttRules, GameFacts) {
  const Game& g = ttt_game();
  EXPECT_EQ(&game_by_name("ttt"), &g);
  EXPECT_EQ(g.name(), "ttt");
  EXPECT_EQ(g.display_name(), "Tic-tac-toe");
  EXPECT_EQ(g.side_name(0), "X");
  EXPECT_EQ(g.side_name(1), "O");
  EXPECT_EQ(g.num_actions(), 9);
  EXPECT_EQ(g.num_symmetries(), 8);
  EXPECT_EQ(g.max_game_length(), 9);
  EXPECT_EQ(g.default_opening_plies(), 1);
  EXPECT_FALSE(g.has_score());
  EXPECT_EQ(g.encoding_version(), 1);
  for (const char* move : {"a1", "C3", "b2", "B1"}) EXPECT_TRUE(g.looks_like_move(move)) << move;
  for (const char* move : {"d1", "a4", "a0", "a1-a2", "b", "PASS", " a1"})
    EXPECT_FALSE(g.looks_like_move(move)) << move;
}

// The number of different games, by length and result (the known counts: 255,168 games, X wins
// 131,184, O wins 77,904, draws 46,080).
TEST(TttSolved, ThereAre255168Games) {
  std::map<int, std::uint64_t> by_length;
  std::uint64_t x_wins = 0, o_wins = 0, draws = 0;
  std::vector<Position> stack = {Position::initial()};
  while (!stack.empty()) {
    const Position p = stack.back();
    stack.pop_back();
    if (p.is_terminal()) {
      ++by_length[p.ply()];
      (p.winner() == 0 ? x_wins : p.winner() == 1 ? o_wins : draws) += 1;
      continue;
    }
    ActionList actions;
    p.legal_actions(actions);
    for (Action a : actions) {
      Position next = p;
      next.apply(a);
      stack.push_back(next);
    }
  }
  EXPECT_EQ(x_wins + o_wins + draws, 255168u);
  EXPECT_EQ(x_wins, 131184u);
  EXPECT_EQ(o_wins, 77904u);
  EXPECT_EQ(draws, 46080u);
  EXPECT_EQ(by_length, (std::map<int, std::uint64_t>{
                           {5, 1440}, {6, 5328}, {7, 47952}, {8, 72576}, {9, 127872}}));
}

TEST(TttSolved, TheStartIsADrawAndEveryFirstMoveDraws) {
  EXPECT_EQ(test_util::Solver().value(Position::initial()), 0);
  for (const auto& [move, value] : move_values(Position::initial())) EXPECT_EQ(value, 0) << move;
  // Against the centre, O draws only in a corner; an edge loses.
  EXPECT_EQ(move_values(play({"b2"})), (std::map<std::string, int>{{"a1", 0}, {"a2", -1},
                                                                   {"a3", 0}, {"b1", -1},
                                                                   {"b3", -1}, {"c1", 0},
                                                                   {"c2", -1}, {"c3", 0}}));
}

TEST(TttSolved, ForcedWinsAreFound) {
  // X to move wins at once on c3 (and must: O threatens c2).
  EXPECT_EQ(move_values(Position::parse("xx./oo./... x")).at("c3"), 1);
  // X on opposite corners, O in the centre: an O corner loses to a fork, an O edge draws.
  EXPECT_EQ(move_values(Position::parse("x../.o./..x o")),
            (std::map<std::string, int>{{"a1", -1}, {"a2", 0}, {"b1", 0}, {"b3", 0}, {"c2", 0},
                                        {"c3", -1}}));
  // After the corner, X must block on c3, which is also a fork: the only winning move.
  const auto fork = move_values(Position::parse("x../.o./o.x x"));
  for (const auto& [move, value] : fork) EXPECT_EQ(value, move == "c3" ? 1 : -1) << move;
  // O answered the centre on an edge: X, to move, has a forced win.
  EXPECT_EQ(test_util::Solver().value(play({"b2", "b1"})), 1);
}

TEST(TttEvaluation, CountsOpenLinesAndThreats) {
  EXPECT_EQ(evaluate(Position::initial()), 0);
  // X in the centre, O to move: X has 4 open lines with one mark, O none of its own.
  EXPECT_EQ(evaluate(play({"b2"})), -4);
  // X a1 b1 (a threat on c1), O b2 c3; X to move. X's open lines: rank 1 with two marks (11) and
  // file a (1). O's: rank 2, rank 3, file c and the a3-c1 diagonal (1 each); file b and the a1-c3
  // diagonal hold both.
  EXPECT_EQ(evaluate(Position::parse("..o/.o./xx. x")), 12 - 4);
}

}  // namespace
}  // namespace oppidum::ttt
