// For tests that run programs: a command line's standard output and exit status, the content of a
// file it wrote, and programs run in the background that never outlive the test.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

extern char** environ;

namespace oppidum::test_util {

struct CommandResult {
  std::string out;  // standard output (add 2>&1 to the command for standard error too)
  int status = -1;  // exit status; -1 when it could not start or did not exit normally
};

// Runs `command` with /bin/sh and waits for it.
inline CommandResult run_shell(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The whole file, byte for byte; empty when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A command run by /bin/sh in the background, in its own process group. The destructor kills the
// group and reaps it, so a failed assertion never leaves a process running after the test.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::string& command) {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    std::string shell = "/bin/sh", dash_c = "-c", cmd = "exec " + command;
    char* argv[] = {shell.data(), dash_c.data(), cmd.data(), nullptr};
    if (posix_spawn(&pid_, "/bin/sh", nullptr, &attr, argv, environ) != 0) pid_ = -1;
    posix_spawnattr_destroy(&attr);
  }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  ~BackgroundProcess() {
    if (pid_ > 0 && !status_) {
      ::kill(-pid_, SIGKILL);
      wait_for(std::chrono::seconds(30));
    }
  }

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  void signal(int sig) const { ::kill(pid_, sig); }
  // The exit status (or 128 + signal) once the process ended within `timeout`; nothing otherwise.
  std::optional<int> wait_for(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!status_) {
      int status = 0;
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_)
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      else if (r < 0 || std::chrono::steady_clock::now() > deadline)
        break;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status_;
  }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Polls `done` every 10 ms until it holds or `timeout` passes; returns its last value.
template <class F>
bool wait_until(F done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace oppidum::test_util
