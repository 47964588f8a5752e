// The optimisation step: one LibTorch network trained on batches from the replay window.
// This header is LibTorch-free (pimpl); trainer/trainer.cpp holds the LibTorch code.
//
// Loss = policy cross-entropy against the search's target (visits, or Gumbel's improved policy;
// illegal actions masked out of the softmax; positions without a policy target contribute no
// policy loss)
//      + value_loss_weight * mean squared error of the value against its target (the game result
//        mixed with the root's search value by value_q_weight: trainer/replay_window.h)
//      + score_loss_weight * mean squared error of the score margin, over the positions that have
//        a score target, when the network has a score head (NetConfig::score_head)
// plus L2 weight decay through the optimiser (SGD with Nesterov momentum, or AdamW).
// Learning rate: linear warm-up over warmup_steps to learning_rate, then constant, or cosine decay
// to 10% of it over lr_decay_steps when that is set.
//
// Devices: weights files hold plain floats, and load_state maps the optimiser archive's tensors
// onto the trainer's device whatever device wrote them, so a run written on a GPU continues on a
// CPU and back.
//
// State: save_state writes the optimiser state (`<prefix>.optim`: each parameter's state in our own
// layout, docs/FORMATS.md, never a LibTorch archive, whose loader compiles TorchScript from the
// file; framed with a magic, a version and a CRC-32 like every other file of a run) and
// then the weights (`<prefix>.ckpt`, a checkpoint), each durably and atomically. load_state
// restores both; when the optimiser file is missing, damaged, from another step, optimiser or
// network shape, or holds a non-finite value, it falls back to fresh optimiser state and says so
// in one line (the weights are what matters; momentum rebuilds in a few hundred steps).
//
// Finite training: step() checks the loss before the optimiser changes any weight, and
// checkpoint() and save_state() check every weight; a NaN or an infinity throws NonFiniteError and
// writes nothing, so a diverged run stops with the last good files in place.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "games/game.h"
#include "model/checkpoint.h"
#include "model/net_config.h"
#include "trainer/config.h"
#include "trainer/replay_window.h"

namespace oppidum::trainer {

// The trainer's settings are the run config's training section (trainer/config.h: optimizer,
// learning_rate, warmup_steps, lr_decay_steps, momentum, weight_decay, weight_decay_on,
// value_loss_weight, score_loss_weight, threads, precision), with `device` resolved: cpu, cuda or
// cuda:N (trainer_settings() in trainer/settings.h resolves an empty one from inference.device;
// the Trainer takes empty as cpu). On cuda the trainer runs on a CUDA stream of its own and waits
// for that stream only, so inference workers on the same GPU run beside it; precision bf16 runs
// the forward pass and the losses under bf16 autocast (weights, gradients and optimiser state stay
// fp32).
using TrainerSettings = config::TrainingSection;

// Training produced a NaN or an infinity (a loss or a weight). The message says which and where.
class NonFiniteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StepStats {
  double policy_loss = 0;  // cross-entropy, mean over positions with a target
  double value_loss = 0;   // mean squared error
  double score_loss = 0;   // mean squared error of the score margin; 0 without a score head
  double loss = 0;         // the optimised total
  double learning_rate = 0;
};

class Trainer {
 public:
  // A fresh, randomly initialised network (seeded).
  Trainer(const Game& game, const model::NetConfig& net, const TrainerSettings& settings,
          std::uint64_t seed);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Keeps the optimiser state. `source` names where the weights come from (a file), for the
  // message of a loss that is not finite before any step changed them.
  void load_weights(const model::Checkpoint& checkpoint, const std::string& source = "");
  // The step counter (after load_weights of a checkpoint from another run state, e.g. recovery).
  void set_steps(std::int64_t steps);
  // Throws NonFiniteError (before changing any weight) when the loss is not finite.
  StepStats step(const TrainingBatch& batch);
  // Mean losses on a batch without changing anything (eval mode).
  StepStats evaluate(const TrainingBatch& batch);
  std::int64_t steps() const;
  // Returns once the work the calls before queued on the device is done (a GPU's kernels run
  // after step() returns): for a clock.
  void synchronize() const;
  const model::NetConfig& net_config() const;  // the network's architecture
  double learning_rate_at(std::int64_t step) const;
  // Throws NonFiniteError when a weight is not finite.
  model::Checkpoint checkpoint(const std::string& metadata) const;

  // Files `<prefix>.optim` and `<prefix>.ckpt`. Throws NonFiniteError or util::FileError.
  void save_state(const std::string& prefix) const;
  struct LoadResult {
    bool found = false;   // false: there is no `<prefix>.ckpt` (nothing was loaded)
    std::string warning;  // one line when the optimiser state had to start fresh
  };
  // Throws model::CheckpointError for a damaged or foreign weights file.
  LoadResult load_state(const std::string& prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oppidum::trainer
