// `oppidum bench model`: network inference speed on this machine. For each network size and batch
// size it prints the raw forward passes of each backend in positions per second, then the batching
// inference server's throughput with 1, 4 and 16 caller threads (each caller evaluates batches of
// that size, the server's max_batch is that size) as a ratio to the raw forward of the same backend
// at the same batch size. Weights are seeded random ones, inputs real encoded positions; the
// numbers go into docs/PERFORMANCE.md ("Model inference").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/cpu_tuning.h"
#include "model/inference_server.h"

namespace oppidum::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchModelOptions {
  std::string game = "mg";
  std::vector<std::string> sizes = {"4x32", "6x64", "10x128"};
  std::vector<int> batches = {1, 8, 32, 64, 128, 256};
  std::vector<std::string> backends = {"eigen", "torch", "torch-nhwc"};
  std::vector<std::string> server_backends = {"eigen"};
  std::vector<int> callers = {1, 4, 16};
  double seconds = 0.5;  // per measurement
  int threads = 0;       // 0: every core
  int max_wait_us = 1000;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

model::BackendOptions backend_options(const std::string& name, int threads) {
  model::BackendOptions o;
  if (name == "torch-nhwc") {
    o.kind = model::BackendKind::kTorch;
    o.channels_last = true;
  } else {
    o.kind = model::parse_backend_kind(name);
  }
  o.threads = threads;
  return o;
}

struct Positions {
  std::vector<std::unique_ptr<GameState>> states;
  std::vector<ActionList> legal;
};

// `count` seeded non-terminal positions from random games.
Positions random_positions(const Game& game, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Positions p;
  while (static_cast<int>(p.states.size()) < count) {
    auto state = game.initial_state();
    ActionList legal;
    const int plies = static_cast<int>(rng() % 40);
    for (int i = 0; i < plies; ++i) {
      state->legal_actions(legal);
      if (legal.empty()) break;
      state->apply(legal[static_cast<int>(rng() % static_cast<unsigned>(legal.size()))]);
    }
    state->legal_actions(legal);
    if (legal.empty()) continue;
    p.states.push_back(std::move(state));
    p.legal.push_back(legal);
  }
  return p;
}

// Positions per second of backend.forward at batch size b (after a warm-up).
double raw_forward(model::Backend& backend, const std::vector<float>& planes, int b, double seconds) {
  std::vector<float> logits(static_cast<std::size_t>(b) * backend.num_actions());
  std::vector<float> values(static_cast<std::size_t>(b));
  for (int i = 0; i < 2; ++i) backend.forward(planes.data(), b, logits.data(), values.data());
  long long calls = 0;
  const auto start = Clock::now();
  do {
    backend.forward(planes.data(), b, logits.data(), values.data());
    ++calls;
  } while (seconds_since(start) < seconds || calls < 3);
  return static_cast<double>(calls) * b / seconds_since(start);
}

// Positions per second through an inference server with `callers` threads, each evaluating
// batches of b positions; the server's max_batch is b.
double server_throughput(const Game& game, const model::Checkpoint& checkpoint,
                         const model::BackendOptions& backend, const Positions& positions, int b,
                         int callers, const BenchModelOptions& o, std::string& stats) {
  model::InferenceServerOptions so;
  so.max_batch = b;
  so.max_wait = std::chrono::microseconds(o.max_wait_us);
  model::InferenceServer server(game, model::make_backend(checkpoint, backend), backend, so);
  std::atomic<bool> measuring{false};
  std::atomic<bool> finish{false};
  std::atomic<long long> evaluated{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t)
    threads.emplace_back([&, t] {
      std::vector<mcts::EvalRequest> requests;
      const int n = static_cast<int>(positions.states.size());
      for (int i = 0; i < b; ++i) {
        const int k = (t * 37 + i) % n;
        requests.push_back({positions.states[k].get(), &positions.legal[k]});
      }
      std::vector<mcts::EvalResult> results(static_cast<std::size_t>(b));
      while (!finish.load()) {
        server.evaluate(requests.data(), b, results.data());
        if (measuring.load()) evaluated += b;
      }
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.2, o.seconds / 2)));
  server.reset_stats();
  measuring = true;
  const auto start = Clock::now();
  while (seconds_since(start) < o.seconds || evaluated.load() < 3LL * b)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double elapsed = seconds_since(start);
  measuring = false;
  const double rate = static_cast<double>(evaluated.load()) / elapsed;
  stats = server.stats().to_string();
  finish = true;
  for (auto& th : threads) th.join();
  return rate;
}

std::int64_t parameter_count(const model::Checkpoint& c) {
  std::int64_t n = 0;
  for (const model::NamedTensor& t : c.tensors)
    if (t.name.find("running_") == std::string::npos) n += static_cast<std::int64_t>(t.data.size());
  return n;
}

void run_bench_model(const BenchModelOptions& o) {
  const Game& game = game_by_name(o.game);
  std::printf("oppidum bench model: %s, %u hardware threads; %s\n", game.name().c_str(),
              std::thread::hardware_concurrency(), model::tune_cpu_runtime(o.threads).c_str());
  std::printf("raw forward in positions/s; server columns: throughput with N caller threads as a "
              "ratio to the raw forward of that backend at that batch size (max_wait %d us)\n",
              o.max_wait_us);
  const int max_batch = *std::max_element(o.batches.begin(), o.batches.end());
  const Positions positions = random_positions(game, std::max(max_batch, 64), 2024);
  const int plane_size = game.input_shape().size();
  std::vector<float> planes(static_cast<std::size_t>(max_batch) * plane_size);
  for (int i = 0; i < max_batch; ++i)
    positions.states[static_cast<std::size_t>(i) % positions.states.size()]->encode(
        planes.data() + static_cast<std::ptrdiff_t>(i) * plane_size);

  for (const std::string& size : o.sizes) {
    const model::NetConfig config = model::NetConfig::parse_size(size);
    const model::Checkpoint checkpoint = model::random_checkpoint(game, config, 1);
    std::printf("\n%s %s, %lld parameters\n", game.name().c_str(), config.to_string().c_str(),
                static_cast<long long>(parameter_count(checkpoint)));
    std::printf("%6s", "batch");
    for (const std::string& b : o.backends) std::printf(" %12s", b.c_str());
    for (const std::string& sb : o.server_backends)
      for (int c : o.callers) std::printf(" %10s", (sb + " x" + std::to_string(c)).c_str());
    std::printf("\n");
    std::vector<std::unique_ptr<model::Backend>> backends;
    for (const std::string& b : o.backends)
      backends.push_back(model::make_backend(checkpoint, backend_options(b, o.threads)));
    for (int batch : o.batches) {
      std::printf("%6d", batch);
      std::vector<double> raw;
      for (auto& backend : backends) {
        raw.push_back(raw_forward(*backend, planes, batch, o.seconds));
        std::printf(" %12.0f", raw.back());
        std::fflush(stdout);
      }
      std::string last_stats;
      for (const std::string& sb : o.server_backends) {
        const model::BackendOptions bo = backend_options(sb, o.threads);
        double base = 0.0;
        for (std::size_t k = 0; k < o.backends.size(); ++k)
          if (o.backends[k] == sb) base = raw[k];
        if (base == 0.0) {
          auto backend = model::make_backend(checkpoint, bo);
          base = raw_forward(*backend, planes, batch, o.seconds);
        }
        for (int c : o.callers) {
          const double rate =
              server_throughput(game, checkpoint, bo, positions, batch, c, o, last_stats);
          std::printf(" %10.2f", rate / base);
          std::fflush(stdout);
        }
      }
      std::printf("\n");
      if (!last_stats.empty()) std::printf("%6s last server: %s\n", "", last_stats.c_str());
    }
  }
}

}  // namespace

void register_bench_model(CLI::App& bench) {
  auto o = std::make_shared<BenchModelOptions>();
  auto* cmd = bench.add_subcommand(
      "model",
      "Network inference speed: raw forward positions/s per backend and batch size, and the "
      "inference server's throughput with 1, 4 and 16 callers relative to the raw forward.");
  cmd->add_option("--game", o->game, "game: mg (Murus Gallicus) or dvonn")->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "network sizes BLOCKSxFILTERS")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--batches", o->batches, "batch sizes")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--backends", o->backends, "raw forward backends: eigen, torch, torch-nhwc")
      ->delimiter(',')
      ->check(CLI::IsMember({"eigen", "torch", "torch-nhwc"}))
      ->capture_default_str();
  cmd->add_option("--server-backends", o->server_backends,
                  "backends measured behind the inference server (none: empty string)")
      ->delimiter(',')
      ->check(CLI::IsMember({"", "eigen", "torch", "torch-nhwc"}))
      ->capture_default_str();
  cmd->add_option("--callers", o->callers, "caller thread counts for the server")
      ->delimiter(',')
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds, "seconds per measurement")
      ->check(CLI::Range(0.01, 60.0))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads per forward pass (0: every core)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_option("--max-wait-us", o->max_wait_us, "server: longest wait for a batch to fill")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->callback([o] {
    auto& sb = o->server_backends;
    sb.erase(std::remove(sb.begin(), sb.end(), std::string()), sb.end());
    for (const std::string& size : o->sizes) model::NetConfig::parse_size(size);  // fail early
    run_bench_model(*o);
  });
}

}  // namespace oppidum::app
