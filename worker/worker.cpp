#include "worker/worker.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "model/checkpoint.h"
#include "model/cpu_tuning.h"
#include "model/inference_server.h"
#include "selfplay/selfplay.h"
#include "store/redis_game_sink.h"
#include "store/run_channel.h"
#include "trainer/config.h"
#include "trainer/settings.h"

namespace oppidum::worker {
namespace {

using Clock = std::chrono::steady_clock;

std::string default_node_name() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  return std::string(host) + "-" + std::to_string(getpid());
}

// Checks that the published network is for this program's `game` and encoding; loads it.
model::Checkpoint checked_network(const store::PublishedNetwork& n, const Game& game) {
  if (n.info.game != game.name() || n.info.encoding_version != game.encoding_version())
    throw std::runtime_error("the run's network is for " + n.info.game + " with encoding version " +
                             std::to_string(n.info.encoding_version) + "; this program plays " +
                             game.name() + " with encoding version " +
                             std::to_string(game.encoding_version()) +
                             ": use a worker of the trainer's version");
  model::Checkpoint c = model::parse_checkpoint(n.checkpoint.data(), n.checkpoint.size(),
                                                "the published network");
  model::check_compatible(c, game, "the published network");
  return c;
}

}  // namespace

WorkerSummary run_worker(const WorkerOptions& options, const std::atomic<bool>& stop,
                         std::function<void(const std::string&)> log) {
  if (!log) log = [](const std::string& line) { std::cerr << "selfplay: " << line << std::endl; };
  const char* env_password = std::getenv("OPPIDUM_REDIS_PASSWORD");
  const store::RedisUrl url = store::parse_redis_url(options.store, env_password);
  store::check_security(url, options.insecure);
  const std::string node = options.node.empty() ? default_node_name() : options.node;
  store::RunChannel channel(url, log, &stop);
  WorkerSummary summary;
  const auto start = Clock::now();

  // The run's config and network, once the trainer has published them.
  log("node " + node + " joining " + url.to_string() + "; " + model::tune_cpu_runtime());
  std::string yaml;
  for (bool said = false; !stop.load();) {
    if (auto text = channel.config()) {
      yaml = *text;
      if (channel.network_version() > 0) break;
    }
    if (!said) log("waiting for the trainer to publish the run's config and network");
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (stop.load()) return summary;
  const config::RunConfig config = config::parse_config(yaml, url.key("config"));
  const Game& game = game_by_name(config.run.game);
  auto published = channel.network();
  model::Checkpoint network = checked_network(*published, game);
  std::int64_t version = published->info.version;
  std::atomic<std::int64_t> network_step{published->info.step};

  model::BackendOptions backend = trainer::backend_options(config.inference);
  backend.kind = model::BackendKind::kEigen;  // a worker runs on the CPU, without LibTorch
  backend.device = model::Device::kCpu;
  backend.precision = model::Precision::kFloat32;
  model::InferenceServerOptions server_options = trainer::server_options(config.inference);
  server_options.cuda_devices.clear();
  model::InferenceServer server(game, network, backend, server_options);
  const std::uint64_t session = channel.new_session();
  selfplay::SelfPlaySettings settings = trainer::selfplay_settings(config, session);
  settings.seed = store::node_seed(config.run.seed, node);
  settings.threads = options.threads > 0 ? options.threads : std::max(1, config.selfplay.threads);
  std::atomic<bool> closing{false};
  store::RedisGameSink sink(url, node, config.run.stream_max_games, log, &closing);
  selfplay::SelfPlay selfplay(server, sink, settings, [&] { return network_step.load(); });
  log("playing " + game.name() + " with generation " + std::to_string(published->info.generation) +
      " (step " + std::to_string(published->info.step) + "), " + std::to_string(settings.threads) +
      " thread(s), session " + std::to_string(session));
  selfplay.start();

  std::int64_t beats = 0;
  auto last_beat = Clock::now() - std::chrono::seconds(10);
  auto last_poll = Clock::now();
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double minutes = std::chrono::duration<double>(Clock::now() - start).count() / 60.0;
    if (options.stop_after_minutes > 0 && minutes >= options.stop_after_minutes) break;
    const std::string error = selfplay.error();
    if (!error.empty()) {
      closing = true;
      throw std::runtime_error("self-play failed: " + error);
    }
    try {
      if (Clock::now() - last_poll >= std::chrono::seconds(1)) {
        last_poll = Clock::now();
        if (channel.network_version() != version) {
          published = channel.network();
          const model::Checkpoint next = checked_network(*published, game);
          server.swap_weights(next);
          version = published->info.version;
          network_step = published->info.step;
          ++summary.network_swaps;
          log("switched to generation " + std::to_string(published->info.generation) + " (step " +
              std::to_string(published->info.step) + ")");
        }
      }
      if (Clock::now() - last_beat >= std::chrono::seconds(2)) {
        last_beat = Clock::now();
        const selfplay::SelfPlayStats s = selfplay.stats();
        channel.heartbeat(node, ++beats, s.games, s.positions);
      }
    } catch (const store::RedisStopped&) {
      break;
    }
  }
  closing = true;  // a push still waiting for the server gives up: those games were in flight
  selfplay.stop();
  const selfplay::SelfPlayStats s = selfplay.stats();
  summary.games = sink.pushed();
  summary.positions = s.positions;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  log("stopped: " + std::to_string(summary.games) + " games pushed in " +
      std::to_string(static_cast<long long>(summary.seconds)) + " s, " +
      std::to_string(summary.network_swaps) + " network switch(es)");
  return summary;
}

}  // namespace oppidum::worker
