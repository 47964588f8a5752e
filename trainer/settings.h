// The run config (trainer/config.h) turned into the settings of the modules it drives: the
// network shape, the inference backend and server, self-play, the optimiser. One place, so that
// the trainer node and a self-play worker node build the same objects from the same config.
#pragma once

#include <cstdint>
#include <string>

#include "model/backend.h"
#include "model/inference_server.h"
#include "selfplay/selfplay.h"
#include "trainer/config.h"
#include "trainer/trainer.h"

namespace oppidum::trainer {

model::BackendOptions backend_options(const config::InferenceSection& inference);
model::InferenceServerOptions server_options(const config::InferenceSection& inference);
// server_options for self-play's server: uniform priors and value 0 for outputs that are not
// finite, counted (model::InferenceServerOptions::uniform_for_non_finite), never a stop.
model::InferenceServerOptions selfplay_server_options(const config::InferenceSection& inference);

// The log line of a self-play node (the trainer's, a worker) about the positions its server took
// with uniform priors for outputs that were not finite (stats().non_finite): at the first, and
// each time their count has doubled; empty otherwise.
class NonFiniteNotice {
 public:
  std::string operator()(std::uint64_t non_finite);

 private:
  std::uint64_t told_ = 0;  // the count last told of
};
// The run's search (root policy, cpuct, fpu, Gumbel constants) without noise or temperature: what
// gates play with (plus their simulations); self-play adds its noise and temperatures.
mcts::SearchConfig search_config(const config::RunConfig& config, int simulations);
// `session` distinguishes the starts of a run, so each plays new games.
selfplay::SelfPlaySettings selfplay_settings(const config::RunConfig& config, std::uint64_t session);
// The training section with training.device resolved (config::training_device).
TrainerSettings trainer_settings(const config::RunConfig& config);

// Throws std::invalid_argument when the run would need more of the machine's memory than
// `machine_bytes` (0: this machine's), saying what each part needs and which keys make it:
// self-play's games and trees (selfplay::search_memory_bytes, when selfplay.threads > 0), the
// replay window (training.window_max rows of at least kMinWindowRowBytes), the networks the run
// holds on the CPU (the trainer's weights, gradients and optimiser state, each inference worker's
// copy of the best network, a candidate and a gate's or anchor's, checkpoint buffers) and their
// activations (the trainer's at training.batch_size, the torch inference backend's at
// inference.max_batch). Parts on a GPU are not counted. Checked before a run is made or resumed: such a run could only be killed for
// memory, later (a window grows for hours first), and its net and training keys cannot change:
// when `resuming`, the error names only the keys a later session may change.
void check_run_memory(const config::RunConfig& config, bool resuming, double machine_bytes = 0);

}  // namespace oppidum::trainer
