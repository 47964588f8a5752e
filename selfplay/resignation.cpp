#include "selfplay/resignation.h"

namespace oppidum::selfplay {

int ResignControl::wants_to_resign(const std::vector<mcts::MoveStats>& moves) const {
  if (!enabled() || moves.empty()) return -1;
  const int player = moves.back().player;
  int below = 0;
  for (auto it = moves.rbegin(); it != moves.rend() && below < settings_.moves; ++it) {
    if (it->player != player) continue;
    if (!(it->root_value < settings_.below)) return -1;
    ++below;
  }
  return below >= settings_.moves ? player : -1;
}

bool ResignControl::allowed_locked() const {
  const auto n = static_cast<int>(recent_.size());
  return enabled() && n >= settings_.min_checks &&
         recent_wrong_ <= settings_.max_false * static_cast<double>(n);
}

bool ResignControl::allowed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allowed_locked();
}

void ResignControl::record_check(bool wrong) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++checks_;
  wrong_ += wrong;
  recent_.push_back(wrong);
  recent_wrong_ += wrong;
  if (static_cast<int>(recent_.size()) > kRecentChecks) {
    recent_wrong_ -= recent_.front();
    recent_.pop_front();
  }
}

void ResignControl::count_resignation() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++resigned_;
}

ResignControl::Stats ResignControl::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s;
  s.resigned = resigned_;
  s.checks = checks_;
  s.wrong = wrong_;
  s.recent_false_rate =
      recent_.empty() ? 0.0 : static_cast<double>(recent_wrong_) / static_cast<double>(recent_.size());
  s.allowed = allowed_locked();
  return s;
}

}  // namespace oppidum::selfplay
