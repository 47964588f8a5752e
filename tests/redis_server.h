// For tests that need a Redis server: a private `redis-server` on a free loopback port, in a
// temporary folder of its own, that never outlives the test.
//
// The constructor starts it (`--bind 127.0.0.1 --protected-mode yes`, no RDB snapshots, the AOF
// with `appendfsync everysec` unless switched off, `requirepass` when a password is given) in its
// own process group and returns once it answers PING; it throws std::runtime_error with the
// server's log tail when it does not come up within 10 s (or when redis-server is not installed:
// scripts/setup.sh installs it). The destructor stops it (SHUTDOWN NOSAVE, or SIGTERM, then
// SIGKILL to the group to be sure), reaps it and removes its folder, also when a test assertion
// failed. Should the test process itself be killed (a CTest timeout), PR_SET_PDEATHSIG kills the
// server with it (its folder stays). Nothing here sends traffic anywhere but 127.0.0.1.
//
// A test can kill it (kill9()) and start it again on the same port and folder (restart()): with
// the AOF, every write that wait_until_aof_written() saw written comes back. command() sends one
// command over a fresh connection and returns the raw RESP reply, so tests need no client library.
//
// Not thread-safe: one thread drives it (command() and ping() may run on any thread). The server
// is also killed when the thread that started (or restarted) it exits, so start it on the test's
// own thread, not on a short-lived helper thread.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "tests/process_util.h"

namespace oppidum::test_util {

struct RedisServerOptions {
  bool append_only = true;  // appendonly yes, appendfsync everysec; false: no persistence at all
  // requirepass when not empty; letters, digits and "._~-" only (it goes into url() unescaped).
  std::string password;
  // More configuration as "--name", "value", ... pairs appended to the command line.
  std::vector<std::string> extra_args;
};

class RedisServer {
 public:
  static constexpr std::chrono::milliseconds kStartTimeout{60000};  // a loaded machine

  explicit RedisServer(RedisServerOptions options = {}) : options_(std::move(options)) {
    for (char c : options_.password)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '~' ||
            c == '-'))
        throw std::logic_error("RedisServer: the password may hold only letters, digits and ._~-");
    std::string base = ::testing::TempDir();
    if (base.empty()) base = "/tmp/";
    if (base.back() != '/') base += '/';
    std::string pattern = base + "oppidum-redis-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("RedisServer: cannot make a folder " + pattern + ": " +
                               std::strerror(errno));
    dir_ = pattern;
    try {
      // A port that was free a moment ago may be taken before the server binds it: try another.
      constexpr int kTries = 5;
      for (int attempt = 1;; ++attempt) {
        port_ = pick_free_port();
        const Outcome outcome = start();
        if (outcome == Outcome::kReady) break;
        if (outcome == Outcome::kPortTaken && attempt < kTries) {
          std::error_code ec;
          std::filesystem::remove(log_path(), ec);
          continue;
        }
        throw std::runtime_error(failure_message(outcome));
      }
    } catch (...) {
      stop(false);
      remove_dir();
      throw;
    }
  }

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  ~RedisServer() {
    stop(true);
    remove_dir();
  }

  int port() const { return port_; }
  // The process id while it runs (started and not stopped by kill9()); -1 otherwise.
  pid_t pid() const { return pid_; }
  // "redis://127.0.0.1:<port>/<run>", or "redis://:<password>@127.0.0.1:<port>/<run>".
  std::string url(const std::string& run) const {
    const std::string auth = options_.password.empty() ? "" : ":" + options_.password + "@";
    return "redis://" + auth + "127.0.0.1:" + std::to_string(port_) + "/" + run;
  }
  const std::string& password() const { return options_.password; }
  // Its working folder: the AOF (appendonlydir/), redis.log and stderr.log.
  const std::string& dir() const { return dir_; }
  std::string log() const { return read_file(log_path()); }

  // SIGKILL to its process group; returns once it is gone (the port is free again).
  void kill9() { stop(false); }

  // Stops it if it still runs (SHUTDOWN NOSAVE, which still flushes the AOF), then starts it again
  // on the same port and folder (the AOF brings the data back) and waits until it answers PING.
  // While it was down another program may have taken the port for a while (a client's socket):
  // it tries again for a minute. Throws std::runtime_error with the log tail when it does not come
  // up (it is then stopped).
  void restart() {
    stop(true);
    Outcome outcome = start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (outcome == Outcome::kPortTaken && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      outcome = start();
    }
    if (outcome != Outcome::kReady) {
      const std::string message = failure_message(outcome);
      stop(false);
      throw std::runtime_error(message);
    }
  }

  // Waits until every write command answered so far is written to the AOF file (INFO persistence
  // shows an empty AOF buffer), so that it survives kill9(); false when that does not happen
  // within `timeout`. With appendfsync everysec a write can be postponed while a background fsync
  // runs (up to 2 s); this replaces a fixed sleep. std::logic_error without append_only.
  bool wait_until_aof_written(std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    if (!options_.append_only)
      throw std::logic_error("RedisServer::wait_until_aof_written: the server has no AOF");
    return wait_until(
        [this] {
          try {
            return command({"INFO", "persistence"}).find("\r\naof_buffer_length:0\r\n") !=
                   std::string::npos;
          } catch (const std::exception&) {
            return false;
          }
        },
        timeout);
  }

  // True when it answers PING (after AUTH when it has a password). Never throws.
  bool ping() const {
    try {
      return command({"PING"}) == "+PONG\r\n";
    } catch (const std::exception&) {
      return false;
    }
  }

  // Sends one command over a new connection (AUTH first, pipelined, when there is a password and
  // `authenticate`) and returns its raw RESP reply, e.g. "+OK\r\n", "$3\r\nabc\r\n", "$-1\r\n",
  // "-NOAUTH Authentication required.\r\n"; a failed AUTH's error reply replaces it. Throws
  // std::runtime_error when the server cannot be reached or does not answer within 30 s.
  std::string command(const std::vector<std::string>& args, bool authenticate = true) const {
    std::string request;
    const bool auth = authenticate && !options_.password.empty();
    if (auth) request += encode({"AUTH", options_.password});
    request += encode(args);
    Connection conn(port_);
    conn.send_all(request);
    std::string buffer;
    std::size_t pos = 0;
    if (auth) {
      const std::string reply = conn.read_reply(buffer, pos);
      if (reply != "+OK\r\n") return reply;
    }
    return conn.read_reply(buffer, pos);
  }

 private:
  enum class Outcome { kReady, kExited, kPortTaken, kTimeout, kNotInstalled, kSpawnFailed };

  // A client socket on 127.0.0.1:port with 30 s timeouts, closed by the destructor.
  class Connection {
   public:
    explicit Connection(int port) {
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd_ < 0) fail("socket");
      timeval tv{};
      tv.tv_sec = 30;
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      const sockaddr_in addr = loopback(port);
      if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
        fail("connect to 127.0.0.1:" + std::to_string(port));
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection() {
      if (fd_ >= 0) ::close(fd_);
    }

    void send_all(const std::string& data) {
      std::size_t sent = 0;
      while (sent < data.size()) {
        const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail("send");
        sent += static_cast<std::size_t>(n);
      }
    }

    // The next whole reply from `pos` in `buffer`, reading more as needed.
    std::string read_reply(std::string& buffer, std::size_t& pos) {
      for (;;) {
        const std::size_t end = reply_end(buffer, pos);
        if (end != std::string::npos) {
          std::string reply = buffer.substr(pos, end - pos);
          pos = end;
          return reply;
        }
        char chunk[4096];
        const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) throw std::runtime_error("RedisServer: the server closed the connection");
        if (n < 0) fail("recv");
        buffer.append(chunk, static_cast<std::size_t>(n));
      }
    }

   private:
    [[noreturn]] static void fail(const std::string& what) {
      throw std::runtime_error("RedisServer: " + what + ": " + std::strerror(errno));
    }
    int fd_ = -1;
  };

  static sockaddr_in loopback(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
  }

  static std::string encode(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    return out;
  }

  // Where the RESP reply starting at `pos` ends; npos while it is incomplete.
  static std::size_t reply_end(const std::string& buf, std::size_t pos) {
    const std::size_t eol = buf.find("\r\n", pos);
    if (eol == std::string::npos) return std::string::npos;
    const char type = buf[pos];
    const std::size_t line_end = eol + 2;
    if (type == '+' || type == '-' || type == ':') return line_end;
    if (type != '$' && type != '*')
      throw std::runtime_error("RedisServer: unexpected reply " + buf.substr(pos, eol - pos));
    const long n = std::stol(buf.substr(pos + 1, eol - pos - 1));
    if (n < 0) return line_end;  // null bulk string or array
    if (type == '$') {
      const std::size_t end = line_end + static_cast<std::size_t>(n) + 2;
      return end <= buf.size() ? end : std::string::npos;
    }
    std::size_t end = line_end;
    for (long i = 0; i < n; ++i) {
      if (end >= buf.size()) return std::string::npos;
      end = reply_end(buf, end);
      if (end == std::string::npos) return end;
    }
    return end;
  }

  // A port on 127.0.0.1 that nothing listens on right now.
  static int pick_free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      throw std::runtime_error(std::string("RedisServer: socket: ") + std::strerror(errno));
    sockaddr_in addr = loopback(0);
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      const std::string error = std::strerror(errno);
      ::close(fd);
      throw std::runtime_error("RedisServer: cannot find a free loopback port: " + error);
    }
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  // The first executable `name` on the PATH; empty when there is none.
  static std::string find_program(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t begin = 0;
    for (;;) {
      const std::size_t colon = dirs.find(':', begin);
      std::string d =
          dirs.substr(begin, colon == std::string::npos ? std::string::npos : colon - begin);
      if (d.empty()) d = ".";
      const std::string candidate = d + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      if (colon == std::string::npos) return "";
      begin = colon + 1;
    }
  }

  std::string log_path() const { return dir_ + "/redis.log"; }
  std::string stderr_path() const { return dir_ + "/stderr.log"; }

  // Spawns redis-server on port_ and waits until it answers PING as itself.
  Outcome start() {
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(port_),
                                     "--bind",
                                     "127.0.0.1",
                                     "--protected-mode",
                                     "yes",
                                     "--dir",
                                     dir_,
                                     "--daemonize",
                                     "no",
                                     "--save",
                                     "",
                                     "--appendonly",
                                     options_.append_only ? "yes" : "no",
                                     "--appendfsync",
                                     "everysec",
                                     "--logfile",
                                     log_path()};
    if (!options_.password.empty()) {
      args.push_back("--requirepass");
      args.push_back(options_.password);
    }
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    const std::string program = find_program("redis-server");
    if (program.empty()) return Outcome::kNotInstalled;
    const std::string err = stderr_path();
    int exec_pipe[2];
    if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
      spawn_error_ = errno;
      return Outcome::kSpawnFailed;
    }
    // fork and exec rather than posix_spawn for PR_SET_PDEATHSIG: the server dies with the test
    // process even when that is killed (a CTest timeout). Only async-signal-safe calls in the
    // child.
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (in < 0 || out < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) {
        const int e = errno;
        (void)!::write(exec_pipe[1], &e, sizeof e);
        ::_exit(127);
      }
      if (in > 2) ::close(in);
      if (out > 2) ::close(out);
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // the test's other descriptors stay behind
      ::execv(program.c_str(), argv.data());
      const int e = errno;
      (void)!::write(exec_pipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::close(exec_pipe[1]);
    if (pid < 0) {
      spawn_error_ = errno;
      ::close(exec_pipe[0]);
      return Outcome::kSpawnFailed;
    }
    ::setpgid(pid, pid);  // also here, so that kill(-pid) works at once (fails once it has exec'd)
    int child_error = 0;
    ssize_t n;
    while ((n = ::read(exec_pipe[0], &child_error, sizeof child_error)) < 0 && errno == EINTR) {
    }
    ::close(exec_pipe[0]);
    if (n > 0) {  // exec failed; the pipe closes without data when it succeeds
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      spawn_error_ = child_error;
      return Outcome::kSpawnFailed;
    }
    pid_ = pid;

    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    for (;;) {
      if (exited()) {
        stop(false);  // reaps it
        return log().find("Address already in use") != std::string::npos ? Outcome::kPortTaken
                                                                         : Outcome::kExited;
      }
      if (ping()) {
        // Another server may hold the port (ours then exits): make sure the answer is ours.
        if (is_ours()) return Outcome::kReady;
        stop(false);
        return Outcome::kPortTaken;
      }
      if (std::chrono::steady_clock::now() > deadline) return Outcome::kTimeout;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  bool is_ours() const {
    try {
      return command({"INFO", "server"}).find("\r\nprocess_id:" + std::to_string(pid_) + "\r\n") !=
             std::string::npos;
    } catch (const std::exception&) {
      return false;
    }
  }

  // Whether the child has exited (left unreaped, so its process group stays reserved).
  bool exited() const {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
      return errno != EINTR;  // ECHILD: reaped by someone else, so gone
    return info.si_pid != 0;
  }

  // Stops the server (when `graceful`, SHUTDOWN NOSAVE, which still writes and fsyncs the AOF,
  // then SIGTERM, each with up to 3 s to exit), then SIGKILLs its process group (an AOF rewrite
  // child, say) and reaps it.
  void stop(bool graceful) {
    if (pid_ <= 0) return;
    if (graceful && !exited()) {
      try {
        command({"SHUTDOWN", "NOSAVE"});  // no reply: the server closes the connection
      } catch (const std::exception&) {
      }
      const auto gone = [this] { return exited(); };
      if (!wait_until(gone, std::chrono::milliseconds(3000))) {
        ::kill(pid_, SIGTERM);
        wait_until(gone, std::chrono::milliseconds(3000));
      }
    }
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  void remove_dir() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  std::string failure_message(Outcome outcome) const {
    std::string what;
    switch (outcome) {
      case Outcome::kReady:
        return "";
      case Outcome::kNotInstalled:
        return "RedisServer: redis-server is not on the PATH (scripts/setup.sh installs it)";
      case Outcome::kSpawnFailed:
        return std::string("RedisServer: cannot start redis-server: ") +
               std::strerror(spawn_error_);
      case Outcome::kExited:
        what = "exited at start";
        break;
      case Outcome::kPortTaken:
        what = "found its port taken";
        break;
      case Outcome::kTimeout:
        what = "did not answer PING within " + std::to_string(kStartTimeout.count() / 1000) + " s";
        break;
    }
    return "RedisServer: redis-server on 127.0.0.1:" + std::to_string(port_) + " " + what +
           "; stderr: " + tail(read_file(stderr_path())) + "; log tail:\n" + tail(log());
  }

  // The last lines of `text` (at most 2000 characters).
  static std::string tail(const std::string& text) {
    constexpr std::size_t kMax = 2000;
    if (text.size() <= kMax) return text;
    const std::size_t nl = text.find('\n', text.size() - kMax);
    return "..." + text.substr(nl == std::string::npos ? text.size() - kMax : nl);
  }

  RedisServerOptions options_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  int spawn_error_ = 0;
};

}  // namespace oppidum::test_util
