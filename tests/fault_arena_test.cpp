// External programs never outlive the referee: whatever a program leaves running in its process
// group dies with its game (game end, forfeit, the player's end, a match), also when the program
// itself has exited; and `oppidum arena` stopped by SIGTERM or SIGINT kills every program, prints
// the report of the counted games and exits with 128 + the signal.
//
// The programs are shell scripts that write the pids of their processes to a file. A killed
// orphan is reaped by init (or not at all, in a container whose init does not reap), so "gone"
// means no such process or a zombie, polled for with a deadline.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "arena/external.h"
#include "arena/match.h"
#include "arena/player.h"
#include "arena/players.h"
#include "games/game.h"
#include "tests/process_util.h"

extern char** environ;

namespace oppidum::arena {
namespace {

using Clock = std::chrono::steady_clock;
using test_util::read_file;

const Game& mg() { return game_by_name("mg"); }

// The temporary files of this process, removed when its tests are over.
std::set<std::string>& temp_files() {
  static std::set<std::string> files;
  return files;
}

class RemoveTempFiles final : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& path : temp_files()) std::remove(path.c_str());
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveTempFiles =
    ::testing::AddGlobalTestEnvironment(new RemoveTempFiles);

// One file per test and process: CTest runs the tests of this binary as parallel processes (and
// several build folders may run them at once).
std::string temp_file(const std::string& suffix) {
  std::string path = ::testing::TempDir() + "fault_arena_test_" + std::to_string(getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                     suffix;
  temp_files().insert(path);
  return path;
}

// A shell script in the test's temp folder; returns the command that runs it.
std::string script(const std::string& name, const std::string& body) {
  const std::string path = temp_file(name + ".sh");
  std::ofstream(path) << "#!/bin/sh\n" << body;
  return "sh " + path;
}

// The state letter of /proc/<pid>/stat and the process group; false when there is no such process.
bool process_stat(pid_t pid, char& state, pid_t& group) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto paren = text.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return false;
  std::istringstream fields(text.substr(paren + 1));
  long parent = 0, pgrp = 0;
  if (!(fields >> state >> parent >> pgrp)) return false;
  group = static_cast<pid_t>(pgrp);
  return true;
}

// True when `pid` does not run any more: no such process, or a zombie.
bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  char state = '?';
  pid_t group = 0;
  if (!process_stat(pid, state, group)) return true;
  return state == 'Z' || state == 'X';
}

// The process groups of the processes of `pids` that run, other than this test's own.
std::set<pid_t> groups_of(const std::vector<pid_t>& pids) {
  std::set<pid_t> groups;
  for (pid_t pid : pids) {
    char state = '?';
    pid_t group = 0;
    if (!process_gone(pid) && process_stat(pid, state, group) && group > 1 && group != getpgrp())
      groups.insert(group);
  }
  return groups;
}

// The processes of group `group` that still run (zombies left out).
std::vector<pid_t> live_members(pid_t group) {
  std::vector<pid_t> members;
  DIR* proc = opendir("/proc");
  if (!proc) return members;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char state = '?';
    pid_t g = 0;
    if (process_stat(static_cast<pid_t>(pid), state, g) && g == group && state != 'Z' &&
        state != 'X')
      members.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return members;
}

template <typename Condition>
bool wait_until(Condition condition, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (!condition()) {
    if (Clock::now() > deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The pids a script wrote to `path`, one a line.
std::vector<pid_t> read_pids(const std::string& path) {
  std::vector<pid_t> pids;
  std::istringstream in(read_file(path));
  for (long pid = 0; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// The file the programs of a test write their pids to: empty at the start; at the end of the test,
// what a failed test left running (the recorded processes that still run, and their groups) is
// killed.
class PidFile {
 public:
  explicit PidFile(std::string path) : path_(std::move(path)) { std::ofstream truncate(path_); }
  PidFile(const PidFile&) = delete;
  PidFile& operator=(const PidFile&) = delete;
  ~PidFile() {
    const std::vector<pid_t> pids = read_pids(path_);
    for (pid_t group : groups_of(pids)) kill(-group, SIGKILL);
    for (pid_t pid : pids)
      if (!process_gone(pid)) kill(pid, SIGKILL);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Shell lines that write the script's pid and a background child's pid to `pids`, leaving the
// child running in the program's process group. (The script's shell is a child of the program's
// `/bin/sh -c`, which leads the group.)
std::string leave_child(const std::string& pids, const std::string& child_output) {
  return "echo $$ >> " + pids + "\nsleep 1000 </dev/null " + child_output + " &\necho $! >> " +
         pids + "\n";
}

// Every process of `pids` and of the process groups `groups` ends within a few seconds.
void expect_all_gone(const std::vector<pid_t>& pids, const std::set<pid_t>& groups) {
  for (pid_t pid : pids)
    EXPECT_TRUE(wait_until([&] { return process_gone(pid); }, 5.0))
        << "process " << pid << " still runs";
  for (pid_t group : groups)
    EXPECT_TRUE(wait_until([&] { return live_members(group).empty(); }, 5.0))
        << "process group " << group << " still has running processes";
}

// The session id of `pid` (field 6 of /proc/<pid>/stat); 0 when there is no such process.
pid_t session_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return 0;
  const auto paren = text.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 1));
  char state = '?';
  long parent = 0, group = 0, session = 0;
  if (!(fields >> state >> parent >> group >> session)) return 0;
  return static_cast<pid_t>(session);
}

// Shell lines that start two processes in sessions of their own, out of the program's process
// group, each writing its pid to `pids` (`sleep 300`, a child of the program's shell, and
// `sleep 301`, whose parent exits at once, so that it is nobody's child in the program's tree),
// and wait until both have (each program counts its own in `pids`.<its pid>).
std::string leave_daemons(const std::string& pids) {
  const std::string record = "echo $$ >> " + pids + "; echo $$ >> " + pids + ".'$$'";
  return "setsid sh -c '" + record + "; exec sleep 300' </dev/null >/dev/null 2>&1 &\n" +
         "setsid -f sh -c '" + record + "; exec sleep 301' </dev/null >/dev/null 2>&1\n" +
         "while [ $(cat " + pids + ".$$ 2>/dev/null | wc -l) -lt 2 ]; do sleep 0.01; done\n" +
         "rm -f " + pids + ".$$\n";
}

// The daemons of leave_daemons that a program of this test started: they run, each in its own
// session (so neither the program's process group nor its session reaches them).
std::vector<pid_t> running_daemons(const std::string& pids) {
  const std::vector<pid_t> daemons = read_pids(pids);
  EXPECT_EQ(daemons.size(), 2u);
  for (pid_t pid : daemons) {
    EXPECT_FALSE(process_gone(pid)) << pid;
    EXPECT_EQ(session_of(pid), pid) << "process " << pid << " did not start a session";
  }
  return daemons;
}

TEST(ExternalProcessTest, ProcessesInTheirOwnSessionDieAtGameEnd) {
  const PidFile pid_file(temp_file("pids.txt"));
  // Starts the daemons, answers, and exits at Quit (the end of the game), leaving them.
  const std::string cmd =
      script("engine", "read line\n" + leave_daemons(pid_file.path()) + "echo c1-c3\nread line\n");
  ExternalPlayer engine({cmd, "", 10000});
  const auto start = mg().initial_state();
  EXPECT_EQ(start->action_to_string(engine.choose_move_in_game(1, *start, 0)), "c1-c3");
  const std::vector<pid_t> daemons = running_daemons(pid_file.path());
  engine.game_ended(1);
  expect_all_gone(daemons, {});
}

TEST(ExternalProcessTest, ProcessesInTheirOwnSessionDieOnForfeit) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string cmd =
      script("engine", "read line\n" + leave_daemons(pid_file.path()) + "echo nonsense\n");
  ExternalPlayer engine({cmd, "", 10000});
  const auto start = mg().initial_state();
  EXPECT_THROW(engine.choose_move_in_game(1, *start, 0), Forfeit);
  const std::vector<pid_t> daemons = read_pids(pid_file.path());
  EXPECT_EQ(daemons.size(), 2u);
  expect_all_gone(daemons, {});
}

TEST(ExternalProcessTest, ProcessesInTheirOwnSessionDieWithThePlayer) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string cmd =
      script("engine", "read line\n" + leave_daemons(pid_file.path()) + "echo c1-c3\nread line\n");
  auto engine = std::make_unique<ExternalPlayer>(ExternalConfig{cmd, "", 10000});
  const auto start = mg().initial_state();
  engine->choose_move_in_game(1, *start, 0);
  const std::vector<pid_t> daemons = running_daemons(pid_file.path());
  engine.reset();
  expect_all_gone(daemons, {});
}

// A program that starts processes in sessions of their own without pause, all of it deaf to the
// hang-up: ending its tree in the order found killed the keeper first, which orphaned the
// program's process group, and the kernel continues (SIGHUP, SIGCONT) the stopped members of a
// group orphaned so; the program, continued, started a process that outlived its game in about
// one game of four. Now the tree dies in the reverse order, and a walk after every process has
// stopped ends the search (a fork under way when the stop came ends first).
TEST(ExternalProcessTest, ProcessesStartedWithoutPauseAllDieAtGameEnd) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  const std::string cmd = script(
      "spawner", "trap '' HUP TERM INT\nread line\necho c1-c3\nwhile :; do (setsid sh -c 'echo $$ >> " +
                     pids + "; trap \"\" HUP TERM; exec sleep 302' </dev/null >/dev/null 2>&1 &)" +
                     "; done\n");
  for (int game = 1; game <= 10; ++game) {
    ExternalPlayer engine({cmd, "", 10000});
    const auto start = mg().initial_state();
    EXPECT_EQ(start->action_to_string(engine.choose_move_in_game(game, *start, 0)), "c1-c3");
    const std::size_t wanted = 20 * static_cast<std::size_t>(game);
    ASSERT_TRUE(wait_until([&] { return read_pids(pids).size() >= wanted; }, 30.0));
    engine.game_ended(game);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // (an escaped one writes its pid)
  expect_all_gone(read_pids(pids), {});
}

TEST(ExternalProcessTest, ChildOfAnExitedProgramDiesAtGameEnd) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  // Answers its first move and exits at once, leaving the child.
  const std::string cmd =
      script("engine", "read line\n" + leave_child(pids, ">/dev/null 2>&1") + "echo c1-c3\n");
  ExternalPlayer engine({cmd, "", 10000});
  const auto start = mg().initial_state();
  EXPECT_EQ(start->action_to_string(engine.choose_move_in_game(1, *start, 0)), "c1-c3");
  const std::vector<pid_t> recorded = read_pids(pids);
  ASSERT_EQ(recorded.size(), 2u);
  const std::set<pid_t> groups = groups_of({recorded[1]});
  ASSERT_EQ(groups.size(), 1u);  // the child runs, in the program's group
  engine.game_ended(1);
  expect_all_gone(recorded, groups);
}

TEST(ExternalProcessTest, ChildOfAnExitedProgramDiesOnForfeit) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  // Exits without answering; the child keeps the program's output open, so no end of file comes,
  // but the program's exit ends its output all the same (before: a timeout, after the whole
  // time per move).
  const std::string cmd = script("engine", "read line\n" + leave_child(pids, "2>/dev/null"));
  ExternalPlayer engine({cmd, "", 60000});
  const auto start = mg().initial_state();
  try {
    engine.choose_move_in_game(1, *start, 0);
    ADD_FAILURE() << "no forfeit";
  } catch (const Forfeit& forfeit) {
    EXPECT_NE(std::string(forfeit.what()).find("no move: the program exited with status 0"),
              std::string::npos)
        << forfeit.what();
  }
  const std::vector<pid_t> recorded = read_pids(pids);
  ASSERT_EQ(recorded.size(), 2u);
  expect_all_gone(recorded, {});
}

TEST(ExternalProcessTest, ChildOfAnExitedProgramDiesWithThePlayer) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  const std::string cmd =
      script("engine", "read line\n" + leave_child(pids, ">/dev/null 2>&1") + "echo c1-c3\n");
  auto engine = std::make_unique<ExternalPlayer>(ExternalConfig{cmd, "", 10000});
  const auto start = mg().initial_state();
  engine->choose_move_in_game(1, *start, 0);
  const std::vector<pid_t> recorded = read_pids(pids);
  ASSERT_EQ(recorded.size(), 2u);
  const std::set<pid_t> groups = groups_of({recorded[1]});
  ASSERT_EQ(groups.size(), 1u);
  // The program has exited while its game is still open; its child runs on.
  ASSERT_TRUE(wait_until([&] { return process_gone(recorded[0]); }, 10.0));
  ASSERT_FALSE(process_gone(recorded[1]));
  engine.reset();
  expect_all_gone(recorded, groups);
}

TEST(ExternalProcessTest, ChildrenOfExitedProgramsDieWithTheirMatch) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  // One legal move from either side (Light's c1-c3 after Start, Dark's c7-c5 after Light's first
  // move), then the program exits, leaving its child: it forfeits its next move.
  const std::string cmd = script(
      "engine", "read line\n" + leave_child(pids, ">/dev/null 2>&1") +
                    "if [ \"$line\" = Start ]; then echo c1-c3; else echo c7-c5; fi\n");
  auto a = make_player(mg(), "random");
  auto b = make_player(mg(), "external:cmd=\"" + cmd + "\"");
  MatchConfig config;
  config.games = 4;
  config.threads = 2;
  const MatchStatus status = run_match(mg(), *a, *b, config);
  EXPECT_EQ(status.games_counted, 4);
  EXPECT_EQ(status.forfeits, 4);
  for (const std::string& line : status.forfeit_lines)
    EXPECT_NE(line.find("no move: the program exited with status 0"), std::string::npos) << line;
  const std::vector<pid_t> recorded = read_pids(pids);
  EXPECT_EQ(recorded.size(), 8u);  // four programs
  expect_all_gone(recorded, {});
}

// `oppidum arena` run in the background, its output in files.
class ArenaProcess {
 public:
  ArenaProcess(const std::vector<std::string>& args, const std::string& out_path,
               const std::string& err_path) {
    std::vector<std::string> argv_strings = {OPPIDUM_BINARY, "arena"};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int error = posix_spawn(&pid_, OPPIDUM_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) pid_ = -1;
  }
  ArenaProcess(const ArenaProcess&) = delete;
  ArenaProcess& operator=(const ArenaProcess&) = delete;
  ~ArenaProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
    }
  }

  bool started() const { return pid_ > 0; }
  void signal(int signo) const { kill(pid_, signo); }
  // The CPU time the arena has used so far, in seconds (/proc/PID/stat's utime and stime); -1
  // when it cannot be read.
  double cpu_seconds() const {
    const std::string stat = read_file("/proc/" + std::to_string(pid_) + "/stat");
    const std::size_t name_end = stat.rfind(')');  // the name in parentheses may hold spaces
    if (name_end == std::string::npos) return -1.0;
    std::istringstream fields(stat.substr(name_end + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 13 && fields >> field; ++i) {}  // state .. cmajflt
    if (!(fields >> utime >> stime)) return -1.0;
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }

  // Waits up to `seconds` for the arena to exit; true when it did.
  bool wait_exit(double seconds) {
    return wait_until(
        [&] {
          if (!exited_ && waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
          return exited_;
        },
        seconds);
  }
  // The exit status; -1 when it was killed by a signal.
  int exit_status() const { return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }
  std::string describe() const {
    if (WIFSIGNALED(status_)) return "killed by signal " + std::to_string(WTERMSIG(status_));
    return "exit status " + std::to_string(exit_status());
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

TEST(ArenaSignalTest, SigtermKillsEveryEngineAndReportsTheCountedGames) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  // Records itself and a background child, then answers after 1000 s (never, in this test).
  const std::string cmd =
      script("slow", leave_child(pids, ">/dev/null 2>&1") + "read line\nsleep 1000\necho c1-c3\n");
  const std::string out = temp_file("out.txt"), err = temp_file("err.txt");
  ArenaProcess arena({"--game", "mg", "--a", "external:cmd=\"" + cmd + "\",timeout_ms=3600000",
                      "--b", "random", "--games", "1000", "--threads", "2"},
                     out, err);
  ASSERT_TRUE(arena.started());
  // Two programs (one per thread) thinking about their first move: two pids each.
  ASSERT_TRUE(wait_until([&] { return read_pids(pids).size() >= 4; }, 30.0)) << read_file(err);
  const std::vector<pid_t> before = read_pids(pids);
  for (pid_t pid : before) ASSERT_FALSE(process_gone(pid)) << pid;
  const std::set<pid_t> groups = groups_of(before);
  EXPECT_EQ(groups.size(), 2u);

  arena.signal(SIGTERM);
  // At once here; the programs would answer after 1000 s.
  ASSERT_TRUE(arena.wait_exit(30.0)) << "the arena still runs 30 s after SIGTERM";
  EXPECT_EQ(arena.exit_status(), 143) << arena.describe() << "\n" << read_file(err);
  const std::string report = read_file(out);
  EXPECT_NE(report.find("match: external:"), std::string::npos) << report;
  EXPECT_NE(report.find("result (A's view): +0 =0 -0"), std::string::npos) << report;
  EXPECT_NE(report.find("stopped: the match was stopped after 0 of up to 1000 games"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("stopped by a signal (SIGTERM) after 0 games"), std::string::npos)
      << report;
  // The programs started before the signal (each with its `sleep 1000` answer), and any after.
  expect_all_gone(read_pids(pids), groups);
}

TEST(ArenaProcessTest, ProcessesInTheirOwnSessionDieWithTheMatch) {
  const PidFile pid_file(temp_file("pids.txt"));
  // The probe: an engine that leaves two daemons behind (in sessions of their own) and
  // then plays whole games.
  const std::string cmd = script("engine", leave_daemons(pid_file.path()) + "exec " OPPIDUM_BINARY
                                           " engine --game mg --player random\n");
  const std::string out = temp_file("out.txt"), err = temp_file("err.txt");
  // (a generous time a move, which counts a program's start: this test is not about time)
  ArenaProcess arena({"--game", "mg", "--a", "external:cmd=\"" + cmd + "\",timeout_ms=120000",
                      "--b", "random", "--games", "2"},
                     out, err);
  ASSERT_TRUE(arena.started());
  ASSERT_TRUE(arena.wait_exit(120.0)) << read_file(err);
  EXPECT_EQ(arena.exit_status(), 0) << arena.describe() << "\n" << read_file(err);
  EXPECT_NE(read_file(out).find("result (A's view): +"), std::string::npos) << read_file(out);
  EXPECT_EQ(read_file(out).find("forfeit"), std::string::npos) << read_file(out);
  const std::vector<pid_t> daemons = read_pids(pid_file.path());
  EXPECT_EQ(daemons.size(), 4u);  // two programs, one per game
  expect_all_gone(daemons, {});
}

TEST(ArenaSignalTest, SigtermKillsProcessesInTheirOwnSession) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string cmd =
      script("slow", leave_daemons(pid_file.path()) + "read line\nsleep 1000\n");
  const std::string out = temp_file("out.txt"), err = temp_file("err.txt");
  ArenaProcess arena({"--game", "mg", "--a", "external:cmd=\"" + cmd + "\",timeout_ms=3600000",
                      "--b", "random", "--games", "1000", "--threads", "2"},
                     out, err);
  ASSERT_TRUE(arena.started());
  // Two programs (one per thread), each with its two daemons, thinking about their first move.
  ASSERT_TRUE(wait_until([&] { return read_pids(pid_file.path()).size() >= 4; }, 30.0))
      << read_file(err);
  const std::vector<pid_t> daemons = read_pids(pid_file.path());
  for (pid_t pid : daemons) ASSERT_EQ(session_of(pid), pid) << pid;
  arena.signal(SIGTERM);
  ASSERT_TRUE(arena.wait_exit(10.0)) << "the arena still runs 10 s after SIGTERM";
  EXPECT_EQ(arena.exit_status(), 143) << arena.describe() << "\n" << read_file(err);
  expect_all_gone(daemons, {});
}

TEST(ArenaSignalTest, SigkillEndsTheProgramsGroupsOnceTheyEnd) {
  const PidFile pid_file(temp_file("pids.txt"));
  const std::string& pids = pid_file.path();
  // Leaves a child in its group and thinks until its input ends, as programs do.
  const std::string cmd = script("slow", leave_child(pids, ">/dev/null 2>&1") + "cat >/dev/null\n");
  const std::string out = temp_file("out.txt"), err = temp_file("err.txt");
  ArenaProcess arena({"--game", "mg", "--a", "external:cmd=\"" + cmd + "\",timeout_ms=3600000",
                      "--b", "random", "--games", "1000", "--threads", "2"},
                     out, err);
  ASSERT_TRUE(arena.started());
  ASSERT_TRUE(wait_until([&] { return read_pids(pids).size() >= 4; }, 30.0)) << read_file(err);
  const std::vector<pid_t> before = read_pids(pids);
  const std::set<pid_t> groups = groups_of(before);
  EXPECT_EQ(groups.size(), 2u);
  arena.signal(SIGKILL);
  ASSERT_TRUE(arena.wait_exit(10.0));
  expect_all_gone(before, groups);
}

TEST(ArenaSignalTest, SecondSigintExitsAtOnce) {
  // A's first move, a timed search of a minute, is not cut short by a stop (a depth-bounded one
  // is, Player::stop_moves_when): the first signal cannot end the match before the move is over,
  // the second ends the process at once.
  const std::string out = temp_file("out.txt"), err = temp_file("err.txt");
  ArenaProcess arena({"--game", "mg", "--a", "uct:ms=60000", "--b", "random", "--games",
                      "2", "--openings-plies", "0"},
                     out, err);
  ASSERT_TRUE(arena.started());
  auto in_err = [&](const std::string& text) {
    return read_file(err).find(text) != std::string::npos;
  };
  ASSERT_TRUE(wait_until([&] { return in_err("[arena] uct"); }, 30.0));  // handlers are in
  // The handlers are in before the first search starts: a signal in between ends the match
  // before any move (a clean stop, not this test's case). The search has begun once the arena
  // has burnt 0.3 s of CPU more (it takes a core; a loaded machine gives it one later).
  const double cpu_before = arena.cpu_seconds();
  ASSERT_GE(cpu_before, 0.0);
  ASSERT_TRUE(wait_until([&] { return arena.cpu_seconds() > cpu_before + 0.3; }, 60.0))
      << "the search never ran";
  arena.signal(SIGINT);
  ASSERT_TRUE(wait_until([&] { return in_err("[arena] SIGINT: stopping the match"); }, 30.0))
      << read_file(err);
  arena.signal(SIGINT);
  ASSERT_TRUE(arena.wait_exit(5.0)) << "the arena still runs 5 s after the second SIGINT";
  EXPECT_EQ(arena.exit_status(), 130) << arena.describe() << "\n" << read_file(err);
  EXPECT_EQ(read_file(out), "");  // no waiting for the move in progress, nor for the report
}

}  // namespace
}  // namespace oppidum::arena
