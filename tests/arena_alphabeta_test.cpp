// The alpha-beta baseline: forced wins within its depth, agreement with plain minimax, and the
// evaluations' basic sense.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/alphabeta.h"
#include "games/dvonn/evaluation.h"
#include "games/mg/evaluation.h"
#include "games/dvonn/position.h"
#include "games/game.h"
#include "games/registry.h"
#include "games/mg/position.h"
#include "mcts/rng.h"

namespace oppidum::arena {
namespace {

const Game& mg() { return game_by_name("mg"); }
const Game& dvonn() { return game_by_name("dvonn"); }

std::unique_ptr<GameState> after(const GameState& state, Action action) {
  auto next = state.clone();
  next->apply(action);
  return next;
}

bool wins_at_once(const GameState& state, Action action) {
  const auto next = after(state, action);
  return next->is_terminal() && next->result(state.current_player()) > 0;
}

AlphaBetaResult search(const GameState& state, int depth, bool table = true) {
  AlphaBetaOptions options;
  options.depth = depth;
  options.transposition_table = table;
  return alphabeta_search(state, options);
}

TEST(AlphaBetaTest, MgBreakthroughInOne) {
  // Light's tower on d5 reaches row 7 (d5-d7, d5-b7 or d5-f7); Dark threatens the same from e3,
  // so only an immediate breakthrough will do.
  const auto state =
      mg().parse_state("t......./......../...T..../......../....t.../......../T....... L");
  for (int depth = 1; depth <= 3; ++depth) {
    const AlphaBetaResult r = search(*state, depth);
    EXPECT_TRUE(wins_at_once(*state, r.action)) << state->action_to_string(r.action);
    EXPECT_EQ(r.score, kWinScore - 1);
    EXPECT_EQ(r.depth, 1);  // the win ends the iterations
  }
}

TEST(AlphaBetaTest, MgForcedWinInTwoMoves) {
  // Light: towers d3 and a1, a wall on d5; Dark: towers a7 and h7. d3-d5 turns the wall into a
  // tower on the launch row, with three open paths (d6-d7, c6-b7, e6-f7): Dark can block at most
  // one, so Light breaks through next move. No win in one exists.
  const auto state =
      mg().parse_state("t......t/......../...W..../......../...T..../......../T....... L");
  ActionList legal;
  state->legal_actions(legal);
  for (Action a : legal) ASSERT_FALSE(wins_at_once(*state, a));
  EXPECT_LT(search(*state, 2).score, kWinScore - 1000);  // depth 2 cannot see it
  for (bool table : {true, false}) {
    const AlphaBetaResult r = search(*state, 3, table);
    EXPECT_EQ(r.score, kWinScore - 3);
    // Whatever Dark answers, Light then has a winning move.
    const auto next = after(*state, r.action);
    ActionList replies;
    next->legal_actions(replies);
    ASSERT_FALSE(replies.empty());
    for (Action reply : replies) {
      const auto last = after(*next, reply);
      ActionList finals;
      last->legal_actions(finals);
      bool can_win = false;
      for (Action f : finals) can_win |= wins_at_once(*last, f);
      EXPECT_TRUE(can_win) << "after " << state->action_to_string(r.action) << ' '
                           << next->action_to_string(reply);
    }
  }
}

TEST(AlphaBetaTest, DvonnWinningCaptureInOne) {
  // Phase 2, White to move: C1 (a white piece) can capture the black stack of three on B1
  // (C1B1: White tops 4, D1 is cut off from the DVONN pieces and removed, nothing can move: White
  // wins 4-0), or go onto D1 (C1D1: the new stack is cut off and removed, Black wins 3-0).
  const auto state = dvonn().parse_state(
      "R1*,B3,W1,B1,.,.,.,.,R1*/.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./"
      ".,.,.,.,.,.,.,.,R1* W 89");
  ASSERT_FALSE(state->is_terminal());
  EXPECT_EQ(state->current_player(), 0);
  const AlphaBetaResult r = search(*state, 1);
  EXPECT_EQ(state->action_to_string(r.action), "C1B1");
  EXPECT_TRUE(wins_at_once(*state, r.action));
  EXPECT_EQ(r.score, kWinScore - 1);
  const auto lost = after(*state, state->parse_action("C1D1"));
  EXPECT_TRUE(lost->is_terminal());
  EXPECT_EQ(lost->result(0), -1.0);
}

TEST(AlphaBetaTest, DvonnFindsWinsInOneInRandomEndgames) {
  // Positions from seeded random games where the side to move can end the game as the winner:
  // alpha-beta at depth 1 must take such a move.
  mcts::Rng rng(11);
  int found = 0;
  for (int game = 0; game < 300 && found < 15; ++game) {
    auto state = dvonn().initial_state();
    ActionList legal;
    while (!state->is_terminal()) {
      state->legal_actions(legal);
      bool has_win = false;
      if (state->ply() >= dvonn::kPlacementPlies)
        for (Action a : legal) has_win |= wins_at_once(*state, a);
      if (has_win) {
        ++found;
        const AlphaBetaResult r = search(*state, 1);
        EXPECT_TRUE(wins_at_once(*state, r.action)) << state->to_string();
        break;
      }
      state->apply(legal[rng.uniform_int(legal.size())]);
    }
  }
  EXPECT_GE(found, 10);
}

// The position after `plies` random moves from the start (or the end of the game, if sooner).
std::unique_ptr<GameState> random_position(const Game& game, int plies, mcts::Rng& rng) {
  auto state = game.initial_state();
  ActionList legal;
  for (int i = 0; i < plies && !state->is_terminal(); ++i) {
    state->legal_actions(legal);
    state->apply(legal[rng.uniform_int(legal.size())]);
  }
  return state;
}

TEST(AlphaBetaTest, AgreesWithMinimax) {
  // From positions of seeded random games, alpha-beta without the table returns exactly the
  // minimax value, and with the table the same value (the table holds results of equal depth).
  mcts::Rng rng(5);
  for (const Game* game : {&mg(), &dvonn()}) {
    int checked = 0;
    for (int trial = 0; trial < 40 && checked < 6; ++trial) {
      const int plies = game->name() == "dvonn" ? 44 + rng.uniform_int(40) : 4 + rng.uniform_int(30);
      const auto state = random_position(*game, plies, rng);
      if (state->is_terminal()) continue;
      ActionList legal;
      state->legal_actions(legal);
      const int depth = legal.size() > 30 ? 2 : 3;
      const int expected = minimax_value(*state, depth);
      EXPECT_EQ(search(*state, depth, false).score, expected) << state->to_string();
      EXPECT_EQ(search(*state, depth, true).score, expected) << state->to_string();
      ++checked;
    }
    EXPECT_GE(checked, 4) << game->name();
  }
}

// With the transposition table, over many positions searched deep enough for positions to recur
// by different move orders, the table changes no value.
TEST(AlphaBetaTest, TheTableAgreesWithMinimaxOnManyPositions) {
  mcts::Rng rng(17);
  int checked = 0;
  for (const Game* game : {&mg(), &dvonn()}) {
    for (int trial = 0; trial < 400 && checked < 150; ++trial) {
      const int plies = game->name() == "dvonn" ? 49 + rng.uniform_int(30) : 6 + rng.uniform_int(40);
      const auto state = random_position(*game, plies, rng);
      if (state->is_terminal()) continue;
      ActionList legal;
      state->legal_actions(legal);
      if (legal.size() > 14) continue;
      const int depth = 4;
      EXPECT_EQ(search(*state, depth, true).score, minimax_value(*state, depth))
          << game->name() << " " << state->to_string();
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);
}

TEST(AlphaBetaTest, RejectsBadDepthAndTerminalPositions) {
  EXPECT_THROW(AlphaBetaPlayer(0), std::invalid_argument);
  EXPECT_THROW(search(*mg().initial_state(), 13), std::invalid_argument);
  // Light already stands on Dark's home row: Dark, to move, has lost.
  const auto over = mg().parse_state("tW....../......../......../......../......../......../T....... D");
  ASSERT_TRUE(over->is_terminal());
  EXPECT_THROW(search(*over, 2), std::logic_error);
}

// Limits that are not reached change nothing: the same move, score, depth and node count as a
// search without them (the `alphabeta:depth=N` ladder of docs/BASELINES.md stays valid).
TEST(AlphaBetaTest, UnreachedLimitsChangeNothing) {
  mcts::Rng rng(23);
  for (const Game* game : {&mg(), &dvonn()}) {
    for (int trial = 0; trial < 6; ++trial) {
      const int plies = game->name() == "dvonn" ? 49 + rng.uniform_int(20) : rng.uniform_int(20);
      const auto state = random_position(*game, plies, rng);
      if (state->is_terminal()) continue;
      const int depth = game->name() == "dvonn" ? 4 : 5;
      const AlphaBetaResult plain = search(*state, depth);
      AlphaBetaOptions options;
      options.depth = depth;
      options.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
      int asked = 0;
      options.stop = [&asked] {
        ++asked;
        return false;
      };
      const AlphaBetaResult limited = alphabeta_search(*state, options);
      EXPECT_EQ(limited.action, plain.action) << state->to_string();
      EXPECT_EQ(limited.score, plain.score) << state->to_string();
      EXPECT_EQ(limited.depth, plain.depth) << state->to_string();
      EXPECT_EQ(limited.nodes, plain.nodes) << state->to_string();
      EXPECT_FALSE(limited.stopped);
      EXPECT_EQ(asked, static_cast<int>(plain.nodes / kLimitCheckNodes)) << state->to_string();
    }
  }
}

// A search far too deep for its deadline stops soon after it (no speed asserted: only that it
// ends long before the full search could) with the deepest completed iteration, which is exactly
// what a search to that depth returns.
TEST(AlphaBetaTest, TheDeadlineCutsASearchShortWithTheLastCompletedIteration) {
  for (const Game* game : {&mg(), &dvonn()}) {
    auto state = game->initial_state();
    if (game->name() == "dvonn") {  // past the placement phase, where the search is deepest
      mcts::Rng rng(3);
      state = random_position(*game, 49, rng);
    }
    AlphaBetaOptions options;
    options.depth = kMaxAlphaBetaDepth;
    const auto start = std::chrono::steady_clock::now();
    options.deadline = start + std::chrono::seconds(1);  // (depth 1 takes microseconds)
    const AlphaBetaResult r = alphabeta_search(*state, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 30.0) << game->name();  // a full depth-12 search takes hours
    EXPECT_TRUE(r.stopped) << game->name();
    ASSERT_GE(r.depth, 1) << game->name();
    EXPECT_LT(r.depth, kMaxAlphaBetaDepth) << game->name();
    EXPECT_TRUE(state->is_legal(r.action)) << game->name();
    const AlphaBetaResult same_depth = search(*state, r.depth);
    EXPECT_EQ(r.action, same_depth.action) << game->name();
    EXPECT_EQ(r.score, same_depth.score) << game->name();
  }
}

// The stop predicate ends a search the moment it says so (it is asked every kLimitCheckNodes
// positions), with no deadline at all.
TEST(AlphaBetaTest, TheStopPredicateEndsASearch) {
  AlphaBetaOptions options;
  options.depth = kMaxAlphaBetaDepth;
  int asked = 0;
  options.stop = [&asked] { return ++asked == 400; };
  const auto state = mg().initial_state();
  const AlphaBetaResult r = alphabeta_search(*state, options);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(asked, 400);
  EXPECT_EQ(r.nodes, 400 * kLimitCheckNodes);
  EXPECT_GE(r.depth, 1);
  EXPECT_TRUE(state->is_legal(r.action));
}

TEST(EvaluationTest, MgCountsThreatsAndMaterial) {
  const auto start = mg::Position::initial();
  EXPECT_EQ(mg::evaluate(start), 0);  // symmetric
  EXPECT_EQ(mg::distributions(start, 0), 20);
  const auto threat = mg::Position::parse("t......./......../...T..../......../......../......../T....... L");
  EXPECT_EQ(mg::evaluate(threat), kWinNextMove);
  EXPECT_NE(mg::breakthrough_towers(threat, 0), 0u);
  EXPECT_EQ(mg::breakthrough_towers(threat, 1), 0u);
  const auto dark_view = mg::Position::parse("t......./......../...T..../......../......../......../T....... D");
  EXPECT_LT(mg::evaluate(dark_view), -50);
}

TEST(EvaluationTest, DvonnIsAntisymmetricAtTheStart) {
  const auto start = dvonn::Position::initial();
  EXPECT_EQ(dvonn::evaluate(start), 0);
}

// A timed search with one legal move stops after its first iteration; one without a deadline
// searches to its depth.
TEST(AlphaBetaTest, ATimedSearchOfAForcedMoveStopsAtOnce) {
  // DVONN's last placement (K5), with the movement phase after it.
  const auto forced = game_by_name("dvonn").parse_state(
      "R1*,B1,B1,W1,B1,W1,B1,W1,B1/R1*,W1,W1,B1,W1,B1,W1,B1,W1,W1/R1*,B1,B1,W1,B1,W1,B1,W1,B1,B1,"
      "W1/W1,W1,B1,W1,B1,W1,B1,W1,W1,B1/B1,W1,B1,W1,B1,W1,B1,B1,. W 48");
  AlphaBetaOptions options;
  options.depth = 3;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  options.forced_move_at_once = true;  // as a player on a time control sets it
  const AlphaBetaResult timed = alphabeta_search(*forced, options);
  EXPECT_EQ(timed.depth, 1);
  EXPECT_EQ(forced->action_to_string(timed.action), "K5");
  // A search asked for its depth (the web page's analysis, with its own safety deadline) goes on.
  options.forced_move_at_once = false;
  const AlphaBetaResult deep = alphabeta_search(*forced, options);
  EXPECT_EQ(deep.depth, 3);
  EXPECT_EQ(deep.action, timed.action);
  // And a player on a time control plays it at once.
  TimeControl minute;
  minute.move_ms = 60000;
  AlphaBetaPlayer player(12, minute, false);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(forced->action_to_string(player.choose_move(*forced, 1)), "K5");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace oppidum::arena
