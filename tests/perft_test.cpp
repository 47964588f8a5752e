// Perft counts known from independent implementations (docs/RULES.md lists the reference counts),
// through the fast path and through the game contract.
#include <gtest/gtest.h>

#include "games/dvonn/position.h"
#include "games/game.h"
#include "games/mg/position.h"
#include "games/perft.h"
#include "games/ttt/position.h"

namespace oppidum {
namespace {

TEST(MgPerft, FromTheStart) {
  const mg::Position p = mg::Position::initial();
  const std::uint64_t expected[] = {1, 20, 400, 6960, 121104, 1953664};
  for (int d = 0; d <= 5; ++d) {
    EXPECT_EQ(perft(p, d, true), expected[d]) << "depth " << d;
    if (d <= 4) {
      EXPECT_EQ(perft(p, d, false), expected[d]) << "depth " << d;
    }
  }
}

TEST(MgPerft, MiddleGamePositions) {
  const mg::Position a =
      mg::Position::parse("...ww.../w...w.w./wtt.Wwtw/..wW..../.T..WWWW/W..W.WWW/......WW D");
  EXPECT_EQ(perft(a, 1), 11u);
  EXPECT_EQ(perft(a, 2), 46u);
  EXPECT_EQ(perft(a, 3), 432u);
  const mg::Position b =
      mg::Position::parse("t......./......../......../......Tw/......../......../.T...... L");
  EXPECT_EQ(perft(b, 1), 9u);
  EXPECT_EQ(perft(b, 2), 27u);
  EXPECT_EQ(perft(b, 3), 108u);
}

TEST(MgPerft, TerminalPositionsCountZero) {
  const mg::Position won = mg::Position::parse("......../......../......../......../......../tttttttt/TTTTTTTT L");
  EXPECT_EQ(perft(won, 0), 1u);
  EXPECT_EQ(perft(won, 1), 0u);
  EXPECT_EQ(perft(won, 3), 0u);
}

TEST(DvonnPerft, PlacementPhase) {
  const dvonn::Position p = dvonn::Position::initial();
  EXPECT_EQ(perft(p, 1), 49u);
  EXPECT_EQ(perft(p, 2), 49u * 48u);
  EXPECT_EQ(perft(p, 3), 49u * 48u * 47u);
  EXPECT_EQ(perft(p, 3, false), 49u * 48u * 47u);
}

// Tic-tac-toe: a game ends at its first line (the first at ply 5), so from depth 6 on the counts
// are below 9! / (9 - depth)!, and every game is over by depth 9.
TEST(TttPerft, FromTheStart) {
  const ttt::Position p = ttt::Position::initial();
  const std::uint64_t expected[] = {1, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872, 0};
  for (int d = 0; d <= 10; ++d) {
    EXPECT_EQ(perft(p, d, true), expected[d]) << "depth " << d;
    EXPECT_EQ(perft(p, d, false), expected[d]) << "depth " << d;
  }
}

TEST(Perft, ContractAgreesWithFastPath) {
  const auto mg_state = game_by_name("mg").parse_state(
      "...ww.../w...w.w./wtt.Wwtw/..wW..../.T..WWWW/W..W.WWW/......WW D");
  EXPECT_EQ(perft(*mg_state, 3), 432u);
  EXPECT_EQ(perft(*game_by_name("mg").initial_state(), 4), 121104u);
  EXPECT_EQ(perft(*game_by_name("dvonn").initial_state(), 2), 49u * 48u);
  EXPECT_EQ(perft(*game_by_name("ttt").initial_state(), 9), 127872u);
}

}  // namespace
}  // namespace oppidum
