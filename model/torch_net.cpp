#include "model/torch_net.h"

#include <unordered_map>
#include <utility>

namespace oppidum::model {
namespace {

torch::nn::Conv2d make_conv(int in, int out, int kernel) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(false));
}

torch::nn::BatchNorm2d make_bn(int channels) {
  return torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(channels).eps(kBatchNormEpsilon));
}

// The named parameters and buffers of `net` (num_batches_tracked left out), checked against the
// one field list, network_tensor_specs().
std::vector<std::pair<TensorSpec, torch::Tensor>> spec_tensors(TorchNetImpl& net) {
  std::unordered_map<std::string, torch::Tensor> by_name;
  for (const auto& item : net.named_parameters(true)) by_name[item.key()] = item.value();
  for (const auto& item : net.named_buffers(true))
    if (item.key().find("num_batches_tracked") == std::string::npos)
      by_name[item.key()] = item.value();
  std::vector<std::pair<TensorSpec, torch::Tensor>> out;
  for (TensorSpec& spec : network_tensor_specs(net.config(), net.input_shape(), net.num_actions())) {
    const auto it = by_name.find(spec.name);
    if (it == by_name.end() || it->second.sizes().vec() != spec.shape)
      throw std::logic_error("TorchNet has no tensor " + spec.name + " " +
                             shape_to_string(spec.shape) + ": module and spec list disagree");
    out.emplace_back(std::move(spec), it->second);
  }
  if (out.size() != by_name.size())
    throw std::logic_error("TorchNet has tensors that network_tensor_specs() does not list");
  return out;
}

}  // namespace

ConvBnImpl::ConvBnImpl(int in, int out, int kernel)
    : conv_(register_module("conv", make_conv(in, out, kernel))),
      bn_(register_module("bn", make_bn(out))) {}

torch::Tensor ConvBnImpl::forward(const torch::Tensor& x) { return bn_(conv_(x)); }

ResidualBlockImpl::ResidualBlockImpl(int filters, bool pool_bias)
    : conv1_(register_module("conv1", make_conv(filters, filters, 3))),
      conv2_(register_module("conv2", make_conv(filters, filters, 3))),
      bn1_(register_module("bn1", make_bn(filters))),
      bn2_(register_module("bn2", make_bn(filters))) {
  if (pool_bias)
    pool_ = register_module("pool", torch::nn::Linear(2 * filters, filters));
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor t = torch::relu(bn1_(conv1_(x)));
  if (pool_) {
    const torch::Tensor pooled = torch::cat({t.mean({2, 3}), t.amax({2, 3})}, 1);
    t = t + pool_(pooled).unsqueeze(-1).unsqueeze(-1);
  }
  return torch::relu(bn2_(conv2_(t)) + x);
}

PolicyHeadImpl::PolicyHeadImpl(int filters, int channels, int cells, int num_actions)
    : conv_(register_module("conv", make_conv(filters, channels, 1))),
      bn_(register_module("bn", make_bn(channels))),
      fc_(register_module("fc", torch::nn::Linear(channels * cells, num_actions))) {}

torch::Tensor PolicyHeadImpl::forward(const torch::Tensor& x) {
  return fc_(torch::relu(bn_(conv_(x))).flatten(1));
}

ValueHeadImpl::ValueHeadImpl(int filters, int channels, int cells, int hidden, bool score)
    : conv_(register_module("conv", make_conv(filters, channels, 1))),
      bn_(register_module("bn", make_bn(channels))),
      fc1_(register_module("fc1", torch::nn::Linear(channels * cells, hidden))),
      fc2_(register_module("fc2", torch::nn::Linear(hidden, 1))) {
  if (score) score_ = register_module("score", torch::nn::Linear(hidden, 1));
}

std::pair<torch::Tensor, torch::Tensor> ValueHeadImpl::forward(const torch::Tensor& x) {
  const torch::Tensor h = torch::relu(fc1_(torch::relu(bn_(conv_(x))).flatten(1)));
  torch::Tensor value = torch::tanh(fc2_(h)).squeeze(1);
  if (!score_) return {std::move(value), torch::Tensor()};
  return {std::move(value), torch::tanh(score_(h)).squeeze(1)};
}

TorchNetImpl::TorchNetImpl(const NetConfig& config, PlaneShape input, int num_actions)
    : config_(config), input_(input), num_actions_(num_actions) {
  config_.validate();
  if (input.planes <= 0 || input.height <= 0 || input.width <= 0 || num_actions <= 0)
    throw std::invalid_argument("TorchNet: bad input shape or action count");
  const int cells = input.height * input.width;
  stem_ = register_module("stem", ConvBn(input.planes, config.filters, 3));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int b = 0; b < config.blocks; ++b)
    blocks_->push_back(ResidualBlock(config.filters, config.has_pool_bias(b)));
  policy_ = register_module(
      "policy", PolicyHead(config.filters, config.policy_channels, cells, num_actions));
  value_ = register_module(
      "value", ValueHead(config.filters, config.value_channels, cells, config.value_hidden,
                         config.score_head));
}

TorchNetOutput TorchNetImpl::forward(torch::Tensor x) {
  x = torch::relu(stem_(x));
  for (const auto& block : *blocks_) x = block->as<ResidualBlock>()->forward(x);
  auto [value, score] = value_(x);
  return {policy_(x), std::move(value), std::move(score)};
}

TorchNet make_torch_net(const Game& game, const NetConfig& config) {
  return TorchNet(config, game.input_shape(), game.num_actions());
}

TorchNet make_torch_net(const Checkpoint& checkpoint) {
  TorchNet net(checkpoint.config, checkpoint.input, checkpoint.num_actions);
  load_weights(*net, checkpoint);
  net->eval();
  return net;
}

void load_weights(TorchNetImpl& net, const Checkpoint& checkpoint) {
  const std::string source = "for " + checkpoint.game + " " + checkpoint.config.to_string();
  if (checkpoint.config != net.config())
    throw CheckpointError("checkpoint network " + checkpoint.config.to_string() +
                          " does not match the module's " + net.config().to_string());
  if (checkpoint.input.planes != net.input_shape().planes ||
      checkpoint.input.height != net.input_shape().height ||
      checkpoint.input.width != net.input_shape().width ||
      checkpoint.num_actions != net.num_actions())
    throw CheckpointError("checkpoint " + source +
                          " has another input shape or action count than the module");
  check_tensors(checkpoint, source);
  torch::NoGradGuard no_grad;
  for (auto& [spec, tensor] : spec_tensors(net)) {
    const NamedTensor& t = checkpoint.tensor(spec.name, spec.shape);
    const torch::Tensor src =
        torch::from_blob(const_cast<float*>(t.data.data()), spec.shape, torch::kFloat32);
    tensor.copy_(src);
  }
}

Checkpoint to_checkpoint(TorchNetImpl& net, const Game& game, std::int64_t step,
                         std::string metadata) {
  if (game.input_shape().size() != net.input_shape().size() ||
      game.num_actions() != net.num_actions())
    throw std::logic_error("to_checkpoint: the net was not built for " + game.name());
  Checkpoint c;
  c.game = game.name();
  c.encoding_version = game.encoding_version();
  c.input = net.input_shape();
  c.num_actions = net.num_actions();
  c.config = net.config();
  c.step = step;
  c.metadata = std::move(metadata);
  torch::NoGradGuard no_grad;
  for (auto& [spec, tensor] : spec_tensors(net)) {
    const torch::Tensor cpu = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    NamedTensor t;
    t.name = spec.name;
    t.shape = spec.shape;
    t.data.assign(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
    c.tensors.push_back(std::move(t));
  }
  return c;
}

}  // namespace oppidum::model
