// The batching inference server: each caller gets its own results under concurrency, weight swaps
// under load, failures reach the callers instead of hanging them, shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "tests/model_test_util.h"

namespace oppidum::model {
namespace {

using test_util::Position;
using test_util::same_result;

std::vector<mcts::EvalResult> direct_results(const Game& game, const Checkpoint& c,
                                             const std::vector<Position>& positions) {
  DirectEvaluator direct(game, make_backend(c, {}));
  const auto requests = test_util::requests_for(positions);
  std::vector<mcts::EvalResult> results(requests.size());
  direct.evaluate(requests.data(), static_cast<int>(requests.size()), results.data());
  return results;
}

InferenceServerOptions server_options(int max_batch, int wait_us) {
  InferenceServerOptions o;
  o.max_batch = max_batch;
  o.max_wait = std::chrono::microseconds(wait_us);
  return o;
}

TEST(InferenceServer, EachCallerGetsItsOwnResultsUnderConcurrency) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 21);
  const auto positions = test_util::random_positions(game, 64, 8);
  const auto expected = direct_results(game, c, positions);
  InferenceServer server(game, make_backend(c, {}), {}, server_options(16, 300));

  constexpr int kThreads = 8;
  std::atomic<int> mismatches{0};
  std::atomic<int> evaluated{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 30; ++round) {
        // A different slice and size per thread and round (sizes 1..21 cross batch borders).
        const int n = 1 + (t * 7 + round * 3) % 21;
        const int first = (t * 13 + round * 5) % (64 - n);
        const auto requests = test_util::requests_for(positions, first, n);
        std::vector<mcts::EvalResult> results(n);
        server.evaluate(requests.data(), n, results.data());
        for (int i = 0; i < n; ++i)
          if (!same_result(results[i], expected[first + i])) ++mismatches;
        evaluated += n;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  const InferenceStats s = server.stats();
  EXPECT_EQ(s.positions, static_cast<std::uint64_t>(evaluated.load()));
  // Eight callers share the batches: fewer batches than calls, none larger than max_batch.
  EXPECT_GT(s.batches, 0u);
  EXPECT_LT(s.batches, static_cast<std::uint64_t>(kThreads * 30));
  EXPECT_LE(s.mean_batch, 16.0);
  EXPECT_GT(s.mean_batch, 1.0);
  EXPECT_DOUBLE_EQ(s.mean_batch * static_cast<double>(s.batches), static_cast<double>(s.positions));
  EXPECT_GT(s.evals_per_second, 0.0);
  EXPECT_GT(s.mean_queue_wait_ms, 0.0);
  EXPECT_LT(s.mean_queue_wait_ms, 60000.0);
  EXPECT_GT(s.forward_share, 0.0);
  EXPECT_LE(s.forward_share, 1.0);
  EXPECT_EQ(s.non_finite, 0u);
  EXPECT_NE(s.to_string().find(std::to_string(s.batches) + " batches"), std::string::npos)
      << s.to_string();
}

TEST(InferenceServer, LargeJobsSpanSeveralBatches) {
  const Game& game = game_by_name("dvonn");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 22);
  const auto positions = test_util::random_positions(game, 50, 9);
  const auto expected = direct_results(game, c, positions);
  InferenceServer server(game, make_backend(c, {}), {}, server_options(8, 0));
  const auto requests = test_util::requests_for(positions);
  std::vector<mcts::EvalResult> results(requests.size());
  server.evaluate(requests.data(), static_cast<int>(requests.size()), results.data());
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_TRUE(same_result(results[i], expected[i]));
  EXPECT_EQ(server.stats().batches, 7u);  // 50 positions in batches of at most 8
}

// A lone caller never waits for a batch to fill: no one else could fill it.
TEST(InferenceServer, ALoneCallerDoesNotWaitForOthers) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 23);
  const auto positions = test_util::random_positions(game, 4, 14);
  const auto requests = test_util::requests_for(positions);
  InferenceServer server(game, make_backend(c, {}), {}, server_options(256, 1000000));
  std::vector<mcts::EvalResult> results(requests.size());
  for (int i = 0; i < 3; ++i) server.evaluate(requests.data(), 4, results.data());
  // Waiting for the batch to fill would cost the whole max_wait (1 s) per call; the queue wait is
  // measured by the server itself, so a slow machine (a sanitizer build under load) does not
  // count against it.
  EXPECT_LT(server.stats().mean_queue_wait_ms, 500.0);
  EXPECT_EQ(server.stats().batches, 3u);
}

TEST(InferenceServer, SwapsWeightsUnderLoad) {
  const Game& game = game_by_name("mg");
  const Checkpoint a = random_checkpoint(game, test_util::tiny_config(), 31);
  NetConfig bigger = test_util::tiny_config();
  bigger.blocks = 3;  // a swap may change the architecture
  const Checkpoint b = random_checkpoint(game, bigger, 32);
  const auto positions = test_util::random_positions(game, 32, 10);
  const auto expect_a = direct_results(game, a, positions);
  const auto expect_b = direct_results(game, b, positions);
  InferenceServer server(game, make_backend(a, {}), {}, server_options(16, 200));

  const test_util::SwapUnderLoad seen = test_util::evaluate_through_swap(
      server, positions, expect_a, expect_b, 1e-5f, [&] { server.swap_weights(b); });
  EXPECT_EQ(seen.invalid, 0);
  EXPECT_EQ(seen.old_after_swap, 0);
  EXPECT_EQ(server.stats().weight_swaps, 1u);
  EXPECT_NE(server.describe().find("3x8"), std::string::npos) << server.describe();
}

TEST(InferenceServer, SwapRefusesAForeignCheckpoint) {
  const Game& mg = game_by_name("mg");
  InferenceServer server(mg, make_backend(random_checkpoint(mg, test_util::tiny_config(), 1), {}), {}, {});
  EXPECT_THROW(server.swap_weights(random_checkpoint(game_by_name("dvonn"), test_util::tiny_config(), 1)),
               CheckpointError);
}

// Wraps a backend; throws from forward while `fail` is set.
class FlakyBackend final : public Backend {
 public:
  FlakyBackend(std::unique_ptr<Backend> inner, std::atomic<bool>& fail)
      : Backend(inner->input_shape(), inner->num_actions()), inner_(std::move(inner)), fail_(fail) {}
  void forward(const float* planes, int n, float* logits, float* values) override {
    if (fail_.load()) throw std::runtime_error("simulated device failure");
    inner_->forward(planes, n, logits, values);
  }
  std::string describe() const override { return "flaky"; }

 private:
  std::unique_ptr<Backend> inner_;
  std::atomic<bool>& fail_;
};

TEST(InferenceServer, AFailedForwardReachesEveryWaitingCaller) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 41);
  const auto positions = test_util::random_positions(game, 8, 11);
  const auto requests = test_util::requests_for(positions);
  std::atomic<bool> fail{true};
  InferenceServer server(game, std::make_unique<FlakyBackend>(make_backend(c, {}), fail), {},
                         server_options(64, 2000));
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<mcts::EvalResult> results(requests.size());
      try {
        server.evaluate(requests.data(), static_cast<int>(requests.size()), results.data());
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "simulated device failure") ++errors;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 4);
  // The server keeps serving once the device recovers.
  fail = false;
  std::vector<mcts::EvalResult> results(requests.size());
  server.evaluate(requests.data(), static_cast<int>(requests.size()), results.data());
  EXPECT_EQ(results[0].priors.size(), static_cast<std::size_t>(positions[0].legal.size()));
}

// Wraps a backend shared by two workers' instances: the first forward pass of all waits 300 ms
// and then writes its outputs; every later one throws what is no std::exception (a worker's
// death, not a failed pass).
class DyingBackend final : public Backend {
 public:
  DyingBackend(std::unique_ptr<Backend> inner, std::atomic<int>& calls, std::atomic<bool>& wrote)
      : Backend(inner->input_shape(), inner->num_actions()), inner_(std::move(inner)),
        calls_(calls), wrote_(wrote) {}
  void forward(const float* planes, int n, float* logits, float* values) override {
    if (calls_.fetch_add(1) > 0) throw 42;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    inner_->forward(planes, n, logits, values);
    wrote_ = true;
  }
  std::string describe() const override { return "dying"; }

 private:
  std::unique_ptr<Backend> inner_;
  std::atomic<int>& calls_;
  std::atomic<bool>& wrote_;
};

// A job split over two workers, one of which dies: the caller gets the error only once the other
// has written its part (it was told at once, returned, and the other worker then wrote into the
// caller's freed buffers and counted down a job that was gone).
TEST(InferenceServer, AWorkerThatDiesReleasesAJobOnlyWhenNoOtherWorkerHoldsIt) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 45);
  const auto positions = test_util::random_positions(game, 8, 15);
  const auto requests = test_util::requests_for(positions);
  std::atomic<int> calls{0};
  std::atomic<bool> wrote{false};
  std::vector<std::unique_ptr<Backend>> backends;
  for (int w = 0; w < 2; ++w)
    backends.push_back(std::make_unique<DyingBackend>(make_backend(c, {}), calls, wrote));
  InferenceServerOptions options = server_options(4, 0);  // two batches of 4
  options.workers = 2;
  InferenceServer server(game, std::move(backends), {}, options);
  std::vector<mcts::EvalResult> results(requests.size());
  EXPECT_THROW(server.evaluate(requests.data(), 8, results.data()), std::runtime_error);
  EXPECT_EQ(calls.load(), 2) << "each worker took a batch of the job";
  EXPECT_TRUE(wrote.load()) << "the caller returned while a worker still held part of its job";
  EXPECT_THROW(server.evaluate(requests.data(), 1, results.data()), std::runtime_error)
      << "a server whose worker died serves no more";
}

// Wraps a backend; its value for every position at an odd place in a batch is NaN.
class NanBackend final : public Backend {
 public:
  explicit NanBackend(std::unique_ptr<Backend> inner)
      : Backend(inner->input_shape(), inner->num_actions()), inner_(std::move(inner)) {}
  void forward(const float* planes, int n, float* logits, float* values) override {
    inner_->forward(planes, n, logits, values);
    for (int i = 1; i < n; i += 2) values[i] = NAN;
  }
  std::string describe() const override { return "nan"; }

 private:
  std::unique_ptr<Backend> inner_;
};

// Outputs that are not finite are no result: both evaluators throw NonFiniteOutputs naming the
// first such position (they gave it uniform priors and value 0, which became moves, Elos and
// training targets without a word), and the server keeps serving.
TEST(InferenceServer, OutputsThatAreNotFiniteAreAnErrorNamingThePosition) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 43);
  const auto positions = test_util::random_positions(game, 4, 13);
  const auto requests = test_util::requests_for(positions);
  InferenceServer server(game, std::make_unique<NanBackend>(make_backend(c, {})), {},
                         server_options(64, 0));
  DirectEvaluator direct(game, std::make_unique<NanBackend>(make_backend(c, {})));
  for (mcts::Evaluator* evaluator : {static_cast<mcts::Evaluator*>(&server),
                                     static_cast<mcts::Evaluator*>(&direct)}) {
    std::vector<mcts::EvalResult> results(requests.size());
    try {
      evaluator->evaluate(requests.data(), 4, results.data());
      ADD_FAILURE() << evaluator->describe() << ": no error";
    } catch (const NonFiniteOutputs& e) {
      EXPECT_EQ(e.index(), 1) << e.what();
      EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(positions[1].state->to_string()), std::string::npos)
          << e.what();
    }
    evaluator->evaluate(requests.data(), 1, results.data());  // one position: index 0, finite
    EXPECT_FLOAT_EQ(std::accumulate(results[0].priors.begin(), results[0].priors.end(), 0.0f),
                    1.0f);
  }
  EXPECT_EQ(server.stats().non_finite, 2u);
}

// Wraps a backend; its value for a position whose planes are among `poisoned` is NaN.
class PoisonedBackend final : public Backend {
 public:
  PoisonedBackend(std::unique_ptr<Backend> inner, std::vector<std::vector<float>> poisoned)
      : Backend(inner->input_shape(), inner->num_actions()),
        inner_(std::move(inner)),
        poisoned_(std::move(poisoned)) {}
  void forward(const float* planes, int n, float* logits, float* values) override {
    inner_->forward(planes, n, logits, values);
    const std::size_t size = static_cast<std::size_t>(input_shape().size());
    for (int i = 0; i < n; ++i)
      for (const std::vector<float>& p : poisoned_)
        if (std::equal(p.begin(), p.end(), planes + static_cast<std::size_t>(i) * size))
          values[i] = NAN;
  }
  std::string describe() const override { return "poisoned"; }

 private:
  std::unique_ptr<Backend> inner_;
  std::vector<std::vector<float>> poisoned_;
};

// A job split over batches of several workers names its first position whose outputs are not
// finite, whichever worker saw which first; a self-play server gives uniform priors and value 0
// there instead, and counts them.
TEST(InferenceServer, TheFirstPositionNotFiniteIsNamedAcrossWorkersOrCountedInSelfPlay) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 44);
  const auto positions = test_util::random_positions(game, 8, 14);
  const auto requests = test_util::requests_for(positions);
  const std::size_t size = static_cast<std::size_t>(game.input_shape().size());
  std::vector<std::vector<float>> poisoned;
  for (const int i : {5, 2}) {
    poisoned.emplace_back(size);
    positions[static_cast<std::size_t>(i)].state->encode(poisoned.back().data());
  }
  for (const bool selfplay : {false, true}) {
    std::vector<std::unique_ptr<Backend>> backends;
    for (int w = 0; w < 2; ++w)
      backends.push_back(std::make_unique<PoisonedBackend>(make_backend(c, {}), poisoned));
    InferenceServerOptions options = server_options(1, 0);
    options.workers = 2;
    options.uniform_for_non_finite = selfplay;
    InferenceServer server(game, std::move(backends), {}, options);
    for (int round = 0; round < 20; ++round) {
      std::vector<mcts::EvalResult> results(requests.size());
      try {
        server.evaluate(requests.data(), 8, results.data());
        EXPECT_TRUE(selfplay) << "no error";
        EXPECT_EQ(results[2].value, 0.0f);
        EXPECT_FLOAT_EQ(results[2].priors[0], 1.0f / static_cast<float>(results[2].priors.size()));
      } catch (const NonFiniteOutputs& e) {
        EXPECT_FALSE(selfplay) << e.what();
        EXPECT_EQ(e.index(), 2) << e.what();
      }
    }
    EXPECT_EQ(server.stats().non_finite, 40u) << selfplay;
  }
}

// A DVONN network that overflows only once the stacks move (after the 49 placements) is refused
// before it plays: the positions it is tried on span a whole game. It was tried on the first 28
// plies only, and then played, exported and rated with uniform priors and value 0 there.
TEST(MakeNetEvaluator, ANetworkThatOverflowsOnlyInALaterPhaseIsRefused) {
  const Game& dvonn = game_by_name("dvonn");
  Checkpoint c = random_checkpoint(dvonn, test_util::tiny_config(), 62);
  // An input plane that is 0 in every position of the placement phase and not in some later one.
  const int planes = dvonn.input_shape().planes;
  const int plane_size = dvonn.input_shape().size() / planes;
  std::vector<bool> early(static_cast<std::size_t>(planes)), late(early);
  std::mt19937_64 rng(7);
  std::vector<float> encoded(static_cast<std::size_t>(dvonn.input_shape().size()));
  for (int g = 0; g < 20; ++g) {
    auto state = dvonn.initial_state();
    ActionList legal;
    for (state->legal_actions(legal); !legal.empty(); state->legal_actions(legal)) {
      state->encode(encoded.data());
      for (int p = 0; p < planes; ++p)
        for (int i = 0; i < plane_size; ++i)
          if (encoded[static_cast<std::size_t>(p * plane_size + i)] != 0.0f)
            (state->ply() < 49 ? early : late)[static_cast<std::size_t>(p)] = true;
      state->apply(legal[static_cast<int>(rng() % static_cast<unsigned>(legal.size()))]);
    }
  }
  int plane = -1;
  for (int p = 0; p < planes && plane < 0; ++p)
    if (!early[static_cast<std::size_t>(p)] && late[static_cast<std::size_t>(p)]) plane = p;
  ASSERT_GE(plane, 0) << "no plane only of the movement phase";
  for (NamedTensor& t : c.tensors)
    if (t.name == "stem.conv.weight")
      for (std::int64_t f = 0; f < t.shape[0]; ++f)
        for (int k = 0; k < 9; ++k)
          t.data[static_cast<std::size_t>((f * planes + plane) * 9 + k)] = f % 2 ? -1e38f : 1e38f;
  test_util::TempDir dir("late_overflow");
  const std::string path = dir.file("late.ckpt");
  save_checkpoint(c, path);
  try {
    make_net_evaluator(dvonn, path, {});
    FAIL() << "a network that computes nothing after the placements was used";
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("not finite"), std::string::npos) << what;
    EXPECT_NE(what.find("random plies"), std::string::npos) << what;
  }
}

TEST(InferenceServer, StopDrainsThenRefuses) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, test_util::tiny_config(), 51);
  const auto positions = test_util::random_positions(game, 4, 12);
  const auto requests = test_util::requests_for(positions);
  InferenceServer server(game, make_backend(c, {}), {}, {});
  std::vector<mcts::EvalResult> results(requests.size());
  server.evaluate(requests.data(), 4, results.data());
  server.stop();
  server.stop();  // idempotent
  EXPECT_THROW(server.evaluate(requests.data(), 4, results.data()), std::runtime_error);
}

TEST(InferenceServer, RefusesABackendForAnotherGame) {
  const Checkpoint c = random_checkpoint(game_by_name("dvonn"), test_util::tiny_config(), 1);
  EXPECT_THROW(InferenceServer(game_by_name("mg"), make_backend(c, {}), {}, {}),
               std::invalid_argument);
  EXPECT_THROW(InferenceServer(game_by_name("dvonn"), make_backend(c, {}), {},
                               server_options(0, 0)),
               std::invalid_argument);
}

TEST(MakeNetEvaluator, LoadsACheckpointForTheGame) {
  test_util::TempDir dir("evaluator");
  const Game& dvonn = game_by_name("dvonn");
  const Checkpoint c = random_checkpoint(dvonn, test_util::tiny_config(), 61);
  const std::string path = dir.file("best.ckpt");
  save_checkpoint(c, path);
  BackendOptions torch_backend;
  torch_backend.kind = BackendKind::kTorch;
  auto server = make_net_evaluator(dvonn, path, torch_backend, server_options(32, 100));
  const auto positions = test_util::random_positions(dvonn, 6, 13);
  const auto requests = test_util::requests_for(positions);
  const auto expected = direct_results(dvonn, c, positions);
  std::vector<mcts::EvalResult> results(requests.size());
  server->evaluate(requests.data(), 6, results.data());
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(same_result(results[i], expected[i], 1e-4f));
  EXPECT_NE(server->describe().find("torch cpu"), std::string::npos) << server->describe();
  try {
    make_net_evaluator(game_by_name("mg"), path, {});
    FAIL() << "no exception";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("trained for \"dvonn\", not mg"), std::string::npos);
  }
}

// Finite weights whose products overflow float compute nothing: such a network used to play (and
// be served and exported) with uniform priors and value 0 everywhere, silently. It is refused by
// name before it plays, on either backend and through a direct backend too.
TEST(MakeNetEvaluator, ANetworkWhoseOutputsOverflowIsRefused) {
  test_util::TempDir dir("oppidum_overflow");
  const Game& mg = game_by_name("mg");
  Checkpoint c = random_checkpoint(mg, test_util::tiny_config(), 62);
  for (NamedTensor& t : c.tensors)
    if (t.name == "policy.fc.weight" || t.name == "value.fc1.weight")
      for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = i % 2 ? 3e38f : -3e38f;
  const std::string path = dir.file("huge.ckpt");
  save_checkpoint(c, path);
  for (const BackendKind kind : {BackendKind::kEigen, BackendKind::kTorch}) {
    BackendOptions options;
    options.kind = kind;
    try {
      make_net_evaluator(mg, path, options);
      ADD_FAILURE() << "no exception";
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("checkpoint " + path + ": the network's outputs are "
                                           "not finite"),
                std::string::npos)
          << e.what();
    }
    auto backend = make_backend(c, options);
    EXPECT_THROW(check_finite_outputs(mg, *backend, path), CheckpointError);
  }
  // The same network with sane weights passes, and its server's counters start at 0.
  const Checkpoint sane = random_checkpoint(mg, test_util::tiny_config(), 62);
  save_checkpoint(sane, path);
  const auto server = make_net_evaluator(mg, path, {});
  EXPECT_EQ(server->stats().positions, 0u);
  EXPECT_EQ(server->stats().non_finite, 0u);
}

}  // namespace
}  // namespace oppidum::model
