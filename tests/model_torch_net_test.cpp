// The LibTorch training module (model/torch_net.h): shapes, checkpoint conversion both ways, and
// the module in eval() mode computing what the inference backends compute.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/torch_net.h"
#include "tests/model_test_util.h"

namespace oppidum::model {
namespace {

NetConfig config(bool pooling) {
  NetConfig c = NetConfig::sized(2, 16);
  c.policy_channels = 4;
  c.value_channels = 3;
  c.value_hidden = 24;
  c.global_pooling = pooling;
  return c;
}

TEST(TorchNet, OutputShapesAndRanges) {
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    TorchNet net = make_torch_net(game, config(true));
    const PlaneShape s = game.input_shape();
    const TorchNetOutput out = net->forward(torch::randn({5, s.planes, s.height, s.width}));
    EXPECT_EQ(out.policy_logits.sizes().vec(), (std::vector<std::int64_t>{5, game.num_actions()}));
    EXPECT_EQ(out.value.sizes().vec(), (std::vector<std::int64_t>{5}));
    EXPECT_LT(out.value.abs().max().item<float>(), 1.0f);
  }
}

TEST(TorchNet, NamesAreTheSpecList) {
  const Game& game = game_by_name("mg");
  TorchNet net = make_torch_net(game, config(true));
  std::set<std::string> names;
  for (const auto& p : net->named_parameters()) names.insert(p.key());
  for (const auto& b : net->named_buffers())
    if (b.key().find("num_batches_tracked") == std::string::npos) names.insert(b.key());
  std::set<std::string> specs;
  for (const TensorSpec& s : network_tensor_specs(config(true), game.input_shape(), game.num_actions()))
    specs.insert(s.name);
  EXPECT_EQ(names, specs);
}

// The score head: an output in (-1, 1) per position, its two tensors named as the spec list says,
// and no output without it.
TEST(TorchNet, ScoreHeadIsASecondOutputOfTheValueHead) {
  const Game& game = game_by_name("dvonn");
  NetConfig with = config(false);
  with.score_head = true;
  TorchNet net = make_torch_net(game, with);
  const PlaneShape s = game.input_shape();
  const torch::Tensor x = torch::randn({6, s.planes, s.height, s.width});
  const TorchNetOutput out = net->forward(x);
  ASSERT_TRUE(out.score.defined());
  EXPECT_EQ(out.score.sizes().vec(), (std::vector<std::int64_t>{6}));
  EXPECT_LT(out.score.abs().max().item<float>(), 1.0f);
  EXPECT_FALSE(torch::allclose(out.score, out.value)) << "the score has its own weights";
  std::set<std::string> names;
  for (const auto& p : net->named_parameters()) names.insert(p.key());
  EXPECT_EQ(names.count("value.score.weight"), 1u);
  EXPECT_EQ(names.count("value.score.bias"), 1u);
  EXPECT_FALSE(make_torch_net(game, config(false))->forward(x).score.defined());
  // Round trip through a checkpoint keeps the head and its weights.
  const Checkpoint c = to_checkpoint(*net, game, 3, "");
  EXPECT_TRUE(c.config.score_head);
  net->eval();
  TorchNet back = make_torch_net(c);
  EXPECT_TRUE(torch::equal(back->forward(x).score, net->forward(x).score));
  // A checkpoint with the head does not load into a net without it, and the other way round.
  TorchNet plain = make_torch_net(game, config(false));
  EXPECT_THROW(load_weights(*plain, c), CheckpointError);
  EXPECT_THROW(load_weights(*net, random_checkpoint(game, config(false), 2)), CheckpointError);
}

TEST(TorchNet, CheckpointRoundTrip) {
  const Game& game = game_by_name("dvonn");
  const Checkpoint c = random_checkpoint(game, config(true), 5);
  TorchNet net = make_torch_net(c);
  const Checkpoint back = to_checkpoint(*net, game, 77, "meta");
  EXPECT_EQ(back.step, 77);
  EXPECT_EQ(back.metadata, "meta");
  ASSERT_EQ(back.tensors.size(), c.tensors.size());
  for (std::size_t i = 0; i < c.tensors.size(); ++i) {
    EXPECT_EQ(back.tensors[i].name, c.tensors[i].name);
    EXPECT_EQ(back.tensors[i].data, c.tensors[i].data) << c.tensors[i].name;
  }
}

TEST(TorchNet, LoadRefusesAnotherArchitecture) {
  const Game& game = game_by_name("mg");
  TorchNet net = make_torch_net(game, config(false));
  EXPECT_THROW(load_weights(*net, random_checkpoint(game, config(true), 1)), CheckpointError);
}

// The training module in eval() mode (unfolded batch norm) against both inference backends.
TEST(TorchNet, EvalModeMatchesTheInferenceBackends) {
  for (const char* name : {"mg", "dvonn"}) {
    const Game& game = game_by_name(name);
    const Checkpoint c = random_checkpoint(game, config(true), 6);
    TorchNet net = make_torch_net(c);
    const int n = 9;
    std::vector<float> planes = test_util::random_planes(game, n, 2);
    const PlaneShape s = game.input_shape();
    torch::NoGradGuard no_grad;
    const TorchNetOutput out =
        net->forward(torch::from_blob(planes.data(), {n, s.planes, s.height, s.width}));
    for (BackendKind kind : {BackendKind::kEigen, BackendKind::kTorch}) {
      BackendOptions o;
      o.kind = kind;
      auto backend = make_backend(c, o);
      std::vector<float> logits(static_cast<std::size_t>(n) * game.num_actions()), values(n);
      backend->forward(planes.data(), n, logits.data(), values.data());
      const torch::Tensor l = torch::from_blob(logits.data(), {n, game.num_actions()});
      const torch::Tensor v = torch::from_blob(values.data(), {n});
      EXPECT_LT((l - out.policy_logits).abs().max().item<float>(), 1e-4f) << to_string(kind);
      EXPECT_LT((v - out.value).abs().max().item<float>(), 1e-4f) << to_string(kind);
    }
  }
}

// Training changes batch-norm running statistics; the checkpoint carries them.
TEST(TorchNet, TrainModeUpdatesRunningStatisticsThatCheckpointsKeep) {
  const Game& game = game_by_name("mg");
  TorchNet net = make_torch_net(game, config(false));
  net->train();
  const PlaneShape s = game.input_shape();
  net->forward(torch::rand({8, s.planes, s.height, s.width}) * 3.0);
  const Checkpoint c = to_checkpoint(*net, game, 1, "");
  const NamedTensor* mean = c.find("stem.bn.running_mean");
  ASSERT_NE(mean, nullptr);
  float total = 0.0f;
  for (float m : mean->data) total += std::abs(m);
  EXPECT_GT(total, 0.0f);
}

}  // namespace
}  // namespace oppidum::model
