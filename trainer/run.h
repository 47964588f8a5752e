// `oppidum train`: the whole AlphaZero loop of one run in one process, resumable at any moment.
//
//   self-play threads (selfplay/) --> inference server (best network) ... finished games -->
//   writer thread --> replay chunks in runs/<name>/games/ --> replay window (trainer/) -->
//   optimiser steps --> every steps_per_generation steps a candidate --> gate match against the
//   best (arena/, SPRT) --> promote: best.ckpt replaced atomically, self-play swaps weights.
//
// The run folder (trainer/run_folder.h) holds everything the run needs and has one owner: a
// second `train` on it is refused, naming the first. Killing the process at any moment and running
// the same command again continues the run at the trainer's last generation, losing at most the
// games in flight and the steps since then; missing or damaged files are errors, or rebuilt with
// --recover, never a silent fresh start. A non-finite loss or weight stops the run with the last
// good files in place. Ctrl-C (or SIGTERM) stops within about a second, also during a gate.
//
// Sample reuse: the trainer takes a step only while (steps + 1) * batch_size stays within
// sample_reuse * positions seen, so it neither races ahead of self-play nor falls behind it for
// long (self-play runs on regardless).
//
// Gating and ratings: trainer/gate.h. The status line, the self-play pipeline's measurements
// and the cluster monitor: trainer/progress.h.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace oppidum::trainer {

struct TrainOptions {
  std::string config_path;             // a configs/*.yaml; may be empty when the run exists
  std::string run_dir;                 // runs/<name>
  std::vector<std::string> overrides;  // --set section.key=value
  bool status_line = true;             // a live status line on standard error
  bool recover = false;                // rebuild missing or damaged files (trainer/run_folder.h)
  std::string store_password;          // for run.store; never written anywhere
  bool insecure = false;               // allow a non-loopback Redis without a password
};

// Runs until a stop condition of the config (max_generations, stop_after_minutes) or until `stop`
// becomes true (SIGINT). Throws with a clear message for a bad config, a config that differs from
// the run's, or a damaged checkpoint.
void train(const TrainOptions& options, const std::atomic<bool>& stop);

}  // namespace oppidum::trainer
