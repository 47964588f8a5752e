#include "arena/external.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "arena/time_control.h"
#include "games/quote.h"
#include "util/text.h"

extern char** environ;

namespace oppidum::arena {

using util::trim;

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxLineLength = 4096;
constexpr auto kQuitGrace = std::chrono::milliseconds(1000);

constexpr std::size_t kQuotedBytes = 60;  // of a program's line in a forfeit reason

std::string system_error(const std::string& what, int error) {
  return what + ": " + std::strerror(error);
}

// The keepers of the programs running now (a keeper's pid is also its process group's id), for
// kill_all_external_engines; 0 marks a free slot. Lock-free atomics only, since a signal handler
// reads them.
constexpr std::size_t kMaxRegisteredKeepers = 4096;
static_assert(std::atomic<pid_t>::is_always_lock_free);
std::array<std::atomic<pid_t>, kMaxRegisteredKeepers> g_keepers{};
// Set by kill_all_external_engines: a program started from then on is killed as soon as it is
// registered (so one started while the handler scanned the registry does not escape it).
std::atomic<bool> g_engines_killed{false};

// The slot of `keeper` in the registry; -1 when it is full (the keeper is then not registered).
int register_keeper(pid_t keeper) noexcept {
  for (std::size_t i = 0; i < g_keepers.size(); ++i) {
    pid_t free_slot = 0;
    if (g_keepers[i].compare_exchange_strong(free_slot, keeper)) return static_cast<int>(i);
  }
  return -1;
}

void unregister_keeper(int slot) noexcept {
  if (slot >= 0) g_keepers[static_cast<std::size_t>(slot)].store(0);
}

// --- Ending a tree of processes. Only system calls on buffers of the caller's stack, no
// allocation and no locks: kill_all_external_engines calls it from a signal handler.

// Writes "/proc/<pid>/stat" into `path` (at least 32 bytes).
void stat_path(pid_t pid, char* path) noexcept {
  char digits[16];
  int n = 0;
  for (unsigned long v = static_cast<unsigned long>(pid); v > 0 || n == 0; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  const char prefix[] = "/proc/";
  int at = 0;
  for (const char* c = prefix; *c; ++c) path[at++] = *c;
  while (n > 0) path[at++] = digits[--n];
  const char suffix[] = "/stat";
  for (const char* c = suffix; *c; ++c) path[at++] = *c;
  path[at] = '\0';
}

// The parent and the state letter of process `pid` (from /proc/<pid>/stat); false when it cannot
// be read (the process is gone).
bool stat_of(pid_t pid, pid_t& parent, char& state) noexcept {
  char path[32];
  stat_path(pid, path);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // "pid (name) state ppid ...": the name (at most 15 bytes, any of them a ')') ends at the last
  // ')', well within the first 128 bytes; the fields after it are numbers.
  char text[128];
  ssize_t n;
  while ((n = read(fd, text, sizeof text - 1)) < 0 && errno == EINTR) {}
  close(fd);
  if (n <= 0) return false;
  int close_paren = -1;
  for (int i = 0; i < n; ++i)
    if (text[i] == ')') close_paren = i;
  int i = close_paren + 4;  // past ") S "
  if (close_paren < 0 || i >= n) return false;
  state = text[close_paren + 2];
  long number = 0;
  for (; i < n && text[i] >= '0' && text[i] <= '9'; ++i) number = number * 10 + (text[i] - '0');
  parent = static_cast<pid_t>(number);
  return true;
}

// Sends SIGKILL to the processes `roots`, their process groups and all their descendants: each
// descendant is stopped (SIGSTOP) as it is found, so that none can start another while /proc is
// walked, and the walk is repeated until it finds no new one once every process found has
// stopped (a fork under way when its SIGSTOP came ends first: its child, born after the walk
// passed, was left running, adopted by init when the keeper died). A descendant counts while its
// chain of parents leads to a root: a keeper is a child subreaper that stays until it is killed
// here, so everything its program started is in its tree, whatever session or group it moved to.
// Past kMaxTree processes, one found is killed at once: its children, orphaned, become the
// keeper's, and a later walk finds them.
void kill_process_trees(const pid_t* roots, std::size_t count) noexcept {
  const int saved_errno = errno;
  constexpr std::size_t kMaxTree = 1024;
  constexpr int kMaxWalks = 256;
  constexpr long kMaxWaitNanoseconds = 500'000'000;  // for the stops to take effect, in all
  pid_t tree[kMaxTree];
  std::size_t size = 0;
  auto in_tree = [&](pid_t pid) {
    for (std::size_t i = 0; i < size; ++i)
      if (tree[i] == pid) return true;
    return false;
  };
  for (std::size_t i = 0; i < count && size < kMaxTree; ++i) {
    if (roots[i] <= 0 || in_tree(roots[i])) continue;
    kill(roots[i], SIGSTOP);
    tree[size++] = roots[i];
  }
  // Waits until every process of the tree has stopped or ended (at most kMaxWaitNanoseconds in
  // all, for one in uninterruptible sleep, say). One running again is stopped again: the kernel
  // continues (SIGHUP, SIGCONT) the stopped members of a process group orphaned by a death, and
  // one killed at once past kMaxTree can orphan a group.
  long waited = 0;
  auto wait_until_stopped = [&] {
    for (std::size_t i = 0; i < size && waited < kMaxWaitNanoseconds;) {
      pid_t parent = 0;
      char state = 0;
      if (!stat_of(tree[i], parent, state) || state == 'T' || state == 't' || state == 'Z' ||
          state == 'X') {
        ++i;
        continue;
      }
      kill(tree[i], SIGSTOP);
      const timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
      waited += pause.tv_nsec;
    }
  };
  // Adds the processes whose parent is in the tree; whether it found any.
  auto walk = [&] {
    const int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0) return false;
    bool grew = false;
    alignas(dirent64) char entries[4096];
    ssize_t n;
    while ((n = getdents64(proc, entries, sizeof entries)) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const dirent64*>(entries + at);
        at += entry->d_reclen;
        long number = 0;
        const char* c = entry->d_name;
        for (; *c >= '0' && *c <= '9'; ++c) number = number * 10 + (*c - '0');
        const auto pid = static_cast<pid_t>(number);
        pid_t parent = 0;
        char state = 0;
        if (*c != '\0' || pid <= 0 || in_tree(pid) || !stat_of(pid, parent, state) ||
            !in_tree(parent))
          continue;
        if (size < kMaxTree) {
          kill(pid, SIGSTOP);
          tree[size++] = pid;
        } else {
          kill(pid, SIGKILL);
        }
        grew = true;
      }
    }
    close(proc);
    return grew;
  };
  // Done when a walk made after every process found had stopped finds no new one.
  for (int walks = 0; size > 0 && walks < kMaxWalks; ++walks) {
    wait_until_stopped();
    if (!walk()) break;
  }
  // The last found first: a process's descendants before it, its keeper last. A death that
  // orphans a process group continues the group's stopped members (above); in this order they
  // have all been killed by then (in the order found, the keeper's death first continued its
  // program, which started a process of a session of its own before its own SIGKILL came).
  for (std::size_t i = size; i-- > 0;) kill(tree[i], SIGKILL);
  // A root is a keeper, the leader of its program's process group: the group is reached also
  // where /proc cannot be read.
  for (std::size_t i = 0; i < count; ++i)
    if (roots[i] > 0) kill(-roots[i], SIGKILL);
  errno = saved_errno;
}

// The keeper: /bin/sh, made a child subreaper (PR_SET_CHILD_SUBREAPER) before it is executed,
// runs the program (`/bin/sh -c "$1"`) in the foreground, writes its exit status to fd 3 and then
// waits on fd 4 (the referee's end of that pipe stays open) until the referee kills it and its
// tree. Every process the program starts is in that tree for as long as the keeper lives: an
// orphan becomes the keeper's child, also one in a session of its own. Should the referee die
// (SIGKILL) without killing it, the keeper, once the program has ended (it reads end of file on
// its input), finds end of file on fd 4 and kills its process group.
constexpr const char* kKeeperScript =
    "/bin/sh -c \"$1\" 3>&- 4<&-\n"
    "status=$?\n"
    "trap '' PIPE\n"
    "exec </dev/null >/dev/null\n"
    "echo \"$status\" >&3\n"
    "exec 3>&-\n"
    "read -r _ <&4\n"
    "kill -9 0\n";

struct KeeperStart {
  char* const* argv;
  int fds[4];     // become 0 (the program's input), 1 (its output), 3 (status), 4 (control)
  int error = 0;  // errno of a failed step in the child
};

// The child of clone(CLONE_VM | CLONE_VFORK): it shares the memory of the parent, whose thread
// waits until it has executed /bin/sh or exited, and calls only async-signal-safe functions.
int start_keeper(void* arg) {
  auto* start = static_cast<KeeperStart*>(arg);
  // The parent's handlers must not run here, in its memory; SIGPIPE gets its default back.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signo = 1; signo < NSIG; ++signo) {
    struct sigaction old {};
    if (sigaction(signo, nullptr, &old) != 0) continue;
    const bool handled = (old.sa_flags & SA_SIGINFO) != 0 ||
                         (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (handled || signo == SIGPIPE) sigaction(signo, &default_action, nullptr);
  }
  const int targets[4] = {STDIN_FILENO, STDOUT_FILENO, 3, 4};
  bool ok = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 && setpgid(0, 0) == 0;
  for (int i = 0; ok && i < 4; ++i) ok = dup2(start->fds[i], targets[i]) == targets[i];
  if (ok) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve("/bin/sh", start->argv, environ);
  }
  start->error = errno;
  _exit(127);
}

// Moves `fd` to a number of at least 10 (close-on-exec), so that the keeper's dup2 onto 0, 1, 3
// and 4 never overwrites another of its sources; closes the original.
int above_standard_fds(int fd) {
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  const int error = errno;
  close(fd);
  if (moved < 0) throw std::runtime_error(system_error("fcntl(F_DUPFD_CLOEXEC)", error));
  return moved;
}

// A program run by /bin/sh -c under its keeper (above), with pipes on its standard input and
// output. Used by one thread at a time.
class ChildProcess {
 public:
  enum class Read { kLine, kTimeout, kEnd, kTooLong };
  enum class Write { kWritten, kClosed, kTimeout };

  explicit ChildProcess(const std::string& command) {
    // Pipes: to the program, from it, its exit status (from the keeper), and the control pipe the
    // keeper waits on. Each end this process keeps is close-on-exec.
    int fds[8];
    for (int i = 0; i < 8; i += 2) {
      if (pipe2(fds + i, O_CLOEXEC) != 0) {
        const int error = errno;
        for (int j = 0; j < i; ++j) close(fds[j]);
        throw std::runtime_error(system_error("pipe", error));
      }
    }
    to_child_ = fds[1];
    // Writes wait for the program with a deadline (write_line): a program that never reads its
    // input, or fills it itself, cannot hold the match. Only this end: the program's is its own.
    const int flags = fcntl(to_child_, F_GETFL);
    if (flags < 0 || fcntl(to_child_, F_SETFL, flags | O_NONBLOCK) != 0) {
      const int error = errno;
      for (int fd : fds) close(fd);
      throw std::runtime_error(system_error("fcntl", error));
    }
    from_child_ = fds[2];
    status_ = fds[4];
    control_ = fds[7];
    int child_ends[4] = {fds[0], fds[3], fds[5], fds[6]};
    try {
      for (int& fd : child_ends) {
        const int original = fd;
        fd = -1;
        fd = above_standard_fds(original);
      }
    } catch (...) {
      for (int fd : child_ends)
        if (fd >= 0) close(fd);
      close_pipes();
      throw;
    }
    std::string shell = "/bin/sh", dash_c = "-c", script = kKeeperScript, name = "oppidum-keeper",
                cmd = command;
    char* argv[] = {shell.data(), dash_c.data(), script.data(), name.data(), cmd.data(), nullptr};
    KeeperStart start{argv, {child_ends[0], child_ends[1], child_ends[2], child_ends[3]}};
    std::vector<char> stack(64 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);  // no handler may run in the child before its reset
    pid_ = clone(start_keeper, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD,
                 &start);
    const int clone_error = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    for (int fd : child_ends) close(fd);
    const int error = pid_ < 0 ? clone_error : start.error;
    if (pid_ > 0 && start.error != 0) {
      while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
      pid_ = -1;
    }
    if (pid_ <= 0 || error != 0) {
      pid_ = -1;
      close_pipes();
      throw std::runtime_error(system_error("cannot start /bin/sh -c '" + command + "'", error));
    }
    // The keeper is running /bin/sh now. Either kill_all_external_engines' scan sees the slot,
    // or this sees its flag.
    registry_slot_ = register_keeper(pid_);
    if (g_engines_killed.load()) kill_process_trees(&pid_, 1);
  }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  ~ChildProcess() { finish(std::chrono::milliseconds(0)); }

  // Waits until the program has started reading (fewer than the `written` bytes written to it are
  // left in its input pipe), it wrote something or closed its output, or `deadline`; looks every
  // millisecond. Its start-up ends there: a program that reads part of its input and then thinks
  // is thinking on its clock.
  void wait_until_reading(std::size_t written, Clock::time_point deadline) {
    while (to_child_ >= 0 && from_child_ >= 0 && Clock::now() < deadline) {
      int unread = 0;
      if (ioctl(to_child_, FIONREAD, &unread) != 0 || unread < 0 ||
          static_cast<std::size_t>(unread) < written)
        return;
      pollfd fd{from_child_, POLLIN, 0};
      const int ready = poll(&fd, 1, 1);
      if (ready > 0) return;
    }
  }

  // Writes `line` and a newline before `deadline`: kClosed when the program no longer reads its
  // input, kTimeout when it has not taken it by then (its input pipe stays full).
  Write write_line(const std::string& line, Clock::time_point deadline) {
    if (to_child_ < 0) return Write::kClosed;
    const std::string data = line + '\n';
    // Block SIGPIPE on this thread while writing, and swallow the one a closed pipe raises, so a
    // program that quit does not kill the arena.
    sigset_t pipe_set, old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    Write result = Write::kWritten;
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(to_child_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
          result = Write::kTimeout;
          break;
        }
        pollfd fd{to_child_, POLLOUT, 0};
        poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)) + 1);
        continue;  // ready, closed (the write says EPIPE), or the deadline: looked at above
      }
      if (n < 0) {
        result = Write::kClosed;
        if (errno == EPIPE) {
          const timespec zero{0, 0};
          while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {}
        }
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
    return result;
  }

  // Reads the next line that is not blank (without its newline and a trailing '\r') before
  // `deadline`. The output ends when the program closes it or when the program exits: a process
  // it left behind may hold the pipe open, but nothing it writes is the program's move.
  Read read_line(Clock::time_point deadline, std::string& line) {
    bool program_gone = false;
    while (true) {
      const auto newline = buffer_.find('\n');
      // A line longer than the limit is too long whether its newline came in the same read or
      // not yet.
      if (std::min(newline, buffer_.size()) > kMaxLineLength) return Read::kTooLong;
      if (newline != std::string::npos) {
        line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (util::trim_blanks(line).empty()) continue;  // a blank line
        return Read::kLine;
      }
      if (from_child_ < 0 || program_gone) return Read::kEnd;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return Read::kTimeout;
      pollfd fds[2] = {{from_child_, POLLIN, 0}, {status_, POLLIN, 0}};
      const nfds_t watched = status_ >= 0 && !exited_ ? 2 : 1;
      const int ready = poll(fds, watched, static_cast<int>(left.count()) + 1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) continue;  // the deadline check above decides
      if (fds[0].revents != 0) {
        const Read read = read_some();
        if (read == Read::kEnd) return Read::kEnd;
        continue;
      }
      if (watched == 2 && fds[1].revents != 0 && exited()) {
        // Everything the program wrote is in the pipe by now: take it, then the output has ended.
        program_gone = true;
        pollfd out{from_child_, POLLIN, 0};
        while (buffer_.size() <= kMaxLineLength && poll(&out, 1, 0) > 0 &&
               read_some() == Read::kLine) {
        }
      }
    }
  }

  // One read of the program's output into the buffer: kLine (some bytes, or an interrupted read)
  // or kEnd (the output is closed).
  Read read_some() {
    char chunk[4096];
    const ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) return Read::kLine;
    if (n <= 0) return Read::kEnd;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return Read::kLine;
  }

  // After the output ended: how the program ended, waiting up to 2 s for it (the keeper shell
  // reports it; a loaded machine may take a while to run the keeper; a program that closed its
  // output and runs on costs those 2 s once, as it forfeits).
  std::string describe_end() {
    for (int i = 0; i < 2000 && !exited(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!exited_) return "the program closed its output";
    // The keeper reports what its shell saw: 128 + the signal for a program killed by one.
    if (exit_status_ < 0) return "the program ended";
    if (exit_status_ > 128 && exit_status_ < 128 + NSIG)
      return "the program was killed by signal " + std::to_string(exit_status_ - 128) +
             " (exit status " + std::to_string(exit_status_) + ")";
    return "the program exited with status " + std::to_string(exit_status_);
  }

  // Closes its input, waits up to `grace` for the program to exit, then kills the keeper and
  // everything the program started (also when the program itself has exited) and reaps the
  // keeper.
  void finish(std::chrono::milliseconds grace) noexcept {
    if (to_child_ >= 0) {
      close(to_child_);
      to_child_ = -1;
    }
    if (pid_ > 0 && !reaped_) {
      const auto deadline = Clock::now() + grace;
      while (!exited() && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      // The keeper is not reaped yet (at most a zombie), so its pid is still ours.
      kill_process_trees(&pid_, 1);
      unregister_keeper(registry_slot_);
      registry_slot_ = -1;
      while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
      reaped_ = true;
    }
    close_pipes();
  }

 private:
  // True once the keeper has reported the program's exit status (or closed the status pipe
  // without one: it was killed).
  bool exited() noexcept {
    if (exited_ || status_ < 0) return exited_;
    while (true) {
      pollfd fd{status_, POLLIN, 0};
      const int ready = poll(&fd, 1, 0);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      char chunk[32];
      const ssize_t n = read(status_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        status_text_.append(chunk, static_cast<std::size_t>(n));
        if (status_text_.find('\n') == std::string::npos && status_text_.size() < 16) continue;
      }
      exited_ = true;
      char* end = nullptr;
      const long status = std::strtol(status_text_.c_str(), &end, 10);
      exit_status_ = end != status_text_.c_str() && *end == '\n' ? static_cast<int>(status) : -1;
      return true;
    }
  }

  void close_pipes() noexcept {
    for (int* fd : {&to_child_, &from_child_, &status_, &control_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

  pid_t pid_ = -1;  // the keeper's, also the id of its process group
  int registry_slot_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int status_ = -1;   // the keeper writes the program's exit status here
  int control_ = -1;  // the keeper waits for its end of file (this process's exit)
  std::string buffer_;
  std::string status_text_;
  bool exited_ = false;
  int exit_status_ = -1;  // as the keeper's shell reports it; -1: unknown
  bool reaped_ = false;
};

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

}  // namespace

void kill_all_external_engines() noexcept {
  g_engines_killed.store(true);
  pid_t keepers[kMaxRegisteredKeepers];
  std::size_t count = 0;
  for (const auto& keeper : g_keepers) {
    const pid_t pid = keeper.load();
    if (pid > 0) keepers[count++] = pid;
  }
  kill_process_trees(keepers, count);
}

class ExternalPlayer::Session {
 public:
  explicit Session(const std::string& command) : process(command) {}
  ChildProcess process;
  std::unique_ptr<GameState> known;  // the position after the program's last move
  double used = 0;  // seconds charged to the program's clock in this game
};

ExternalConfig parse_external_spec(PlayerSpec spec) {
  SpecReader reader(std::move(spec),
                    {"cmd", "protocol", "timeout_ms", "clock", "openings", "name"});
  ExternalConfig config;
  config.command =
      reader.get_string("cmd", "external:cmd=\"./engine --level 3\",timeout_ms=5000");
  if (reader.has("protocol")) {
    const std::string protocol = reader.get_string("protocol", "protocol=codecup");
    if (protocol != "codecup")
      throw PlayerSpecError("external: protocol must be codecup (the only one), got '" + protocol +
                            "'");
  }
  config.timeout_ms = static_cast<int>(
      reader.get_int_or("timeout_ms", 1, kMaxMoveMs, ExternalConfig{}.timeout_ms));
  config.clock_seconds = reader.get_double_or("clock", kMinClockSeconds, kMaxClockSeconds, 0.0);
  config.openings = reader.get_int_or("openings", 0, 1, 0) == 1;
  if (reader.has("name")) config.name = reader.get_string("name", "name=myengine");
  reader.finish();
  // The player's name (its command's, without one) goes into reports, record and results files:
  // blanks become '_'; a control character anywhere in a spec is refused by parse_player_spec.
  return config;
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
      } catch (const std::exception& e) {
        sessions_.erase(key);
        // Not the program's fault, so no forfeit: the match stops, saying whose program and
        // which game (a bare "fcntl(F_DUPFD_CLOEXEC): Too many open files" named neither).
        const std::string what = e.what();
        throw std::runtime_error(
            spec() + ": cannot start the program for game " + std::to_string(game_id) + ": " +
            what +
            (what.find("Too many open files") != std::string::npos
                 ? " (each game in play holds its programs' pipes open: use fewer --threads, or "
                   "raise the limit with ulimit -n)"
                 : ""));
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
  // Where the program's game starts: the initial position, or the opening it hears first.
  auto start = state.game().initial_state();
  if (!session->known) {
    std::vector<Action> opening;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = openings_.find(game_id);
      if (it != openings_.end()) opening = it->second;
    }
    std::string line = "Opening";
    for (Action a : opening) {
      line += " " + start->action_to_string(a);
      start->apply(a);
    }
    if (!opening.empty()) messages.push_back(line);
  }
  const GameState& from = session->known ? *session->known : *start;
  const int plies = state.ply() - from.ply();
  if (!session->known && state.ply() == start->ply() && state.to_string() == start->to_string()) {
    messages.push_back("Start");
  } else if (plies < 0 || plies > kMaxPlies ||
             !moves_between(from, state, state.current_player(), plies, messages)) {
    throw std::logic_error(spec() + ": game " + std::to_string(game_id) + " position " +
                           state.to_string() + " does not follow by the opponent's moves from " +
                           from.to_string() + ", the last position the program knows");
  }
  const std::string after = messages.empty() ? "its own move" : util::join(messages, " ");

  // A program that stopped reading may still have answered: the answer decides. The move's time
  // runs from here; on a clock, the first move's from the moment the program starts reading its
  // first lines (its start-up is not charged).
  const bool first_move = !session->known;
  const auto sent = Clock::now();
  auto deadline = sent + std::chrono::milliseconds(config_.timeout_ms);
  std::size_t written = 0;
  for (const auto& message : messages) {
    const ChildProcess::Write write = session->process.write_line(message, deadline);
    if (write == ChildProcess::Write::kTimeout)
      forfeit("timeout: the program did not read its input within " +
              std::to_string(config_.timeout_ms) + " ms (" + after + ")");
    if (write == ChildProcess::Write::kClosed) break;
    written += message.size() + 1;
  }
  std::string line;
  if (first_move && config_.clock_seconds > 0)
    session->process.wait_until_reading(written, deadline);
  const auto move_start = first_move && config_.clock_seconds > 0 ? Clock::now() : sent;
  bool clock_binds = false;
  if (config_.clock_seconds > 0) {
    const auto clock_end =
        move_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         config_.clock_seconds + kTimeGrace - session->used));
    clock_binds = clock_end < deadline;
    if (clock_binds) deadline = clock_end;
  }
  const ChildProcess::Read read = session->process.read_line(deadline, line);
  session->used += std::chrono::duration<double>(Clock::now() - move_start).count();
  switch (read) {
    case ChildProcess::Read::kLine:
      break;
    case ChildProcess::Read::kTimeout:
      if (clock_binds)
        forfeit("time: the program's moves took more than its clock of " +
                format_number(config_.clock_seconds) + " s (+" + format_number(kTimeGrace) +
                " s grace), no move after " + after);
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
  if (!state.game().looks_like_move(move))
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

void ExternalPlayer::game_started(int game_id, const std::vector<Action>& opening) {
  if (!config_.openings) return;
  std::lock_guard<std::mutex> lock(mutex_);
  openings_[game_id] = opening;
}

void ExternalPlayer::game_ended(int game_id) noexcept {
  std::vector<std::unique_ptr<Session>> ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    openings_.erase(game_id);
    for (auto it = sessions_.lower_bound({game_id, -1});
         it != sessions_.end() && it->first.first == game_id;) {
      ended.push_back(std::move(it->second));
      it = sessions_.erase(it);
    }
  }
  for (auto& session : ended) {
    session->process.write_line("Quit", Clock::now() + kQuitGrace);
    session->process.finish(kQuitGrace);
  }
}

}  // namespace oppidum::arena
