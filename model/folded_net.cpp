#include "model/folded_net.h"

#include <cmath>
#include <string>
#include <vector>

namespace oppidum::model {
namespace {

// A subnormal weight (below 1.2e-38 in size) as 0: it changes no output a float can tell apart,
// and arithmetic on subnormals is up to 100 times slower on x86 (a network of such weights, which
// a damaged or crafted checkpoint can be, played 30 times slower).
float flushed(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? 0.0f : x; }

void flush_subnormals(std::vector<float>& values) {
  for (float& x : values) x = flushed(x);
}

FoldedConv fold_conv(const Checkpoint& c, const std::string& conv, const std::string& bn) {
  const NamedTensor& w = *c.find(conv + ".weight");
  FoldedConv f;
  f.out = static_cast<int>(w.shape[0]);
  f.in = static_cast<int>(w.shape[1]);
  f.kernel = static_cast<int>(w.shape[2]);
  const std::vector<float>& gamma = c.find(bn + ".weight")->data;
  const std::vector<float>& beta = c.find(bn + ".bias")->data;
  const std::vector<float>& mean = c.find(bn + ".running_mean")->data;
  const std::vector<float>& var = c.find(bn + ".running_var")->data;
  const std::size_t per_out = static_cast<std::size_t>(f.in) * f.kernel * f.kernel;
  f.weight.resize(w.data.size());
  f.bias.resize(static_cast<std::size_t>(f.out));
  // The stored values are finite (the loader checks), but a negative variance or a huge scale
  // would fold into NaN or infinity: such a network computes nothing, and is refused by name.
  const auto refuse = [&](const std::string& what) {
    throw CheckpointError("checkpoint: " + bn + " cannot be folded into " + conv + ": " + what);
  };
  for (int o = 0; o < f.out; ++o) {
    if (!(var[o] >= 0.0f))
      refuse("running_var[" + std::to_string(o) + "] is " + std::to_string(var[o]) +
             ", and a variance is never below 0");
    const double scale = static_cast<double>(gamma[o]) /
                         std::sqrt(static_cast<double>(var[o]) + kBatchNormEpsilon);
    for (std::size_t k = 0; k < per_out; ++k) {
      const std::size_t at = o * per_out + k;
      f.weight[at] = flushed(static_cast<float>(w.data[at] * scale));
      if (!std::isfinite(f.weight[at]))
        refuse("output channel " + std::to_string(o) + " gets a weight beyond float's range");
    }
    f.bias[o] = flushed(static_cast<float>(beta[o] - mean[o] * scale));
    if (!std::isfinite(f.bias[o]))
      refuse("output channel " + std::to_string(o) + " gets a bias beyond float's range");
  }
  return f;
}

FoldedLinear linear(const Checkpoint& c, const std::string& name) {
  const NamedTensor& w = *c.find(name + ".weight");
  FoldedLinear f;
  f.out = static_cast<int>(w.shape[0]);
  f.in = static_cast<int>(w.shape[1]);
  f.weight = w.data;
  f.bias = c.find(name + ".bias")->data;
  flush_subnormals(f.weight);
  flush_subnormals(f.bias);
  return f;
}

}  // namespace

FoldedNet fold_batch_norm(const Checkpoint& c) {
  check_tensors(c, "for " + c.game + " " + c.config.to_string());
  FoldedNet net;
  net.input = c.input;
  net.num_actions = c.num_actions;
  net.config = c.config;
  net.stem = fold_conv(c, "stem.conv", "stem.bn");
  for (int b = 0; b < c.config.blocks; ++b) {
    const std::string p = "blocks." + std::to_string(b);
    FoldedBlock block;
    block.conv1 = fold_conv(c, p + ".conv1", p + ".bn1");
    block.conv2 = fold_conv(c, p + ".conv2", p + ".bn2");
    block.has_pool = c.config.has_pool_bias(b);
    if (block.has_pool) block.pool = linear(c, p + ".pool");
    net.blocks.push_back(std::move(block));
  }
  net.policy_conv = fold_conv(c, "policy.conv", "policy.bn");
  net.policy_fc = linear(c, "policy.fc");
  net.value_conv = fold_conv(c, "value.conv", "value.bn");
  net.value_fc1 = linear(c, "value.fc1");
  net.value_fc2 = linear(c, "value.fc2");
  return net;
}

}  // namespace oppidum::model
