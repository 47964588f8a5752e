// Player specs, the factory's errors, and the random, search and human players.
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "arena/alphabeta.h"
#include "arena/player.h"
#include "arena/players.h"
#include "arena/spec.h"
#include "games/game.h"
#include "mcts/evaluator.h"
#include "util/text.h"

namespace oppidum::arena {
namespace {

const Game& mg() { return game_by_name("mg"); }

std::string spec_error(const std::string& spec, const PlayerOptions& options = {}) {
  try {
    make_player(mg(), spec, options);
  } catch (const PlayerSpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PlayerSpecTest, ParsesNameAndKeys) {
  const PlayerSpec s = parse_player_spec("uct:sims=100,cpuct=2");
  EXPECT_EQ(s.name, "uct");
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[1].first, "cpuct");
  EXPECT_EQ(s.params[1].second, "2");
  EXPECT_EQ(parse_player_spec("random").params.size(), 0u);
  EXPECT_THROW(parse_player_spec(""), PlayerSpecError);
  EXPECT_THROW(parse_player_spec("uct:"), PlayerSpecError);
  EXPECT_THROW(parse_player_spec("uct:sims"), PlayerSpecError);
  EXPECT_THROW(parse_player_spec("uct:sims=1,sims=2"), PlayerSpecError);
  EXPECT_THROW(parse_player_spec("uct: sims=1"), PlayerSpecError);
  // A spec names a player in tables, logs, results and records: no control character, bidi
  // control or byte that is not UTF-8 anywhere in it, quoted or not (an escape sequence in a
  // checkpoint path reached the terminal through the match line).
  for (const std::string bad :
       {"uct:sims=5,cpuct=1\x1b[31m", "external:cmd=\"prog\nx\"", "external:cmd=\"a\tb\"",
        "external:cmd=prog,name=E\xe2\x80\xaex", "net:checkpoint=a\xc2\x9b.ckpt",
        "net:checkpoint=\xff.ckpt"}) {
    try {
      parse_player_spec(bad);
      ADD_FAILURE() << "parsed " << bad;
    } catch (const PlayerSpecError& e) {
      EXPECT_NE(std::string(e.what()).find("holds a control character"), std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << "quoted";
    }
  }
  EXPECT_EQ(parse_player_spec("net:checkpoint=\"r\xc3\xa9seau/best.ckpt\"").params[0].second,
            "r\xc3\xa9seau/best.ckpt")
      << "names in any script";
}

TEST(PlayerSpecTest, FactoryExplainsBadSpecs) {
  EXPECT_EQ(spec_error("foo"),
            "unknown player 'foo'; players: random, uct:sims=N, alphabeta:depth=N, classic:ms=N, "
            "net:checkpoint=PATH,sims=N (each also with ms=T or clock=S instead of or beside "
            "sims/depth), external:cmd=\"PROGRAM\", human");
  EXPECT_EQ(spec_error("uct:sims=-3"), "uct: sims must be 1..10000000, got -3");
  EXPECT_EQ(spec_error("uct:sims=abc"), "uct: sims must be an integer 1..10000000, got 'abc'");
  EXPECT_EQ(spec_error("uct"), "uct: sims is required (e.g. uct:sims=1000)");
  EXPECT_EQ(spec_error("uct:sims=10,foo=1"),
            "uct: unknown key 'foo'; keys: sims, cpuct, rollouts, ms, clock");
  EXPECT_EQ(spec_error("alphabeta:depth=0"), "alphabeta: depth must be 1..12, got 0");
  EXPECT_EQ(spec_error("random:depth=2"), "random: unknown key 'depth'; random takes no keys");
  EXPECT_NE(spec_error("net:checkpoint=a.pt,sims=10").find("without network support"),
            std::string::npos);
  EXPECT_EQ(spec_error("uct:sims=10,cpuct=-1"), "uct: cpuct must be 0.001..1000, got -1");
  // A misspelt required key is named (before: "sims is required" only).
  EXPECT_EQ(spec_error("uct:simz=100"),
            "uct: unknown key 'simz'; keys: sims, cpuct, rollouts, ms, clock");
  EXPECT_NE(spec_error("alphabeta:dept=3").find("unknown key 'dept'"), std::string::npos);
  EXPECT_NE(spec_error("external:command=x").find("unknown key 'command'"), std::string::npos);
  // Numbers in decimal, as everywhere else: no hexadecimal, '+' or blanks (strtod took them).
  for (const std::string value : {"0x1", "+1", "\" 5\"", "0x1p1", "inf", "nan"})
    EXPECT_NE(spec_error("uct:sims=5,cpuct=" + value).find("cpuct must be a number 0.001..1000"),
              std::string::npos) << value;
  EXPECT_NE(spec_error("uct:clock=0x1").find("clock must be a number"), std::string::npos);
  EXPECT_EQ(make_player(mg(), "uct:sims=5,cpuct=2e0")->spec(), "uct:sims=5,cpuct=2");
  // Input comes back shortened and printable, never whole (a 60 KB key came back in the web's
  // answer): every kind of error of a long name, key or value.
  const std::string big(60'000, 'x');
  for (const std::string& spec :
       {big, "uct:sims=1," + big + "=1", "uct:sims=" + big, "uct:a=1,a=1," + big,
        "uct:" + big + "=1," + big + "=1", "uct:sims=1,cpuct=" + big, big + ":a=1",
        "uct:sims=1,x" + big, std::string("uct:sims=1,\x01=1")}) {
    const std::string error = spec_error(spec);
    EXPECT_LT(error.size(), 600u) << error.substr(0, 200);
    EXPECT_EQ(error.find('\x01'), std::string::npos) << error;
  }
}

TEST(PlayerSpecTest, CanonicalSpecs) {
  EXPECT_EQ(make_player(mg(), "random")->spec(), "random");
  EXPECT_EQ(make_player(mg(), "uct:sims=0100")->spec(), "uct:sims=100");
  EXPECT_EQ(make_player(mg(), "uct:cpuct=2.50,sims=5")->spec(), "uct:sims=5,cpuct=2.5");
  EXPECT_EQ(make_player(mg(), "alphabeta:depth=3")->spec(), "alphabeta:depth=3");
  // Two players that differ are never named alike (six digits named 1.2345678 as 1.23457).
  EXPECT_EQ(make_player(mg(), "uct:sims=5,cpuct=1.2345678")->spec(), "uct:sims=5,cpuct=1.2345678");
  EXPECT_EQ(make_player(mg(), "uct:sims=5,cpuct=0.1")->spec(), "uct:sims=5,cpuct=0.1");
  EXPECT_EQ(format_number(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(format_number(100.0), "100");
  EXPECT_EQ(format_number(1e-7), "1e-07");
}

TEST(PlayerTest, NetPlayerUsesTheRegisteredFactory) {
  PlayerOptions options;
  std::string asked;
  options.net_factory = [&](const Game& game, const std::string& checkpoint) {
    asked = game.name() + ":" + checkpoint;
    return std::make_shared<mcts::UniformEvaluator>();
  };
  auto player = make_player(mg(), "net:checkpoint=runs/a/best.pt,sims=8", options);
  EXPECT_EQ(asked, "mg:runs/a/best.pt");
  EXPECT_EQ(player->spec(), "net:checkpoint=runs/a/best.pt,sims=8");
  EXPECT_TRUE(player->wants_batching());
  ASSERT_TRUE(player->search_agent(1).has_value());
  EXPECT_EQ(player->search_agent(1)->search.simulations, 8);
  const auto state = mg().initial_state();
  EXPECT_TRUE(state->is_legal(player->choose_move(*state, 3)));
  EXPECT_EQ(player->search_agent(1)->search.root, mcts::RootPolicy::kPuct);

  auto gumbel = make_player(mg(), "net:checkpoint=b.pt,root=gumbel,sims=8", options);
  EXPECT_EQ(gumbel->spec(), "net:checkpoint=b.pt,sims=8,root=gumbel");
  EXPECT_EQ(gumbel->search_agent(1)->search.root, mcts::RootPolicy::kGumbel);
  EXPECT_FALSE(gumbel->search_agent(1)->search.gumbel_noise);  // deterministic in matches
  EXPECT_EQ(make_player(mg(), "net:checkpoint=b.pt,sims=8,root=puct", options)->spec(),
            "net:checkpoint=b.pt,sims=8");
  EXPECT_THROW(make_player(mg(), "net:checkpoint=b.pt,sims=8,root=alpha", options), PlayerSpecError);
}

TEST(PlayerTest, RandomPlayerIsSeeded) {
  auto player = make_player(mg(), "random");
  const auto state = mg().initial_state();
  EXPECT_FALSE(player->search_agent(0).has_value());
  EXPECT_EQ(player->choose_move(*state, 7), player->choose_move(*state, 7));
  bool varied = false;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    varied |= player->choose_move(*state, seed) != player->choose_move(*state, 0);
  EXPECT_TRUE(varied);
}

TEST(PlayerTest, UctPlayerSearchesWithRollouts) {
  auto player = make_player(mg(), "uct:sims=50");
  const auto agent = player->search_agent(5);
  ASSERT_TRUE(agent.has_value());
  EXPECT_EQ(agent->search.simulations, 50);
  EXPECT_EQ(agent->search.dirichlet_weight, 0.0f);
  EXPECT_NE(agent->evaluator->describe().find("rollout"), std::string::npos);
  // Light to move wins at once with a breakthrough from d5; the search must find it.
  const auto state = mg().parse_state("t......./......../...T..../......../......../......../T....... L");
  auto next = state->clone();
  next->apply(player->choose_move(*state, 1));
  EXPECT_TRUE(next->is_terminal());
  EXPECT_EQ(next->result(0), 1.0);
}

TEST(HumanPlayerTest, ExplainsAnIllegalMoveAndAsksAgain) {
  std::istringstream in("\nmoves\nc1-c4\nd7-d5\nc1-c3\n");
  std::ostringstream out;
  PlayerOptions options;
  options.human_in = &in;
  options.human_out = &out;
  auto human = make_player(mg(), "human", options);
  EXPECT_TRUE(human->interactive());
  const auto state = mg().initial_state();
  const Action action = human->choose_move(*state, 0);
  EXPECT_EQ(state->action_to_string(action), "c1-c3");
  const std::string shown = out.str();
  EXPECT_NE(shown.find("a b c d e f g h"), std::string::npos) << shown;   // the board
  EXPECT_NE(shown.find("Legal moves: a1-a3"), std::string::npos) << shown;
  EXPECT_NE(shown.find("Not playable: move \"c1-c4\""), std::string::npos) << shown;
  EXPECT_NE(shown.find("Not playable: move \"d7-d5\": illegal"), std::string::npos) << shown;
}

// A line beyond the bound (util::kMaxLineBytes) is dropped whole, not kept in memory or read as
// a move, and the player is asked again.
TEST(HumanPlayerTest, AnOverlongLineIsDroppedAndTheNextOneRead) {
  std::istringstream in(std::string(util::kMaxLineBytes + 10, 'c') + "1-c3\nc1-c3\n");
  std::ostringstream out;
  HumanPlayer human(in, out);
  const auto state = mg().initial_state();
  EXPECT_EQ(state->action_to_string(human.choose_move(*state, 0)), "c1-c3");
  EXPECT_NE(out.str().find("That line is too long"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("Not playable"), std::string::npos) << "the line's rest was read";

  // A line with no end in sight (standard input from /dev/zero) is an error, not read forever.
  std::istringstream endless(std::string(util::kMaxLineBytes + (std::size_t{2} << 20), 'c'));
  HumanPlayer reader(endless, out);
  try {
    reader.choose_move(*state, 0);
    ADD_FAILURE() << "an endless line was skipped";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("standard input: a line longer than"), std::string::npos)
        << e.what();
  }
}

TEST(HumanPlayerTest, QuitAndEndOfInputEndTheGame) {
  std::ostringstream out;
  const auto state = mg().initial_state();
  std::istringstream quit("quit\n");
  HumanPlayer a(quit, out);
  EXPECT_THROW(a.choose_move(*state, 0), QuitGame);
  std::istringstream eof("");
  HumanPlayer b(eof, out);
  EXPECT_THROW(b.choose_move(*state, 0), QuitGame);
  // In any case, as the engine protocol writes Quit.
  for (const char* word : {"Quit", "EXIT"}) {
    std::istringstream in(std::string(word) + "\n");
    HumanPlayer c(in, out);
    EXPECT_THROW(c.choose_move(*state, 0), QuitGame) << word;
  }
}

}  // namespace
}  // namespace oppidum::arena
