#include "model/net_config.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <type_traits>

namespace oppidum::model {

NetConfig NetConfig::sized(int blocks, int filters) {
  NetConfig c;
  c.blocks = blocks;
  c.filters = filters;
  c.policy_channels = filters >= 128 ? 32 : filters >= 64 ? 16 : 4;
  c.value_channels = filters >= 128 ? 32 : filters >= 64 ? 8 : 2;
  c.value_hidden = filters >= 128 ? 256 : filters >= 64 ? 128 : 64;
  return c;
}

NetConfig NetConfig::parse_size(std::string_view text) {
  const auto x = text.find('x');
  int blocks = -1;
  int filters = -1;
  bool ok = x != std::string_view::npos && x > 0 && x + 1 < text.size();
  if (ok) {
    const char* end_b = text.data() + x;
    const char* end_f = text.data() + text.size();
    const auto rb = std::from_chars(text.data(), end_b, blocks);
    const auto rf = std::from_chars(end_b + 1, end_f, filters);
    ok = rb.ec == std::errc() && rb.ptr == end_b && rf.ec == std::errc() && rf.ptr == end_f;
  }
  if (!ok)
    throw std::invalid_argument("network size \"" + std::string(text) +
                                "\" is not BLOCKSxFILTERS (e.g. 6x64)");
  NetConfig c = sized(blocks, filters);
  c.validate();
  return c;
}

void NetConfig::validate() const {
  std::string bad;
  const auto check = [&bad](const char* name, int value, int lo, int hi) {
    if (value >= lo && value <= hi) return;
    if (!bad.empty()) bad += "; ";
    bad += std::string(name) + " = " + std::to_string(value) + " (must be " + std::to_string(lo) +
           ".." + std::to_string(hi) + ")";
  };
  // The integer fields against their ranges in OPPIDUM_NET_FIELDS (booleans need no check).
  const auto check_field = [&](const char* name, auto value, double lo, double hi) {
    if constexpr (std::is_same_v<decltype(value), int>)
      check(name, value, static_cast<int>(lo), static_cast<int>(hi));
  };
#define OPPIDUM_CHECK_NET_FIELD(type, name, def, lo, hi, resumable, doc) \
  check_field(#name, name, lo, hi);
  OPPIDUM_NET_FIELDS(OPPIDUM_CHECK_NET_FIELD)
#undef OPPIDUM_CHECK_NET_FIELD
  if (!bad.empty()) throw std::invalid_argument("invalid network config: " + bad);
}

std::string NetConfig::to_string() const {
  std::string s = std::to_string(blocks) + "x" + std::to_string(filters) + " (policy " +
                  std::to_string(policy_channels) + ", value " + std::to_string(value_channels) +
                  "/" + std::to_string(value_hidden) + ")";
  if (global_pooling) s += " gpool";
  if (score_head) s += " score";
  return s;
}

std::vector<TensorSpec> network_tensor_specs(const NetConfig& config, PlaneShape input,
                                             int num_actions) {
  config.validate();
  using Shape = std::vector<std::int64_t>;
  std::vector<TensorSpec> specs;
  const auto add = [&specs](std::string name, Shape shape) {
    specs.push_back({std::move(name), std::move(shape)});
  };
  const auto add_bn = [&add](const std::string& prefix, std::int64_t channels) {
    for (const char* field : {"weight", "bias", "running_mean", "running_var"})
      add(prefix + "." + field, {channels});
  };
  const std::int64_t f = config.filters;
  const std::int64_t cells = static_cast<std::int64_t>(input.height) * input.width;
  add("stem.conv.weight", {f, input.planes, 3, 3});
  add_bn("stem.bn", f);
  for (int b = 0; b < config.blocks; ++b) {
    const std::string p = "blocks." + std::to_string(b);
    add(p + ".conv1.weight", {f, f, 3, 3});
    add_bn(p + ".bn1", f);
    if (config.has_pool_bias(b)) {
      add(p + ".pool.weight", {f, 2 * f});
      add(p + ".pool.bias", {f});
    }
    add(p + ".conv2.weight", {f, f, 3, 3});
    add_bn(p + ".bn2", f);
  }
  const std::int64_t pc = config.policy_channels;
  add("policy.conv.weight", {pc, f, 1, 1});
  add_bn("policy.bn", pc);
  add("policy.fc.weight", {num_actions, pc * cells});
  add("policy.fc.bias", {num_actions});
  const std::int64_t vc = config.value_channels;
  const std::int64_t vh = config.value_hidden;
  add("value.conv.weight", {vc, f, 1, 1});
  add_bn("value.bn", vc);
  add("value.fc1.weight", {vh, vc * cells});
  add("value.fc1.bias", {vh});
  add("value.fc2.weight", {1, vh});
  add("value.fc2.bias", {1});
  if (config.score_head) {
    add("value.score.weight", {1, vh});
    add("value.score.bias", {1});
  }
  return specs;
}

std::string shape_to_string(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace oppidum::model
