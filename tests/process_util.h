// For tests that run programs: a command line's standard output and exit status, and the
// content of a file it wrote.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
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

// The whole file, byte for byte; empty when it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace oppidum::test_util
