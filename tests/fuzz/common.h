// Shared helpers for the libFuzzer harnesses (tests/fuzz/fuzz_*.cpp, scripts/fuzz.sh).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "games/game.h"
#include "games/registry.h"

namespace fuzz {

// A finding that no sanitizer reports (a round-trip mismatch, a broken invariant): print and abort
// so that libFuzzer saves the input.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}
#define FUZZ_CHECK(cond, msg)                                     \
  do {                                                            \
    if (!(cond)) ::fuzz::fail(std::string(#cond) + ": " + (msg)); \
  } while (0)

// One of the registered games from a selector byte.
inline const oppidum::Game& pick_game(std::uint8_t selector) {
  const auto& games = oppidum::all_games();
  return *games[selector % games.size()];
}

// A private scratch folder per process (libFuzzer runs one input at a time per process), removed
// when the process exits normally.
inline const std::string& scratch_dir() {
  struct Dir {
    std::string path;
    Dir() {
      char tmpl[] = "/tmp/oppidum-fuzz-XXXXXX";
      if (!::mkdtemp(tmpl)) std::abort();
      path = tmpl;
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace fuzz
