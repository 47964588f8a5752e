// The training window: the newest self-play positions, ready to be sampled into batches.
//
// Games come in as records (selfplay/game_record.h) and are replayed through the rules; each
// position keeps its state, the search's visit distribution (when the move had a full search) and
// its value target: the game result from the side to move's view, optionally mixed with the
// root's search value (training.value_q_weight). Positions of fast searches are value-only
// rows, or left out (training.fast_search_rows). Each position of a game that ended by the
// rules also gets a score target, the final score margin from the side to move's view:
// (own - opponent's) / (own + opponent's), in [-1, 1] (0 when both are 0); positions of
// adjudicated and resigned games have none (their scores are not final).
//
// The window holds the newest `window_size()` positions, a size that grows with the data seen
// (KataGo): window_min until that many positions exist, then
// window_min + window_growth * (total - window_min), capped at window_max.
//
// A sample is drawn uniformly from the window and transformed by a random board symmetry: its
// planes are the transformed position's encoding and its policy target is moved by
// Game::transform_action, so targets stay aligned with the board.
//
// Threads: `sample` may run on another thread than the one that adds games (BatchPrefetcher's);
// the two exclude each other. Everything else is for the thread that adds games.
#pragma once

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/rng.h"
#include "selfplay/game_record.h"
#include "trainer/config.h"

namespace oppidum::trainer {

// The window's settings are the run config's training section (trainer/config.h): window_min,
// window_max, window_growth, value_q_weight (the value target is (1 - value_q_weight) x the game
// result + value_q_weight x the root's search value, both from the side to move's view) and
// fast_search_rows (drop: positions whose move had a fast, playout-cap search are left out instead
// of kept as value-only rows; the window then holds window_size() full-search rows, which span more
// games).
using WindowSettings = config::TrainingSection;

// One batch in the layout the network trains on (row-major, n positions).
struct TrainingBatch {
  int n = 0;
  std::vector<float> planes;         // n x C x H x W
  std::vector<float> policy;         // n x A: the visit distribution (0 where no target)
  std::vector<float> legal_mask;     // n x A: 1 for legal actions, 0 otherwise
  std::vector<float> policy_weight;  // n: 1 when the position has a policy target
  std::vector<float> value;          // n: the value target for the side to move
  std::vector<float> score;          // n: the score-margin target (0 where there is none)
  std::vector<float> score_weight;   // n: 1 when the position has a score target

  // Makes it n rows of zeros for a game of `plane_size` input floats and `actions` actions.
  void clear(int rows, int plane_size, int actions);
};

// The least memory of a row of the window (trainer/settings.h, check_run_memory).
inline constexpr double kMinWindowRowBytes = 96;  // measured: 116 (ttt) to 130 (mg) a row

// `count` batches of `n` positions from seeded random games, each with a policy target peaked on
// one legal move and a value target of +-1 (no score targets): data a network can learn, for the
// trainer's benchmark and tests. The same seed gives the same batches.
std::vector<TrainingBatch> learnable_batches(const Game& game, int count, int n,
                                             std::uint64_t seed);

class ReplayWindow {
 public:
  ReplayWindow(const Game& game, WindowSettings settings);

  // Replays the record and adds its positions; returns false (and adds nothing) when the record
  // is for another game or does not replay, with the reason in `why`.
  bool add_game(const selfplay::GameRecord& record, std::string* why = nullptr);

  // Whether add_game makes a row of this move: every move, or with fast_search_rows drop only
  // those with a policy target.
  bool makes_row(const selfplay::MoveRecord& move) const {
    return rows_are_positions() || move.policy_target;
  }
  // Whether every position is a row (fast_search_rows value): a restart then counts the rows its
  // window needs from the index's positions.
  bool rows_are_positions() const { return settings_.fast_search_rows != "drop"; }

  // Every self-play position ever added (dropped fast-search positions included): the run's
  // position count, which sizes the window and the training budget.
  std::int64_t total_positions() const { return total_; }
  // Counts positions that are older than the window and were not loaded (a restart reads only
  // the newest chunks), so that the window's size follows the whole run.
  void count_unloaded(std::int64_t positions) { total_ += positions; }
  // The rows held, which sample() draws from: below total_positions() with fast-search rows
  // dropped or chunks left unread or damaged, 0 before any row came in. Once above 0 it never
  // falls back to 0 (the window keeps at least window_min rows).
  std::int64_t size() const { return static_cast<std::int64_t>(samples_.size()); }
  std::int64_t window_size() const;

  // Fills `batch` with n samples drawn with `rng`. Throws std::logic_error when the window is empty.
  void sample(int n, mcts::Rng& rng, TrainingBatch& batch) const;

 private:
  struct Sample {
    std::unique_ptr<GameState> state;
    std::vector<selfplay::VisitCount> visits;  // empty: no policy target
    float value = 0.0f;
    float score = 0.0f;
    bool has_score = false;
  };

  const Game& game_;
  WindowSettings settings_;
  mutable std::mutex mutex_;  // samples_ between a draw and the thread that adds games
  std::deque<Sample> samples_;
  std::int64_t total_ = 0;
};

// Batches of `n` from a window, drawn one ahead: next() returns the batch drawn while the caller
// was busy with the previous one (the first time, one drawn now) and starts drawing the one after
// it on a thread of its own. `train` steps on one batch while the next is drawn; games may come
// into the window meanwhile (a batch is then at most one step older than the window). The window
// must outlive this object.
class BatchPrefetcher {
 public:
  BatchPrefetcher(const ReplayWindow& window, int n, std::uint64_t seed);
  ~BatchPrefetcher();  // waits for a draw in progress
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // The next batch, valid until the next call. Throws what drawing it threw (an empty window:
  // call it only once the window holds rows; it stays so).
  const TrainingBatch& next();

 private:
  const ReplayWindow& window_;
  int n_;
  mcts::Rng rng_;               // the drawing thread's while a draw is in progress
  TrainingBatch ready_, ahead_;  // the caller's; the one being drawn
  std::future<void> drawing_;
};

}  // namespace oppidum::trainer
