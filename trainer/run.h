// `oppidum train`: the whole AlphaZero loop of one run in one process, resumable at any moment.
//
//   self-play threads (selfplay/) --> inference server (best network) ... finished games -->
//   writer thread --> replay chunks in runs/<name>/games/ --> replay window (trainer/) -->
//   optimiser steps --> every steps_per_generation steps a candidate --> gate match against the
//   best (arena/, SPRT) --> promote: best.ckpt replaced atomically, self-play swaps weights.
//
// The run folder holds everything the run needs (docs/FORMATS.md, "Run folder"): the effective
// config, the best network and every candidate, the trainer's weights and optimiser state, the
// game chunks, the gate history (arena.csv), metrics.csv, log.txt and state.yaml. Every file is
// written to a temporary name and renamed. What is derived is not stored: the generation is the
// trainer's step / steps_per_generation, the samples trained are steps * batch_size, the positions
// seen are counted from the chunks. So killing the process at any moment and running the same
// command again continues the run, losing at most the games in flight and the steps since the last
// generation.
//
// Sample reuse: the trainer takes a step only while (steps + 1) * batch_size stays within
// sample_reuse * positions seen, so it neither races ahead of self-play nor falls behind it for
// long (self-play runs on regardless).
//
// Promotion: the candidate replaces the best when the gate's SPRT accepts H1 (candidate stronger
// by elo1), or when the match reaches its game cap undecided with LLR > 0 (the evidence leans to
// H1). The best network's rating is the sum of the Elo estimates of its promotions, counted from
// the random initial network.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "trainer/config.h"

namespace oppidum::trainer {

struct TrainOptions {
  std::string config_path;             // a configs/*.yaml; may be empty when the run exists
  std::string run_dir;                 // runs/<name>
  std::vector<std::string> overrides;  // --set section.key=value
  bool status_line = true;             // a live status line on standard error
};

// Runs until a stop condition of the config (max_generations, stop_after_minutes) or until `stop`
// becomes true (SIGINT). Throws with a clear message for a bad config, a config that differs from
// the run's, or a damaged checkpoint.
void train(const TrainOptions& options, const std::atomic<bool>& stop);

}  // namespace oppidum::trainer
