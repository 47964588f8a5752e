// The trainer node's telemetry, apart from its loop (trainer/run.cpp): the status line, the
// self-play pipeline's measurements and the cluster monitor. The loop fills a Progress value and
// hands it over; the telemetry reads only that value and what it was given when made (the stats of
// the inference server and of self-play, the run folder for its rows, the store's channel), and
// never calls back into the loop.
//
// - The status line: at most once a second, printed with \r on a terminal, or else logged every
//   30 s.
// - The self-play pipeline (docs/PERFORMANCE.md, "Self-play pipeline"), measured from the first
//   move played (positions count as their move is played, SelfPlayStats::moves, not when their
//   game ends: games end in bursts, and a short run on a large config may finish none): self-play
//   positions/s against the bound of the forward pass, a log line and a "selfplay" row of
//   metrics.csv per generation, a log line per session.
// - The cluster monitor (a run with a Redis store): at most every 5 s the trainer's own heartbeat
//   and the nodes' heartbeats, for the status line; every 30 s "node" and "stream" rows of
//   metrics.csv. The lease on the store is renewed by the loop, not here: a renewal may restart the
//   intake or publish the network again, which are the loop's to do.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "model/inference_server.h"
#include "selfplay/selfplay.h"
#include "store/run_channel.h"
#include "trainer/config.h"
#include "trainer/run_folder.h"
#include "trainer/trainer.h"
#include "util/log.h"

namespace oppidum::trainer {

// The trainer's time this session since its first step: stepping (taking its batch, the step,
// its row, a generation's saves) or waiting because it was `training.sample_reuse` times ahead of
// self-play's positions. Gates and the wait for `training.min_positions` count in neither.
struct TrainerPace {
  std::int64_t steps = 0;
  double stepping_seconds = 0;
  double waiting_seconds = 0;
};

// Where a session of the run is, as the loop last saw it.
struct Progress {
  double seconds = 0;                     // since the session's self-play started
  int generation = 0;                     // of the trainer's steps
  std::int64_t steps = 0;                 // the trainer's
  std::int64_t positions = 0, games = 0;  // in the replay store
  StepStats last_step;                    // the last optimiser step (zeros before the first)
  int best_generation = 0;
  double rating = 0;                      // the chained rating of the best network
  std::string gate;                       // the gate being played, its progress; empty: none
  std::string last_gate;                  // gate_summary of the last gate this session
  std::int64_t stream_lag = 0, stream_evicted = 0;  // a run with a store: the intake's
  TrainerPace pace;                       // this session's
};

// What self-play and the inference server had done at a moment.
struct PipelineMark {
  std::chrono::steady_clock::time_point at;
  model::InferenceStats inference;
  selfplay::SelfPlayStats selfplay;
};

// Self-play from `from` to `to` (the moves played between) against its bound: the forward pass's
// own rate at the batch sizes seen (positions per second of forward time, times the workers)
// divided by the network evaluations per self-play position. Nothing for an interval in which no
// move was played or no batch ran. The row's time and counts are `now`'s; its resignation
// counts are `to`'s when `resign` (resignation is on), else resign_checks stays -1.
std::optional<SelfplayRow> pipeline_row(const PipelineMark& from, const PipelineMark& to,
                                        const Progress& now, bool resign);

// The log line of a pipeline row over `what` ("generation 3", "session"), the forward pass
// having `workers` workers.
std::string pipeline_line(const std::string& what, const SelfplayRow& row, int workers);

// Whether the trainer keeps pace with self-play, in one log line: this session's steps and their
// rate while stepping, the share of its time it waited for positions (ahead of self-play at
// `sample_reuse`; none: it is the bottleneck), and how often the run has sampled each position so
// far (steps x `batch_size` / positions: `sample_reuse` when it keeps pace). Before the first step,
// the positions it waits for (`min_positions`).
std::string trainer_pace_line(const Progress& p, int batch_size, double sample_reuse,
                              std::int64_t min_positions);

// The status line. `selfplay`: this process's self-play threads, none where it has none (a
// trainer fed by nodes: then the line shows no self-play or evaluation rate of its own).
// `cluster` is the cluster monitor's text; empty: a run without a store.
std::string status_text(const Progress& p, const selfplay::SelfPlayStats* selfplay,
                        const model::InferenceStats& inference, bool score_head,
                        const std::string& cluster);

// A gate in a few words, for the status line and the log: "gen 3 +25 [-10, +60] over 40 games:
// promoted; vs alphabeta:depth=2 55.0% (+35 Elo)".
std::string gate_summary(const GateRow& row);

// The nodes of a run with a store as the trainer sees them (by the trainer's clock: no clock skew).
class ClusterMonitor {
 public:
  using Clock = std::chrono::steady_clock;

  // `selfplay`: the stats of the trainer's own self-play threads, a node like any other; empty
  // when it has none. `channel` and `folder` must outlive this object.
  ClusterMonitor(store::RunChannel& channel, RunFolder& folder,
                 std::function<selfplay::SelfPlayStats()> selfplay, Clock::time_point now);

  // "nodes 2 (trainer 1.5/s, w1 0.3/s) lag 0 evicted 0": the nodes seen in the last minute with
  // their games per second (taken over 20 s or more: games arrive a chunk at a time; the first
  // kNodesNamed by name, then "N more"; 0 for a node silent for kSilent) and the stream's lag. At
  // most store::kMaxNodes nodes are tracked (those silent for a minute make room); names the
  // channel would not take are skipped. Polls the store when 5 s have passed since the last poll
  // (else the last text), and writes the rows when 30 s have passed since the last rows.
  const std::string& poll(const Progress& p, Clock::time_point now);

  static constexpr int kNodesNamed = 8;

 private:
  // A node whose heartbeat (every 2 s: worker/worker.cpp) has not changed for this long plays no
  // games: its rate shows as 0 until it beats again, or is forgotten after a minute.
  static constexpr std::chrono::seconds kSilent{15};
  void forget_silent_nodes(Clock::time_point now);

  struct NodeSeen {
    std::int64_t beats = -1, games = 0;
    Clock::time_point changed, sampled;
    double games_per_second = 0;
  };

  store::RunChannel& channel_;
  RunFolder& folder_;
  std::function<selfplay::SelfPlayStats()> selfplay_;
  std::map<std::string, NodeSeen> nodes_;
  std::int64_t own_beats_ = 0;
  Clock::time_point last_poll_{}, last_rows_;
  std::string text_;
};

// The status line, the pipeline and the cluster monitor of one session, as described above.
class Telemetry {
 public:
  using Clock = std::chrono::steady_clock;

  struct Sources {
    std::function<model::InferenceStats()> inference;
    std::function<selfplay::SelfPlayStats()> selfplay;  // empty: no self-play threads
  };

  // `channel`: a run with a store (else null). `status_line`: print the status line when standard
  // error is a terminal. `log` takes the info lines. `folder` and `channel` must outlive this.
  Telemetry(const config::RunConfig& config, bool status_line, Sources sources, RunFolder& folder,
            store::RunChannel* channel, util::LogLine log);

  // From the loop and during a gate: starts the pipeline's measure at the first move played,
  // shows the status line and polls the cluster when their time has come.
  void update(const Progress& p);
  // After a generation's checkpoint is saved: its losses with the score margin's (when the net has
  // a score head: metrics.csv has no column for it), its pipeline line and row, and the
  // resignations so far (when resignation is on).
  void end_generation(const Progress& p);
  // Before self-play stops: the session's pipeline line.
  void end_session(const Progress& p);
  // After self-play stopped and its last games were taken in: the trainer's pace (its positions
  // those of the session's last line), and the share of the root visits kept by tree reuse.
  void end_selfplay(const Progress& p);
  // Before a log line that must stand on a line of its own: clears a status line on the terminal.
  void end_status_line();

 private:
  PipelineMark mark() const;
  void report_pipeline(const PipelineMark& from, const std::string& what, const Progress& p,
                       bool record);

  Sources sources_;
  RunFolder& folder_;
  util::LogLine log_;
  std::optional<ClusterMonitor> cluster_;
  bool score_head_, resign_, search_only_targets_, terminal_;
  int batch_size_;
  double sample_reuse_;
  std::int64_t min_positions_;
  PipelineMark session_mark_, generation_mark_;  // set at the first move played
  bool marked_ = false;
  Clock::time_point last_status_{}, last_status_log_{};
  bool status_shown_ = false;
};

}  // namespace oppidum::trainer
