// The rules commands of the `oppidum` binary: output formats and error reporting.
// OPPIDUM_TEST_BINARY runs the tests against another build (e.g. an older one, to see them fail).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "app/error_text.h"
#include "tests/process_util.h"

namespace {

using oppidum::test_util::CommandResult;

// Runs the oppidum binary with `args` (shell syntax), feeding `input` on standard input, and
// returns stdout+stderr and the exit code; a run that hangs is killed after 300 s (status 137).
CommandResult run(const std::string& args, const std::string& input = "",
                  const std::string& environment = "") {
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  std::string cmd = (environment.empty() ? "" : "env " + environment + " ") +
                    "timeout -s KILL 300 " + std::string(binary ? binary : OPPIDUM_BINARY) + " " +
                    args + " 2>&1";
  if (!input.empty()) {
    // One file per test: CTest runs the tests of this binary as parallel processes.
    const std::string path = ::testing::TempDir() + "cli_test_input_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                             ".txt";
    std::ofstream(path) << input;
    cmd += " < " + path;
  }
  return oppidum::test_util::run_shell(cmd);
}

TEST(Cli, PerftPrintsOneLinePerDepth) {
  const CommandResult r = run("perft --game mg --depth 3");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "1 20\n2 400\n3 6960\n");
  const CommandResult d = run("perft --game dvonn --depth 2 --no-bulk");
  EXPECT_EQ(d.out, "1 49\n2 2352\n");
}

TEST(Cli, PerftReadsPositionsFromStandardInput) {
  const CommandResult r = run(
      "perft --game mg --depth 3 --positions -",
      "...ww.../w...w.w./wtt.Wwtw/..wW..../.T..WWWW/W..W.WWW/......WW D\n"
      "t......./......../......../......Tw/......../......../.T...... L\n");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out,
            "...ww.../w...w.w./wtt.Wwtw/..wW..../.T..WWWW/W..W.WWW/......WW D 11 46 432\n"
            "t......./......../......../......Tw/......../......../.T...... L 9 27 108\n");
}

TEST(Cli, PerftNamesTheBadInputLine) {
  const CommandResult r = run("perft --game mg --depth 1 --positions -",
                              "tttttttt/......../......../......../......../......../TTTTTTTT L\n"
                              "nonsense\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("line 2"), std::string::npos) << r.out;
}

// Bad input is quoted in at most about 100 bytes: a 10 MB line on standard input (refused after
// 64 KiB, util::read_line), a 60 KB one, or a 100 KB argument, gives a short error (not 10 MB of
// standard error) and a non-zero exit status.
TEST(Cli, HugeBadInputGivesAShortError) {
  const std::string huge_line(10 << 20, 'x');
  CommandResult r = run("perft --game mg --depth 1 --positions -", huge_line + "\n");
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.out.size(), 400u) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("standard input line 1: a line longer than 65536 bytes"), std::string::npos)
      << r.out.substr(0, 600);
  r = run("perft --game mg --depth 1 --positions -", std::string(60000, 'x') + "\n");
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.out.size(), 400u) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("standard input line 1: Murus Gallicus position \"xxx"), std::string::npos)
      << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("... (60000 bytes)\": expected the board"), std::string::npos)
      << r.out.substr(0, 600);
  r = run("perft --game dvonn --depth 1 --positions -", huge_line + "\n");
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.out.size(), 400u) << r.out.substr(0, 600);
  // One argument may be at most 128 KB; the whole shell command is one.
  const std::string huge_arg(100000, 'c');
  r = run("apply --game mg --moves 'a1-a3 " + huge_arg + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_LT(r.out.size(), 600u) << r.out.substr(0, 800);
  EXPECT_NE(r.out.find("move 2 (ccc"), std::string::npos) << r.out.substr(0, 800);
  r = run("perft --game " + huge_arg + " --depth 1");
  EXPECT_EQ(r.status, 1);
  EXPECT_LT(r.out.size(), 400u) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("unknown game"), std::string::npos) << r.out.substr(0, 600);
  r = run("perft --game mg --depth 1" + huge_arg);
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.out.size(), 600u) << r.out.substr(0, 800);
}

TEST(Cli, UnknownSubcommandIsNamedAndTheSubcommandsListed) {
  for (const char* args : {"frobnicate", "frobnicate --game mg", "--bogus frobnicate"}) {
    const CommandResult r = run(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_NE(r.out.find("unknown subcommand \"frobnicate\"; the subcommands are perft, moves, "),
              std::string::npos)
        << args << ": " << r.out;
    for (const char* sub : {"apply", "bench", "train", "arena", "engine", "export"})
      EXPECT_NE(r.out.find(sub), std::string::npos) << args << ": " << r.out;
  }
  const CommandResult none = run("");
  EXPECT_NE(none.status, 0);
  EXPECT_EQ(none.out.find("unknown subcommand"), std::string::npos) << none.out;
}

TEST(Cli, MovesAreSorted) {
  const CommandResult r = run("moves --game mg --position 't......./......../......../......Tw/......../......../.T...... L'");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "b1-b3\nb1-d1\nb1-d3\ng4-e2\ng4-e4\ng4-e6\ng4-g2\ng4-g6\ng4xh4\n");
  const CommandResult d = run("moves --game dvonn");
  EXPECT_EQ(d.status, 0);
  EXPECT_EQ(std::count(d.out.begin(), d.out.end(), '\n'), 49);
  EXPECT_EQ(d.out.substr(0, 9), "A1\nA2\nA3\n");
}

// Action numbers as docs/FORMATS.md defines them: (kind * 8 + direction) * 56 + frame square in
// Murus Gallicus (Dark's frame turned upside down), 0..48 placements in DVONN.
TEST(Cli, MovesWithActionsPrintsPolicyIndices) {
  const CommandResult r = run("moves --game mg --actions --position 't......./......../......../......Tw/......../......../.T...... L'");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("b1-b3 1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("b1-d3 57\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("g4-e2 310\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("g4xh4 590\n"), std::string::npos) << r.out;
  // Dark's a7-a5 is action 0, like Light's a1-a3.
  const std::string after = run("apply --game mg --moves 'h1-h3'").out;
  const CommandResult dark = run("moves --game mg --actions --position '" + after.substr(0, after.size() - 1) + "'");
  EXPECT_EQ(dark.status, 0);
  EXPECT_NE(dark.out.find("a7-a5 0\n"), std::string::npos) << dark.out;
  const CommandResult d = run("moves --game dvonn --actions");
  EXPECT_EQ(d.out.substr(0, 16), "A1 0\nA2 9\nA3 19\n") << d.out;
}

// The planes of docs/FORMATS.md, in the frame of the side to move.
TEST(Cli, EncodePrintsThePlanesOfAPosition) {
  const CommandResult r = run("encode --game mg");
  EXPECT_EQ(r.status, 0);
  const std::string own_towers = "plane 0\n1 1 1 1 1 1 1 1\n0 0 0 0 0 0 0 0\n";
  EXPECT_NE(r.out.find(own_towers), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plane 2\n0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0\n"
                       "0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0\n1 1 1 1 1 1 1 1\nplane 3"),
            std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 5 * 8);
  // Dark to move sees its own home row as row 0.
  const std::string after = run("apply --game mg --moves 'h1-h3'").out;
  const CommandResult dark = run("encode --game mg --position '" + after.substr(0, after.size() - 1) + "'");
  EXPECT_NE(dark.out.find(own_towers), std::string::npos) << dark.out;
  const CommandResult d = run("encode --game dvonn");
  EXPECT_EQ(d.status, 0);
  EXPECT_EQ(std::count(d.out.begin(), d.out.end(), '\n'), 1 + 20 * 6);
  // Plane 0: the 49 spaces of the 5 x 11 grid (J1, K1, K2, A4, A5, B5 are off the board).
  EXPECT_NE(d.out.find("plane 0\n1 1 1 1 1 1 1 1 1 0 0\n1 1 1 1 1 1 1 1 1 1 0\n"), std::string::npos)
      << d.out;
  const CommandResult bad = run("encode --game mg --position 'xyz'");
  EXPECT_NE(bad.status, 0);
}

TEST(Cli, ApplyPrintsThePositionOrWhyAMoveIsIllegal) {
  CommandResult r = run("apply --game mg --moves 'a1-a3 h7-h5'");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "ttttttt./.......w/.......w/......../W......./W......./.TTTTTTT L\n");
  r = run("apply --game mg --moves 'a1-a3 a3-a5'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("move 2 (a3-a5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("holds no Dark tower"), std::string::npos) << r.out;
  r = run("apply --game dvonn --moves 'A1 A1'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("move 2 (A1)"), std::string::npos) << r.out;
}

// The convolution comparison of `bench model` runs every algorithm asked for on the same batch and
// prints the ratios (a smoke test of the output, not of the speed).
TEST(Cli, BenchModelComparesConvolutions) {
  const CommandResult r = run(
      "bench model --game dvonn --sizes 1x16 --batches 3 --threads 1 --rounds 1 --seconds 0.01 "
      "--compare-conv direct,winograd2,winograd4");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("winograd2/direct"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("winograd4/direct"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MFLOP a position"), std::string::npos) << r.out;
  EXPECT_NE(run("bench model --compare-conv fft").status, 0);
}

// `bench train` times the steps, then the trainer's input: drawing a batch from a replay window
// of random games of the config's window_min, and the training loop with each batch drawn before
// its step or during the step before (the output, not the speed).
TEST(Cli, BenchTrainTimesTheStepsAndTheBatchDraw) {
  const CommandResult r = run(
      "bench train --set run.game=dvonn --set net.blocks=1 --set net.filters=8 "
      "--set training.window_min=3000 --set training.batch_size=32 --steps 2 --warmup 0");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("oppidum bench train: dvonn 1x8"), std::string::npos) << r.out;
  const std::string drawing = "drawing a batch of 32 from a window of ";
  const std::size_t at = r.out.find(drawing);
  ASSERT_NE(at, std::string::npos) << r.out;
  const long long window = std::atoll(r.out.c_str() + at + drawing.size());
  EXPECT_GE(window, 3000) << r.out;
  EXPECT_LT(window, 3000 + 1000) << "filled with whole games to window_min";
  EXPECT_NE(r.out.find("the training loop at fp32: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" steps/s drawing it during the step before, as train does ("),
            std::string::npos)
      << r.out;
}

// `bench selfplay` runs the config's self-play for each thread count against a free network and
// the config's network; each row's evaluations per position lie between one and the simulations
// of a full search plus the root's, and the net rows say their share of the forward-pass bound.
TEST(Cli, BenchSelfplayMeasuresEachNetworkAndThreadCount) {
  const CommandResult r = run(
      "bench selfplay --set run.game=dvonn --set net.blocks=1 --set net.filters=8 "
      "--set selfplay.concurrent_games=8 --set selfplay.simulations=8 "
      "--set selfplay.fast_simulations=4 --set inference.max_batch=8 --threads 1,2 "
      "--seconds 0.8 --warmup 0.2");  // (a window with whole moves on a loaded machine)
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("oppidum bench selfplay: dvonn, 8 games in flight per thread, 8 "
                       "simulations (fast 4"),
            std::string::npos)
      << r.out;
  int rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string network;
    int threads = 0;
    double positions = 0, evals = 0, per_thread = 0, per_position = 0, batch = 0;
    if (!(in >> network >> threads >> positions >> evals >> per_thread >> per_position >> batch))
      continue;
    ASSERT_TRUE(network == "free" || network == "net") << line;
    EXPECT_EQ(threads, 1 + rows % 2) << line;
    EXPECT_EQ(network, rows < 2 ? "free" : "net") << line;
    EXPECT_GT(positions, 0) << line;
    EXPECT_GE(per_position, 1.0) << line;
    EXPECT_LE(per_position, 9.0) << line;
    EXPECT_GT(batch, 0) << line;
    EXPECT_LE(batch, 8.0) << line;
    EXPECT_EQ(network == "net", line.find("% of it") != std::string::npos) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 4) << r.out;
  EXPECT_NE(run("bench selfplay --networks gpu").status, 0);
}

TEST(Cli, HelpDescribesCommands) {
  const CommandResult r = run("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* cmd : {"perft", "moves", "apply", "bench"}) EXPECT_NE(r.out.find(cmd), std::string::npos);
  const CommandResult p = run("perft --help");
  EXPECT_NE(p.out.find("--positions"), std::string::npos);
  const CommandResult bad = run("perft --game chess --depth 1");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find("unknown game"), std::string::npos);
}


TEST(Cli, ArenaPrintsTheMatchAndAppendsResultsAndRecords) {
  const std::string results = ::testing::TempDir() + "cli_arena_results.txt";
  const std::string record = ::testing::TempDir() + "cli_arena_record.txt";
  std::remove(results.c_str());
  std::remove(record.c_str());
  const CommandResult r = run("arena --game mg --a alphabeta:depth=1 --b random --games 4 --seed 2 "
                              "--results " + results + " --record " + record);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("result (A's view): +"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Elo (A - B): "), std::string::npos) << r.out;
  std::ifstream in(results);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "# game: mg");
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("alphabeta:depth=1 random ", 0), 0u) << line;
  // A match of another game into the same file is refused before it is played, in both commands.
  for (const std::string command :
       {"arena --game ttt --a alphabeta:depth=1 --b random --games 2",
        "gauntlet --game ttt --player alphabeta:depth=1 --opponent random --games 2"}) {
    const CommandResult other = run(command + " --results " + results);
    EXPECT_NE(other.status, 0) << other.out;
    EXPECT_NE(other.out.find(results + " holds matches of mg, not of ttt"), std::string::npos)
        << other.out;
    EXPECT_EQ(other.out.find("result (A's view)"), std::string::npos) << other.out;
  }
  std::ifstream games(record);
  int lines = 0;
  while (std::getline(games, line)) ++lines;
  EXPECT_EQ(lines, 4);
  // The results line ends in the match's pairs, which `ratings` takes as pairs.
  std::ifstream again(results);
  std::getline(again, line);
  std::getline(again, line);
  EXPECT_TRUE(std::regex_search(line, std::regex(" [0-9]+ [0-9]+ [0-9]+ [0-9]+/[0-9]+/[0-9]+/"
                                                 "[0-9]+/[0-9]+$")))
      << line;
  const CommandResult table = run("ratings --results " + results);
  EXPECT_EQ(table.status, 0) << table.out;
  EXPECT_NE(table.out.find("alphabeta:depth=1"), std::string::npos) << table.out;
  std::remove(results.c_str());
  std::remove(record.c_str());
}

TEST(Cli, ArenaExplainsBadPlayersAndSprt) {
  CommandResult r = run("arena --game mg --a foo --b random");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("unknown player 'foo'; players: random, uct:sims=N"), std::string::npos)
      << r.out;
  r = run("arena --game mg --a uct:sims=-3 --b random");
  EXPECT_NE(r.out.find("uct: sims must be 1..10000000, got -3"), std::string::npos) << r.out;
  r = run("arena --game mg --a random --b random --sprt elo0=5");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("elo0 and elo1 are required"), std::string::npos) << r.out;
  // An empty --sprt was a match without a test, played to its cap without a word.
  r = run("arena --game ttt --a random --b random --games 2 --sprt ''");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--sprt"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Elo"), std::string::npos) << r.out;
  // A match the results file would refuse is not played (before: it appended a line that made
  // `ratings` refuse the whole file).
  const std::string results = ::testing::TempDir() + "cli_arena_itself.txt";
  std::remove(results.c_str());
  r = run("arena --game ttt --a random --b random --games 2 --results " + results);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("--results: \"random\" cannot play itself"), std::string::npos) << r.out;
  EXPECT_FALSE(std::ifstream(results).good());
  r = run("gauntlet --game ttt --player random --opponent uct:sims=2 --opponent random --games 2 "
          "--results " + results);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("--results: \"random\" cannot play itself"), std::string::npos) << r.out;
  EXPECT_FALSE(std::ifstream(results).good());
  // One file for both the results and the record: refused before a game (before: the match was
  // played and its result lost), and nothing is made.
  for (const char* command : {"arena --game ttt --a random --b uct:sims=2", "gauntlet --game ttt "
                              "--player random --opponent uct:sims=2"}) {
    r = run(std::string(command) + " --games 2 --results " + results + " --record " + results);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--results and --record name the same file"), std::string::npos) << r.out;
    EXPECT_FALSE(std::ifstream(results).good());
  }
  // However the one file is written: its name in the folder the command runs in and its whole
  // path, or a link to it before it is made (before: the match was played, then its result lost).
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "cli_arena_same_file";
  fs::remove_all(folder);
  fs::create_directories(folder);
  fs::create_symlink("totals.txt", folder / "link.txt");
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  for (const std::string& record : {(folder / "totals.txt").string(), std::string("link.txt")}) {
    r = oppidum::test_util::run_shell(
        "cd " + folder.string() + " && timeout -s KILL 300 " +
        std::string(binary ? binary : OPPIDUM_BINARY) +
        " arena --game ttt --a random --b uct:sims=2 --games 2 --results totals.txt --record " +
        record + " 2>&1");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("--results and --record name the same file"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(folder / "totals.txt")) << record;
  }
  fs::remove_all(folder);
  // A ply limit inside the random openings would end every game before a move.
  r = run("arena --game mg --a random --b random --games 2 --max-plies 2");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("the ply limit (2, --max-plies) must be above the openings' 4"),
            std::string::npos)
      << r.out;
}

TEST(Cli, PlayExplainsIllegalMovesAndQuits) {
  const CommandResult r = run("play --game mg --opponent random --seed 1", "c1-c4\nc1-c3\nquit\n");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Not playable: move \"c1-c4\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("random plays "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Game abandoned."), std::string::npos) << r.out;
}

// A fresh folder for one test's files.
std::filesystem::path test_dir() {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   (std::string("cli_test_") +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// `--position ''` (an unset shell variable) once meant the initial position.
// A record file that cannot take the game is refused before the game (before: after it, the
// game lost).
TEST(Cli, PlayRefusesABadRecordFileBeforeTheGame) {
  const CommandResult r = run("play --game ttt --opponent random --seed 1 --record /nonexistent/x.txt",
                              "a1\n");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/x.txt"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("You play"), std::string::npos) << r.out;
}

// Output that cannot be written fails the command, saying so (before: `moves > /dev/full` lost the
// list and exited 0).
TEST(Cli, OutputThatCannotBeWrittenFailsTheCommand) {
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  const std::string errors = ::testing::TempDir() + "cli_stdout_errors.txt";
  for (const std::string args : {"moves --game ttt", "perft --game ttt --depth 2",
                                 "arena --game ttt --a random --b random --games 2"}) {
    const std::string cmd = "timeout -s KILL 120 " + std::string(binary ? binary : OPPIDUM_BINARY) +
                            " " + args + " >/dev/full 2>" + errors;
    const int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << args << ": " << status;
    std::ifstream in(errors);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("cannot write its output to standard output"), std::string::npos)
        << args << ": " << text;
  }
  EXPECT_EQ(run("moves --game ttt").status, 0);  // a standard output that takes it: success
  std::remove(errors.c_str());
}

// A standard input that cannot be read (a directory, a closed descriptor) fails the command,
// saying so (before: it read as an empty input, and `engine` exited 0).
TEST(Cli, InputThatCannotBeReadFailsTheCommand) {
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  const std::string errors = ::testing::TempDir() + "cli_stdin_errors.txt";
  for (const std::string args : {"engine --game ttt --player random",
                                 "perft --game ttt --depth 1 --positions -",
                                 "play --game ttt --opponent random"})
    for (const std::string input : {"< /", "<&-"}) {
      const std::string cmd = "timeout -s KILL 120 " +
                              std::string(binary ? binary : OPPIDUM_BINARY) + " " + args + " " +
                              input + " >/dev/null 2>" + errors;
      const int status = std::system(cmd.c_str());
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << cmd << ": " << status;
      std::ifstream in(errors);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      EXPECT_NE(text.find("the standard input cannot be read"), std::string::npos)
          << cmd << ": " << text;
    }
  std::remove(errors.c_str());
}

// --record appends games to a record file, never to another file given by mistake (before: the
// game lines went onto the end of whatever the path held, a script or a results file).
TEST(Cli, RecordGoesOnlyIntoARecordFile) {
  const std::string dir = ::testing::TempDir() + "cli_record_only/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string script = dir + "script.py", record = dir + "games.txt";
  std::ofstream(script) << "print('hello')\n";
  for (const std::string command :
       {"arena --game ttt --a random --b random --games 2 --record ",
        "play --game ttt --opponent random --seed 1 --record "}) {
    const CommandResult r = run(command + script, "a1\nb1\nc1\na2\nb2\nc2\na3\n");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(script + " is not a record file (its first line is \"print('hello')\""),
              std::string::npos) << r.out;
    std::ifstream in(script);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "print('hello')\n");
  }
  // A record file, new or written before, takes the games; so does one that starts with blank
  // lines (its readers skip them), and a link to a file not made yet.
  std::ofstream(dir + "blank.txt") << "\n  \n";
  EXPECT_EQ(run("arena --game ttt --a random --b random --games 2 --record " + dir + "blank.txt")
                .status, 0);
  std::filesystem::create_symlink(dir + "later.txt", dir + "link.txt");
  EXPECT_EQ(run("arena --game ttt --a random --b random --games 2 --record " + dir + "link.txt")
                .status, 0);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "later.txt"));
  for (int round = 0; round < 2; ++round) {
    const CommandResult r =
        run("arena --game ttt --a random --b random --games 2 --record " + record);
    EXPECT_EQ(r.status, 0) << r.out;
  }
  std::ifstream in(record);
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines += line.rfind("ttt random random ", 0) == 0;
  EXPECT_EQ(lines, 4);
  std::filesystem::remove_all(dir);
}

// bench web writes its run only into a new or empty folder, or its own run (before: it wrote over
// the folder's own config.yaml).
TEST(Cli, BenchWebNeverWritesIntoSomebodysFolder) {
  const std::string dir = ::testing::TempDir() + "cli_bench_web_foreign";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.yaml") << "my: precious config\n";
  const CommandResult r = run("bench web --games 10 --requests 1 --dir " + dir);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("holds files but no run this benchmark made"), std::string::npos) << r.out;
  std::ifstream in(dir + "/config.yaml");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "my: precious config");
  EXPECT_FALSE(std::filesystem::exists(dir + "/metrics.csv"));
}

// Without --dir, bench web's folder in the temporary folder is removed only when its marker says
// the benchmark made it: a folder (or a file) of that name that is somebody's is left alone (it
// was removed, whatever it held).
TEST(Cli, BenchWebRemovesOnlyItsOwnTemporaryFolder) {
  const std::string tmp = ::testing::TempDir() + "cli_bench_web_tmpdir";
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp + "/oppidum-bench-web-ttt");
  std::ofstream(tmp + "/oppidum-bench-web-ttt/notes.txt") << "precious\n";
  CommandResult r = run("bench web --game ttt --games 10 --requests 1", "", "TMPDIR=" + tmp);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("holds files but no run this benchmark made"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(tmp + "/oppidum-bench-web-ttt/notes.txt"));
  std::filesystem::remove_all(tmp + "/oppidum-bench-web-ttt");
  std::ofstream(tmp + "/oppidum-bench-web-ttt") << "a file\n";
  r = run("bench web --game ttt --games 10 --requests 1", "", "TMPDIR=" + tmp);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_regular_file(tmp + "/oppidum-bench-web-ttt"));
  std::filesystem::remove_all(tmp);
}

// A match that cannot be played (openings no game survives, a ply limit within the openings) is
// refused before its results and record files are made (both were left behind, empty).
TEST(Cli, ARefusedMatchMakesNoFiles) {
  const std::string results = ::testing::TempDir() + "cli_refused_results.txt";
  const std::string record = ::testing::TempDir() + "cli_refused_record.txt";
  for (const std::string command :
       {"arena --game ttt --a random --b uct:sims=3 --games 10 --openings-plies 1000",
        "gauntlet --game ttt --player random --opponent uct:sims=3 --games 10 --max-plies 1 "
        "--openings-plies 2",
        "gauntlet --game ttt --player random --opponent random --opponent uct:sims=3 --games 10 "
        "--openings-plies 1000"}) {
    std::remove(results.c_str());
    std::remove(record.c_str());
    const CommandResult r = run(command + " --results " + results + " --record " + record);
    EXPECT_NE(r.status, 0) << command << "\n" << r.out;
    EXPECT_NE(r.out.find("error: match: "), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(results)) << command;
    EXPECT_FALSE(std::filesystem::exists(record)) << command;
  }
}

// An error reaches the terminal with no control character of the input in it, whichever way
// the input came (an option's value refused by the parser or by the command, a path).
TEST(Cli, ErrorsCarryNoControlCharactersOfTheInput) {
  const std::string esc = "\"$(printf '\\033')";  // (sh has no $'...'): ESC, in quotes
  const std::string csi = "\"$(printf '\\302\\233')";  // U+009B, a C1 CSI in UTF-8
  for (const std::string& args :
       {"perft --game ttt --depth " + esc + "[2J\"", "bench model --sizes " + esc + "[31mred\"",
        "tune --game mg --games " + esc + "[31mred\"",
        "export --checkpoint " + esc + "[2Jx\" --out e.onnx",
        "tune --game mg --games x --k " + esc + "[2J\"",
        "apply --game ttt --moves a1 --position " + csi + "2J\""}) {
    const CommandResult r = run(args);
    EXPECT_NE(r.status, 0) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << args << "\n" << r.out;
  }
  // Nor a line of its own: the parser's message is one line, whatever its argument holds.
  const CommandResult r = run("perft --game ttt --depth \"1\nerror: all is well\"");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("\nerror: all is well"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1\\x0aerror: all is well"), std::string::npos) << r.out;
}

// tune says what its fit is when there is nothing to score it on (a held-out loss of 0.00000 was
// printed: a perfect fit) and when K stops at an end of its search (a K the fit did not find,
// and weights that mean nothing, were printed and written without a word); such a fit is not
// written, and an empty --out is refused (it was taken for no --out).
TEST(Cli, TuneSaysWhenItsFitIsNone) {
  const std::string record = ::testing::TempDir() + "cli_tune_two_games.txt";
  const std::string out = ::testing::TempDir() + "cli_tune_weights.h";
  std::remove(record.c_str());
  std::remove(out.c_str());
  ASSERT_EQ(run("arena --game mg --a random --b random --games 2 --seed 1 --record " + record)
                .status,
            0);
  CommandResult r = run("tune --game mg --holdout-every 0 --games " + record);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("held out (0 positions): none (nothing held out)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("at an end of the range it is fitted in"), std::string::npos) << r.out;
  r = run("tune --game mg --holdout-every 0 --games " + record + " --out " + out);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("no fit: nothing written to " + out), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run("tune --game mg --games " + record + " --out ''");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--out: empty"), std::string::npos) << r.out;
  // With K given, results the features separate perfectly (one game) drive the weights without
  // end: said, and nothing written (weights of +-35 and more were written without a word).
  const std::string one = record + ".one";
  ASSERT_EQ(oppidum::test_util::run_shell("head -n 1 " + record + " > " + one).status, 0);
  r = run("tune --game mg --holdout-every 0 --k 1 --games " + one + " --out " + out);
  std::remove(one.c_str());
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the features separate the training results perfectly"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("no fit: nothing written to " + out), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::remove(record.c_str());
}

// bench web reuses a run it made only when that run was finished with the settings asked for (a
// run cut short by Ctrl-C, or one of other --games, was reused and timed as it was).
TEST(Cli, BenchWebReusesOnlyAFinishedRunOfTheSameSettings) {
  const std::string dir = ::testing::TempDir() + "cli_bench_web_reuse";
  std::filesystem::remove_all(dir);
  const auto bench = [&](int games) {
    return run("bench web --games " + std::to_string(games) + " --games-per-chunk 4 --requests 1 "
               "--dir " + dir);
  };
  const auto listed = [](const std::string& out) {
    const auto at = out.find("builds the index of ");
    return at == std::string::npos ? -1 : std::atoi(out.c_str() + at + 20);
  };
  CommandResult r = bench(10);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("synthesised " + dir + ": 10 mg games"), std::string::npos) << r.out;
  EXPECT_EQ(listed(r.out), 10) << r.out;
  r = bench(10);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("reusing " + dir), std::string::npos) << r.out;
  r = bench(12);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("synthesising " + dir + " again"), std::string::npos) << r.out;
  EXPECT_EQ(listed(r.out), 12) << r.out;
  // As a run cut short leaves it: the marker says so, and half the chunks are there.
  std::ofstream(dir + "/bench-web.txt", std::ios::trunc) << "oppidum bench web: synthesising\n";
  r = bench(12);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("synthesising " + dir + " again"), std::string::npos) << r.out;
  EXPECT_EQ(listed(r.out), 12) << r.out;
  // A file of that name that the benchmark did not write makes nobody's folder its own.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/bench-web.txt") << "my notes\n";
  r = bench(10);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("holds files but no run this benchmark made"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/bench-web.txt"));
  std::filesystem::remove_all(dir);
}

TEST(Cli, AnEmptyPositionIsRefused) {
  for (const char* command : {"perft --game mg --depth 1", "moves --game dvonn", "encode --game mg",
                              "apply --game mg --moves a1-a3"}) {
    const CommandResult r = run(std::string(command) + " --position ''");
    EXPECT_NE(r.status, 0) << command << ": " << r.out;
    EXPECT_NE(r.out.find("--position: empty; leave the option out for the initial position"),
              std::string::npos)
        << command << ": " << r.out;
  }
}

// `--seed -1` once wrapped to 2^64-1.
TEST(Cli, SeedsAreWholeNumbersOf64Bits) {
  for (const char* command :
       {"arena --game mg --a random --b random --games 2", "play --game mg --opponent random",
        "engine --game mg --player random"}) {
    for (const char* seed : {"-1", "18446744073709551616", "1.5", "x"}) {
      const CommandResult r = run(std::string(command) + " --seed " + seed, "quit\n");
      EXPECT_NE(r.status, 0) << command << " --seed " << seed << ": " << r.out;
      EXPECT_NE(r.out.find("--seed: \"" + std::string(seed) +
                           "\" is not a whole number 0..18446744073709551615"),
                std::string::npos)
          << command << " --seed " << seed << ": " << r.out;
    }
  }
  const CommandResult top =
      run("arena --game mg --a random --b random --games 2 --seed 18446744073709551615");
  EXPECT_EQ(top.status, 0) << top.out;
}

// Negative, NaN and out-of-range numbers are refused, naming the option in a short message (one
// once printed DBL_MAX in 309 digits); `--max-plies 0` and `--minutes 0` no longer silently mean
// the default.
TEST(Cli, NumbersOutOfRangeAreRefusedInAShortMessage) {
  struct Case {
    std::string args, message;
  };
  const std::string match = "arena --game mg --a random --b random --games 2 ";
  const std::string worker = "selfplay --store redis://127.0.0.1:1/x ";
  for (const Case& c : std::vector<Case>{
           {match + "--progress-seconds -1", "--progress-seconds: \"-1\" is not a number 0 or"},
           {match + "--progress-seconds nan", "--progress-seconds: \"nan\" is not a number 0 or"},
           {match + "--progress-seconds inf", "--progress-seconds: \"inf\" is not a number 0 or"},
           {match + "--max-plies 0", "--max-plies: Value 0 not in range 1 to 100000"},
           {worker + "--minutes -5", "--minutes: \"-5\" is not a number above 0"},
           {worker + "--minutes 0", "--minutes: \"0\" is not a number above 0"},
           {worker + "--minutes nan", "--minutes: \"nan\" is not a number above 0"},
           {worker + "--minutes 2e8", "--minutes: \"2e8\" is not a number in 0..10000000"},
           {"ratings --results x --prior-draws 1e300",
            "--prior-draws: \"1e300\" is not 0 or a number in 0.01..1000000"},
           {"ratings --results x --prior-draws nan",
            "--prior-draws: \"nan\" is not 0 or a number in 0.01..1000000"},
           {"ratings --results x --prior-draws 1e-300",
            "--prior-draws: \"1e-300\" is not 0 or a number in 0.01..1000000"},
           {"bench model --seconds nan", "--seconds: \"nan\" is not a number in 0.01..60"},
           {"games --file x --replay -1", "--replay: Value -1 not in range 0 to 2147483647"},
           {"gauntlet --game ttt --player uct --opponent random --clock 1e-300",
            "--clock: \"1e-300\" is not 0 or a number in 0.01..86400"},
           {"export --checkpoint x --out \"\"", "export --out \"\": give a file's name"},
           // An empty --run or --out was the default, without a word.
           {"train --config configs/ttt.yaml --run \"\"",
            "--run: empty; leave --run out for runs/<config name>"},
           {"report --run x --out \"\"", "--out: empty; leave --out out for <run>/report.html"},
           {"games --run \"\"", "--run: empty; give the run folder"},
           {"tune --game mg --games x --k 0", "--k: \"0\" is not a number in 0.0001..100"},
           {"tune --game mg --games x --k nan", "--k: \"nan\" is not a number in 0.0001..100"},
           {"bench train --batches 1000 --batch-size 65536",
            "would hold 519000 MiB of batches; at most 4096 MiB"}}) {
    const CommandResult r = run(c.args);
    EXPECT_NE(r.status, 0) << c.args << ": " << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
    EXPECT_LT(r.out.size(), 200u) << c.args << ": " << r.out;
  }
}

// Integer options are read in decimal only: CLI11 reads "010" as 8 and "0x50" as 80 (strtoll's
// base 0), and an unsigned option took "-1" as 2^64-1.
TEST(Cli, IntegerOptionsAreDecimal) {
  for (const std::string value : {"010", "0x50", "+5", " 5", "5 ", "1e3", "0b11"}) {
    for (const std::string option : {"serve --port", "bench rules --max-depth 1 --games"}) {
      const CommandResult r = run(option + " '" + value + "'");
      EXPECT_NE(r.status, 0) << option << " '" << value << "': " << r.out;
      // Said by this check, or by the option's range check where that runs first.
      const bool said = r.out.find("\"" + value + "\" is not a whole number in decimal digits") !=
                            std::string::npos ||
                        r.out.find("Value " + value + " not in range") != std::string::npos;
      EXPECT_TRUE(said) << option << " '" << value << "': " << r.out;
    }
  }
  const CommandResult eight = run("bench rules --max-depth 1 --games 8");
  EXPECT_EQ(eight.status, 0) << eight.out;
  EXPECT_NE(eight.out.find(" 8 random games"), std::string::npos) << eight.out;
  const CommandResult zero = run("games --file x --replay 0");
  EXPECT_EQ(zero.out.find("decimal"), std::string::npos) << zero.out;
  // A sign is an integer option's own: the worker's --threads takes none below 1 anyway, but the
  // text is refused by its range, not read as 2^64-1.
  const CommandResult negative = run("games --file x --replay -1");
  EXPECT_NE(negative.out.find("not in range 0 to"), std::string::npos) << negative.out;
}

// `play` answers each line that is no move with a prompt and a reason, but input that is no
// person's ends: 50 MB of bad lines gave 2.3 GB of output. A person's few mistakes are answered.
TEST(Cli, PlayEndsInputThatIsNoPersons) {
  std::string flood;
  for (int i = 0; i < 1500; ++i) flood += "zz\n";
  const CommandResult r = run("play --game mg --opponent random", flood);
  EXPECT_EQ(r.status, 1) << r.out.substr(0, 500);
  EXPECT_NE(r.out.find("1000 lines in a row without a playable move"), std::string::npos)
      << r.out.substr(r.out.size() > 500 ? r.out.size() - 500 : 0);
  EXPECT_LT(r.out.size(), 200'000u);
  const CommandResult person = run("play --game mg --opponent random", "zz\nmoves\n\nquit\n");
  EXPECT_EQ(person.out.find("without a playable move"), std::string::npos) << person.out;
  EXPECT_NE(person.out.find("Game abandoned"), std::string::npos) << person.out;
}

// More match threads than cores make a timed player's moves wait for a core on its own clock
// (a net player lost 18 of 32 games on time, without a word): arena and gauntlet say so; an
// untimed match says nothing.
TEST(Cli, MoreThreadsThanCoresWarnATimedPlayer) {
  const std::string threads = std::to_string(std::thread::hardware_concurrency() + 1);
  const CommandResult timed =
      run("arena --game ttt --a uct:clock=2 --b random --games 2 --threads " + threads);
  EXPECT_EQ(timed.status, 0) << timed.out;
  EXPECT_NE(timed.out.find("warning: --threads " + threads + " is more than this machine's"),
            std::string::npos)
      << timed.out;
  const CommandResult gauntlet = run("gauntlet --game ttt --player random --opponent "
                                     "alphabeta:ms=20 --games 2 --threads " + threads);
  EXPECT_NE(gauntlet.out.find("the moves of alphabeta:ms=20 wait for a core"), std::string::npos)
      << gauntlet.out;
  const CommandResult untimed =
      run("arena --game ttt --a uct:sims=8 --b random --games 2 --threads " + threads);
  EXPECT_EQ(untimed.out.find("warning"), std::string::npos) << untimed.out;
}

// `games --file` on what is not a game file once listed "0 games, 1 problems" and exited 0.
TEST(Cli, GamesFileThatIsNotAGameFileIsAnError) {
  const auto dir = test_dir();
  std::filesystem::create_symlink("/dev/zero", dir / "zero.bin");
  std::filesystem::create_directory(dir / "folder.bin");
  std::ofstream(dir / "text.bin") << "not a game file at all\n";
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"zero.bin", "not a regular file (a character device)"},
           {"folder.bin", "not a regular file (a directory)"},
           {"text.bin", "not an oppidum game file (it does not start with OPPGAMES)"}}) {
    const std::string file = (dir / name).string();
    const CommandResult r = run("games --file " + file);
    EXPECT_EQ(r.status, 1) << name << ": " << r.out;
    EXPECT_NE(r.out.find("games: " + file + ": " + why), std::string::npos) << r.out;
  }
}

// `report` holds the run's tables to the header `train` holds them to.
TEST(Cli, ReportRefusesATableThatTrainRefuses) {
  const auto dir = test_dir();
  std::ofstream(dir / "config.yaml") << "run:\n  game: mg\n";
  std::ofstream(dir / "metrics.csv") << "hello,world\n1,2\n";
  const CommandResult r = run("report --run " + dir.string());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find((dir / "metrics.csv").string() +
                       ": line 1 is not the header this program writes"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html"));
}

// A library's error is said in words that name the path, not as "filesystem error: ... [path]".
TEST(Cli, FileSystemErrorsNameThePathInWords) {
  const auto dir = test_dir();
  std::ofstream(dir / "config.yaml") << "run:\n  game: mg\n";
  std::ofstream(dir / "a-file") << "x";
  const std::string run_dir = (dir / "a-file" / "run").string();
  const CommandResult r =
      run("train --no-status --config " + (dir / "config.yaml").string() + " --run " + run_dir);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("error: " + run_dir + ": cannot create directories: Not a directory"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("filesystem error"), std::string::npos) << r.out;
}

// A port that was free a moment ago on 127.0.0.1.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return -1;
  close(fd);
  return ntohs(address.sin_port);
}

// `oppidum serve` in the background, its output in `log`; waits until it printed its URL.
std::unique_ptr<oppidum::test_util::BackgroundProcess> start_serve(const std::string& args,
                                                                   const std::string& log) {
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  auto server = std::make_unique<oppidum::test_util::BackgroundProcess>(
      std::string(binary ? binary : OPPIDUM_BINARY) + " serve " + args + " > " + log + " 2>&1");
  EXPECT_TRUE(oppidum::test_util::wait_until(
      [&] { return oppidum::test_util::read_file(log).find("open http://") != std::string::npos; },
      std::chrono::seconds(60)))
      << oppidum::test_util::read_file(log);
  return server;
}

// A second `serve` on a busy port once started without a word and shared the port with the first
// (SO_REUSEPORT): reloads landed on either server.
TEST(Cli, ServeOnABusyPortFailsClearly) {
  const auto dir = test_dir();
  // The first server takes a port of the system's choosing (a port found free and then closed
  // could be taken meanwhile by another test's connection); its log says which.
  const std::string first_log = (dir / "first.log").string();
  const auto first = start_serve("--port 0", first_log);
  std::smatch found;
  const std::string said = oppidum::test_util::read_file(first_log);
  ASSERT_TRUE(std::regex_search(said, found, std::regex("open http://127[.]0[.]0[.]1:([0-9]+)/")))
      << said;
  const int port = std::stoi(found[1].str());
  // Before the fix the second server ran on: 20 s tell.
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  const CommandResult second = oppidum::test_util::run_shell(
      "timeout -s KILL 20 " + std::string(binary ? binary : OPPIDUM_BINARY) + " serve --port " +
      std::to_string(port) + " 2>&1");
  EXPECT_EQ(second.status, 1) << second.out;
  EXPECT_NE(second.out.find("cannot listen on 127.0.0.1:" + std::to_string(port) +
                            ": the port is in use"),
            std::string::npos)
      << second.out;
  EXPECT_EQ(second.out.find("open http://"), std::string::npos) << second.out;
}

// `serve --arena-games` given a --results file once showed "0 games, 2 skipped" on the page only.
TEST(Cli, ServeWarnsWhenAnArenaFileYieldsNoGames) {
  const auto dir = test_dir();
  std::ofstream(dir / "results.txt") << "random alphabeta:depth=1 0 0 2\nrandom uct 1 0 1\n";
  const std::string log = (dir / "serve.log").string();
  const auto server = start_serve("--port 0 --arena-games " + (dir / "results.txt").string(), log);
  const std::string out = oppidum::test_util::read_file(log);
  const auto warning = out.find("oppidum serve: warning: --arena-games " +
                                (dir / "results.txt").string() + ": no games read (2 line(s) "
                                "skipped)");
  EXPECT_NE(warning, std::string::npos) << out;
  EXPECT_LT(warning, out.find("open http://")) << out;
}

// `train --help` once printed 0.10000000000000001 and `--no-status{false}`.
TEST(Cli, TrainHelpShowsNumbersAndFlagsAsWritten) {
  const CommandResult r = run("train --help");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("{false}"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0000000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--no-status "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0.1 "), std::string::npos) << r.out;
}

// `bench store` with no Redis server once retried for ever without a word.
TEST(Cli, BenchStoreWithoutAServerFailsAtOnce) {
  const int port = free_port();
  ASSERT_GT(port, 0);
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  const CommandResult r = oppidum::test_util::run_shell(
      "timeout -s KILL 60 " + std::string(binary ? binary : OPPIDUM_BINARY) +
      " bench store --store redis://127.0.0.1:" + std::to_string(port) + "/scratch 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("bench store: no Redis server answers at redis://127.0.0.1:" +
                       std::to_string(port) + "/scratch"),
            std::string::npos)
      << r.out;
}

// `bench store --pushers` took "2x" for 2 and "x" for a range error; each count is now checked
// as a number from 1 to 256, before any connection.
TEST(Cli, BenchStorePusherCountsAreCheckedWhole) {
  for (const char* pushers : {"2x", "0", "257", "1,x", "-1"}) {
    const CommandResult r =
        run(std::string("bench store --store redis://127.0.0.1:1/scratch --pushers '") + pushers +
            "'");
    EXPECT_NE(r.status, 0) << pushers << ": " << r.out;
    EXPECT_NE(r.out.find("--pushers"), std::string::npos) << pushers << ": " << r.out;
    EXPECT_EQ(r.out.find("no Redis server"), std::string::npos) << pushers << ": " << r.out;
  }
}

// `arena` at 4-0 once printed "Elo +inf 95% [+inf, +inf]": no result is certain (a prior of one
// virtual game; docs/BASELINES.md).
TEST(Cli, ArenaPerfectScoreHasAFiniteEstimateAndInterval) {
  const CommandResult r = run("arena --game mg --a alphabeta:depth=2 --b random --games 4");
  EXPECT_EQ(r.status, 0) << r.out;
  ASSERT_NE(r.out.find("result (A's view): +4 =0 -0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Elo (A - B): +381.7  95% [-130.0, +893.4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(a perfect score has no finite Elo: the estimate and interval count one "
                       "virtual game"),
            std::string::npos)
      << "the estimate beside a 100% score says where it comes from: " << r.out;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
}

// Progress: one line rewritten in place on a terminal (here a pseudo-terminal made by script(1)),
// never a '\r' in a pipe or a log.
TEST(Cli, ArenaProgressIsALineInPlaceOnATerminalOnly) {
  const std::string match = "arena --game mg --a random --b random --games 4";
  const CommandResult piped = run(match);
  EXPECT_EQ(piped.status, 0) << piped.out;
  EXPECT_EQ(piped.out.find('\r'), std::string::npos) << piped.out;
  if (oppidum::test_util::run_shell("command -v script").status != 0)
    GTEST_SKIP() << "script(1) is not installed: no pseudo-terminal to test with";
  const char* binary = std::getenv("OPPIDUM_TEST_BINARY");
  const CommandResult terminal = oppidum::test_util::run_shell(
      "timeout -s KILL 120 script -qec '" + std::string(binary ? binary : OPPIDUM_BINARY) + " " +
      match + "' /dev/null");
  EXPECT_EQ(terminal.status, 0) << terminal.out;
  EXPECT_NE(terminal.out.find("\r[arena] 2/4 games"), std::string::npos) << terminal.out;
  EXPECT_NE(terminal.out.find("match: random (A) vs random (B)"), std::string::npos)
      << terminal.out;
}

// The two library errors whose what() names nothing useful, as main prints them.
TEST(ErrorText, LibraryErrorsAreSaidInWords) {
  using oppidum::app::error_text;
  EXPECT_EQ(error_text(std::bad_alloc(), "oppidum export"),
            "out of memory: oppidum export needed more memory than this machine (or its limit) "
            "gives it");
  const std::filesystem::filesystem_error fs_error(
      "cannot create directories", "runs/x",
      std::make_error_code(std::errc::not_a_directory));
  EXPECT_EQ(error_text(fs_error, "oppidum train"),
            "runs/x: cannot create directories: Not a directory");
  EXPECT_EQ(error_text(std::runtime_error("runs/x: its own words"), "oppidum train"),
            "runs/x: its own words");
  // LibTorch's allocation failures (a c10::Error, not std::bad_alloc), backtrace dropped; a
  // message of the program's own that already says it is left as it is.
  EXPECT_EQ(error_text(std::runtime_error("CUDA out of memory. Tried to allocate 2.00 GiB\n"
                                          "Exception raised from malloc at x.cpp:1"),
                       "oppidum train"),
            "out of memory: oppidum train needed more memory than this machine (or its limit) "
            "gives it (CUDA out of memory. Tried to allocate 2.00 GiB)");
  EXPECT_NE(error_text(std::runtime_error("[enforce fail] DefaultCPUAllocator: can't allocate "
                                          "memory: you tried to allocate 9 bytes"),
                       "oppidum bench")
                .rfind("out of memory: oppidum bench needed more memory", 0),
            std::string::npos);
  const std::string own = "out of memory: the training step of 8 positions (CUDA out of memory)";
  EXPECT_EQ(error_text(std::runtime_error(own), "oppidum train"), own);
}

}  // namespace
