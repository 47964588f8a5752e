// The network as a LibTorch module, for training (trainer/) and for model/ itself. This header
// includes LibTorch: only model/ and trainer/ may include it (link `oppidum_model_torch`); every
// other caller goes through the torch-free headers (backend.h, inference_server.h, checkpoint.h).
//
// TorchNet implements exactly the architecture of model/net_config.h, with LibTorch's default
// initialisation. forward(x) takes x [N, C, H, W] float (GameState::encode layout) and returns
//   policy_logits [N, num_actions]  raw logits; mask illegal actions before any softmax
//   value         [N]               tanh output in (-1, 1), for the side to move
//   score         [N]               tanh score margin (only with NetConfig::score_head)
// In train() mode batch norm uses batch statistics and updates its running ones; call eval() for
// inference. Parameter and buffer names are those of network_tensor_specs() (plus batch norm's
// num_batches_tracked, which checkpoints leave out).
//
// Conversion: load_weights copies a checkpoint's tensors into a net (checking game shape and
// architecture), to_checkpoint copies a net's tensors out (to the CPU, float32).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <torch/torch.h>

#include "games/game.h"
#include "model/checkpoint.h"
#include "model/net_config.h"

namespace oppidum::model {

struct TorchNetOutput {
  torch::Tensor policy_logits;  // [N, num_actions]
  torch::Tensor value;          // [N]
  torch::Tensor score;          // [N] tanh score margin; undefined without the score head
};

// 3x3 or 1x1 convolution without bias, then batch norm; names "conv" and "bn".
class ConvBnImpl : public torch::nn::Module {
 public:
  ConvBnImpl(int in, int out, int kernel);
  torch::Tensor forward(const torch::Tensor& x);  // bn(conv(x)), no activation

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
};
TORCH_MODULE(ConvBn);

// conv1, bn1, ReLU, [pool bias], conv2, bn2, + skip, ReLU.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int filters, bool pool_bias);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Linear pool_{nullptr};  // 2 * filters -> filters, when pooling
};
TORCH_MODULE(ResidualBlock);

// 1x1 conv to `channels`, BN, ReLU, flatten, linear to num_actions logits; names conv, bn, fc.
class PolicyHeadImpl : public torch::nn::Module {
 public:
  PolicyHeadImpl(int filters, int channels, int cells, int num_actions);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(PolicyHead);

// 1x1 conv to `channels`, BN, ReLU, flatten, linear to `hidden`, ReLU, linear to 1, tanh;
// names conv, bn, fc1, fc2. With `score`, a second linear from the hidden layer, tanh (name
// score). Returns {value [N], score [N] or undefined}.
class ValueHeadImpl : public torch::nn::Module {
 public:
  ValueHeadImpl(int filters, int channels, int cells, int hidden, bool score);
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x);

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, score_{nullptr};
};
TORCH_MODULE(ValueHead);

class TorchNetImpl : public torch::nn::Module {
 public:
  TorchNetImpl(const NetConfig& config, PlaneShape input, int num_actions);
  TorchNetOutput forward(torch::Tensor x);

  const NetConfig& config() const { return config_; }
  PlaneShape input_shape() const { return input_; }
  int num_actions() const { return num_actions_; }

 private:
  NetConfig config_;
  PlaneShape input_;
  int num_actions_;
  ConvBn stem_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  PolicyHead policy_{nullptr};
  ValueHead value_{nullptr};
};
TORCH_MODULE(TorchNet);

// A fresh network for `game` (throws std::invalid_argument for a bad config).
TorchNet make_torch_net(const Game& game, const NetConfig& config);
// A network with the checkpoint's architecture and weights, on the CPU, in eval() mode.
TorchNet make_torch_net(const Checkpoint& checkpoint);

// Copies every tensor of network_tensor_specs() from the checkpoint into the net (on the net's
// device). Throws CheckpointError when the checkpoint's input shape, action count or NetConfig
// differ from the net's.
void load_weights(TorchNetImpl& net, const Checkpoint& checkpoint);

// The net's parameters and batch-norm statistics as a checkpoint for `game`.
Checkpoint to_checkpoint(TorchNetImpl& net, const Game& game, std::int64_t step,
                         std::string metadata);

// fp32 on a GPU means IEEE fp32: LibTorch lets cuDNN convolutions use TF32 by default (10-bit
// mantissas on Ampere and later), which breaks the equality of the torch and Eigen backends. The
// cuda backends and trainer call this (process-wide, idempotent); reduced precision is asked for
// explicitly (inference.precision, training.precision).
void use_ieee_fp32_on_cuda();

}  // namespace oppidum::model
