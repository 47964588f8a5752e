// A progress line for commands that run for more than a few seconds (bench, arena, ratings,
// export), the terminal's way: on a terminal, one line on standard error rewritten in place
// ('\r', the rest of the old line cleared), at most every `min_interval`; when standard error is
// not a terminal (a pipe, a log file, a test), nothing while it runs, so logs stay free of '\r'
// lines. done() ends it: on a terminal the line is cleared (or replaced by a last text kept on its
// own line); off a terminal the last text, when given, is printed once as a plain line.
// Thread-safe: several threads may update one line.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

namespace oppidum::util {

class ProgressLine {
 public:
  // Writes to `out` (standard error by default); a terminal is asked of `out` itself.
  explicit ProgressLine(std::FILE* out = stderr,
                        std::chrono::milliseconds min_interval = std::chrono::milliseconds(100));
  // For tests: `terminal` says how to behave, whatever `out` is.
  ProgressLine(std::FILE* out, bool terminal,
               std::chrono::milliseconds min_interval = std::chrono::milliseconds(100));
  ~ProgressLine();  // done() if not done yet
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool terminal() const { return terminal_; }
  // Shows `text` (one line, no newline) unless the last one was shown less than min_interval ago
  // (`now`: at once, for a new phase of the work).
  void update(const std::string& text, bool now = false);
  // Clears the line until the next update (so that a line of standard output lands on a clean
  // line).
  void clear();
  // Ends the line: see above. Later updates are ignored.
  void done(const std::string& last_text = "");

 private:
  void clear_locked();

  std::FILE* out_;
  bool terminal_;
  std::chrono::milliseconds min_interval_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_shown_{};
  std::size_t shown_width_ = 0;  // characters of the line on screen now
  bool done_ = false;
};

}  // namespace oppidum::util
