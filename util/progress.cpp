#include "util/progress.h"

#include <unistd.h>

namespace oppidum::util {

ProgressLine::ProgressLine(std::FILE* out, std::chrono::milliseconds min_interval)
    : ProgressLine(out, ::isatty(::fileno(out)) == 1, min_interval) {}

ProgressLine::ProgressLine(std::FILE* out, bool terminal, std::chrono::milliseconds min_interval)
    : out_(out), terminal_(terminal), min_interval_(min_interval) {}

ProgressLine::~ProgressLine() { done(); }

void ProgressLine::clear_locked() {
  if (shown_width_ == 0) return;
  std::fprintf(out_, "\r%*s\r", static_cast<int>(shown_width_), "");
  shown_width_ = 0;
}

void ProgressLine::update(const std::string& text, bool now) {
  if (!terminal_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return;
  const auto time = std::chrono::steady_clock::now();
  if (!now && shown_width_ > 0 && time - last_shown_ < min_interval_) return;
  last_shown_ = time;
  const std::string line = text.substr(0, text.find('\n'));
  // Spaces over what is left of a longer line before.
  const int pad = shown_width_ > line.size() ? static_cast<int>(shown_width_ - line.size()) : 0;
  std::fprintf(out_, "\r%s%*s", line.c_str(), pad, "");
  if (pad > 0) std::fprintf(out_, "\r%s", line.c_str());
  std::fflush(out_);
  shown_width_ = line.size();
}

void ProgressLine::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_) clear_locked();
  std::fflush(out_);
}

void ProgressLine::done(const std::string& last_text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return;
  done_ = true;
  if (terminal_) clear_locked();
  if (!last_text.empty()) std::fprintf(out_, "%s\n", last_text.c_str());
  std::fflush(out_);
}

}  // namespace oppidum::util
