// The optimisation step: one LibTorch network trained on batches from the replay window.
// This header is LibTorch-free (pimpl); trainer/trainer.cpp holds the LibTorch code.
//
// Loss = policy cross-entropy against the search's visit distribution (illegal actions masked out
// of the softmax; positions without a policy target contribute no policy loss)
//      + value_loss_weight * mean squared error of the value against the game result
// plus L2 weight decay through the optimiser (SGD with Nesterov momentum, or AdamW).
// Learning rate: linear warm-up over warmup_steps to learning_rate, then constant, or cosine decay
// to 10% of it over lr_decay_steps when that is set.
//
// State: save_state writes the weights (a checkpoint, model/checkpoint.h) and the optimiser state
// (a LibTorch archive) to temporary names and renames them; load_state restores both, and falls
// back to fresh optimiser state (saying so) when the two files do not belong together.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "games/game.h"
#include "model/checkpoint.h"
#include "model/net_config.h"
#include "trainer/replay_window.h"

namespace oppidum::trainer {

struct TrainerSettings {
  std::string optimizer = "sgd";  // sgd | adamw
  double learning_rate = 0.02;
  int warmup_steps = 100;
  double lr_decay_steps = 0;
  double momentum = 0.9;
  double weight_decay = 1e-4;
  double value_loss_weight = 1.0;
  std::string device = "cpu";     // cpu | cuda
  int threads = 0;                // LibTorch intra-op threads; 0 = every core
};

struct StepStats {
  double policy_loss = 0;  // cross-entropy, mean over positions with a target
  double value_loss = 0;   // mean squared error
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

  void load_weights(const model::Checkpoint& checkpoint);  // keeps the optimiser state
  StepStats step(const TrainingBatch& batch);
  // Mean losses on a batch without changing anything (eval mode).
  StepStats evaluate(const TrainingBatch& batch);
  std::int64_t steps() const;
  double learning_rate_at(std::int64_t step) const;
  model::Checkpoint checkpoint(const std::string& metadata) const;

  // Files `<prefix>.ckpt` and `<prefix>.optim`.
  void save_state(const std::string& prefix) const;
  // Returns false when there is no saved state (a new run); throws on a damaged weights file.
  bool load_state(const std::string& prefix);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oppidum::trainer
