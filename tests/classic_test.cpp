// The classical engine (arena/classic.h): forced wins, agreement with minimax where nothing may
// change the value, its budgets (deadline, stop predicate, nodes, depth), the table kept across a
// game's moves and freed at its end, its spec, and the feature evaluations' sense.
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/classic.h"
#include "arena/concrete_search.h"
#include "arena/match.h"
#include "arena/player.h"
#include "arena/spec.h"
#include "games/registry.h"
#include "mcts/rng.h"

namespace oppidum::arena {
namespace {

const Game& mg() { return game_by_name("mg"); }
const Game& dvonn() { return game_by_name("dvonn"); }
const Game& ttt() { return game_by_name("ttt"); }

std::unique_ptr<GameState> after(const GameState& state, Action action) {
  auto next = state.clone();
  next->apply(action);
  return next;
}

bool wins_at_once(const GameState& state, Action action) {
  const auto next = after(state, action);
  return next->is_terminal() && next->result(state.current_player()) > 0;
}

ClassicResult search(const GameState& state, int depth, bool selective = true) {
  ClassicTable table(1);
  ClassicOptions options;
  options.depth = depth;
  options.selective = selective;
  return classic_search(state, options, table);
}

std::unique_ptr<GameState> random_position(const Game& game, int plies, mcts::Rng& rng) {
  auto state = game.initial_state();
  ActionList legal;
  for (int i = 0; i < plies && !state->is_terminal(); ++i) {
    state->legal_actions(legal);
    state->apply(legal[rng.uniform_int(legal.size())]);
  }
  return state;
}

// Plain minimax with the classical evaluation and the search's terminal scores.
template <class P>
int minimax(const P& pos, int depth, int ply) {
  const auto terminal = [&] {
    const double r = pos.result(pos.side_to_move());
    return r > 0 ? kWinScore - ply : r < 0 ? -(kWinScore - ply) : 0;
  };
  if (depth == 0) return pos.is_terminal() ? terminal() : classic_evaluate(pos);
  ActionList legal;
  pos.legal_actions(legal);
  if (legal.empty()) return terminal();
  int best = -kWinScore * 2;
  for (Action a : legal) {
    P child = pos;
    child.apply(a);
    const int v = minimax(child, depth - 1, ply + 1);
    best = std::max(best, child.side_to_move() == pos.side_to_move() ? v : -v);
  }
  return best;
}

int minimax_value(const GameState& state, int depth) {
  return with_position_type(state.game(), [&](auto tag) {
    using P = typename decltype(tag)::Position;
    return minimax(P::parse(state.to_string()), depth, 0);
  });
}

TEST(ClassicTest, MgBreakthroughInOne) {
  const auto state =
      mg().parse_state("t......./......../...T..../......../....t.../......../T....... L");
  for (int depth : {1, 3, 20}) {
    const ClassicResult r = search(*state, depth);
    EXPECT_TRUE(wins_at_once(*state, r.action)) << state->action_to_string(r.action);
    EXPECT_EQ(r.score, kWinScore - 1);
    EXPECT_EQ(r.depth, 1);  // the proven win ends the iterations
  }
}

TEST(ClassicTest, MgForcedWinInTwoMoves) {
  // alphabeta's test position: d3-d5 makes a tower on the launch row with three open paths.
  const auto state =
      mg().parse_state("t......t/......../...W..../......../...T..../......../T....... L");
  EXPECT_LT(search(*state, 2).score, search::kProvenThreshold);  // two plies cannot see it
  for (bool selective : {true, false}) {
    const ClassicResult r = search(*state, 12, selective);
    EXPECT_EQ(r.score, kWinScore - 3) << selective;
    EXPECT_EQ(r.depth, 3) << selective;
    const auto next = after(*state, r.action);
    ActionList replies;
    next->legal_actions(replies);
    for (Action reply : replies) {
      const auto last = after(*next, reply);
      ActionList finals;
      last->legal_actions(finals);
      bool can_win = false;
      for (Action f : finals) can_win |= wins_at_once(*last, f);
      EXPECT_TRUE(can_win) << next->action_to_string(reply);
    }
  }
}

// A threat at the horizon is searched one ply more: at depth 1 the engine already sees that
// d3-d5's three open paths cannot all be blocked (the opponent's every reply leaves a
// breakthrough, scored kWinNextMove), where the full-width search sees only the evaluation.
TEST(ClassicTest, MgThreatsAtTheHorizonAreAnswered) {
  const auto state =
      mg().parse_state("t......t/......../...W..../......../...T..../......../T....... L");
  const ClassicResult extended = search(*state, 1);
  EXPECT_EQ(state->action_to_string(extended.action), "d3-d5");
  EXPECT_EQ(extended.score, kWinNextMove);
  const ClassicResult plain = search(*state, 1, false);
  EXPECT_LT(plain.score, kWinNextMove / 10) << "without the extension depth 1 evaluates d3-d5";
  // A threat that can be parried is not a win: with Dark's walls on a7 and e7, c3-c5 opens only
  // c5's straight path, which e6-c6 blocks.
  const auto parried =
      mg().parse_state("w...w.../....t.../..W...../......../..T...../......../T....... L");
  ClassicResult r = search(*parried, 1);
  EXPECT_LT(r.score, kWinNextMove / 10) << parried->action_to_string(r.action);
}

TEST(ClassicTest, DvonnSeesTheFinalCount) {
  // C1B1 wins 4-0 at once (D1 is cut off), C1D1 loses 0-3.
  const auto state = dvonn().parse_state(
      "R1*,B3,W1,B1,.,.,.,.,R1*/.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,.,./.,.,.,.,.,.,.,.,.,./"
      ".,.,.,.,.,.,.,.,R1* W 89");
  const ClassicResult r = search(*state, 6);
  EXPECT_EQ(state->action_to_string(r.action), "C1B1");
  EXPECT_EQ(r.score, kWinScore - 1);
}

TEST(ClassicTest, DvonnFindsWinsInRandomEndgames) {
  // Late positions of seeded random games, searched to their end: the proven value equals plain
  // minimax to the end of the game, and a proven win is played out to a won game.
  mcts::Rng rng(31);
  int checked = 0;
  for (int game = 0; game < 200 && checked < 12; ++game) {
    auto state = random_position(dvonn(), 49 + 30 + rng.uniform_int(30), rng);
    if (state->is_terminal()) continue;
    ActionList legal;
    state->legal_actions(legal);
    if (legal.size() > 8) continue;
    const ClassicResult r = search(*state, 30);
    if (r.score <= search::kProvenThreshold) continue;
    ++checked;
    // Play it out against every reply by alternating searches: the side keeps winning.
    const int winner = state->current_player();
    auto pos = state->clone();
    while (!pos->is_terminal()) pos->apply(search(*pos, 30).action);
    EXPECT_EQ(pos->result(winner), 1.0) << state->to_string();
  }
  EXPECT_GE(checked, 5);
}

TEST(ClassicTest, FullWidthSearchEqualsMinimax) {
  // Without reductions and extensions, PVS with its table, killers and history returns exactly
  // the minimax value at a fixed depth: the ordering and the null windows change nothing.
  mcts::Rng rng(5);
  for (const Game* game : {&mg(), &dvonn(), &ttt()}) {
    int checked = 0;
    for (int trial = 0; trial < 60 && checked < 8; ++trial) {
      const std::string name = game->name();
      const int plies = name == "dvonn" ? 40 + rng.uniform_int(50)
                        : name == "mg"  ? 4 + rng.uniform_int(30)
                                        : rng.uniform_int(5);
      const auto state = random_position(*game, plies, rng);
      if (state->is_terminal()) continue;
      ActionList legal;
      state->legal_actions(legal);
      if (legal.size() == 1) continue;  // played at once, after depth 1
      const int depth = legal.size() > 30 ? 2 : legal.size() > 12 ? 3 : 4;
      EXPECT_EQ(search(*state, depth, false).score, minimax_value(*state, depth))
          << name << " " << state->to_string() << " depth " << depth;
      ++checked;
    }
    EXPECT_GE(checked, 5) << game->name();
  }
}

// A null move is the same stones with the other side to move where a game allows it (Murus
// Gallicus), and nothing where it does not (DVONN, tic-tac-toe: the position stays as it is).
TEST(ClassicTest, NullMovesPassTheTurnWhereTheGameAllowsThem) {
  mcts::Rng rng(12);
  for (const Game* game : {&mg(), &dvonn(), &ttt()}) {
    const auto state = random_position(*game, 3, rng);
    with_position_type(*game, [&](auto tag) {
      using P = typename decltype(tag)::Position;
      const P pos = P::parse(state->to_string());
      P passed = pos;
      const bool allowed = classic_null_move(passed);
      EXPECT_EQ(allowed, game->name() == "mg") << game->name();
      if (!allowed) {
        EXPECT_EQ(passed.to_string(), pos.to_string()) << game->name();
        return;
      }
      EXPECT_EQ(passed.side_to_move(), 1 - pos.side_to_move());
      EXPECT_NE(passed.hash(), pos.hash());
      P back = passed;
      classic_null_move(back);
      EXPECT_EQ(back.hash(), pos.hash());
      EXPECT_EQ(back.to_string(), pos.to_string());
    });
  }
}

// The selective search (late-move reductions, null moves, the extensions) proves the quick wins
// the full-width search proves, of the same length, in Murus Gallicus positions of random games.
TEST(ClassicTest, MgSelectiveSearchKeepsTheFullWidthWins) {
  mcts::Rng rng(17);
  int proven = 0;
  for (int trial = 0; trial < 400 && proven < 12; ++trial) {
    const auto state = random_position(mg(), 10 + rng.uniform_int(40), rng);
    if (state->is_terminal()) continue;
    const ClassicResult full = search(*state, 5, false);
    if (full.score <= search::kProvenThreshold) continue;
    ++proven;
    const ClassicResult selective = search(*state, 5);
    EXPECT_EQ(selective.score, full.score) << state->to_string();
    // Its move keeps the win: after it, the full-width search proves the opponent lost.
    const auto next = after(*state, selective.action);
    if (next->is_terminal())
      EXPECT_TRUE(wins_at_once(*state, selective.action)) << state->to_string();
    else
      EXPECT_LT(search(*next, 4, false).score, -search::kProvenThreshold) << state->to_string();
  }
  EXPECT_GE(proven, 5);
}

TEST(ClassicTest, PlaysTicTacToePerfectly) {
  const ClassicResult r = search(*ttt().initial_state(), 9);
  EXPECT_EQ(r.score, 0);  // a draw
}

TEST(ClassicTest, TheDeadlineEndsASearch) {
  mcts::Rng rng(3);
  for (const Game* game : {&mg(), &dvonn()}) {
    const auto state = random_position(*game, game->name() == "dvonn" ? 49 : 0, rng);
    ClassicTable table;
    ClassicOptions options;
    const auto start = std::chrono::steady_clock::now();
    options.deadline = start + std::chrono::seconds(1);  // (depth 1 takes microseconds)
    const ClassicResult r = classic_search(*state, options, table);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 20.0) << game->name();  // depth 64 would take forever
    EXPECT_TRUE(r.stopped) << game->name();
    EXPECT_GE(r.depth, 1) << game->name();
    EXPECT_TRUE(state->is_legal(r.action)) << game->name();
  }
}

TEST(ClassicTest, TheStopPredicateEndsASearch) {
  ClassicTable table;
  ClassicOptions options;
  int asked = 0;
  options.stop = [&asked] { return ++asked == 300; };
  const auto state = mg().initial_state();
  const ClassicResult r = classic_search(*state, options, table);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(asked, 300);
  EXPECT_TRUE(state->is_legal(r.action));
}

TEST(ClassicTest, ANodeBudgetIsDeterministic) {
  mcts::Rng rng(9);
  const auto state = random_position(dvonn(), 55, rng);
  ClassicOptions options;
  options.nodes = 20'000;
  ClassicTable a, b;
  const ClassicResult x = classic_search(*state, options, a);
  const ClassicResult y = classic_search(*state, options, b);
  EXPECT_TRUE(x.stopped);
  EXPECT_EQ(x.nodes, 20'000);
  EXPECT_EQ(x.action, y.action);
  EXPECT_EQ(x.score, y.score);
  EXPECT_EQ(x.depth, y.depth);
}

TEST(ClassicTest, TheTableIsKeptAcrossMovesAndFreedAtTheEnd) {
  const auto player = make_player(dvonn(), "classic:depth=5");
  auto* classic = dynamic_cast<ClassicPlayer*>(player.get());
  ASSERT_NE(classic, nullptr);
  mcts::Rng rng(4);
  auto state = random_position(dvonn(), 52, rng);
  const Action first = classic->choose_move_in_game(7, *state, 0);
  const ClassicTable* table = classic->table_of(7);
  ASSERT_NE(table, nullptr);
  const std::size_t used = table->used();
  EXPECT_GT(used, 0u);
  state->apply(first);
  state->apply(classic->choose_move_in_game(7, *state, 0));
  EXPECT_EQ(classic->table_of(7), table);  // the same table, grown
  EXPECT_GE(table->used(), used);
  classic->choose_move_in_game(8, *state, 0);
  EXPECT_EQ(classic->tables_held(), 2u);
  classic->game_ended(7);
  EXPECT_EQ(classic->table_of(7), nullptr);
  EXPECT_EQ(classic->tables_held(), 1u);
  classic->game_ended(8);
  classic->game_ended(8);  // twice, or for an unknown game: nothing happens
  EXPECT_EQ(classic->tables_held(), 0u);
}

TEST(ClassicTest, AMatchFreesEveryTable) {
  // A match gives each game its id and ends it: no table is left behind, on two threads too.
  const auto classic = make_player(mg(), "classic:depth=2");
  const auto random = make_player(mg(), "random");
  MatchConfig config;
  config.games = 8;
  config.threads = 2;
  const MatchStatus status = run_match(mg(), *classic, *random, config);
  EXPECT_EQ(status.games_counted, 8);
  EXPECT_EQ(dynamic_cast<ClassicPlayer&>(*classic).tables_held(), 0u);
}

// Resident memory of this process, from /proc/self/statm.
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

TEST(ClassicTest, ATableTakesMemoryOnlyAsItIsUsed) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizers' calloc clears the memory it hands out";
#else
  // Before: a player's spec check built a whole table, and every game's table was cleared page by
  // page inside its first timed move (hash=2048 took 5 s of a 20 ms move, and 2 GiB).
  const std::size_t before = resident_bytes();
  const auto player = make_player(dvonn(), "classic:depth=3,hash=1024");
  auto* classic = dynamic_cast<ClassicPlayer*>(player.get());
  ASSERT_NE(classic, nullptr);
  mcts::Rng rng(4);
  const auto state = random_position(dvonn(), 52, rng);
  const Action move = classic->choose_move_in_game(1, *state, 0);
  EXPECT_TRUE(state->is_legal(move));
  ASSERT_NE(classic->table_of(1), nullptr);
  EXPECT_EQ(classic->table_of(1)->slots(), std::size_t{1} << 26);  // 1 GiB of 16-byte slots
  EXPECT_LT(resident_bytes(), before + (std::size_t{64} << 20));
  classic->game_ended(1);
#endif
}

TEST(ClassicTest, AKeptTableSavesWork) {
  mcts::Rng rng(12);
  const auto state = random_position(mg(), 10, rng);
  ClassicOptions options;
  options.depth = 6;
  ClassicTable table;
  const ClassicResult fresh = classic_search(*state, options, table);
  const ClassicResult again = classic_search(*state, options, table);
  EXPECT_LT(again.nodes, fresh.nodes);
  EXPECT_EQ(again.score, fresh.score);
}

TEST(ClassicTest, Specs) {
  EXPECT_EQ(make_player(dvonn(), "classic:ms=80")->spec(), "classic:ms=80");
  EXPECT_EQ(make_player(mg(), "classic:nodes=5000,depth=9,hash=4")->spec(),
            "classic:depth=9,nodes=5000,hash=4");
  EXPECT_EQ(make_player(mg(), "classic:depth=3,hash=16")->spec(), "classic:depth=3");
  for (const char* bad : {"classic", "classic:depth=0", "classic:depth=65", "classic:ms=-1",
                          "classic:ms=80,hash=0", "classic:ms=80,foo=1"})
    EXPECT_THROW(make_player(mg(), bad), PlayerSpecError) << bad;
  try {
    make_player(mg(), "classic");
    FAIL();
  } catch (const PlayerSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("ms=N"), std::string::npos) << e.what();
  }
}

TEST(ClassicTest, RejectsBadOptionsAndTerminalPositions) {
  ClassicTable table(1);
  ClassicOptions options;
  options.depth = 0;
  EXPECT_THROW(classic_search(*mg().initial_state(), options, table), std::invalid_argument);
  EXPECT_THROW(ClassicTable(0), std::invalid_argument);
  const auto over =
      mg().parse_state("tW....../......../......../......../......../......../T....... D");
  options.depth = 3;
  EXPECT_THROW(classic_search(*over, options, table), std::logic_error);
}

// The evaluations are features from the mover's view: symmetric positions score the same, and
// the start is even apart from the tempo terms.
TEST(ClassicEvaluationTest, InvariantUnderTheBoardSymmetries) {
  mcts::Rng rng(8);
  for (const Game* game : {&mg(), &dvonn()}) {
    for (int trial = 0; trial < 50; ++trial) {
      const auto state = random_position(*game, rng.uniform_int(90), rng);
      if (state->is_terminal()) continue;
      with_position_type(*game, [&](auto tag) {
        using P = typename decltype(tag)::Position;
        const P pos = P::parse(state->to_string());
        for (int s = 1; s < game->num_symmetries(); ++s)
          EXPECT_EQ(classic_evaluate(pos.transformed(s)), classic_evaluate(pos))
              << game->name() << " " << state->to_string() << " symmetry " << s;
      });
    }
  }
}

TEST(ClassicEvaluationTest, FeatureNamesMatchTheWeights) {
  for (const Game* game : {&mg(), &dvonn(), &ttt()}) {
    with_position_type(*game, [&](auto tag) {
      using P = typename decltype(tag)::Position;
      const P pos = P::initial();
      const ClassicModel& model = classic_model(pos);
      ClassicFeatures features;
      ASSERT_TRUE(classic_features(pos, features)) << game->name();
      EXPECT_EQ(static_cast<std::size_t>(features.count), model.names.size()) << game->name();
      EXPECT_EQ(model.weights.size(), model.names.size()) << game->name();
    });
  }
  // A Murus Gallicus mover that can break through is scored by rule, with no features.
  const auto threat =
      mg::Position::parse("t......./......../...T..../......../......../......../T....... L");
  ClassicFeatures features;
  EXPECT_FALSE(classic_features(threat, features));
  EXPECT_EQ(classic_evaluate(threat), kWinNextMove);
}

}  // namespace
}  // namespace oppidum::arena
