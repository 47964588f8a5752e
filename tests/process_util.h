// Running a command line from a test: its standard output and exit status.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

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

}  // namespace oppidum::test_util
