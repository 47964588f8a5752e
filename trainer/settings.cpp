#include "trainer/settings.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "arena/player.h"
#include "model/checkpoint.h"
#include "trainer/replay_window.h"
#include "util/machine.h"

namespace oppidum::trainer {

model::BackendOptions backend_options(const config::InferenceSection& s) {
  model::BackendOptions b;
  b.kind = model::parse_backend_kind(s.backend);
  b.device = model::parse_device(s.device);
  b.threads = s.threads;  // per worker; 0: the server divides the cores among its workers
  b.precision = model::parse_precision(s.precision);
  return b;
}

model::InferenceServerOptions server_options(const config::InferenceSection& s) {
  model::InferenceServerOptions o;
  o.max_batch = s.max_batch;
  o.max_wait = std::chrono::microseconds(s.max_wait_us);
  o.workers = s.workers;
  o.cuda_devices = config::parse_cuda_devices(s.cuda_devices);
  return o;
}

model::InferenceServerOptions selfplay_server_options(const config::InferenceSection& s) {
  model::InferenceServerOptions o = server_options(s);
  o.uniform_for_non_finite = true;
  return o;
}

std::string NonFiniteNotice::operator()(std::uint64_t non_finite) {
  if (non_finite == 0 || non_finite < 2 * told_) return "";
  told_ = non_finite;
  return "the network's outputs were not finite (NaN or infinite) for " +
         std::to_string(non_finite) +
         " position(s) so far; it was searched with uniform priors and value 0 there";
}

mcts::SearchConfig search_config(const config::RunConfig& c, int simulations) {
  // A match search (no noise, no temperature) with the run's search settings.
  mcts::SearchConfig s = arena::arena_search_config(simulations, static_cast<float>(c.selfplay.cpuct));
  s.root = mcts::root_policy_from_string(c.selfplay.root);
  s.cpuct_base = static_cast<float>(c.selfplay.cpuct_base);
  s.fpu_reduction = static_cast<float>(c.selfplay.fpu_reduction);
  s.gumbel_considered = c.selfplay.gumbel_considered;
  s.gumbel_c_visit = static_cast<float>(c.selfplay.gumbel_c_visit);
  s.gumbel_c_scale = static_cast<float>(c.selfplay.gumbel_c_scale);
  return s;
}

selfplay::SelfPlaySettings selfplay_settings(const config::RunConfig& c, std::uint64_t session) {
  selfplay::SelfPlaySettings s;
  s.game = c.run.game;
  s.threads = c.selfplay.threads;
  s.concurrent_games = c.selfplay.concurrent_games;
  s.simulations = c.selfplay.simulations;
  s.fast_simulations = c.selfplay.fast_simulations;
  s.full_search_fraction = c.selfplay.full_search_fraction;
  s.search = search_config(c, c.selfplay.simulations);
  s.search.gumbel_noise = true;
  s.search.dirichlet_alpha_scale = static_cast<float>(c.selfplay.dirichlet_alpha_scale);
  s.search.dirichlet_weight = static_cast<float>(c.selfplay.dirichlet_weight);
  s.search.temperature_plies = c.selfplay.temperature_plies;
  s.search.temperature = static_cast<float>(c.selfplay.temperature);
  s.search.final_temperature = static_cast<float>(c.selfplay.final_temperature);
  s.target_this_search_only = c.selfplay.target_visits == "search";
  s.resign.below = c.selfplay.resign_below;
  s.resign.moves = c.selfplay.resign_moves;
  s.resign.playout = c.selfplay.resign_playout;
  s.resign.max_false = c.selfplay.resign_max_false;
  s.max_plies = c.selfplay.max_plies;
  s.games_per_chunk = c.selfplay.games_per_chunk;
  s.seed = c.run.seed;
  s.session = session;
  return s;
}

TrainerSettings trainer_settings(const config::RunConfig& c) {
  TrainerSettings t = c.training;
  t.device = config::training_device(c);
  return t;
}

namespace {

// Measured on this project's CPU backends (docs/PERFORMANCE.md, "Memory and disk over a long
// run"), rounded down: what a
// run holds per network weight and per position of a batch.
// The trainer's weights, gradients and momentum (AdamW: two moments), as LibTorch holds them.
constexpr double kTrainerNetworkCopies = 3;
// The Eigen backend's network with its Winograd weights (4 times a 3x3 convolution's); the torch
// backend's holds one copy. Each inference worker holds its own, in each server: self-play's (the
// best network), and during a gate the candidate's and the gate's own best's (or a `net:`
// anchor's in the anchor match; without a gate, the candidate's check holds one).
constexpr double kEigenNetworkCopies = 5, kTorchNetworkCopies = 1;
// A checkpoint's bytes while it is written or read.
constexpr double kCheckpointBuffers = 2;
// A training step keeps about 3.7 (20x256) to 4.0 (10x128) activations of each trunk layer for
// its backward pass; a torch inference pass about 4 of the largest layer at once (the Eigen
// backend's are bounded: it runs a large batch in parts).
constexpr double kTrainingActivationsPerLayer = 3.5, kInferenceActivations = 4;

struct MemoryPart {
  const char* what;
  const char* keys;       // the keys that make it
  std::vector<const char*> resumable;  // the keys that shrink it that a later session may change
  double bytes;
};

// "1.5 GiB", or "300 MiB" below a GiB.
std::string memory_text(double bytes) {
  char text[32];
  if (bytes >= (1 << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1 << 30));
  else
    std::snprintf(text, sizeof text, "%.0f MiB", bytes / (1 << 20));
  return text;
}

}  // namespace

void check_run_memory(const config::RunConfig& c, bool resuming, double machine_bytes) {
  const double machine = machine_bytes > 0 ? machine_bytes : util::machine_memory_bytes();
  if (machine <= 0) return;
  const Game& game = game_by_name(c.run.game);
  const PlaneShape input = game.input_shape();
  const double weights =
      static_cast<double>(model::max_checkpoint_bytes(c.net, input, game.num_actions()));
  // One position at one trunk layer, and the trunk's layers (the stem and two a block).
  const double layer = 4.0 * c.net.filters * input.height * input.width;
  const double layers = 2.0 * c.net.blocks + 1;
  const bool trainer_on_cpu = config::training_device(c) == "cpu";
  const bool inference_on_cpu = c.inference.device == "cpu";
  const bool eigen = c.inference.backend == "eigen";

  double copies = kCheckpointBuffers;
  if (trainer_on_cpu) copies += kTrainerNetworkCopies + (c.training.optimizer == "adamw" ? 1 : 0);
  if (inference_on_cpu) {
    const bool net_anchor = c.arena.anchor_games > 0 && c.arena.anchor.rfind("net:", 0) == 0;
    const int servers = c.arena.max_games > 0 || net_anchor ? 3 : 2;
    copies += servers * c.inference.workers * (eigen ? kEigenNetworkCopies : kTorchNetworkCopies);
  }
  std::vector<MemoryPart> parts = {
      {"the networks", "net.blocks, net.filters, inference.workers",
       {"inference.workers", "inference.device", "training.device"}, copies * weights},
      {"the replay window", "training.window_max", {},
       static_cast<double>(c.training.window_max) * kMinWindowRowBytes},
  };
  if (c.selfplay.threads > 0)
    parts.push_back({"self-play's games and search trees",
                     "selfplay.threads, selfplay.concurrent_games, selfplay.simulations",
                     {"selfplay.threads", "selfplay.concurrent_games"},
                     selfplay::search_memory_bytes(selfplay_settings(c, 0))});
  if (trainer_on_cpu)
    parts.push_back({"a training step's activations", "training.batch_size, net.blocks, net.filters",
                     {"training.device"},
                     c.training.batch_size * kTrainingActivationsPerLayer * layers * layer});
  if (inference_on_cpu && !eigen)
    parts.push_back({"the torch backend's activations",
                     "inference.workers, inference.max_batch, net.filters",
                     {"inference.workers", "inference.max_batch", "inference.device"},
                     static_cast<double>(c.inference.workers) * c.inference.max_batch *
                         kInferenceActivations * layer});
  double total = 0;
  for (const MemoryPart& p : parts) total += p.bytes;
  if (total <= machine) return;

  std::sort(parts.begin(), parts.end(),
            [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
  std::string text = "this run needs about " + memory_text(total) +
                     " of memory, and this machine has " + memory_text(machine) + ":";
  for (const MemoryPart& p : parts)
    text += std::string(" ") + p.what + " " + memory_text(p.bytes) + " (" + p.keys + ");";
  text.back() = ':';
  if (!resuming) {
    text += std::string(" give smaller values of ") + parts.front().keys;
    throw std::invalid_argument(text);
  }
  // A resumed run keeps its net and training keys: name only what a later session may change.
  std::vector<std::string> keys;
  for (const MemoryPart& p : parts)
    for (const char* key : p.resumable)
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  text += " of its keys a resumed run may change only ";
  for (std::size_t k = 0; k < keys.size(); ++k) text += (k == 0 ? "" : ", ") + keys[k];
  text += " (fewer threads, games or workers; inference or training on a GPU); if they do not "
          "suffice, the run needs a machine with more memory";
  throw std::invalid_argument(text);
}

}  // namespace oppidum::trainer
