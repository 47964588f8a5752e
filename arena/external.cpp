#include "arena/external.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "games/quote.h"

extern char** environ;

namespace oppidum::arena {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxLineLength = 4096;
constexpr auto kQuitGrace = std::chrono::milliseconds(1000);

constexpr std::size_t kQuotedBytes = 60;  // of a program's line in a forfeit reason

std::string system_error(const std::string& what, int error) {
  return what + ": " + std::strerror(error);
}

// The process groups of the programs running now, for kill_all_external_engines; 0 marks a free
// slot. Lock-free atomics only, since a signal handler reads them.
constexpr std::size_t kMaxRegisteredGroups = 4096;
static_assert(std::atomic<pid_t>::is_always_lock_free);
std::array<std::atomic<pid_t>, kMaxRegisteredGroups> g_engine_groups{};
// Set by kill_all_external_engines: a program started from then on is killed as soon as it is
// registered (so one started while the handler scanned the registry does not escape it).
std::atomic<bool> g_engines_killed{false};

// The slot of `group` in the registry; -1 when it is full (the group is then not registered).
int register_group(pid_t group) noexcept {
  for (std::size_t i = 0; i < g_engine_groups.size(); ++i) {
    pid_t free_slot = 0;
    if (g_engine_groups[i].compare_exchange_strong(free_slot, group)) return static_cast<int>(i);
  }
  return -1;
}

void unregister_group(int slot) noexcept {
  if (slot >= 0) g_engine_groups[static_cast<std::size_t>(slot)].store(0);
}

// A program run by /bin/sh -c in its own process group, with pipes on its standard input and
// output. Used by one thread at a time.
class ChildProcess {
 public:
  enum class Read { kLine, kTimeout, kEnd, kTooLong };

  explicit ChildProcess(const std::string& command) {
    int to_child[2];
    int from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error(system_error("pipe", errno));
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      const int error = errno;
      close(to_child[0]);
      close(to_child[1]);
      throw std::runtime_error(system_error("pipe", error));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigset_t no_mask;
    sigemptyset(&no_mask);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &no_mask);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    std::string shell = "/bin/sh", dash_c = "-c", cmd = command;
    char* argv[] = {shell.data(), dash_c.data(), cmd.data(), nullptr};
    const int error = posix_spawn(&pid_, "/bin/sh", &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(to_child[0]);
    close(from_child[1]);
    to_child_ = to_child[1];
    from_child_ = from_child[0];
    if (error != 0) {
      pid_ = -1;
      close_pipes();
      throw std::runtime_error(system_error("cannot start /bin/sh -c '" + command + "'", error));
    }
    // posix_spawn returns once the child has set its process group, so the group exists. Either
    // kill_all_external_engines' scan sees the slot, or this sees its flag.
    registry_slot_ = register_group(pid_);
    if (g_engines_killed.load()) kill(-pid_, SIGKILL);
  }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  ~ChildProcess() { finish(std::chrono::milliseconds(0)); }

  // Writes `line` and a newline; false when the program no longer reads its input.
  bool write_line(const std::string& line) {
    if (to_child_ < 0) return false;
    const std::string data = line + '\n';
    // Block SIGPIPE on this thread while writing, and swallow the one a closed pipe raises, so a
    // program that quit does not kill the arena.
    sigset_t pipe_set, old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    bool ok = true;
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(to_child_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ok = false;
        if (errno == EPIPE) {
          const timespec zero{0, 0};
          while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {}
        }
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
    return ok;
  }

  // Reads one line (without its newline and a trailing '\r') within `timeout_ms`.
  Read read_line(int timeout_ms, std::string& line) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      const auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return Read::kLine;
      }
      if (buffer_.size() > kMaxLineLength) return Read::kTooLong;
      if (from_child_ < 0) return Read::kEnd;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return Read::kTimeout;
      pollfd fd{from_child_, POLLIN, 0};
      const int ready = poll(&fd, 1, static_cast<int>(left.count()) + 1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // the deadline check above decides
      char chunk[4096];
      const ssize_t n = read(from_child_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Read::kEnd;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // After the output ended: how the program ended, waiting up to a fifth of a second for it.
  std::string describe_end() {
    for (int i = 0; i < 200 && !exited(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!exited_) return "the program closed its output";
    if (exit_code_ == CLD_EXITED)
      return "the program exited with status " + std::to_string(exit_status_);
    if (exit_code_ == CLD_KILLED || exit_code_ == CLD_DUMPED)
      return "the program was killed by signal " + std::to_string(exit_status_);
    return "the program ended";
  }

  // Closes its input, waits up to `grace` for the program to exit, then kills its process group
  // (whatever the program left running in it, also when the program itself has exited) and reaps
  // the program.
  void finish(std::chrono::milliseconds grace) noexcept {
    if (to_child_ >= 0) {
      close(to_child_);
      to_child_ = -1;
    }
    if (pid_ > 0 && !reaped_) {
      const auto deadline = Clock::now() + grace;
      while (!exited() && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      // The program is not reaped yet (at most a zombie), so its pid, the group's id, is still
      // ours: the signal reaches its group and nothing else.
      kill(-pid_, SIGKILL);
      if (!exited_) kill(pid_, SIGKILL);  // in case it left its group
      unregister_group(registry_slot_);
      registry_slot_ = -1;
      int status = 0;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
      reaped_ = true;
    }
    close_pipes();
  }

 private:
  // True once the program has exited; it stays unreaped (WNOWAIT) until finish().
  bool exited() noexcept {
    if (exited_ || pid_ <= 0) return exited_;
    siginfo_t info{};
    int r;
    while ((r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT)) < 0 &&
           errno == EINTR) {}
    if (r == 0 && info.si_pid == pid_) {
      exited_ = true;
      exit_code_ = info.si_code;
      exit_status_ = info.si_status;
    } else if (r < 0 && errno == ECHILD) {
      exited_ = true;  // not our child any more (cannot happen while we hold it)
    }
    return exited_;
  }

  void close_pipes() noexcept {
    if (to_child_ >= 0) close(to_child_);
    if (from_child_ >= 0) close(from_child_);
    to_child_ = from_child_ = -1;
  }

  pid_t pid_ = -1;  // also the id of its process group
  int registry_slot_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  bool exited_ = false;  // seen by waitid(WNOWAIT): a zombie until reaped
  int exit_code_ = 0;    // CLD_EXITED, CLD_KILLED or CLD_DUMPED
  int exit_status_ = 0;  // the exit status or the signal
  bool reaped_ = false;
};

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// A program's text in a reason string: quoted, every byte printable, at most kQuotedBytes of it.
std::string shown(const std::string& text) { return "'" + quote_input(text, kQuotedBytes) + "'"; }

// The opponent's moves (in notation) that lead from `from` to `to` in exactly `plies` plies, `me`
// being to move in `to` and nowhere before it; false when there are none. A depth-first search: in
// practice one move, or two when the program (Black) is asked after DVONN's last placement and
// first move, both White's.
bool moves_between(const GameState& from, const GameState& to, int me, int plies,
                   std::vector<std::string>& path) {
  if (plies == 0)
    return from.current_player() == to.current_player() && from.hash() == to.hash() &&
           from.to_string() == to.to_string();
  if (from.current_player() == me || from.is_terminal()) return false;
  ActionList legal;
  from.legal_actions(legal);
  for (Action a : legal) {
    auto next = from.clone();
    next->apply(a);
    path.push_back(from.action_to_string(a));
    if (moves_between(*next, to, me, plies - 1, path)) return true;
    path.pop_back();
  }
  return false;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

}  // namespace

void kill_all_external_engines() noexcept {
  const int saved_errno = errno;
  g_engines_killed.store(true);
  for (const auto& group : g_engine_groups) {
    const pid_t g = group.load();
    if (g > 0) kill(-g, SIGKILL);
  }
  errno = saved_errno;
}

class ExternalPlayer::Session {
 public:
  explicit Session(const std::string& command) : process(command) {}
  ChildProcess process;
  std::unique_ptr<GameState> known;  // the position after the program's last move
};

ExternalConfig parse_external_spec(PlayerSpec spec) {
  SpecReader reader(std::move(spec), {"cmd", "protocol", "timeout_ms", "name"});
  ExternalConfig config;
  config.command =
      reader.get_string("cmd", "external:cmd=\"./engine --level 3\",timeout_ms=5000");
  if (reader.has("protocol")) {
    const std::string protocol = reader.get_string("protocol", "protocol=codecup");
    if (protocol != "codecup")
      throw PlayerSpecError("external: protocol must be codecup (the only one), got '" + protocol +
                            "'");
  }
  config.timeout_ms = static_cast<int>(reader.get_int_or("timeout_ms", 1, 3'600'000, 10000));
  if (reader.has("name")) config.name = reader.get_string("name", "name=myengine");
  reader.finish();
  return config;
}

bool looks_like_move(const std::string& game_name, const std::string& text) {
  std::string up;
  for (char c : text) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto in = [](char c, char lo, char hi) { return c >= lo && c <= hi; };
  if (game_name == "mg")
    return up.size() == 5 && in(up[0], 'A', 'H') && in(up[1], '1', '7') &&
           (up[2] == '-' || up[2] == 'X') && in(up[3], 'A', 'H') && in(up[4], '1', '7');
  if (up == "PASS") return true;
  auto space = [&](std::size_t at) { return in(up[at], 'A', 'K') && in(up[at + 1], '1', '5'); };
  return (up.size() == 2 && space(0)) || (up.size() == 4 && space(0) && space(2));
}

ExternalPlayer::ExternalPlayer(ExternalConfig config) : config_(std::move(config)) {
  if (config_.command.empty()) throw std::logic_error("ExternalPlayer: empty command");
  if (config_.timeout_ms < 1) throw std::logic_error("ExternalPlayer: timeout_ms must be >= 1");
}

ExternalPlayer::~ExternalPlayer() {
  for (auto& [key, session] : sessions_) session->process.finish(std::chrono::milliseconds(0));
}

std::string ExternalPlayer::spec() const {
  std::string name;
  bool space = false;
  for (char c : config_.name.empty() ? config_.command : config_.name) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !name.empty();
      continue;
    }
    if (space) name += '_';
    space = false;
    name += c;
  }
  return "external:" + name;
}

Action ExternalPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  (void)state;
  (void)seed;
  throw std::logic_error(spec() + ": an external program plays games with an id "
                                  "(choose_move_in_game), as a match or play_game runs them");
}

Action ExternalPlayer::choose_move_in_game(int game_id, const GameState& state,
                                           std::uint64_t seed) {
  (void)seed;
  const std::pair<int, int> key{game_id, state.current_player()};
  Session* session = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = sessions_[key];
    if (!slot) {
      try {
        slot = std::make_unique<Session>(config_.command);
      } catch (...) {
        sessions_.erase(key);
        throw;
      }
    }
    session = slot.get();
  }
  auto forfeit = [&](const std::string& reason) {
    std::unique_ptr<Session> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = sessions_.find(key);
      dropped = std::move(it->second);
      sessions_.erase(it);
    }
    dropped->process.finish(std::chrono::milliseconds(0));
    throw Forfeit(reason + " (ply " + std::to_string(state.ply()) + ")");
  };

  // What the program has to hear: Start, or the opponent's moves since its own last one (none when
  // it moves again: DVONN's White after the last placement).
  constexpr int kMaxPlies = 8;
  std::vector<std::string> messages;
  const auto initial = state.game().initial_state();
  const GameState& from = session->known ? *session->known : *initial;
  const int plies = state.ply() - from.ply();
  if (!session->known && state.ply() == 0 && state.to_string() == initial->to_string()) {
    messages.push_back("Start");
  } else if (plies < 0 || plies > kMaxPlies ||
             !moves_between(from, state, state.current_player(), plies, messages)) {
    throw std::logic_error(spec() + ": game " + std::to_string(game_id) + " position " +
                           state.to_string() + " does not follow by the opponent's moves from " +
                           from.to_string() + ", the last position the program knows");
  }
  const std::string after = messages.empty() ? "its own move" : join(messages);

  // A program that stopped reading may still have answered: the answer decides.
  for (const auto& message : messages)
    if (!session->process.write_line(message)) break;
  std::string line;
  switch (session->process.read_line(config_.timeout_ms, line)) {
    case ChildProcess::Read::kLine:
      break;
    case ChildProcess::Read::kTimeout:
      forfeit("timeout: no move within " + std::to_string(config_.timeout_ms) + " ms after " +
              after);
      break;
    case ChildProcess::Read::kTooLong:
      forfeit("garbage: a line of more than " + std::to_string(kMaxLineLength) +
              " characters instead of a move");
      break;
    case ChildProcess::Read::kEnd:
      forfeit("no move: " + session->process.describe_end() + " after " + after);
      break;
  }
  const std::string move = trim(line);
  if (!looks_like_move(state.game().name(), move))
    forfeit("garbage: sent " + shown(move) + " instead of a move after " + after);
  Action action = -1;
  try {
    action = state.parse_action(move);
  } catch (const GameError& e) {
    forfeit("illegal move: sent " + shown(move) + " after " + after + ": " + e.what());
  }
  session->known = state.clone();
  session->known->apply(action);
  return action;
}

void ExternalPlayer::game_ended(int game_id) noexcept {
  std::vector<std::unique_ptr<Session>> ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = sessions_.lower_bound({game_id, -1});
         it != sessions_.end() && it->first.first == game_id;) {
      ended.push_back(std::move(it->second));
      it = sessions_.erase(it);
    }
  }
  for (auto& session : ended) {
    session->process.write_line("Quit");
    session->process.finish(kQuitGrace);
  }
}

}  // namespace oppidum::arena
