// The shape of the network (a residual tower with a policy and a value head) and the one list of its
// named tensors, shared by the LibTorch module, the checkpoint loader and the Eigen backend.
//
// Architecture, for input planes C x H x W and A actions (docs/FORMATS.md, "Network"):
//   stem:    3x3 conv C -> F (no bias), batch norm, ReLU
//   blocks:  `blocks` times: 3x3 conv F -> F, BN, ReLU, [global pooling bias], 3x3 conv, BN,
//            + input (skip), ReLU
//   policy:  1x1 conv F -> policy_channels, BN, ReLU, flatten (channel-major, as NCHW), linear to A
//            logits
//   value:   1x1 conv F -> value_channels, BN, ReLU, flatten, linear to value_hidden, ReLU,
//            linear to 1, tanh: the value for the side to move
//   score:   with `score_head`, a second linear from the value head's hidden layer to 1, tanh: the
//            final score margin for the side to move, (own - opponent's) / (own + opponent's)
//            (an auxiliary training target, KataGo-style; search and the backends ignore it)
// With `global_pooling`, blocks 1, 3, 5, ... (every second one, starting with the second) add a
// per-channel bias after their first ReLU: bias = linear(concat(mean over the board, max over the
// board)) of that activation (KataGo's global pooling, simplified). Batch norm uses eps 1e-5.
//
// `validate()` throws std::invalid_argument naming every bad field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "games/game.h"

namespace oppidum::model {

inline constexpr float kBatchNormEpsilon = 1e-5f;

// The network's fields, declared once: F(type, name, default, min, max, resumable, description),
// as the run config's field lists (trainer/config.h), whose `net` section is this struct. The
// defaults are the laptop config's 4x32; validate() checks these ranges.
#define OPPIDUM_NET_FIELDS(F)                                                                   \
  F(int, blocks, 4, 0, 64, false, "residual blocks in the trunk")                               \
  F(int, filters, 32, 4, 512, false, "channels of the trunk's convolutions")                    \
  F(int, policy_channels, 4, 1, 64, false, "channels of the policy head's 1x1 convolution")     \
  F(int, value_channels, 2, 1, 64, false, "channels of the value head's 1x1 convolution")       \
  F(int, value_hidden, 64, 8, 1024, false, "width of the value head's hidden layer")            \
  F(bool, global_pooling, false, 0, 1, false,                                                   \
    "global pooling bias in every second residual block")                                       \
  F(bool, score_head, false, 0, 1, false,                                                       \
    "auxiliary head trained on the final score margin (training.score_loss_weight)")

struct NetConfig {
#define OPPIDUM_NET_CONFIG_FIELD(type, name, def, lo, hi, resumable, doc) type name = def;
  OPPIDUM_NET_FIELDS(OPPIDUM_NET_CONFIG_FIELD)
#undef OPPIDUM_NET_CONFIG_FIELD

  // The default heads for a trunk of `blocks` x `filters`, as in configs/*.yaml: policy/value
  // channels and value hidden width 4/2/64 below 64 filters, 16/8/128 below 128, else 32/32/256.
  static NetConfig sized(int blocks, int filters);
  // "6x64" -> sized(6, 64); throws std::invalid_argument on anything else.
  static NetConfig parse_size(std::string_view text);

  void validate() const;
  // True when block `block` carries a global pooling bias.
  bool has_pool_bias(int block) const { return global_pooling && block % 2 == 1; }
  // "6x64" plus the heads, e.g. "6x64 (policy 32, value 32/128)", " gpool" when pooling and
  // " score" with the score head.
  std::string to_string() const;

  bool operator==(const NetConfig& o) const {
    return blocks == o.blocks && filters == o.filters && policy_channels == o.policy_channels &&
           value_channels == o.value_channels && value_hidden == o.value_hidden &&
           global_pooling == o.global_pooling && score_head == o.score_head;
  }
  bool operator!=(const NetConfig& o) const { return !(*this == o); }
};

// One named tensor of the network: a parameter or a batch-norm running statistic.
struct TensorSpec {
  std::string name;                 // e.g. "blocks.3.bn1.running_var" (LibTorch's own naming)
  std::vector<std::int64_t> shape;  // e.g. {64}
};

// Every tensor of the network, in a fixed order. Names follow the LibTorch module's
// named_parameters()/named_buffers() (num_batches_tracked left out): "stem.conv.weight",
// "stem.bn.{weight,bias,running_mean,running_var}", "blocks.<i>.{conv1,bn1,conv2,bn2}.*",
// "blocks.<i>.pool.{weight,bias}", "policy.{conv,bn,fc}.*", "value.{conv,bn,fc1,fc2}.*" and,
// with the score head, "value.score.{weight,bias}".
std::vector<TensorSpec> network_tensor_specs(const NetConfig& config, PlaneShape input,
                                             int num_actions);

// "[64, 5, 3, 3]"
std::string shape_to_string(const std::vector<std::int64_t>& shape);

}  // namespace oppidum::model
