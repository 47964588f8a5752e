// Self-play: worker threads that each drive many games at once through mcts::GameRunner (so one
// thread keeps an inference batch full), and one writer thread that receives finished games
// through a bounded queue and appends them to the replay store in chunks.
//
// Each move gets a full search (with root noise; its visit distribution is a policy target) with
// probability full_search_fraction, otherwise a fast search without noise that only picks the move
// (playout-cap randomisation, KataGo). Every random choice derives from the run seed, the session
// (how many times the run was started) and the worker and game index.
//
// Stopping: stop() sets the stop flag, the workers drop the games in progress, and the writer
// writes every finished game still queued before it exits. start() after stop() plays on. A record names the network that was
// current when the game ended (the evaluator may switch weights during a game).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mcts/evaluator.h"
#include "mcts/runner.h"
#include "mcts/search.h"
#include "selfplay/bounded_queue.h"
#include "selfplay/game_record.h"
#include "selfplay/resignation.h"
#include "selfplay/replay_store.h"

namespace oppidum::selfplay {

struct SelfPlaySettings {
  std::string game = "mg";
  int threads = 1;
  int concurrent_games = 64;       // per thread
  int simulations = 100;           // full search
  int fast_simulations = 25;       // fast search
  double full_search_fraction = 0.25;
  mcts::SearchConfig search;       // cpuct, fpu, noise, temperature (simulations unused)
  // The policy target of a full PUCT search: the root's child visits, with those kept from
  // earlier searches by tree reuse (false) or of this search alone (true). Gumbel's target is
  // its improved policy either way.
  bool target_this_search_only = false;
  ResignSettings resign;           // off unless resign.below < 0
  int max_plies = 300;
  int games_per_chunk = 32;
  // The longest a finished game waits in memory for its chunk to fill: a chunk is written once its
  // first game has waited this long, so the trainer sees games soon however large the chunks, and
  // a kill loses at most that much.
  double max_chunk_seconds = 60;
  std::uint64_t seed = 0;          // the run seed
  std::uint64_t session = 0;       // distinct per start of the run, so a resumed run plays new games
};

// The memory of self-play's games: threads x concurrent_games search trees of simulations x the
// game's mean number of legal actions 32-byte nodes (each simulation expands a leaf into its
// children; mcts/search.h, "Memory"; the mean measured over a few random games), at most
// max_tree_nodes each, plus kGameBytes for each game's own state.
double search_memory_bytes(const SelfPlaySettings& settings);
// A game's memory besides its tree (positions, scratch buffers, its record so far), at the least:
// measured 12 KB (Murus Gallicus), 24 KB (Tic-tac-toe) and 25 KB (DVONN) a game, with 4096
// concurrent games of one simulation.
inline constexpr double kGameBytes = 12 * 1024;
// Throws std::invalid_argument naming the keys when search_memory_bytes is more than
// `machine_bytes` (0: this machine's memory): such a run could only be killed for memory, later.
void check_search_memory(const SelfPlaySettings& settings, double machine_bytes = 0);

struct SelfPlayStats {
  std::int64_t games = 0;      // games written to the store
  std::int64_t finished = 0;   // games finished, written or not (yet)
  std::int64_t positions = 0;  // moves in those games
  // Moves searched and played so far, in games finished or not: the pipeline's rate (games end,
  // and are written a chunk at a time, in bursts; a short run may finish none).
  std::int64_t moves = 0;
  std::int64_t policy_targets = 0;  // of which full searches
  // The target visits of the full PUCT searches (root child visits with what the search proved,
  // mcts::settle_target), and of those the visits kept from earlier searches by tree reuse
  // (whether or not the targets count them).
  std::int64_t target_visits = 0;
  std::int64_t reused_target_visits = 0;
  ResignControl::Stats resign;     // resignations and their checks (selfplay/resignation.h)
};

// A finished game from the runner as a record (`network_step` names the network); see
// SelfPlaySettings::target_this_search_only.
GameRecord to_record(const mcts::FinishedGame& game, std::uint64_t seed, std::int64_t network_step,
                     bool target_this_search_only = false);

class SelfPlay {
 public:
  // `evaluator` and `store` must outlive this object. `network_step` is called from worker threads
  // when a game ends.
  SelfPlay(mcts::Evaluator& evaluator, GameSink& store, SelfPlaySettings settings,
           std::function<std::int64_t()> network_step);
  ~SelfPlay();  // stops and joins

  void start();
  void stop();
  SelfPlayStats stats() const;
  // The first error a worker or the writer died of, or empty.
  std::string error() const;

 private:
  void worker(int index);
  void writer();
  void record_error(const std::string& what);
  void count_reuse(const mcts::FinishedGame& game);

  mcts::Evaluator& evaluator_;
  GameSink& store_;
  const SelfPlaySettings settings_;
  std::function<std::int64_t()> network_step_;
  BoundedQueue<GameRecord> finished_;
  std::atomic<bool> stop_{false};
  std::uint64_t starts_ = 0;  // start() calls; 1 during the first
  std::vector<std::thread> threads_;
  std::atomic<std::int64_t> games_{0}, finished_games_{0}, positions_{0}, policy_targets_{0},
      moves_{0};
  std::atomic<std::int64_t> target_visits_{0}, reused_target_visits_{0};
  ResignControl resign_;
  mutable std::mutex error_mutex_;
  std::string error_;
};

}  // namespace oppidum::selfplay
