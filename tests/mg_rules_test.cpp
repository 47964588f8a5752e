// Murus Gallicus rules: the situations the rule texts describe, notation, errors, invariants.
#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/mg/game.h"
#include "games/mg/position.h"

namespace oppidum::mg {
namespace {

std::set<std::string> moves_of(const Position& p) {
  ActionList actions;
  p.legal_actions(actions);
  std::set<std::string> out;
  for (Action a : actions) out.insert(p.action_to_string(a));
  return out;
}

Position after(const std::string& fen, const std::string& move) {
  Position p = Position::parse(fen);
  p.apply(p.parse_action(move));
  return p;
}

std::string error_of(const std::string& fen, const std::string& move) {
  try {
    Position::parse(fen).parse_action(move);
  } catch (const GameError& e) {
    return e.what();
  }
  return "";
}

std::string parse_error_of(const std::string& fen) {
  try {
    Position::parse(fen);
  } catch (const GameError& e) {
    return e.what();
  }
  return "";
}

const std::string kStart = "tttttttt/......../......../......../......../......../TTTTTTTT L";

TEST(MgRules, StartPosition) {
  const Position p = Position::initial();
  EXPECT_EQ(p.to_string(), kStart);
  EXPECT_EQ(p.stones(0), 16);
  EXPECT_EQ(p.stones(1), 16);
  EXPECT_EQ(p.side_to_move(), 0);
  const auto moves = moves_of(p);
  EXPECT_EQ(moves.size(), 20u);
  EXPECT_TRUE(moves.count("a1-a3"));
  EXPECT_TRUE(moves.count("a1-c3"));
  EXPECT_FALSE(moves.count("a1-c1")) << "blocked by the own towers on b1 and c1";
}

TEST(MgRules, DistributionOntoOwnWallMakesATower) {
  const Position p = after("t......./......../......../......../......../..W...../..T..... L", "c1-c3");
  EXPECT_EQ(p.to_string(), "t......./......../......../......../..W...../..T...../........ D");
}

TEST(MgRules, DistributionBlockedByEdgeEvenWhenOnlyTheSecondSquareIsOff) {
  // g4 tower: eastwards s1 = h4 is on the board but s2 is not.
  const auto moves = moves_of(Position::parse("t......./......../......../......T./......../......../........ L"));
  EXPECT_FALSE(moves.count("g4-i4"));
  EXPECT_TRUE(moves.count("g4-e4"));
  EXPECT_EQ(moves.size(), 5u) << "N, S, W, NW and SW; E, NE and SE leave the board";
}

TEST(MgRules, DistributionBlockedByEnemyStonesAndAnyTower) {
  const std::string fen = "t......./......../...w..../...T.t../...T..../...W..../........ L";
  const auto moves = moves_of(Position::parse(fen));
  EXPECT_FALSE(moves.count("d4-d6")) << "enemy wall on d5";
  EXPECT_FALSE(moves.count("d4-f4")) << "enemy tower on f4";
  EXPECT_FALSE(moves.count("d4-d2")) << "own tower on d3";
  EXPECT_TRUE(moves.count("d3-d1")) << "over the own wall on d2";
  EXPECT_NE(error_of(fen, "d4-d6").find("d5 holds an enemy stone"), std::string::npos)
      << error_of(fen, "d4-d6");
  EXPECT_NE(error_of(fen, "d4-d2").find("d3 holds a tower"), std::string::npos);
}

TEST(MgRules, SacrificeRemovesAnAdjacentWallAndLeavesAWall) {
  const Position p = after("t......./......../....w.../...T..../......../......../........ L", "d4xe5");
  EXPECT_EQ(p.to_string(), "t......./......../......../...W..../......../......../........ D");
  EXPECT_EQ(p.stones(0), 1);
  EXPECT_EQ(p.stones(1), 2);
}

TEST(MgRules, SacrificeNeverTargetsATowerAndIsNeverForced) {
  const std::string fen = "t......./......../....t.../...Tw.../......../......../........ L";
  const auto moves = moves_of(Position::parse(fen));
  EXPECT_FALSE(moves.count("d4xe5"));
  EXPECT_TRUE(moves.count("d4xe4"));
  EXPECT_TRUE(moves.count("d4-b4")) << "a sacrifice is possible but not forced";
  EXPECT_NE(error_of(fen, "d4xe5").find("enemy tower"), std::string::npos);
  EXPECT_NE(error_of(fen, "d4xc5").find("holds none"), std::string::npos);
}

TEST(MgRules, SacrificeWorksAtTheEdge) {
  // docs/RULES.md: the g4 tower may sacrifice against h4 although distributing that way leaves the board.
  const auto moves = moves_of(Position::parse("t......./......../......../......Tw/......../......../.T...... L"));
  EXPECT_TRUE(moves.count("g4xh4"));
  EXPECT_FALSE(moves.count("g4-i4"));
  const auto edge = moves_of(Position::parse("t......./......../......../Tw....../w......./......../........ L"));
  EXPECT_TRUE(edge.count("a4xb4"));
  EXPECT_TRUE(edge.count("a4xa3"));
}

TEST(MgRules, BreakthroughWinsAtOnce) {
  Position p = after("t......./......../....T.../......../......../......../........ L", "e5-e7");
  EXPECT_TRUE(p.is_terminal());
  EXPECT_TRUE(p.broken_through());
  EXPECT_EQ(p.result(0), 1.0);
  EXPECT_EQ(p.result(1), -1.0);
  EXPECT_EQ(p.count_legal_actions(), 0);
  // Diagonal breakthrough, Dark onto row 1.
  p = after("......../......../......../......../..t...../......../T....... D", "c3-e1");
  EXPECT_TRUE(p.is_terminal());
  EXPECT_EQ(p.result(1), 1.0);
  EXPECT_NE(error_of(p.to_string(), "a1-a3").find("game is over"), std::string::npos);
}

TEST(MgRules, StalemateLosesForTheSideToMove) {
  // Light has only walls: no distribution, no sacrifice.
  const Position p = Position::parse("t......./......../......../......../......../......../W...W... L");
  EXPECT_TRUE(p.is_terminal());
  EXPECT_EQ(p.result(0), -1.0);
  EXPECT_EQ(p.result(1), 1.0);
  // Towers boxed in by enemy towers, own towers and the edge, with no wall to sacrifice against.
  const Position boxed = Position::parse("......../......../......../......../......../tttttttt/TTTTTTTT L");
  EXPECT_TRUE(moves_of(boxed).empty()) << *moves_of(boxed).begin();
  EXPECT_TRUE(boxed.is_terminal());
  EXPECT_EQ(boxed.result(0), -1.0);
}

TEST(MgRules, DarkActionsAreInDarksFrame) {
  const Position light = Position::initial();
  Position dark = Position::parse("tttttttt/......../......../......../......../......../TTTTTTTT D");
  EXPECT_EQ(light.parse_action("a1-a3"), dark.parse_action("a7-a5"));
  EXPECT_EQ(light.parse_action("b1-d3"), dark.parse_action("b7-d5"));
  std::vector<float> a(kPlanes * kSquares), b(kPlanes * kSquares);
  light.encode(a.data());
  dark.encode(b.data());
  EXPECT_EQ(a, b) << "the start position looks the same to both sides";
  // Plane 0 (own towers) of Dark's view holds Dark's towers on frame row 0.
  for (int c = 0; c < kCols; ++c) EXPECT_EQ(b[c], 1.0f);
  for (int c = 0; c < kCols; ++c) EXPECT_EQ(b[2 * kSquares + 6 * kCols + c], 1.0f);
}

TEST(MgRules, ParseErrorsSayWhatAndWhere) {
  EXPECT_NE(parse_error_of("tttttttt/......../......../......../......../......../TTTTTTTT").find("side to move"), std::string::npos);
  EXPECT_NE(parse_error_of("tttttttt/......../......../......../......../......../TTTTTTTT X").find("L or D"), std::string::npos);
  EXPECT_NE(parse_error_of("tttttttt/......./......../......../......../......../TTTTTTTT L").find("row 6 has 7"), std::string::npos);
  EXPECT_NE(parse_error_of("tttttttt/......../......../...q..../......../......../TTTTTTTT L").find("'q' at d4"), std::string::npos);
  EXPECT_NE(parse_error_of("tttttttt/......../......../......../......../TTTTTTTT L").find("7 rows"), std::string::npos);
  EXPECT_NE(parse_error_of("tttttttt/tttttttt/......../......../......../......../TTTTTTTT L").find("32 stones"), std::string::npos);
  EXPECT_NE(parse_error_of("T......./......../......../......../......../......../t....... L").find("home row"), std::string::npos);
}

TEST(MgRules, MoveErrorsSayWhy) {
  EXPECT_NE(error_of(kStart, "a1-a4").find("two squares away"), std::string::npos);
  EXPECT_NE(error_of(kStart, "a1xb3").find("adjacent"), std::string::npos);
  EXPECT_NE(error_of(kStart, "a2-a4").find("holds no Light tower"), std::string::npos);
  EXPECT_NE(error_of(kStart, "a7-a5").find("enemy stone"), std::string::npos);
  EXPECT_NE(error_of(kStart, "i1-i3").find("not a column"), std::string::npos);
  EXPECT_NE(error_of(kStart, "a1-a9").find("not a row"), std::string::npos);
  EXPECT_NE(error_of(kStart, "a1a3").find("expected"), std::string::npos);
  EXPECT_EQ(error_of(kStart, "A1-A3"), "") << "upper case columns are accepted";
}

// A 1 MB position or move is quoted in at most about 100 bytes; the message still says what is
// wrong and how large the input was.
TEST(MgRules, HugeBadInputGivesAShortMessage) {
  const std::string no_side = parse_error_of(std::string(1 << 20, 't'));
  EXPECT_LT(no_side.size(), 400u) << no_side.substr(0, 500);
  EXPECT_NE(no_side.find("expected the board and the side to move (L or D), separated by a "
                         "blank; found 1 field(s)"),
            std::string::npos)
      << no_side.substr(0, 500);
  EXPECT_NE(no_side.find("... (1048576 bytes)"), std::string::npos) << no_side.substr(0, 500);
  const std::string bad_side = parse_error_of(kStart.substr(0, kStart.size() - 1) +
                                              std::string(1 << 20, 'L'));
  EXPECT_LT(bad_side.size(), 400u) << bad_side.substr(0, 500);
  EXPECT_NE(bad_side.find("the side to move must be L or D"), std::string::npos) << bad_side;
  const std::string bad_char = parse_error_of("ttt\x01tttt/" + kStart.substr(9));
  EXPECT_NE(bad_char.find("unknown character '\\x01' at d7"), std::string::npos) << bad_char;
  const std::string move = error_of(kStart, std::string(1 << 20, 'c'));
  EXPECT_LT(move.size(), 400u) << move.substr(0, 500);
  EXPECT_EQ(move.rfind("move \"cccc", 0), 0u) << move.substr(0, 500);
  EXPECT_NE(move.find("... (1048576 bytes)\": expected a distribution like c1-c3"),
            std::string::npos)
      << move.substr(0, 500);
}

TEST(MgRules, RandomGamesKeepInvariants) {
  std::mt19937_64 rng(1);
  ActionList actions;
  int decided = 0;
  for (int g = 0; g < 500; ++g) {
    Position p = Position::initial();
    for (int ply = 0; ply < 1000; ++ply) {
      ASSERT_TRUE(p.is_consistent());
      p.legal_actions(actions);
      ASSERT_EQ(actions.size(), p.count_legal_actions());
      if (actions.empty()) {
        ++decided;
        // Terminal exactly when broken through or without any action (checked by brute force).
        int any = 0;
        for (Action a = 0; a < kNumActions; ++a) any += p.is_legal(a);
        EXPECT_EQ(any, 0);
        break;
      }
      const int before0 = p.stones(0), before1 = p.stones(1);
      const int mover = p.side_to_move();
      const Action a = actions[std::uniform_int_distribution<int>(0, actions.size() - 1)(rng)];
      const bool sacrifice = a / kSquares >= kDirections;
      p.apply(a);
      // Distributions keep both counts; a sacrifice costs each side exactly one stone.
      EXPECT_EQ(p.stones(mover), (mover == 0 ? before0 : before1) - (sacrifice ? 1 : 0));
      EXPECT_EQ(p.stones(1 - mover), (mover == 0 ? before1 : before0) - (sacrifice ? 1 : 0));
    }
  }
  EXPECT_GT(decided, 450);
}

TEST(MgGame, ContractDescribesTheGame) {
  const Game& g = mg_game();
  EXPECT_EQ(g.name(), "mg");
  EXPECT_EQ(g.num_actions(), 896);
  EXPECT_EQ(g.input_shape().size(), 5 * 7 * 8);
  EXPECT_EQ(g.initial_state()->to_string(), kStart);
  EXPECT_EQ(game_by_name("murus-gallicus").name(), "mg");
  EXPECT_THROW(game_by_name("chess"), GameError);
}

// The order of the legal actions is behaviour (seeded playouts, searches and records depend on
// it), so a faster move generator must keep it: a hash of every legal-action list, action count
// and position along 300 seeded random games, recorded from the implementation before the
// bitboard-limit rewrite (issue #13), where it was the same over 20,000 games.
TEST(MgRules, LegalActionOrderIsStable) {
  std::mt19937_64 rng(99);
  std::uint64_t h = 1469598103934665603ULL;
  long lists = 0;
  for (int g = 0; g < 300; ++g) {
    Position p = Position::initial();
    ActionList a;
    for (int ply = 0; ply < 300; ++ply) {
      p.legal_actions(a);
      h = (h ^ static_cast<std::uint64_t>(p.count_legal_actions())) * 1099511628211ULL;
      for (Action x : a) h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ULL;
      h = (h ^ p.hash()) * 1099511628211ULL;
      ++lists;
      if (a.empty()) break;
      p.apply(a[static_cast<int>(rng() % static_cast<unsigned>(a.size()))]);
    }
  }
  EXPECT_EQ(lists, 10371);
  EXPECT_EQ(h, 0xb09cc4dca4dbe18cULL);
}

// The board a person reads (`apply --pretty`, `play`) says who won once the game is over.
TEST(MgPretty, NamesTheSideToMoveOrTheWinner) {
  EXPECT_NE(Position::initial().pretty().find("Light to move, ply 0"), std::string::npos);
  const Position broken =
      after("t......./.....w../..tT..../..TTW.../...T.W../..w...../...T.... L", "d5-d7");
  EXPECT_NE(broken.pretty().find("game over, ply 1: Light wins (reached Dark's home row)"),
            std::string::npos)
      << broken.pretty();
  EXPECT_EQ(broken.pretty().find("to move"), std::string::npos);
  const Position stuck =
      Position::parse("w......./......../......../......../......../......../T....... D");
  ASSERT_TRUE(stuck.is_terminal());
  EXPECT_NE(stuck.pretty().find("Light wins (Dark has no legal action)"), std::string::npos)
      << stuck.pretty();
}

}  // namespace
}  // namespace oppidum::mg
