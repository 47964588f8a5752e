// `oppidum bench train`: the trainer alone, without self-play: optimiser steps per second and
// samples per second at a run config's network, batch size and optimiser, on a device, at each
// precision asked for (fp32, and bf16 autocast on cuda). Every precision trains a network of the
// same seed on the same batches (--batches distinct batches of seeded positions from random games,
// each with a policy target peaked on one legal move and a value target of +-1, used in turn), so
// the printed loss curves can be compared: a precision that is faster only counts if its curve
// follows fp32's. The first --warmup steps are left out of the timing. Then the trainer's input:
// the time to draw a batch from a replay window of random games (ReplayWindow::sample, one CPU
// thread), and the training loop at the first precision with each batch drawn before its step or
// during the step before (as `train` does), timed in the same run. docs/GPU.md says how the
// numbers are read.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/commands.h"
#include "games/game.h"
#include "games/quote.h"
#include "mcts/rng.h"
#include "selfplay/game_record.h"
#include "trainer/config.h"
#include "trainer/replay_window.h"
#include "trainer/settings.h"
#include "trainer/trainer.h"
#include "util/progress.h"

namespace oppidum::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchTrainOptions {
  std::string config_path;
  std::vector<std::string> overrides;
  std::string device = "cpu";
  std::vector<std::string> precisions = {"fp32"};
  int steps = 40;
  int warmup = 5;
  int batches = 8;
  int batch_size = 0;  // 0: the config's training.batch_size
};

// The most memory the batches may take: they are all made before the first step.
constexpr double kMaxBatchMiB = 4096;

// `count` batches of `n` seeded positions each (--batches of --batch-size), refused when they
// would take more than kMaxBatchMiB.
std::vector<trainer::TrainingBatch> make_batches(const Game& game, int count, int n,
                                                 std::uint64_t seed) {
  const int plane_size = game.input_shape().size();
  const int actions = game.num_actions();
  // Each position holds its planes, policy and legal mask, and four numbers, as floats.
  const double mib = 4.0 * count * n * (plane_size + 2.0 * actions + 4.0) / (1 << 20);
  if (mib > kMaxBatchMiB)
    throw std::invalid_argument("bench train: --batches " + std::to_string(count) + " of " +
                                std::to_string(n) + " positions (--batch-size) would hold " +
                                std::to_string(static_cast<long long>(mib)) +
                                " MiB of batches; at most " +
                                std::to_string(static_cast<long long>(kMaxBatchMiB)) +
                                " MiB: give fewer or smaller batches");
  return trainer::learnable_batches(game, count, n, seed);
}

// A game of uniformly random moves as a self-play record: every move a full search whose visits
// favour the move played.
selfplay::GameRecord random_record(const Game& game, std::mt19937_64& rng) {
  selfplay::GameRecord r;
  r.game = game.name();
  auto state = game.initial_state();
  r.start = state->to_string();
  ActionList legal;
  while (!state->is_terminal() && static_cast<int>(r.moves.size()) < game.max_game_length()) {
    state->legal_actions(legal);
    const int chosen = static_cast<int>(rng() % static_cast<unsigned>(legal.size()));
    selfplay::MoveRecord m;
    m.action = static_cast<std::uint16_t>(legal[chosen]);
    for (int k = 0; k < legal.size(); ++k)
      m.visits.push_back({static_cast<std::uint16_t>(legal[k]), k == chosen ? 2u : 1u});
    r.moves.push_back(std::move(m));
    state->apply(legal[chosen]);
  }
  r.adjudicated = !state->is_terminal();
  r.result = static_cast<std::int8_t>(r.adjudicated ? 0 : state->result(0));
  for (int p = 0; p < 2; ++p) r.score[p] = static_cast<std::int16_t>(state->score(p));
  return r;
}

// A window of random games as large as the config's training.window_min (at most 200,000
// positions).
std::unique_ptr<trainer::ReplayWindow> random_window(const Game& game,
                                                     const config::RunConfig& config) {
  auto window = std::make_unique<trainer::ReplayWindow>(game, config.training);
  std::mt19937_64 rng(2025);
  const std::int64_t want = std::min<std::int64_t>(config.training.window_min, 200000);
  std::string why;
  while (window->size() < want)
    if (!window->add_game(random_record(game, rng), &why))
      throw std::logic_error("bench train: a random game does not replay: " + why);
  return window;
}

// Seconds to draw one batch of `n`: the median of 21 draws after one.
double draw_seconds(const trainer::ReplayWindow& window, int n) {
  mcts::Rng draw(7);
  trainer::TrainingBatch batch;
  window.sample(n, draw, batch);
  std::vector<double> times;
  for (int k = 0; k < 21; ++k) {
    const auto start = Clock::now();
    window.sample(n, draw, batch);
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(times.begin(), times.begin() + 10, times.end());
  return times[10];
}

// Steps per second of the training loop on `window`: each batch drawn before its step, or drawn
// during the step before (BatchPrefetcher, as `train` does); `steps` timed after `warmup`.
double loop_rate(trainer::Trainer& t, const trainer::ReplayWindow& window, int n, int warmup,
                 int steps, bool prefetch) {
  trainer::BatchPrefetcher ahead(window, n, 11);
  mcts::Rng draw(11);
  trainer::TrainingBatch batch;
  Clock::time_point start = Clock::now();
  for (int s = 0; s < warmup + steps; ++s) {
    if (s == warmup) start = Clock::now();
    if (prefetch) {
      t.step(ahead.next());
    } else {
      window.sample(n, draw, batch);
      t.step(batch);
    }
  }
  return steps / std::chrono::duration<double>(Clock::now() - start).count();
}

void run_bench_train(const BenchTrainOptions& o) {
  config::RunConfig config = config::load_config_or_defaults(o.config_path, o.overrides);
  const Game& game = game_by_name(config.run.game);
  const model::NetConfig net = config.net;
  const int n = o.batch_size > 0 ? o.batch_size : config.training.batch_size;
  const std::vector<trainer::TrainingBatch> batches = make_batches(game, o.batches, n, 2024);
  std::printf("oppidum bench train: %s %s, batch %d, %s, lr %g, %d distinct batches; device %s; "
              "%d warm-up steps, then %d timed steps per precision\n",
              game.name().c_str(), net.to_string().c_str(), n, config.training.optimizer.c_str(),
              config.training.learning_rate, o.batches, quote_input(o.device, 40).c_str(),
              o.warmup, o.steps);
  std::printf("%-6s %10s %12s %10s   loss at step 1, 25%%, 50%%, 100%% of all steps\n",
              "prec", "steps/s", "samples/s", "vs first");
  double first_rate = 0;
  std::vector<double> first_curve;
  util::ProgressLine progress;
  for (const std::string& precision : o.precisions) {
    trainer::TrainerSettings settings = trainer::trainer_settings(config);
    settings.device = o.device;
    settings.precision = precision;
    trainer::Trainer t(game, net, settings, 7);
    const int total = o.warmup + o.steps;
    std::vector<double> losses;
    Clock::time_point start = Clock::now();
    for (int s = 0; s < total; ++s) {
      if (s == o.warmup) start = Clock::now();
      progress.update("[bench train] " + precision + ": step " + std::to_string(s + 1) + " of " +
                      std::to_string(total));
      losses.push_back(t.step(batches[static_cast<std::size_t>(s % o.batches)]).loss);
    }
    progress.clear();
    t.synchronize();  // the last step's backward pass and update are in its time too
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double rate = o.steps / seconds;
    if (first_rate == 0) first_rate = rate;
    const std::vector<double> curve = {losses[0], losses[static_cast<std::size_t>(total / 4)],
                                       losses[static_cast<std::size_t>(total / 2)], losses.back()};
    if (first_curve.empty()) first_curve = curve;
    std::printf("%-6s %10.2f %12.0f %9.2fx   %.4f %.4f %.4f %.4f", precision.c_str(), rate,
                rate * n, rate / first_rate, curve[0], curve[1], curve[2], curve[3]);
    double worst = 0;
    for (std::size_t k = 0; k < curve.size(); ++k)
      worst = std::max(worst, std::fabs(curve[k] - first_curve[k]) / std::max(1e-9, first_curve[k]));
    if (&precision != &o.precisions.front())
      std::printf("   (largest relative loss difference to %s: %.1f%%)",
                  o.precisions.front().c_str(), 100 * worst);
    std::printf("\n");
    std::fflush(stdout);
  }
  progress.update("[bench train] the training loop on a replay window of random games");
  const auto window = random_window(game, config);
  const double draw = draw_seconds(*window, n);
  trainer::TrainerSettings settings = trainer::trainer_settings(config);
  settings.device = o.device;
  settings.precision = o.precisions.front();
  trainer::Trainer t(game, net, settings, 7);
  const double serial = loop_rate(t, *window, n, o.warmup, o.steps, false);
  const double ahead = loop_rate(t, *window, n, o.warmup, o.steps, true);
  progress.clear();
  std::printf("drawing a batch of %d from a window of %lld positions (one CPU thread): %.2f ms, "
              "%.0f samples/s\n",
              n, static_cast<long long>(window->size()), 1e3 * draw, n / draw);
  std::printf("the training loop at %s: %.2f steps/s drawing each batch before its step, %.2f "
              "steps/s drawing it during the step before, as train does (%.2fx)\n",
              o.precisions.front().c_str(), serial, ahead, ahead / serial);
}

}  // namespace

void register_bench_train(CLI::App& bench) {
  auto o = std::make_shared<BenchTrainOptions>();
  auto* cmd = bench.add_subcommand(
      "train",
      "The trainer alone: optimiser steps and samples per second at a config's network, batch "
      "size and optimiser, on a device and at each precision, with the loss curves side by side.");
  cmd->add_option("--config", o->config_path,
                  "run config whose net and training sections are used (default: the built-in "
                  "defaults, e.g. with --set)");
  cmd->add_option("--set", o->overrides, "section.key=value over the config, e.g. net.blocks=10");
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--precisions", o->precisions,
                  "fp32 and/or bf16 (autocast of the forward pass, cuda only), measured in turn")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "timed steps per precision")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "untimed steps first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--batches", o->batches, "distinct batches, used in turn")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--batch-size", o->batch_size, "positions per step (0: training.batch_size)")
      ->check(CLI::Range(0, config::kMaxBatchSize))
      ->capture_default_str();
  cmd->callback([o] { run_bench_train(*o); });
}

}  // namespace oppidum::app
