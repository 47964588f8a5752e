// `oppidum bench model`: network inference speed on this machine. For each network size and batch
// size it prints the raw forward passes of each backend in positions per second, then the batching
// inference server's throughput with 1, 4 and 16 caller threads (each caller evaluates batches of
// that size, the server's max_batch is that size) as a ratio to the raw forward of the same backend
// at the same batch size; with --workers 1,2 (inference.workers) each caller count is measured
// with each worker count in turn, side by side in one run, and a line per batch size gives the
// absolute server rates and their ratio to the first worker count (worker counts alternate over
// --rounds rounds; medians of rates and of the per-round ratios, and the ratios' range). Weights are seeded random ones, inputs real encoded positions; the
// numbers go into docs/PERFORMANCE.md ("Model inference").
//
// Backends are eigen, torch and torch-nhwc (channels-last), each optionally with a precision
// suffix -fp16 or -bf16 (torch on --device cuda only; fp32 otherwise); --device cuda puts the torch
// backends on GPU 0 (eigen stays on the cpu). Each size's header gives the floating-point
// operations of one position's forward pass (direct convolutions, 2 per multiply-add); with
// --peak-tflops a line per batch size gives each raw backend's achieved TFLOP/s and its share of
// that peak (docs/GPU.md).
//
// With --compare-conv A,B,... it instead compares the Eigen backend's convolution algorithms
// (model::EigenConv) on the same batch in one run: for each size and batch, `--rounds` rounds in
// which each algorithm runs for --seconds in turn, printing the median rate of each, the median of
// the per-round ratios to the first algorithm, and the direct-equivalent GFLOP/s (the direct
// convolution's multiply-adds per position x 2 x rate) ("Winograd" in docs/PERFORMANCE.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "app/option_checks.h"
#include "games/game.h"
#include "games/playout.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/cpu_tuning.h"
#include "model/eigen_net.h"
#include "model/inference_server.h"
#include "util/progress.h"

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
  std::vector<int> workers = {1};
  double seconds = 0.5;  // per measurement
  int threads = 0;       // 0: every core
  int max_wait_us = 1000;
  std::vector<std::string> compare_conv;  // non-empty: the convolution comparison mode
  int rounds = 7;
  std::string eigen_isa = "best";  // --compare-conv: the Eigen kernel (best or generic)
  std::string device = "cpu";      // of the torch backends
  double peak_tflops = 0;          // > 0: achieved FLOP rates as a share of this peak
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "eigen", "torch" or "torch-nhwc", optionally with "-fp16" or "-bf16"; torch backends on
// `device`. Throws std::invalid_argument for any other name.
model::BackendOptions backend_options(const std::string& name, int threads,
                                      const std::string& device) {
  model::BackendOptions o;
  std::string base = name;
  for (const char* precision : {"fp32", "fp16", "bf16"}) {
    const std::string suffix = std::string("-") + precision;
    if (base.size() > suffix.size() &&
        base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
      o.precision = model::parse_precision(precision);
      base.resize(base.size() - suffix.size());
      break;
    }
  }
  if (base == "torch-nhwc") {
    o.kind = model::BackendKind::kTorch;
    o.channels_last = true;
  } else if (base == "eigen" || base == "torch") {
    o.kind = model::parse_backend_kind(base);
  } else {
    throw std::invalid_argument("unknown backend \"" + name +
                                "\"; the backends are eigen, torch and torch-nhwc, optionally "
                                "with -fp16 or -bf16");
  }
  if (o.kind == model::BackendKind::kTorch) o.device = model::parse_device(device);
  o.threads = threads;
  return o;
}

// CLI11 check of a backend name (the empty name is allowed where `allow_empty`).
CLI::Validator backend_name_check(bool allow_empty) {
  return CLI::Validator(
      [allow_empty](std::string& name) -> std::string {
        if (allow_empty && name.empty()) return "";
        try {
          backend_options(name, 1, "cpu");
          return "";
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "BACKEND");
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
    ActionList legal;
    auto state = random_position(game, rng, 40, legal);
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

// Positions per second through an inference server with `workers` forward workers and `callers`
// threads, each evaluating batches of b positions; the server's max_batch is b. The backend's
// threads are per worker (0: the cores divided among the workers).
double server_throughput(const Game& game, const model::Checkpoint& checkpoint,
                         const model::BackendOptions& backend, const Positions& positions, int b,
                         int callers, int workers, const BenchModelOptions& o, std::string& stats) {
  model::InferenceServerOptions so;
  so.max_batch = b;
  so.max_wait = std::chrono::microseconds(o.max_wait_us);
  so.workers = workers;
  // A benchmark counts outputs that are not finite (its line's non-finite: half precision can
  // overflow where float does not), rather than stopping at the first.
  so.uniform_for_non_finite = true;
  model::InferenceServer server(game, checkpoint, backend, so);
  std::atomic<bool> measuring{false};
  std::atomic<bool> finish{false};
  std::atomic<long long> evaluated{0};
  // The first error of a caller (or of starting one), rethrown once all are joined: an exception
  // out of a thread, or a joinable thread destroyed, ended the program; a caller gone left the
  // wait below for its evaluations without end.
  std::mutex error_mutex;
  std::exception_ptr error;
  const auto fail = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = e;
    finish = true;
  };
  std::vector<std::thread> threads;
  try {
    for (int t = 0; t < callers; ++t)
      threads.emplace_back([&, t] {
        try {
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
        } catch (...) {
          fail(std::current_exception());
        }
      });
  } catch (const std::system_error& e) {
    fail(std::make_exception_ptr(std::runtime_error(
        "bench model: could not start caller thread " + std::to_string(threads.size() + 1) +
        " of " + std::to_string(callers) + " (" + e.what() + "); use fewer --callers")));
  }
  const auto join_all = [&] {
    finish = true;
    for (auto& th : threads) th.join();
    if (error) std::rethrow_exception(error);
  };
  std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.2, o.seconds / 2)));
  server.reset_stats();
  measuring = true;
  const auto start = Clock::now();
  while ((seconds_since(start) < o.seconds || evaluated.load() < 3LL * b) && !finish.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double elapsed = seconds_since(start);
  measuring = false;
  const double rate = static_cast<double>(evaluated.load()) / elapsed;
  stats = server.stats().to_string();
  join_all();
  return rate;
}

std::int64_t parameter_count(const model::Checkpoint& c) {
  std::int64_t n = 0;
  for (const model::NamedTensor& t : c.tensors)
    if (t.name.find("running_") == std::string::npos) n += static_cast<std::int64_t>(t.data.size());
  return n;
}

// Floating-point operations of one position's forward pass with direct convolutions (2 per
// multiply-add; biases, activations and transforms not counted).
double direct_flops(const model::NetConfig& c, PlaneShape input, int num_actions) {
  const double cells = static_cast<double>(input.height) * input.width;
  const double f = c.filters;
  double macs = cells * 9 * input.planes * f;               // stem
  macs += c.blocks * 2 * cells * 9 * f * f;                 // trunk
  for (int b = 0; b < c.blocks; ++b)
    if (c.has_pool_bias(b)) macs += 2 * f * f;              // pooling bias
  macs += cells * f * (c.policy_channels + c.value_channels);  // 1x1 head convolutions
  macs += cells * c.policy_channels * num_actions;          // policy fc
  macs += cells * c.value_channels * c.value_hidden + c.value_hidden;  // value fc1, fc2
  return 2 * macs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// printf into a string: a table row is printed whole, once measured.
template <class... Args>
std::string cell(const char* format, Args... args) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

void run_compare_conv(const BenchModelOptions& o, const Game& game,
                      const std::vector<float>& planes) {
  std::vector<model::EigenConv> convs;
  for (const std::string& name : o.compare_conv) convs.push_back(model::parse_eigen_conv(name));
  util::ProgressLine progress;
  std::printf("Eigen convolutions side by side, %d rounds of %.2f s per algorithm and cell, "
              "alternating; positions/s are the medians over rounds, ratio = median over rounds of "
              "rate / rate of %s in the same round; GF/s = direct-equivalent GFLOP/s\n",
              o.rounds, o.seconds, o.compare_conv.front().c_str());
  for (const std::string& size : o.sizes) {
    const model::NetConfig config = model::NetConfig::parse_size(size);
    const model::Checkpoint checkpoint = model::random_checkpoint(game, config, 1);
    const double flops = direct_flops(config, game.input_shape(), game.num_actions());
    std::vector<std::unique_ptr<model::EigenNet>> nets;
    for (model::EigenConv c : convs)
      nets.push_back(std::make_unique<model::EigenNet>(
          checkpoint, o.threads,
          o.eigen_isa == "generic" ? model::EigenIsa::kGeneric : model::EigenIsa::kBest, c));
    std::printf("\n%s %s, %.2f MFLOP a position (direct); %s\n", game.name().c_str(),
                config.to_string().c_str(), flops / 1e6, nets.front()->describe().c_str());
    std::printf("%6s", "batch");
    for (std::size_t k = 0; k < convs.size(); ++k)
      std::printf(" %12s %6s", o.compare_conv[k].c_str(), "GF/s");
    for (std::size_t k = 1; k < convs.size(); ++k)
      std::printf(" %16s", (o.compare_conv[k] + "/" + o.compare_conv[0]).c_str());
    std::printf("\n");
    for (int batch : o.batches) {
      progress.update("[bench model] " + size + " batch " + std::to_string(batch) + ": " +
                          std::to_string(o.rounds) + " rounds of " +
                          std::to_string(convs.size()) + " convolutions",
                      true);
      std::vector<std::vector<double>> rates(convs.size()), ratios(convs.size());
      for (int r = 0; r < o.rounds; ++r) {
        std::vector<double> round;
        for (auto& net : nets) round.push_back(raw_forward(*net, planes, batch, o.seconds));
        for (std::size_t k = 0; k < convs.size(); ++k) {
          rates[k].push_back(round[k]);
          ratios[k].push_back(round[k] / round[0]);
        }
      }
      progress.clear();
      std::printf("%6d", batch);
      for (std::size_t k = 0; k < convs.size(); ++k) {
        const double rate = median(rates[k]);
        std::printf(" %12.0f %6.1f", rate, rate * flops / 1e9);
      }
      for (std::size_t k = 1; k < convs.size(); ++k) std::printf(" %16.2f", median(ratios[k]));
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}

void run_bench_model(const BenchModelOptions& o) {
  const Game& game = game_by_name(o.game);
  std::printf("oppidum bench model: %s, %u hardware threads; %s; torch backends on %s\n",
              game.name().c_str(), std::thread::hardware_concurrency(),
              model::tune_cpu_runtime(o.threads).c_str(), o.device.c_str());
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
  if (!o.compare_conv.empty()) return run_compare_conv(o, game, planes);

  util::ProgressLine progress;
  for (const std::string& size : o.sizes) {
    progress.update("[bench model] " + size + ": making the network and its backends", true);
    const model::NetConfig config = model::NetConfig::parse_size(size);
    const model::Checkpoint checkpoint = model::random_checkpoint(game, config, 1);
    const double flops = direct_flops(config, game.input_shape(), game.num_actions());
    progress.clear();
    std::printf("\n%s %s, %lld parameters, %.2f MFLOP a position\n", game.name().c_str(),
                config.to_string().c_str(), static_cast<long long>(parameter_count(checkpoint)),
                flops / 1e6);
    std::printf("%6s", "batch");
    for (const std::string& b : o.backends) std::printf(" %12s", b.c_str());
    const bool by_workers = o.workers.size() > 1 || o.workers.front() != 1;
    for (const std::string& sb : o.server_backends)
      for (int c : o.callers)
        for (int w : o.workers)
          std::printf(" %10s", (sb + " x" + std::to_string(c) +
                                (by_workers ? " w" + std::to_string(w) : std::string()))
                                   .c_str());
    std::printf("\n");
    std::vector<std::unique_ptr<model::Backend>> backends;
    for (const std::string& b : o.backends) {
      backends.push_back(model::make_backend(checkpoint, backend_options(b, o.threads, o.device)));
      std::printf("%6s %s: %s\n", "", b.c_str(), backends.back()->describe().c_str());
    }
    for (int batch : o.batches) {
      // The row is printed whole once measured; meanwhile the progress line says what runs.
      std::string row = cell("%6d", batch);
      const std::string where = "[bench model] " + size + " batch " + std::to_string(batch) + ": ";
      std::vector<double> raw;
      for (std::size_t k = 0; k < backends.size(); ++k) {
        progress.update(where + o.backends[k], true);
        raw.push_back(raw_forward(*backends[k], planes, batch, o.seconds));
        row += cell(" %12.0f", raw.back());
      }
      std::string last_stats;
      std::string rates_line;
      for (const std::string& sb : o.server_backends) {
        const model::BackendOptions bo = backend_options(sb, o.threads, o.device);
        double base = 0.0;
        for (std::size_t k = 0; k < o.backends.size(); ++k)
          if (o.backends[k] == sb) base = raw[k];
        if (base == 0.0) {
          auto backend = model::make_backend(checkpoint, bo);
          base = raw_forward(*backend, planes, batch, o.seconds);
        }
        for (int c : o.callers) {
          progress.update(where + "server " + sb + " x" + std::to_string(c), true);
          if (!by_workers) {
            const double rate = server_throughput(game, checkpoint, bo, positions, batch, c, 1, o,
                                                  last_stats);
            row += cell(" %10.2f", rate / base);
            continue;
          }
          // Worker counts alternate over --rounds rounds; medians of the rates and of each
          // round's ratio to the first worker count.
          const std::size_t k = o.workers.size();
          std::vector<std::vector<double>> rates(k), ratios(k);
          for (int r = 0; r < o.rounds; ++r) {
            std::vector<double> round;
            for (int w : o.workers)
              round.push_back(server_throughput(game, checkpoint, bo, positions, batch, c, w, o,
                                                last_stats));
            for (std::size_t i = 0; i < k; ++i) {
              rates[i].push_back(round[i]);
              ratios[i].push_back(round[i] / round[0]);
            }
          }
          for (std::size_t i = 0; i < k; ++i) {
            row += cell(" %10.2f", median(rates[i]) / base);
            char part[160];
            if (i == 0)
              std::snprintf(part, sizeof part, "%s%s x%d: w%d %.0f", rates_line.empty() ? "" : "; ",
                            sb.c_str(), c, o.workers[i], median(rates[i]));
            else
              std::snprintf(part, sizeof part, ", w%d %.0f (ratio %.2f, rounds %.2f..%.2f)",
                            o.workers[i], median(rates[i]), median(ratios[i]),
                            *std::min_element(ratios[i].begin(), ratios[i].end()),
                            *std::max_element(ratios[i].begin(), ratios[i].end()));
            rates_line += part;
          }
        }
      }
      progress.clear();
      std::printf("%s\n", row.c_str());
      std::fflush(stdout);
      if (o.peak_tflops > 0 && !raw.empty()) {
        std::printf("%6s TFLOP/s (share of %.4g for fp16 and bf16):", "", o.peak_tflops);
        for (std::size_t k = 0; k < raw.size(); ++k) {
          const double tflops = raw[k] * flops / 1e12;
          // (A half-precision peak: fp32, on other units, gets no share of it.)
          const bool half = backend_options(o.backends[k], o.threads, o.device).precision !=
                            model::Precision::kFloat32;
          std::printf(" %s %.2f", o.backends[k].c_str(), tflops);
          if (half) std::printf(" (%.1f%%)", 100 * tflops / o.peak_tflops);
          std::printf("%s", k + 1 < raw.size() ? "," : "");
        }
        std::printf("\n");
      }
      if (!rates_line.empty()) std::printf("%6s server positions/s: %s\n", "", rates_line.c_str());
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
  add_game_option(*cmd, o->game)->capture_default_str();
  cmd->add_option("--sizes", o->sizes, "network sizes BLOCKSxFILTERS")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--batches", o->batches, "batch sizes")
      ->delimiter(',')
      ->check(CLI::Range(1, 16384))
      ->capture_default_str();
  cmd->add_option("--backends", o->backends,
                  "raw forward backends: eigen, torch, torch-nhwc, each optionally with -fp16 or "
                  "-bf16 (torch on cuda only), e.g. torch,torch-bf16")
      ->delimiter(',')
      ->check(backend_name_check(false))
      ->capture_default_str();
  cmd->add_option("--server-backends", o->server_backends,
                  "backends measured behind the inference server (none: empty string)")
      ->delimiter(',')
      ->check(backend_name_check(true))
      ->capture_default_str();
  cmd->add_option("--device", o->device, "device of the torch backends: cpu, or cuda (GPU 0)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--peak-tflops", o->peak_tflops,
                  "the device's peak TFLOP/s at the precision measured (e.g. 989 for an H100 or "
                  "H200's dense bf16/fp16): prints each raw backend's achieved share")
      ->check(number_in(0.0, 1e6));
  cmd->add_option("--callers", o->callers, "caller thread counts for the server")
      ->delimiter(',')
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--workers", o->workers,
                  "inference server forward workers (inference.workers), each count measured in "
                  "turn: e.g. 1,2 puts them side by side")
      ->delimiter(',')
      ->check(CLI::Range(1, model::kMaxInferenceWorkers))
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds, "seconds per measurement")
      ->check(number_in(0.01, 60.0))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads per forward pass (0: every core)")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  cmd->add_option("--max-wait-us", o->max_wait_us, "server: longest wait for a batch to fill")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--compare-conv", o->compare_conv,
                  "compare the Eigen backend's convolutions instead, side by side in one run "
                  "(ratios to the first): direct, winograd2, winograd4, auto")
      ->delimiter(',')
      ->check(CLI::IsMember({"auto", "direct", "winograd2", "winograd4"}));
  cmd->add_option("--eigen-isa", o->eigen_isa,
                  "--compare-conv: the Eigen kernel, best (AVX2+FMA where the CPU has it) or "
                  "generic (the build's baseline instruction set)")
      ->check(CLI::IsMember({"best", "generic"}))
      ->capture_default_str();
  cmd->add_option("--rounds", o->rounds,
                  "--compare-conv, or --workers with several counts: alternating rounds per cell")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->callback([o] {
    auto& sb = o->server_backends;
    sb.erase(std::remove(sb.begin(), sb.end(), std::string()), sb.end());
    if (o->workers.empty()) o->workers = {1};
    for (const std::string& size : o->sizes) model::NetConfig::parse_size(size);  // fail early
    run_bench_model(*o);
  });
}

}  // namespace oppidum::app
