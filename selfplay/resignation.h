// Resignation in self-play, with its own check (AlphaZero; KataGo's variant): a player resigns
// once the root value of its own last `moves` searches stayed below `below`. A share of the games
// (`playout`) never resigns; in those, the first moment a player would have resigned is checked
// against the game's end, and a check is wrong when that player did not lose. Resigning is
// allowed only while at least `min_checks` of the last kRecentChecks checks exist and at most
// `max_false` of them were wrong, so it switches itself off (and back on) as the network's value
// head earns or loses trust. While it is off, every game that wants to resign plays on and is
// checked, so the checks keep coming.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "mcts/runner.h"

namespace oppidum::selfplay {

struct ResignSettings {
  double below = 0.0;       // resign below this root value (in (-1, 0)); 0: never resign
  int moves = 3;            // ... for this many of the player's own moves in a row
  double playout = 0.1;     // share of games played out to check resignations
  double max_false = 0.05;  // resignation is off while more checks than this share were wrong
  int min_checks = 20;      // and while fewer checks than this were made
};

class ResignControl {
 public:
  static constexpr int kRecentChecks = 100;  // the checks the false rate is measured over

  explicit ResignControl(ResignSettings settings) : settings_(settings) {}
  const ResignSettings& settings() const { return settings_; }
  bool enabled() const { return settings_.below < 0.0; }

  // The player who moved last, when its last `moves` root values were all below `below`
  // (the values of its own moves only: DVONN players do not always alternate); else -1.
  int wants_to_resign(const std::vector<mcts::MoveStats>& moves) const;
  // Whether resigning is allowed now (thread-safe).
  bool allowed() const;
  // A checked would-be resignation: `wrong` when that player did not lose.
  void record_check(bool wrong);
  void count_resignation();

  struct Stats {
    std::int64_t resigned = 0;      // games ended by resignation
    std::int64_t checks = 0;        // would-be resignations checked by playing on
    std::int64_t wrong = 0;         // of which the player did not lose
    double recent_false_rate = 0;   // wrong share of the last kRecentChecks checks
    bool allowed = false;
  };
  Stats stats() const;

 private:
  bool allowed_locked() const;

  const ResignSettings settings_;
  mutable std::mutex mutex_;
  std::deque<bool> recent_;  // the last kRecentChecks checks, true = wrong
  int recent_wrong_ = 0;
  std::int64_t resigned_ = 0, checks_ = 0, wrong_ = 0;
};

}  // namespace oppidum::selfplay
