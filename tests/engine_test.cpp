// The engine line protocol: quoted spec values, `oppidum engine` on its standard input, external
// players in matches (two engines against each other, and scripted programs that cheat or stall).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/engine.h"
#include "arena/external.h"
#include "arena/match.h"
#include "arena/player.h"
#include "arena/players.h"
#include "arena/spec.h"
#include "games/game.h"
#include "mcts/rng.h"
#include "tests/process_util.h"
#include "util/text.h"

namespace oppidum::arena {
namespace {

using Clock = std::chrono::steady_clock;

const Game& mg() { return game_by_name("mg"); }
const Game& dvonn() { return game_by_name("dvonn"); }

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using test_util::CommandResult;

// One file per test: CTest runs the tests of this binary as parallel processes.
std::string temp_file(const std::string& suffix) {
  return ::testing::TempDir() + "engine_test_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + suffix;
}

// Runs the oppidum binary with `args` (shell syntax) and `input` on standard input; standard error
// goes to `err_path` when given (else it is dropped).
CommandResult run(const std::string& args, const std::string& input,
                  const std::string& err_path = "") {
  const std::string in_path = temp_file("input.txt");
  std::ofstream(in_path) << input;
  const std::string cmd = std::string(OPPIDUM_BINARY) + " " + args + " < " + in_path + " 2>" +
                          (err_path.empty() ? "/dev/null" : err_path);
  return test_util::run_shell(cmd);
}

using test_util::read_file;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string engine_cmd(const std::string& game, const std::string& player) {
  return std::string(OPPIDUM_BINARY) + " engine --game " + game + " --player " + player;
}

// A shell script in the test's temp folder; returns the command that runs it.
std::string script(const std::string& name, const std::string& body) {
  const std::string path = temp_file(name + ".sh");
  std::ofstream(path) << "#!/bin/sh\n" << body;
  return "sh " + path;
}

TEST(SpecQuotesTest, QuotedValuesHoldSpacesCommasAndEscapes) {
  PlayerSpec s = parse_player_spec("external:cmd=\"./engine --a 1, --b\",timeout_ms=5");
  ASSERT_EQ(s.params.size(), 2u);
  EXPECT_EQ(s.params[0].first, "cmd");
  EXPECT_EQ(s.params[0].second, "./engine --a 1, --b");
  EXPECT_EQ(s.params[1].second, "5");
  s = parse_player_spec(R"(external:cmd="say \"hi\" \\ \n")");
  EXPECT_EQ(s.params[0].second, R"(say "hi" \ \n)");
  s = parse_player_spec("external:name=x,cmd=\"a b\"");
  EXPECT_EQ(s.params[1].second, "a b");
  EXPECT_THROW(parse_player_spec("external:cmd=\"a b"), PlayerSpecError);     // not closed
  EXPECT_THROW(parse_player_spec("external:cmd=\"a\"b"), PlayerSpecError);    // text after
  EXPECT_THROW(parse_player_spec("external:cmd=\"\""), PlayerSpecError);      // empty
  EXPECT_THROW(parse_player_spec("external:cmd=a b"), PlayerSpecError);       // unquoted space
  EXPECT_THROW(parse_player_spec("external:cmd=\"a\",x=1 2"), PlayerSpecError);
  EXPECT_THROW(parse_player_spec("external :cmd=\"a\""), PlayerSpecError);
  EXPECT_THROW(parse_player_spec("external:cmd=\"a\","), PlayerSpecError);
}

TEST(ExternalSpecTest, CanonicalNameAndErrors) {
  EXPECT_EQ(make_player(mg(), "external:cmd=\"./x  --y 1\"")->spec(), "external:./x_--y_1");
  EXPECT_EQ(make_player(mg(), "external:cmd=\"./x\",name=mine,protocol=codecup")->spec(),
            "external:mine");
  auto expect_error = [](const std::string& spec, const std::string& part) {
    try {
      make_player(mg(), spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const PlayerSpecError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error("external", "cmd is required");
  expect_error("external:cmd=x,protocol=uci", "protocol must be codecup");
  expect_error("external:cmd=x,timeout_ms=0", "timeout_ms must be 1..3600000");
  expect_error("external:cmd=x,depth=2", "unknown key 'depth'");
  // A name that reaches a terminal and the record files: no escape sequences.
  expect_error("external:cmd=x,name=\"\x1b[2Jfake\"", "holds a control character");
  expect_error("external:cmd=\"x\x07\"", "holds a control character");
  EXPECT_TRUE(game_by_name("mg").looks_like_move("c1-c3"));
  EXPECT_TRUE(game_by_name("mg").looks_like_move("D5XE6"));
  EXPECT_FALSE(game_by_name("mg").looks_like_move("c1-c9"));
  EXPECT_TRUE(game_by_name("dvonn").looks_like_move("PASS"));
  EXPECT_TRUE(game_by_name("dvonn").looks_like_move("a2a1"));
  EXPECT_TRUE(game_by_name("dvonn").looks_like_move("K5"));
  EXPECT_FALSE(game_by_name("dvonn").looks_like_move("L1"));
  EXPECT_FALSE(game_by_name("dvonn").looks_like_move("hello"));
}

TEST(EngineTest, RunEngineAnswersMovesAndStopsAtQuit) {
  RandomPlayer random;
  std::istringstream in("Start\nQuit\nc1-c3\n");
  std::ostringstream out;
  run_engine(mg(), random, in, out, 1);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NO_THROW(mg().initial_state()->parse_action(lines[0]));

  std::istringstream second("\r\n  A1 \r\n");  // DVONN: White places the first DVONN piece
  std::ostringstream answer;
  run_engine(dvonn(), random, second, answer, 1);
  auto state = dvonn().initial_state();
  state->apply(state->parse_action("A1"));
  ASSERT_EQ(lines_of(answer.str()).size(), 1u);
  EXPECT_NO_THROW(state->parse_action(lines_of(answer.str())[0]));

  std::istringstream bad("Start\nStart\n");
  std::ostringstream ignored;
  EXPECT_THROW(run_engine(mg(), random, bad, ignored, 1), EngineError);
  std::istringstream illegal("a1-a5\n");
  try {
    run_engine(mg(), random, illegal, ignored, 1);
    ADD_FAILURE() << "an illegal move was accepted";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("line 1 ('a1-a5')"), std::string::npos) << e.what();
  }
  // A NUL byte in the opponent's line is shown, and the reason after it is not cut off.
  std::istringstream nul(std::string("a1\0-a5\n", 7));
  try {
    run_engine(mg(), random, nul, ignored, 1);
    ADD_FAILURE() << "a line with a NUL byte was accepted";
  } catch (const EngineError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("line 1 ('a1\\x00-a5')"), std::string::npos) << what;
    EXPECT_NE(what.find("not playable"), std::string::npos) << what;
  }
}

// A peer that never ends its line is refused after a bounded read (util::kMaxLineBytes), with the
// line's number; a long line within the bound is read whole (and here is not a move).
TEST(EngineTest, AnEndlessLineIsRefusedAfterABoundedRead) {
  RandomPlayer random;
  std::ostringstream ignored;
  std::istringstream endless("Start\n" + std::string(util::kMaxLineBytes + 1000, 'x'));
  try {
    run_engine(mg(), random, endless, ignored, 1);
    ADD_FAILURE() << "a line beyond the bound was read";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("engine: line 2: a line longer than"), std::string::npos)
        << e.what();
  }
  EXPECT_LE(static_cast<std::size_t>(endless.tellg()), 6 + util::kMaxLineBytes + 1);
  std::istringstream long_move("Start\n" + std::string(util::kMaxLineBytes, 'x') + "\n");
  try {
    run_engine(mg(), random, long_move, ignored, 1);
    ADD_FAILURE() << "garbage was accepted as a move";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("not playable"), std::string::npos) << e.what();
  }
}

// The Opening line: the moves set up a position, then Start or a move says the engine's side.
TEST(EngineTest, OpeningLineSetsUpThePosition) {
  RandomPlayer random;
  for (const Game* game : {&mg(), &dvonn()}) {
    auto state = game->initial_state();
    std::string opening = "Opening";
    ActionList legal;
    for (int i = 0; i < 3; ++i) {
      state->legal_actions(legal);
      opening += " " + state->action_to_string(legal[i % legal.size()]);
      state->apply(legal[i % legal.size()]);
    }
    std::istringstream first(opening + "\nStart\nQuit\n");
    std::ostringstream out;
    run_engine(*game, random, first, out, 1);
    auto lines = lines_of(out.str());
    ASSERT_EQ(lines.size(), 1u) << out.str();
    EXPECT_NO_THROW(state->parse_action(lines[0])) << "the engine moves in the opening's position";

    // Now the engine is the other side: the opponent's move comes first.
    state->legal_actions(legal);
    const std::string move = state->action_to_string(legal[0]);
    state->apply(legal[0]);
    std::istringstream second(opening + "\n" + move + "\nQuit\n");
    std::ostringstream answer;
    run_engine(*game, random, second, answer, 1);
    lines = lines_of(answer.str());
    ASSERT_EQ(lines.size(), 1u) << answer.str();
    EXPECT_NO_THROW(state->parse_action(lines[0]));
  }
  std::ostringstream ignored;
  std::istringstream late("Start\nOpening c1-c3\n");
  EXPECT_THROW(run_engine(mg(), random, late, ignored, 1), EngineError);
  ActionList legal;
  const auto start = mg().initial_state();
  start->legal_actions(legal);
  std::istringstream bad("Opening " + start->action_to_string(legal[0]) + " a1-a5\n");
  try {
    run_engine(mg(), random, bad, ignored, 1);
    ADD_FAILURE() << "an illegal opening was accepted";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("the opening's move 'a1-a5' is not playable"),
              std::string::npos)
        << e.what();
  }
}

TEST(EngineTest, BinaryAnswersStartWithOneLegalMove) {
  for (const Game* game : {&mg(), &dvonn()}) {
    const CommandResult r =
        run("engine --game " + game->name() + " --player random --seed 1", "Start\nQuit\n");
    EXPECT_EQ(r.status, 0);
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 1u) << r.out;
    EXPECT_NO_THROW(game->initial_state()->parse_action(lines[0])) << lines[0];
  }
  // DVONN as the second player: White's first placement, then ours.
  const CommandResult r = run("engine --game dvonn --player alphabeta:depth=1", "C3\n");
  EXPECT_EQ(r.status, 0);
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  auto state = dvonn().initial_state();
  state->apply(state->parse_action("C3"));
  EXPECT_NO_THROW(state->parse_action(lines[0])) << lines[0];
}

TEST(EngineTest, BinaryRejectsAnUnplayableMoveOnStandardError) {
  const std::string err = temp_file("stderr.txt");
  const CommandResult r = run("engine --game dvonn --player random --seed 1", "A1\nA1\n", err);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;  // the answer to A1, nothing else
  const std::string diagnostics = read_file(err);
  EXPECT_NE(diagnostics.find("line 2 ('A1')"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("not playable"), std::string::npos) << diagnostics;
}

// The test plays one side with random moves (DVONN passes included) against `oppidum engine`
// through an ExternalPlayer, whose every answer is checked.
// Returns the passes played.
int play_against_engine(const Game& game, int engine_side, std::uint64_t seed) {
  ExternalPlayer engine({engine_cmd(game.name(), "random --seed " + std::to_string(seed)), "", 10000});
  RandomPlayer random;
  auto state = game.initial_state();
  int passes = 0;
  while (!state->is_terminal()) {
    const bool engines_turn = state->current_player() == engine_side;
    const Action a = engines_turn ? engine.choose_move_in_game(7, *state, 0)
                                  : random.choose_move(*state, seed * 1000 + state->ply());
    if (state->action_to_string(a) == "PASS") ++passes;
    state->apply(a);
  }
  engine.game_ended(7);
  return passes;
}

// A referee that stops reading gets an error on standard error and status 1, not a silent death
// by SIGPIPE.
TEST(EngineTest, BinaryReportsAReaderThatLeft) {
  const std::string err = temp_file("stderr.txt");
  const CommandResult r = test_util::run_shell(
      "{ sleep 1; printf 'Start\\n'; } | { " + std::string(OPPIDUM_BINARY) +
      " engine --game mg --player random --seed 1 2>" + err + "; echo \"status $?\" >>" + err +
      "; } | true");
  const std::string said = read_file(err);
  EXPECT_NE(said.find("engine: cannot write the move to the output"), std::string::npos) << said;
  EXPECT_NE(said.find("status 1"), std::string::npos) << said;
}

// SIGTERM (or Ctrl-C, or a closed terminal) ends `engine` and `play` with every external program
// they run, and everything it started: nothing is left to init. The waits poll (a loaded machine
// may take seconds to start the program), and every process the test looks for or kills has a
// command line of its own: a bare `pkill -f '^sleep 20$'` once killed another test's program.
TEST(EngineTest, ASignalEndsTheExternalProgramsToo) {
  for (const std::string command :
       {"engine --game mg --player 'external:cmd=\"sleep 613.25\",timeout_ms=60000'",
        "play --game mg --color second --opponent 'external:cmd=\"sleep 613.25\","
        "timeout_ms=60000'"}) {
    SCOPED_TRACE(command);
    const std::string pid = temp_file("pid.txt");
    const std::string running = "pgrep -f '^sleep 613[.]25' >/dev/null";
    const CommandResult r = test_util::run_shell(
        "{ printf 'Start\\n'; sleep 20.613; } | " + std::string(OPPIDUM_BINARY) + " " +
        command + " >/dev/null 2>&1 & echo $! >" + pid +
        "; for i in $(seq 600); do " + running + " && { echo started; break; }; sleep 0.05; done"
        "; kill -TERM $(cat " + pid + ")"
        "; for i in $(seq 200); do " + running + " || break; sleep 0.05; done"
        "; " + running + " && echo left; pkill -f '^sleep 20[.]613$'; true");
    EXPECT_NE(r.out.find("started"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("left"), std::string::npos) << r.out;
    test_util::run_shell("pkill -f '^sleep 613[.]25'");
  }
}

TEST(EngineTest, FullGamesThroughAnExternalPlayer) {
  for (int side = 0; side < 2; ++side) EXPECT_EQ(play_against_engine(mg(), side, 3), 0);
  // DVONN from both sides, until a game had a pass (most seeds give one within two games).
  int passes = 0;
  for (std::uint64_t seed = 4; seed < 10 && passes == 0; ++seed)
    for (int side = 0; side < 2; ++side) passes += play_against_engine(dvonn(), side, seed);
  EXPECT_GT(passes, 0);
}

struct Played {
  MatchStatus status;
  std::vector<GameRecord> games;
  double seconds = 0.0;
};

Played play(const Game& game, const std::string& a_spec, const std::string& b_spec, int games) {
  auto a = make_player(game, a_spec);
  auto b = make_player(game, b_spec);
  Played out;
  MatchHooks hooks;
  hooks.on_game = [&](const GameRecord& record) { out.games.push_back(record); };
  MatchConfig config;
  config.games = games;
  const auto start = Clock::now();
  out.status = run_match(game, *a, *b, config, hooks);
  out.seconds = seconds_since(start);
  return out;
}

TEST(ExternalMatchTest, CheatingAndStallingProgramsForfeit) {
  const std::string illegal = script("illegal", "read line\necho a1-a5\nread line\n");
  const std::string garbage = script("garbage", "read line\necho hello world\nread line\n");
  const std::string stall = script("stall", "read line\nsleep 20\n");
  const std::string silent = script("silent", "read line\nexit 3\n");
  const std::string killed = script("killed", "read line\nkill -9 $$\n");
  // A move after 5,000 blanks, written at once with its newline (before: a line over the limit
  // was taken when its newline came in the same read).
  const std::string padded =
      script("long_line", "read line\nprintf '%5000s c1-c3\\n' ''\nread line\n");
  struct Case {
    std::string spec, reason;
  };
  const std::vector<Case> cases = {
      {"external:cmd=\"" + illegal + "\"", "illegal move: sent 'a1-a5' after "},
      {"external:cmd=\"" + garbage + "\"", "garbage: sent 'hello world' instead of a move"},
      {"external:cmd=\"" + stall + "\",timeout_ms=300", "timeout: no move within 300 ms"},
      {"external:cmd=\"" + silent + "\"", "no move: the program exited with status 3"},
      {"external:cmd=\"" + killed + "\"",
       "no move: the program was killed by signal 9 (exit status 137) after "},
      {"external:cmd=\"" + padded + "\"", "garbage: a line of more than 4096 characters"},
  };
  for (const Case& c : cases) {
    const Played p = play(mg(), "random", c.spec, 2);
    EXPECT_LT(p.seconds, 10.0) << c.spec;  // the stalling program sleeps 20 s: never waited for
    EXPECT_EQ(p.status.wins, 2) << c.spec;
    EXPECT_EQ(p.status.forfeits, 2) << c.spec;
    ASSERT_EQ(p.games.size(), 2u);
    for (const GameRecord& g : p.games) {
      EXPECT_EQ(g.opening_plies, 0);  // no openings with an external player
      EXPECT_NE(g.forfeit.find(c.reason), std::string::npos) << g.forfeit;
      EXPECT_EQ(g.score_a(), 1.0);
      // The record stops before the forfeit: B's first move (after Start, or after A's first).
      EXPECT_EQ(g.moves.size(), g.a_first ? 1u : 0u);
    }
    ASSERT_EQ(p.status.forfeit_lines.size(), 2u);
    EXPECT_EQ(p.status.forfeit_lines[0].rfind("game 0: B forfeits: ", 0), 0u)
        << p.status.forfeit_lines[0];
    EXPECT_NE(format_match_report(p.status).find("forfeit: game 1: B forfeits: "),
              std::string::npos);
  }
}

// A program that stops reading its input, and fills it itself (it can: /proc/self/fd/0), once
// held the match forever: writing the opponent's move blocked before any deadline ran. A write
// now waits until the move's deadline, then the program forfeits, saying why.
TEST(ExternalMatchTest, AProgramThatDoesNotReadItsInputForfeitsInTime) {
  const std::string full = script(
      "full",
      "read line\nexec 3>/proc/self/fd/0\ntimeout 1 yes '' >&3\n"
      "case \"$line\" in *b2*) echo a1 ;; *) echo b2 ;; esac\nsleep 120\n");
  // (10 s a move: its first move takes the program's start and 1 s of filling, on a machine
  // that may stall for seconds under a parallel test run. The program lives on until the arena
  // ends it: the second game's move is written after the first game's forfeit, and a program
  // gone by then closes its input rather than leaving it full.)
  const Played p = play(game_by_name("ttt"), "random",
                        "external:cmd=\"" + full + "\",timeout_ms=10000", 2);
  EXPECT_LT(p.seconds, 40.0) << "the match waited for a program that does not read";
  EXPECT_EQ(p.status.forfeits, 2);
  for (const GameRecord& g : p.games)
    EXPECT_NE(g.forfeit.find("timeout: the program did not read its input within 10000 ms"),
              std::string::npos)
        << g.forfeit;
}

TEST(ExternalMatchTest, BlankLinesAndSpacesAroundAMoveAreIgnored) {
  // docs/FORMATS.md: blank lines, surrounding spaces and a \r before the \n are ignored.
  const std::string padded =
      script("padded", "read line\nprintf '\\n  \\n\\r\\n\\t \\n  c1-c3 \\r\\n'\nread line\n");
  ExternalPlayer engine({padded, "", 10000});
  const auto start = mg().initial_state();
  EXPECT_EQ(start->action_to_string(engine.choose_move_in_game(1, *start, 0)), "c1-c3");
  engine.game_ended(1);

  // Whole games, each move after a blank line, from both sides.
  const std::string blank_first =
      script("blank_first", "exec " + engine_cmd("mg", "random") + " | sed -u 's/^/\\n  /'\n");
  // (a generous time a move, which counts a program's start: this test is not about time)
  const Played p =
      play(mg(), "random", "external:cmd=\"" + blank_first + "\",timeout_ms=120000", 2);
  EXPECT_EQ(p.status.forfeits, 0) << format_match_report(p.status);
  EXPECT_EQ(p.status.games_counted, 2);

  // Blank lines count against the move's time: an endless stream of them is a timeout.
  const std::string blanks = script("blanks", "read line\nwhile :; do echo; done\n");
  const Played q = play(mg(), "random", "external:cmd=\"" + blanks + "\",timeout_ms=300", 2);
  EXPECT_LT(q.seconds, 30.0);
  ASSERT_EQ(q.games.size(), 2u);
  for (const GameRecord& g : q.games)
    EXPECT_NE(g.forfeit.find("timeout: no move within 300 ms"), std::string::npos) << g.forfeit;
}

// `play` against a program that forfeits says so once, naming it (before: "X forfeits: X
// forfeits:").
TEST(ExternalMatchTest, PlaySaysOnceWhoForfeits) {
  const std::string garbage = script("play_garbage", "read line\necho '?!'\nread line\n");
  const CommandResult r =
      run("play --game ttt --seed 1 --opponent 'external:cmd=\"" + garbage + "\"'", "a1\n");
  EXPECT_NE(r.out.find("forfeits: garbage: sent '?!' instead of a move"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("forfeits: external"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("You win."), std::string::npos) << r.out;
}

TEST(ExternalMatchTest, OpeningsAreRefused) {
  auto a = make_player(mg(), "external:cmd=true");
  RandomPlayer b;
  MatchConfig config;
  config.games = 2;
  config.opening_plies = 2;
  EXPECT_THROW(run_match(mg(), *a, b, config), std::invalid_argument);
}

// openings=1: the program hears each pair's opening, so deterministic players play as many
// different games as there are openings; without it, one game again and again, and the report
// says why.
TEST(ExternalMatchTest, OpeningsReachAProgramThatReadsTheOpeningLine) {
  for (const Game* game : {&mg(), &dvonn()}) {
    const std::string cmd = engine_cmd(game->name(), "alphabeta:depth=1");
    // (a generous time a move, which counts a program's start: this test is not about time)
    auto with = make_player(*game, "external:cmd=\"" + cmd + "\",openings=1,timeout_ms=120000");
    auto without = make_player(*game, "external:cmd=\"" + cmd + "\",timeout_ms=120000");
    auto local = make_player(*game, "alphabeta:depth=1");
    MatchConfig config;
    config.games = 6;
    config.threads = 2;
    const MatchStatus diverse = run_match(*game, *with, *local, config);
    EXPECT_EQ(diverse.forfeits, 0) << format_match_report(diverse);
    EXPECT_EQ(diverse.opening_plies, game->default_opening_plies());
    EXPECT_EQ(diverse.distinct_games, 3) << "three openings, both colours the same program";
    EXPECT_TRUE(diverse.openings_note.empty());
    const MatchStatus same = run_match(*game, *without, *local, config);
    EXPECT_EQ(same.forfeits, 0) << format_match_report(same);
    EXPECT_EQ(same.opening_plies, 0);
    EXPECT_EQ(same.distinct_games, 1);
    EXPECT_NE(format_match_report(same).find("openings: none, since external:"),
              std::string::npos)
        << format_match_report(same);
  }
}

// `oppidum engine` playing an external program passes an Opening line on to it (openings=1), as
// a match does: it was applied to the engine's own position only, and the program, which never
// heard it, was asked for a move from a position it did not know. A program that cannot take one
// (no openings=1) is refused, saying so.
TEST(ExternalMatchTest, TheEnginePassesAnOpeningOnToAnExternalProgram) {
  const std::string inner = engine_cmd("mg", "random --seed 2");
  const std::string err = temp_file("err.txt");
  const CommandResult passed =
      run("engine --game mg --seed 1 --player 'external:cmd=\"" + inner +
              "\",openings=1,timeout_ms=120000'",
          "Opening c1-a3 h7-h5\nStart\nQuit\n", err);
  EXPECT_EQ(passed.status, 0) << passed.out << read_file(err);
  const std::vector<std::string> moves = lines_of(passed.out);
  ASSERT_EQ(moves.size(), 1u) << passed.out << read_file(err);
  auto state = mg().initial_state();
  for (const char* m : {"c1-a3", "h7-h5"}) state->apply(state->parse_action(m));
  EXPECT_NO_THROW(state->parse_action(moves[0])) << moves[0];
  // Its own moves and the opponent's after the opening reach it too: a game goes on.
  state->apply(state->parse_action(moves[0]));
  ActionList legal;
  state->legal_actions(legal);
  const std::string reply = state->action_to_string(legal[0]);
  const CommandResult on =
      run("engine --game mg --seed 1 --player 'external:cmd=\"" + inner +
              "\",openings=1,timeout_ms=120000'",
          "Opening c1-a3 h7-h5\nStart\n" + reply + "\nQuit\n", err);
  EXPECT_EQ(on.status, 0) << on.out << read_file(err);
  EXPECT_EQ(lines_of(on.out).size(), 2u) << on.out << read_file(err);

  const CommandResult refused =
      run("engine --game mg --seed 1 --player 'external:cmd=\"" + inner + "\"'",
          "Opening c1-a3 h7-h5\nStart\nQuit\n", err);
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(read_file(err).find("plays only from the initial position: it cannot be given an "
                                "Opening"),
            std::string::npos)
      << read_file(err);
}

TEST(ExternalMatchTest, ArenaPlaysTwoEnginesAgainstEachOther) {
  for (const std::string game : {"mg", "dvonn"}) {
    // (a generous time a move, which counts a program's start: this test is not about time)
    const std::string a =
        "'external:cmd=\"" + engine_cmd(game, "random --seed 1") + "\",timeout_ms=120000'";
    const std::string b =
        "'external:cmd=\"" + engine_cmd(game, "alphabeta:depth=1") + "\",timeout_ms=120000'";
    const auto start = Clock::now();
    const CommandResult r =
        run("arena --game " + game + " --a " + a + " --b " + b + " --games 2", "");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_LT(seconds_since(start), 60.0);  // a few seconds; generous for loaded machines
    EXPECT_NE(r.out.find("match: external:" + std::string(OPPIDUM_BINARY) + "_engine_--game_" +
                         game + "_--player_random_--seed_1 (A) vs external:"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(", 2 games (1 pairs; cap 2), openings 0 random plies"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("result (A's view): +"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("forfeit"), std::string::npos) << r.out;
  }
}

TEST(ExternalMatchTest, ArenaReportsAForfeit) {
  const std::string garbage = script("garbage", "read line\necho '?!'\nread line\n");
  const std::string record = ::testing::TempDir() + "engine_test_forfeit_record.txt";
  std::remove(record.c_str());
  const CommandResult r = run("arena --game dvonn --a random --b 'external:cmd=\"" + garbage +
                                  "\",name=cheater' --games 2 --record " + record,
                              "");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("result (A's view): +2 =0 -0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(2 lost by forfeit: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forfeit: game 0: B forfeits: garbage: sent '?!' instead of a move after "),
            std::string::npos)
      << r.out;
  // The forfeited moves count in the time per move (their time does): B was asked twice.
  const std::size_t b_time = r.out.find(", B ", r.out.find("time per move: A "));
  ASSERT_NE(b_time, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(2 moves)", b_time), r.out.find("(", b_time)) << r.out;
  // The record says why each game ended where it did.
  std::ifstream in(record);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    EXPECT_NE(line.find(" # forfeit: garbage: sent '?!' instead of a move after "),
              std::string::npos) << line;
  EXPECT_EQ(lines, 2);
}

TEST(ExternalMatchTest, ControlBytesAreQuotedAndTheReasonIsWhole) {
  // A NUL inside the move, then a long line of control bytes: both quoted byte for byte as
  // printable escapes, the long one cut after 60 bytes of its quote, and the reason goes on to
  // its end (the ply).
  const std::string nul = script("nul", "read line\nprintf 'c1\\0-c3\\n'\nread line\n");
  const std::string noise =
      script("noise", "read line\ni=0\nwhile [ $i -lt 50 ]; do printf 'ab\\0\\001'; "
                      "i=$((i+1)); done\necho\nread line\n");
  const Played p = play(mg(), "random", "external:cmd=\"" + nul + "\"", 2);
  ASSERT_EQ(p.games.size(), 2u);
  EXPECT_EQ(p.games[1].forfeit, "garbage: sent 'c1\\x00-c3' instead of a move after Start (ply 0)");
  ASSERT_EQ(p.status.forfeit_lines.size(), 2u);
  EXPECT_NE(format_match_report(p.status)
                .find("forfeit: game 1: B forfeits: garbage: sent 'c1\\x00-c3' instead of a move "
                      "after Start (ply 0)\n"),
            std::string::npos)
      << format_match_report(p.status);

  const Played q = play(mg(), "random", "external:cmd=\"" + noise + "\"", 2);
  ASSERT_EQ(q.games.size(), 2u);
  const std::string& reason = q.games[1].forfeit;
  // 'ab\x00\x01' is 10 bytes quoted: six of them fit in 60 bytes.
  std::string expected = "garbage: sent '";
  for (int i = 0; i < 6; ++i) expected += "ab\\x00\\x01";
  expected += "... (200 bytes)' instead of a move after Start (ply 0)";
  EXPECT_EQ(reason, expected);
}

}  // namespace
}  // namespace oppidum::arena
