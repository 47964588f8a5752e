#include "trainer/settings.h"

#include "arena/player.h"

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

}  // namespace oppidum::trainer
