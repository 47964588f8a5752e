// The GPU checks (CTest label `gpu`; docs/GPU.md): the LibTorch CUDA forward pass computes the
// Eigen backend's function (fp32 within 1e-4; fp16 and bf16 within the documented tolerances and
// with the same best move wherever fp32's choice is clear); two and four inference workers on one
// GPU give one worker's results; a training step on the GPU follows the CPU's on the same batches
// (fp32, and bf16 autocast within its tolerance); the trainer's state moves from the GPU to the CPU
// and back; a tiny `oppidum train` runs on the GPU with self-play, training and gating, and
// continues on the CPU. Every test skips, saying why, where LibTorch sees no CUDA GPU (a CPU-only
// LibTorch, or no GPU): CI and laptops. scripts/gpu-check.sh builds against a CUDA LibTorch and
// runs them on a GPU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "tests/model_test_util.h"
#include "tests/process_util.h"
#include "trainer/replay_window.h"
#include "trainer/trainer.h"
#include "util/csv_table.h"

namespace oppidum {
namespace {

namespace fs = std::filesystem;
using model::BackendKind;
using model::BackendOptions;
using model::Checkpoint;
using model::Device;
using model::Precision;

// Skips where LibTorch sees no GPU, unless GPU_CHECK_REQUIRE_GPU is set (scripts/gpu-check.sh on a
// GPU machine), where that is a failure.
#define SKIP_WITHOUT_GPU()                                                                      \
  if (!model::cuda_available()) {                                                               \
    const char* why = "LibTorch sees no CUDA GPU (this LibTorch is a CPU build, or the machine " \
                      "has no GPU or driver); scripts/gpu-check.sh runs the gpu tests on a GPU";  \
    if (std::getenv("GPU_CHECK_REQUIRE_GPU")) FAIL() << why;                                    \
    GTEST_SKIP() << why;                                                                        \
  }

struct Outputs {
  std::vector<float> logits, values;
};

Outputs run(model::Backend& b, const std::vector<float>& planes, int n) {
  Outputs o;
  o.logits.resize(static_cast<std::size_t>(n) * b.num_actions());
  o.values.resize(static_cast<std::size_t>(n));
  b.forward(planes.data(), n, o.logits.data(), o.values.data());
  return o;
}

std::vector<float> encode(const Game& game, const std::vector<model::test_util::Position>& ps) {
  const int size = game.input_shape().size();
  std::vector<float> planes(ps.size() * static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < ps.size(); ++i) ps[i].state->encode(planes.data() + i * size);
  return planes;
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// The policy over the legal actions of each position (softmax of their logits).
std::vector<std::vector<float>> legal_policies(const Outputs& o, int actions,
                                               const std::vector<model::test_util::Position>& ps) {
  std::vector<std::vector<float>> out;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    std::vector<float> p;
    float top = -1e30f;
    for (int k = 0; k < ps[i].legal.size(); ++k)
      top = std::max(top, o.logits[i * actions + static_cast<std::size_t>(ps[i].legal[k])]);
    float sum = 0;
    for (int k = 0; k < ps[i].legal.size(); ++k) {
      p.push_back(std::exp(o.logits[i * actions + static_cast<std::size_t>(ps[i].legal[k])] - top));
      sum += p.back();
    }
    for (float& x : p) x /= sum;
    out.push_back(p);
  }
  return out;
}

// Tolerances of reduced precision against fp32 (docs/GPU.md): on each legal move's probability
// and on the value. A position's best move must be the same wherever fp32's best and second-best
// probabilities differ by more than twice the probability tolerance.
struct Tolerance {
  float probability, value;
};
Tolerance tolerance(Precision p) {
  return p == Precision::kFloat16 ? Tolerance{0.01f, 0.01f} : Tolerance{0.04f, 0.04f};
}

// The tentpole: the CUDA backend is the Eigen backend's function, at every precision, both
// games, small and GPU-box networks, batch sizes from 1 to 512.
TEST(GpuBackend, CudaForwardMatchesEigen) {
  SKIP_WITHOUT_GPU();
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    const auto positions = model::test_util::random_positions(game, 512, 31);
    const std::vector<float> planes = encode(game, positions);
    for (const model::NetConfig& config :
         {model::test_util::test_config(3, 16, false), model::test_util::test_config(3, 16, true),
          model::NetConfig::sized(10, 128)}) {
      const Checkpoint c = model::random_checkpoint(game, config, 5);
      // The reference once per network, on every core (the 10x128 one takes seconds).
      BackendOptions eigen;
      eigen.threads = 0;
      auto reference = model::make_backend(c, eigen);
      const auto first = [&](int n) {
        return std::vector<float>(planes.begin(), planes.begin() + static_cast<std::ptrdiff_t>(n) *
                                                                      game.input_shape().size());
      };
      std::map<int, Outputs> expected;
      for (const int n : {1, 37, 512}) expected[n] = run(*reference, first(n), n);
      for (const Precision precision :
           {Precision::kFloat32, Precision::kFloat16, Precision::kBFloat16}) {
        for (const bool nhwc : {false, true}) {
          BackendOptions cuda;
          cuda.kind = BackendKind::kTorch;
          cuda.device = Device::kCuda;
          cuda.precision = precision;
          cuda.channels_last = nhwc;
          auto gpu = model::make_backend(c, cuda);
          for (const int n : {1, 37, 512}) {
            SCOPED_TRACE(std::string(name) + " " + config.to_string() + " " +
                         model::to_string(precision) + (nhwc ? " nhwc" : "") +
                         " n=" + std::to_string(n));
            const Outputs& e = expected.at(n);
            const Outputs g = run(*gpu, first(n), n);
            if (precision == Precision::kFloat32) {
              if (n == 512)
                std::printf("%s %s fp32%s: largest logit difference %.2e (logits up to %.2f), "
                            "value difference %.2e\n",
                            name, config.to_string().c_str(), nhwc ? " nhwc" : "",
                            max_abs_diff(e.logits, g.logits), max_abs(e.logits),
                            max_abs_diff(e.values, g.values));
              // 1e-4, relative to the logits' scale for the larger networks.
              EXPECT_LT(max_abs_diff(e.logits, g.logits), 1e-4f * std::max(1.0f, max_abs(e.logits)));
              EXPECT_LT(max_abs_diff(e.values, g.values), 1e-4f);
              continue;
            }
            const Tolerance t = tolerance(precision);
            EXPECT_LT(max_abs_diff(e.values, g.values), t.value);
          }
          // The probabilities and best moves of all 512 positions.
          if (precision == Precision::kFloat32) continue;
          const Outputs& e = expected.at(512);
          const Outputs g = run(*gpu, planes, 512);
          const auto pe = legal_policies(e, game.num_actions(), positions);
          const auto pg = legal_policies(g, game.num_actions(), positions);
          const Tolerance t = tolerance(precision);
          int clear = 0, same = 0;
          float worst = 0;
          for (std::size_t i = 0; i < pe.size(); ++i) {
            for (std::size_t k = 0; k < pe[i].size(); ++k)
              worst = std::max(worst, std::abs(pe[i][k] - pg[i][k]));
            if (pe[i].size() < 2) continue;
            std::vector<float> sorted = pe[i];
            std::sort(sorted.rbegin(), sorted.rend());
            if (sorted[0] - sorted[1] <= 2 * t.probability) continue;
            ++clear;
            same += std::max_element(pe[i].begin(), pe[i].end()) - pe[i].begin() ==
                    std::max_element(pg[i].begin(), pg[i].end()) - pg[i].begin();
          }
          SCOPED_TRACE(std::string(name) + " " + config.to_string() + " " +
                       model::to_string(precision) + (nhwc ? " nhwc" : ""));
          // The measured differences, for docs/GPU.md.
          std::printf("%s %s %s%s: largest probability difference %.4f, value difference %.4f; "
                      "best move the same in %d of %d positions with a clear fp32 choice\n",
                      name, config.to_string().c_str(), model::to_string(precision),
                      nhwc ? " nhwc" : "", worst, max_abs_diff(e.values, g.values), same, clear);
          EXPECT_LT(worst, t.probability);
          EXPECT_EQ(same, clear) << "best moves differ where fp32's choice is clear";
          EXPECT_GE(clear, 20) << "too few positions with a clear best move to compare";
        }
      }
    }
  }
}

// Two and four forward workers on one GPU (each with its own stream) give one worker's results,
// for eight threads of callers at once.
TEST(GpuServer, TwoAndFourWorkersOnOneGpuMatchOne) {
  SKIP_WITHOUT_GPU();
  const Game& game = game_by_name("dvonn");
  const auto positions = model::test_util::random_positions(game, 256, 9);
  const Checkpoint c = model::random_checkpoint(game, model::NetConfig::sized(6, 64), 3);
  BackendOptions cuda;
  cuda.kind = BackendKind::kTorch;
  cuda.device = Device::kCuda;
  std::vector<std::vector<mcts::EvalResult>> by_workers;
  for (const int workers : {1, 2, 4}) {
    model::InferenceServerOptions so;
    so.max_batch = 64;
    so.workers = workers;
    so.cuda_devices = {0};
    model::InferenceServer server(game, c, cuda, so);
    const std::string described = server.describe();
    std::set<std::string> streams;
    for (std::size_t at = described.find("stream "); at != std::string::npos;
         at = described.find("stream ", at + 1))
      streams.insert(described.substr(at, described.find_first_not_of("0123456789", at + 7) - at));
    EXPECT_EQ(static_cast<int>(streams.size()), workers) << described;
    std::vector<mcts::EvalResult> results(positions.size());
    std::vector<std::thread> callers;
    for (int t = 0; t < 8; ++t)
      callers.emplace_back([&, t] {
        for (int first = t * 32; first < t * 32 + 32; first += 8) {
          const auto requests = model::test_util::requests_for(positions, first, 8);
          server.evaluate(requests.data(), 8, results.data() + first);
        }
      });
    for (auto& th : callers) th.join();
    by_workers.push_back(std::move(results));
  }
  for (std::size_t w = 1; w < by_workers.size(); ++w)
    for (std::size_t i = 0; i < positions.size(); ++i)
      EXPECT_TRUE(model::test_util::same_result(by_workers[0][i], by_workers[w][i], 1e-4f))
          << "workers " << (w == 1 ? 2 : 4) << ", position " << i;
}

// Batches with a learnable signal (trainer::learnable_batches), seeded.
std::vector<trainer::TrainingBatch> batches(const Game& game, int count, int n) {
  return trainer::learnable_batches(game, count, n, 13);
}

trainer::TrainerSettings settings(const std::string& device, bool bf16 = false) {
  trainer::TrainerSettings s;
  s.learning_rate = 0.02;
  s.warmup_steps = 0;
  s.threads = 1;
  s.device = device;
  s.precision = bf16 ? "bf16" : "fp32";
  return s;
}

// Training on the GPU follows training on the CPU, step by step, on the same batches from the same
// initial weights (fp32 IEEE: within 1e-3 relative for 10 steps, then 1e-2, since cuDNN's weight
// gradients are not bitwise the CPU's and steps of Adam carry differences on; bf16 autocast:
// within 10%), and the loss falls.
TEST(GpuTrainer, StepsFollowTheCpu) {
  SKIP_WITHOUT_GPU();
  const Game& game = game_by_name("mg");
  const model::NetConfig net = model::test_util::test_config(3, 32, true);
  const auto data = batches(game, 4, 128);
  std::vector<std::vector<double>> curves;
  for (const auto& [device, bf16] : std::vector<std::pair<std::string, bool>>{
           {"cpu", false}, {"cuda", false}, {"cuda:0", true}}) {
    trainer::Trainer t(game, net, settings(device, bf16), 3);
    std::vector<double> curve;
    for (int s = 0; s < 40; ++s) curve.push_back(t.step(data[static_cast<std::size_t>(s % 4)]).loss);
    curves.push_back(curve);
  }
  std::printf("loss at steps 1, 10, 20, 40: cpu %.4f %.4f %.4f %.4f; cuda fp32 %.4f %.4f %.4f "
              "%.4f; cuda bf16 %.4f %.4f %.4f %.4f\n",
              curves[0][0], curves[0][9], curves[0][19], curves[0][39], curves[1][0], curves[1][9],
              curves[1][19], curves[1][39], curves[2][0], curves[2][9], curves[2][19],
              curves[2][39]);
  for (std::size_t s = 0; s < curves[0].size(); ++s) {
    EXPECT_NEAR(curves[1][s], curves[0][s], (s < 10 ? 1e-3 : 1e-2) * curves[0][s])
        << "fp32 step " << s + 1;
    EXPECT_NEAR(curves[2][s], curves[0][s], 0.1 * curves[0][s]) << "bf16 step " << s + 1;
  }
  for (const auto& c : curves) EXPECT_LT(c.back(), 0.9 * c.front());
}

// The trainer's state (weights, optimiser, step) written on the GPU continues on the CPU, and back:
// the next step is the one the writer would have taken.
TEST(GpuTrainer, StateMovesBetweenGpuAndCpu) {
  SKIP_WITHOUT_GPU();
  const Game& game = game_by_name("dvonn");
  const model::NetConfig net = model::test_util::test_config(2, 16, false);
  const auto data = batches(game, 2, 64);
  const std::string prefix = ::testing::TempDir() + "gpu_state";
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"cuda", "cpu"}, {"cpu", "cuda"}}) {
    SCOPED_TRACE(from + " -> " + to);
    trainer::Trainer a(game, net, settings(from), 1);
    for (int s = 0; s < 5; ++s) a.step(data[static_cast<std::size_t>(s % 2)]);
    a.save_state(prefix);
    trainer::Trainer b(game, net, settings(to), 99);
    const trainer::Trainer::LoadResult loaded = b.load_state(prefix);
    ASSERT_TRUE(loaded.found);
    EXPECT_EQ(loaded.warning, "") << "the optimiser state did not move";
    EXPECT_EQ(b.steps(), 5);
    const double la = a.step(data[1]).loss, lb = b.step(data[1]).loss;
    EXPECT_NEAR(la, lb, 1e-4 * la);
    const Checkpoint ca = a.checkpoint(""), cb = b.checkpoint("");
    for (std::size_t i = 0; i < ca.tensors.size(); ++i)
      for (std::size_t k = 0; k < ca.tensors[i].data.size(); ++k)
        ASSERT_NEAR(ca.tensors[i].data[k], cb.tensors[i].data[k], 1e-4) << ca.tensors[i].name;
  }
}

// `oppidum train` on the GPU: a tiny run with bf16 inference and training plays, trains and gates
// three generations on cuda; the same run then continues on the CPU with the Eigen backend.
TEST(GpuTrain, ATinyRunTrainsOnTheGpuAndContinuesOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const fs::path dir = fs::path(::testing::TempDir()) / "gpu_tiny_run";
  fs::remove_all(dir);
  // (A time limit: a hung run would spend the GPU check's budget.)
  const std::string train = "timeout -s KILL 150 " + std::string(OPPIDUM_BINARY) +
                            " train --run " + dir.string() + " --no-status";
  const auto gpu = test_util::run_shell(
      train + " --config " + OPPIDUM_TINY_CONFIG +
      " --set run.max_generations=3 --set inference.backend=torch --set inference.device=cuda"
      " --set inference.precision=bf16 --set training.precision=bf16 --set inference.workers=2"
      " 2>&1");
  ASSERT_EQ(gpu.status, 0) << gpu.out;
  // Two workers, each on its own stream: "over worker 0: torch cuda:0 ..., stream S; worker 1:".
  EXPECT_NE(gpu.out.find("worker 1: torch cuda:0"), std::string::npos) << gpu.out;
  EXPECT_NE(gpu.out.find("training on cuda:0 with bf16 autocast"), std::string::npos) << gpu.out;
  util::CsvTable::Row header;
  int skipped = 0;
  const auto gates = util::CsvTable::read((dir / "arena.csv").string(), &header, &skipped);
  EXPECT_EQ(skipped, 0);
  EXPECT_GE(gates.size(), 3u) << "a gate row per generation";
  const auto cpu = test_util::run_shell(train + " --set run.max_generations=4"
                                        " --set inference.backend=eigen --set inference.device=cpu"
                                        " --set inference.precision=fp32"
                                        " --set training.precision=fp32 --set inference.workers=1"
                                        " 2>&1");
  ASSERT_EQ(cpu.status, 0) << cpu.out;
  EXPECT_NE(cpu.out.find("training on cpu"), std::string::npos) << cpu.out;
  EXPECT_NE(cpu.out.find("generation 4: "), std::string::npos) << cpu.out;
}

}  // namespace
}  // namespace oppidum
