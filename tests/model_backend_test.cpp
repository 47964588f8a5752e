// The inference backends and the direct evaluator: output shapes, Eigen and LibTorch computing
// the same function, masking and the softmax over legal actions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/eigen_net.h"
#include "model/inference_server.h"
#include "tests/model_test_util.h"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace oppidum::model {
namespace {

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float d = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

struct Outputs {
  std::vector<float> logits, values;
};

Outputs run(Backend& backend, const std::vector<float>& planes, int n) {
  Outputs o;
  o.logits.assign(static_cast<std::size_t>(n) * backend.num_actions(), NAN);
  o.values.assign(static_cast<std::size_t>(n), NAN);
  backend.forward(planes.data(), n, o.logits.data(), o.values.data());
  return o;
}

NetConfig config(int blocks, int filters, bool pooling) {
  return test_util::test_config(blocks, filters, pooling);
}

TEST(Backend, ParsesNamesAndRefusesUnknownOnes) {
  EXPECT_EQ(parse_backend_kind("eigen"), BackendKind::kEigen);
  EXPECT_EQ(parse_backend_kind("torch"), BackendKind::kTorch);
  EXPECT_EQ(parse_device("cuda"), Device::kCuda);
  EXPECT_THROW(parse_backend_kind("tensorflow"), std::invalid_argument);
  EXPECT_THROW(parse_device("tpu"), std::invalid_argument);
}

TEST(Backend, CudaWithoutAGpuIsAClearError) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a GPU";
  const Game& mg = game_by_name("mg");
  const Checkpoint c = random_checkpoint(mg, config(1, 8, false), 1);
  BackendOptions o;
  o.kind = BackendKind::kTorch;
  o.device = Device::kCuda;
  try {
    make_backend(c, o);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
  o.kind = BackendKind::kEigen;
  EXPECT_THROW(make_backend(c, o), std::invalid_argument);
}

// The tentpole: the two backends compute the same function, for both games, with and without
// global pooling, for batch sizes that exercise the Eigen backend's chunking and threads.
TEST(Backend, EigenAndTorchAgree) {
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    for (bool pooling : {false, true}) {
      const Checkpoint c = random_checkpoint(game, config(3, 16, pooling), pooling ? 7 : 8);
      BackendOptions eigen1;
      eigen1.kind = BackendKind::kEigen;
      BackendOptions eigen2 = eigen1;
      eigen2.threads = 2;
      BackendOptions torch_cpu;
      torch_cpu.kind = BackendKind::kTorch;
      BackendOptions torch_nhwc = torch_cpu;
      torch_nhwc.channels_last = true;
      auto a = make_backend(c, eigen1);
      auto b = make_backend(c, eigen2);
      auto t = make_backend(c, torch_cpu);
      auto u = make_backend(c, torch_nhwc);
      for (int n : {1, 5, 37}) {
        const std::vector<float> planes = test_util::random_planes(game, n, 100 + n);
        const Outputs oa = run(*a, planes, n);
        const Outputs ob = run(*b, planes, n);
        const Outputs ot = run(*t, planes, n);
        const Outputs ou = run(*u, planes, n);
        SCOPED_TRACE(std::string(name) + (pooling ? " pooling" : "") + " n=" + std::to_string(n));
        EXPECT_LT(max_abs_diff(oa.logits, ot.logits), 1e-4f);
        EXPECT_LT(max_abs_diff(oa.values, ot.values), 1e-4f);
        EXPECT_LT(max_abs_diff(oa.logits, ob.logits), 1e-5f);
        EXPECT_LT(max_abs_diff(oa.values, ob.values), 1e-5f);
        EXPECT_LT(max_abs_diff(ot.logits, ou.logits), 1e-4f);
        EXPECT_LT(max_abs_diff(ot.values, ou.values), 1e-4f);
        // Not degenerate: the logits spread and the values are not saturated.
        const auto [lo, hi] = std::minmax_element(oa.logits.begin(), oa.logits.end());
        EXPECT_GT(*hi - *lo, 0.5f);
        int saturated = 0;
        for (float v : oa.values) saturated += std::abs(v) > 0.999f;
        EXPECT_LE(4 * saturated, n);
      }
    }
  }
}

// A network with the score head gives the inference backends the same policy and value as the
// same weights without the head: the backends read the checkpoint and leave the head alone.
TEST(Backend, ScoreHeadLeavesPolicyAndValueAlone) {
  const Game& game = game_by_name("dvonn");
  NetConfig with = config(2, 16, false);
  with.score_head = true;
  const Checkpoint scored = random_checkpoint(game, with, 21);
  Checkpoint plain = scored;
  plain.config.score_head = false;
  plain.tensors.erase(std::remove_if(plain.tensors.begin(), plain.tensors.end(),
                                     [](const NamedTensor& t) {
                                       return t.name.rfind("value.score.", 0) == 0;
                                     }),
                      plain.tensors.end());
  ASSERT_EQ(plain.tensors.size() + 2, scored.tensors.size());
  const int n = 7;
  const std::vector<float> planes = test_util::random_planes(game, n, 5);
  for (BackendKind kind : {BackendKind::kEigen, BackendKind::kTorch}) {
    BackendOptions o;
    o.kind = kind;
    const Outputs a = run(*make_backend(scored, o), planes, n);
    const Outputs b = run(*make_backend(plain, o), planes, n);
    EXPECT_EQ(a.logits, b.logits);
    EXPECT_EQ(a.values, b.values);
  }
}

// The baseline and the AVX2+FMA builds of the Eigen kernel compute the same function.
TEST(Backend, EigenKernelsAgree) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, config(2, 16, true), 12);
  const std::vector<float> planes = test_util::random_planes(game, 19, 4);
  for (EigenConv conv : {EigenConv::kDirect, EigenConv::kWinograd2, EigenConv::kWinograd4}) {
    EigenNet generic(c, 1, EigenIsa::kGeneric, conv);
    EigenNet best(c, 1, EigenIsa::kBest, conv);
    EXPECT_NE(generic.describe().find("generic"), std::string::npos) << generic.describe();
    const Outputs a = run(generic, planes, 19);
    const Outputs b = run(best, planes, 19);
    EXPECT_LT(max_abs_diff(a.logits, b.logits), 1e-4f) << best.describe();
    EXPECT_LT(max_abs_diff(a.values, b.values), 1e-4f) << best.describe();
  }
}

#if defined(__SSE__) || defined(__x86_64__)
// The Eigen forward pass flushes subnormals (a crafted network of tiny weights made it 8 times
// slower) in its own chunks only: the caller's floating-point mode comes back as it was, set or
// not, and a subnormal of the caller's own stays one.
TEST(Backend, EigenForwardFlushesSubnormalsAndLeavesTheCallersModeAlone) {
  const Game& game = game_by_name("mg");
  const Checkpoint c = random_checkpoint(game, config(1, 8, false), 3);
  EigenNet net(c, 1);
  const std::vector<float> planes = test_util::random_planes(game, 4, 5);
  const unsigned before = _mm_getcsr();
  for (const unsigned mode : {before & ~0x8040u, before | 0x8040u}) {
    _mm_setcsr(mode);
    const Outputs o = run(net, planes, 4);
    EXPECT_EQ(_mm_getcsr() & 0x8040u, mode & 0x8040u);
    EXPECT_TRUE(std::all_of(o.values.begin(), o.values.end(),
                            [](float v) { return std::isfinite(v); }));
  }
  _mm_setcsr(before & ~0x8040u);
  volatile float tiny = 1e-30f;
  EXPECT_EQ(std::fpclassify(tiny * 1e-10f), FP_SUBNORMAL);
  // Inside the pass a subnormal result is 0: a policy head whose every input is 0.25 (its
  // convolution 0, its batch norm's shift 0.25) and whose first logit's one weight is 2e-38 (a
  // normal number) makes that logit 5e-39, a subnormal, flushed to 0.
  Checkpoint flushed = c;
  for (NamedTensor& t : flushed.tensors) {
    if (t.name == "policy.conv.weight" || t.name == "policy.bn.running_mean" ||
        t.name == "policy.fc.weight" || t.name == "policy.fc.bias")
      std::fill(t.data.begin(), t.data.end(), 0.0f);
    if (t.name == "policy.bn.running_var" || t.name == "policy.bn.weight")
      std::fill(t.data.begin(), t.data.end(), 1.0f);
    if (t.name == "policy.bn.bias") std::fill(t.data.begin(), t.data.end(), 0.25f);
    if (t.name == "policy.fc.weight") t.data[0] = 2e-38f;
  }
  EigenNet tiny_net(flushed, 1);
  const Outputs o = run(tiny_net, planes, 4);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(o.logits[static_cast<std::size_t>(i) * tiny_net.num_actions()], 0.0f) << i;
  volatile float weight = 2e-38f;
  EXPECT_EQ(std::fpclassify(weight * 0.25f), FP_SUBNORMAL) << "(outside the pass, as it was)";
  _mm_setcsr(before);
}
#endif

// Winograd F(2x2,3x3) and F(4x4,3x3), the direct convolution and the automatic choice all compute
// LibTorch's function, for every net size of configs/ (the heads NetConfig::sized gives them) and
// a width that is not a multiple of the transforms' 16 channels, on both boards: Murus Gallicus's
// 7x8 overhangs the 4x4 tiles by one row, DVONN's 5x11 the 2x2 and 4x4 tiles both ways.
TEST(Backend, EigenConvolutionsAgreeWithTorch) {
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    for (const char* size : {"2x20", "4x32", "6x64", "10x128"}) {
      NetConfig cfg = NetConfig::parse_size(size);
      cfg.global_pooling = std::string(size) != "4x32";
      const Checkpoint c = random_checkpoint(game, cfg, 21);
      BackendOptions torch_cpu;
      torch_cpu.kind = BackendKind::kTorch;
      auto t = make_backend(c, torch_cpu);
      const int n = 33;  // two chunks of 16 (direct) or one of 32 (Winograd), and one more
      const std::vector<float> planes = test_util::random_planes(game, n, 31);
      const Outputs ot = run(*t, planes, n);
      for (EigenConv conv :
           {EigenConv::kDirect, EigenConv::kWinograd2, EigenConv::kWinograd4, EigenConv::kAuto}) {
        EigenNet e(c, 1, EigenIsa::kBest, conv);
        SCOPED_TRACE(std::string(name) + " " + size + " " + e.describe());
        EXPECT_NE(e.conv(), EigenConv::kAuto);
        if (conv != EigenConv::kAuto) {
          EXPECT_EQ(e.conv(), conv);
        }
        const Outputs oe = run(e, planes, n);
        EXPECT_LT(max_abs_diff(oe.logits, ot.logits), 1e-4f);
        EXPECT_LT(max_abs_diff(oe.values, ot.values), 1e-4f);
        const auto [lo, hi] = std::minmax_element(oe.logits.begin(), oe.logits.end());
        EXPECT_GT(*hi - *lo, 0.5f);
      }
    }
  }
}

TEST(Backend, EigenConvolutionNames) {
  for (EigenConv c :
       {EigenConv::kAuto, EigenConv::kDirect, EigenConv::kWinograd2, EigenConv::kWinograd4})
    EXPECT_EQ(parse_eigen_conv(to_string(c)), c);
  EXPECT_THROW(parse_eigen_conv("fft"), std::invalid_argument);
}

TEST(Backend, PositionsInABatchAreIndependent) {
  const Game& game = game_by_name("dvonn");
  const Checkpoint c = random_checkpoint(game, config(2, 8, true), 3);
  auto backend = make_backend(c, {});
  const int n = 21;
  const std::vector<float> planes = test_util::random_planes(game, n, 5);
  const Outputs all = run(*backend, planes, n);
  const int plane_size = game.input_shape().size();
  for (int i : {0, 7, 20}) {
    const std::vector<float> one(planes.begin() + i * plane_size,
                                 planes.begin() + (i + 1) * plane_size);
    const Outputs single = run(*backend, one, 1);
    for (int a = 0; a < game.num_actions(); ++a)
      EXPECT_NEAR(single.logits[a], all.logits[i * game.num_actions() + a], 1e-5f);
    EXPECT_NEAR(single.values[0], all.values[i], 1e-5f);
  }
}

TEST(FillEvalResult, SoftmaxOverLegalActionsOnly) {
  std::vector<float> logits(10, 0.0f);
  logits[2] = 1.0f;
  logits[5] = 2.0f;
  logits[7] = 1000.0f;  // illegal: must not matter
  ActionList legal;
  legal.push_back(5);
  legal.push_back(2);
  mcts::EvalResult r;
  ASSERT_TRUE(fill_eval_result(logits.data(), 0.25f, legal, r));
  ASSERT_EQ(r.priors.size(), 2u);
  const float e = std::exp(1.0f);
  EXPECT_NEAR(r.priors[0], e / (1.0f + e), 1e-6f);
  EXPECT_NEAR(r.priors[1], 1.0f / (1.0f + e), 1e-6f);
  EXPECT_FLOAT_EQ(r.value, 0.25f);
}

TEST(FillEvalResult, NonFiniteOutputsGiveUniformPriors) {
  std::vector<float> logits(4, 0.0f);
  logits[1] = NAN;
  ActionList legal;
  legal.push_back(1);
  legal.push_back(3);
  mcts::EvalResult r;
  EXPECT_FALSE(fill_eval_result(logits.data(), 0.5f, legal, r));
  EXPECT_EQ(r.priors, (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(r.value, 0.0f);
}

// The direct evaluator on real positions: priors aligned with the legal actions, summing to 1,
// equal to the softmax of the backend's logits restricted to them; illegal actions get nothing.
TEST(DirectEvaluator, PriorsAreTheMaskedSoftmaxOfTheLogits) {
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    const Checkpoint c = random_checkpoint(game, config(2, 8, false), 9);
    const auto positions = test_util::random_positions(game, 12, 4);
    const auto requests = test_util::requests_for(positions);
    const int n = static_cast<int>(requests.size());
    DirectEvaluator direct(game, make_backend(c, {}));
    std::vector<mcts::EvalResult> results(requests.size());
    direct.evaluate(requests.data(), n, results.data());

    auto backend = make_backend(c, {});
    const int plane_size = game.input_shape().size();
    std::vector<float> planes(static_cast<std::size_t>(n) * plane_size);
    for (int i = 0; i < n; ++i) positions[i].state->encode(planes.data() + i * plane_size);
    const Outputs raw = run(*backend, planes, n);
    for (int i = 0; i < n; ++i) {
      const ActionList& legal = positions[i].legal;
      ASSERT_EQ(results[i].priors.size(), static_cast<std::size_t>(legal.size()));
      EXPECT_NEAR(std::accumulate(results[i].priors.begin(), results[i].priors.end(), 0.0), 1.0,
                  1e-5);
      // Full softmax with illegal logits set to -inf: the mass on illegal actions is 0.
      std::vector<double> full(game.num_actions(), 0.0);
      double top = -INFINITY;
      for (Action a : legal) top = std::max<double>(top, raw.logits[i * game.num_actions() + a]);
      double sum = 0.0;
      for (Action a : legal) sum += full[a] = std::exp(raw.logits[i * game.num_actions() + a] - top);
      for (int k = 0; k < legal.size(); ++k) {
        EXPECT_GE(results[i].priors[k], 0.0f);
        EXPECT_NEAR(results[i].priors[k], full[legal[k]] / sum, 1e-6);
      }
      EXPECT_FLOAT_EQ(results[i].value, raw.values[i]);
      EXPECT_LE(std::abs(results[i].value), 1.0f);
    }
  }
}

TEST(DirectEvaluator, RefusesMisuse) {
  const Game& mg = game_by_name("mg");
  const Game& dvonn = game_by_name("dvonn");
  const Checkpoint c = random_checkpoint(mg, config(1, 8, false), 1);
  EXPECT_THROW(DirectEvaluator(dvonn, make_backend(c, {})), std::invalid_argument);
  DirectEvaluator direct(mg, make_backend(c, {}));
  auto state = mg.initial_state();
  ActionList empty;
  mcts::EvalRequest request{state.get(), &empty};
  mcts::EvalResult result;
  EXPECT_THROW(direct.evaluate(&request, 1, &result), std::logic_error);
  direct.evaluate(nullptr, 0, nullptr);  // n = 0 is fine
}

}  // namespace
}  // namespace oppidum::model
