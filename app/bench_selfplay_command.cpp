// `oppidum bench selfplay`: self-play as `train` runs it (selfplay::SelfPlay over the batching
// inference server, with a run config's self-play and inference settings) without the trainer, for
// --seconds per setting after --warmup seconds, at each thread count of --threads. Two networks:
// - free: a network whose forward pass costs nothing (it answers zeros at once, so priors are
//   uniform and values 0). What is left is everything self-play's CPU does per evaluation: the
//   tree, the rules, encoding the planes, the queue and the hand-over to the forward workers, the
//   softmax over the legal moves. Its evaluations per second are the most that these threads can
//   ask of any network: a GPU whose forward rate (bench model) is above them waits for the CPU;
// - net: the config's network with seeded random weights on the config's inference backend and
//   device, as `train` builds it: self-play positions per second against the forward-pass bound
//   (workers x the forward rate seen / evaluations per position), the numbers of train's
//   `selfplay` rows, without a trainer beside it.
// Finished games are counted and dropped. docs/PERFORMANCE.md ("Self-play's CPU side") and
// docs/GPU.md say how the numbers are read.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "app/option_checks.h"
#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/cpu_tuning.h"
#include "model/inference_server.h"
#include "selfplay/selfplay.h"
#include "trainer/config.h"
#include "trainer/progress.h"
#include "trainer/settings.h"
#include "util/progress.h"

namespace oppidum::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchSelfplayOptions {
  std::string config_path;
  std::vector<std::string> overrides;
  std::vector<int> threads;  // empty: the config's selfplay.threads
  std::vector<std::string> networks = {"free", "net"};
  double seconds = 5.0;
  double warmup = 1.0;
};

// A network that costs nothing: zero logits (uniform priors over the legal moves) and value 0.
class FreeBackend final : public model::Backend {
 public:
  explicit FreeBackend(const Game& game) : Backend(game.input_shape(), game.num_actions()) {}
  void forward(const float*, int n, float* logits, float* values) override {
    std::fill(logits, logits + static_cast<std::size_t>(n) * num_actions(), 0.0f);
    std::fill(values, values + n, 0.0f);
  }
  std::string describe() const override { return "free (zeros, no computation)"; }
};

// Counts the finished games and drops them.
class CountingSink final : public selfplay::GameSink {
 public:
  void append(const std::vector<selfplay::GameRecord>& games) override {
    games_ += static_cast<std::int64_t>(games.size());
  }
  std::int64_t games() const { return games_.load(); }

 private:
  std::atomic<std::int64_t> games_{0};
};

std::unique_ptr<model::InferenceServer> make_server(const Game& game,
                                                    const config::RunConfig& config,
                                                    const std::string& network) {
  const model::BackendOptions backend = trainer::backend_options(config.inference);
  const model::InferenceServerOptions server = trainer::selfplay_server_options(config.inference);
  if (network == "net")
    return std::make_unique<model::InferenceServer>(
        game, model::random_checkpoint(game, config.net, 1), backend, server);
  std::vector<std::unique_ptr<model::Backend>> backends;
  for (int w = 0; w < server.workers; ++w) backends.push_back(std::make_unique<FreeBackend>(game));
  return std::make_unique<model::InferenceServer>(game, std::move(backends), backend, server);
}

void sleep_seconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Prints one setting's row; false when nothing was measured in its window.
bool measure(const Game& game, const config::RunConfig& config, const std::string& network,
             int threads, const BenchSelfplayOptions& o, util::ProgressLine& progress) {
  progress.update("[bench selfplay] " + network + " network, " + std::to_string(threads) +
                      " thread(s)",
                  true);
  const auto server = make_server(game, config, network);
  selfplay::SelfPlaySettings settings = trainer::selfplay_settings(config, 1);
  settings.threads = threads;
  settings.games_per_chunk = 1;  // each finished game reaches the sink (and its count) at once
  CountingSink sink;
  selfplay::SelfPlay play(*server, sink, settings, [] { return std::int64_t{0}; });
  play.start();
  sleep_seconds(o.warmup);
  const auto mark = [&] {
    return trainer::PipelineMark{Clock::now(), server->stats(), play.stats()};
  };
  const trainer::PipelineMark from = mark();
  const std::int64_t games_before = sink.games();
  sleep_seconds(o.seconds);
  const trainer::PipelineMark to = mark();
  const std::int64_t games = sink.games() - games_before;
  play.stop();
  server->stop();
  progress.clear();
  if (!play.error().empty())
    throw std::runtime_error("bench selfplay: self-play stopped: " + play.error());
  // train's own numbers of a `selfplay` row, over the window.
  const std::optional<trainer::SelfplayRow> row = trainer::pipeline_row(from, to, {}, false);
  if (!row) {
    std::printf("%-4s %7d   no move played or no batch run in %g s: give more --seconds\n",
                network.c_str(), threads, o.seconds);
    return false;
  }
  const double evals_per_second = row->positions_per_second * row->evals_per_position;
  std::printf("%-4s %7d %13.1f %10.0f %12.0f %10.1f %10.1f %7.0f%% %6lld", network.c_str(),
              threads, row->positions_per_second, evals_per_second, evals_per_second / threads,
              row->evals_per_position, row->mean_batch, 100.0 * row->forward_busy,
              static_cast<long long>(games));
  if (network == "net")
    std::printf(
        "   forward alone %.0f evaluations/s a worker, bound %.1f positions/s: %.0f%% of it",
        row->forward_rate, row->bound, 100.0 * row->positions_per_second / row->bound);
  std::printf("\n");
  std::fflush(stdout);
  return true;
}

void run_bench_selfplay(const BenchSelfplayOptions& o) {
  const config::RunConfig config = config::load_config_or_defaults(o.config_path, o.overrides);
  const Game& game = game_by_name(config.run.game);
  const std::string tuned = model::tune_cpu_runtime();  // as train does
  const auto& sp = config.selfplay;
  const auto& inf = config.inference;
  std::printf("oppidum bench selfplay: %s, %d games in flight per thread, %d simulations (fast %d, "
              "full searches %g), root %s; inference %s on %s (%s), %d worker(s), batches of up to "
              "%d; net %s; %u cores (%s); %g s per setting after %g s of warm-up\n",
              game.name().c_str(), sp.concurrent_games, sp.simulations, sp.fast_simulations,
              sp.full_search_fraction, sp.root.c_str(), inf.backend.c_str(), inf.device.c_str(),
              inf.precision.c_str(), inf.workers, inf.max_batch, config.net.to_string().c_str(),
              std::thread::hardware_concurrency(), tuned.c_str(), o.seconds, o.warmup);
  std::printf("%-4s %7s %13s %10s %12s %10s %10s %8s %6s\n", "net", "threads", "positions/s",
              "evals/s", "evals/s/thr", "evals/pos", "mean batch", "fwd busy", "games");
  const std::vector<int> threads = o.threads.empty() ? std::vector<int>{sp.threads} : o.threads;
  util::ProgressLine progress;
  int unmeasured = 0;
  for (const std::string& network : o.networks)
    for (int t : threads) unmeasured += measure(game, config, network, t, o, progress) ? 0 : 1;
  // A benchmark that measured nothing is not a result a script may take as one.
  if (unmeasured > 0)
    throw std::runtime_error("bench selfplay: " + std::to_string(unmeasured) + " of " +
                             std::to_string(o.networks.size() * threads.size()) +
                             " settings measured nothing (their rows say why)");
}

}  // namespace

void register_bench_selfplay(CLI::App& bench) {
  auto o = std::make_shared<BenchSelfplayOptions>();
  auto* cmd = bench.add_subcommand(
      "selfplay",
      "Self-play as train runs it, without the trainer: positions and evaluations per second at a "
      "config's self-play and inference settings, for each self-play thread count, with a network "
      "that costs nothing (free: the most these threads can ask of any network, i.e. how many "
      "threads a GPU needs) and with the config's network on its device (net: the share of the "
      "forward-pass bound).");
  cmd->add_option("--config", o->config_path,
                  "run config whose selfplay, inference and net sections are used (default: the "
                  "built-in defaults, e.g. with --set)");
  cmd->add_option("--set", o->overrides, "section.key=value over the config, e.g. net.blocks=10");
  cmd->add_option("--threads", o->threads,
                  "self-play thread counts, each measured in turn (default: selfplay.threads)")
      ->delimiter(',')
      ->check(CLI::Range(1, config::kMaxSelfplayThreads));
  cmd->add_option("--networks", o->networks,
                  "free (a forward pass that costs nothing) and/or net (the config's network, "
                  "random weights, on its inference device)")
      ->delimiter(',')
      ->check(CLI::IsMember({"free", "net"}))
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds, "seconds measured per setting")
      ->check(number_in(0.1, 600.0))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "seconds played first, not measured")
      ->check(number_in(0.0, 600.0))
      ->capture_default_str();
  cmd->callback([o] { run_bench_selfplay(*o); });
}

}  // namespace oppidum::app
