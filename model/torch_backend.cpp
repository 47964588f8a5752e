// The LibTorch inference backend (cpu or cuda) and LibTorch's thread settings. Inference runs the
// folded network (model/folded_net.h) with ATen's functional ops under InferenceMode: no autograd
// bookkeeping, no batch-norm arithmetic, the same function as the Eigen backend.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/cuda.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "model/backend.h"
#include "model/cpu_tuning.h"
#include "model/folded_net.h"

namespace oppidum::model {
namespace {

struct Layer {
  at::Tensor weight;
  at::Tensor bias;
};

class TorchBackend final : public Backend {
 public:
  TorchBackend(const Checkpoint& checkpoint, Device device, bool channels_last)
      : Backend(checkpoint.input, checkpoint.num_actions),
        device_(device == Device::kCuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU)),
        channels_last_(channels_last),
        config_(checkpoint.config) {
    const FoldedNet net = fold_batch_norm(checkpoint);
    stem_ = conv(net.stem);
    for (const FoldedBlock& b : net.blocks) {
      blocks_.push_back({conv(b.conv1), conv(b.conv2)});
      pools_.push_back(b.has_pool ? linear(b.pool) : Layer{});
    }
    policy_conv_ = conv(net.policy_conv);
    policy_fc_ = linear(net.policy_fc);
    value_conv_ = conv(net.value_conv);
    value_fc1_ = linear(net.value_fc1);
    value_fc2_ = linear(net.value_fc2);
  }

  void forward(const float* planes, int n, float* logits, float* values) override {
    if (n <= 0) return;
    c10::InferenceMode guard;
    const PlaneShape in = input_shape();
    at::Tensor x = at::from_blob(const_cast<float*>(planes), {n, in.planes, in.height, in.width},
                                 at::kFloat);
    if (device_.is_cuda()) x = x.to(device_);
    if (channels_last_) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    x = apply(x, stem_, 1).relu_();
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      at::Tensor t = apply(x, blocks_[b].first, 1).relu_();
      if (pools_[b].weight.defined()) {
        const at::Tensor pooled = at::cat({t.mean({2, 3}), t.amax({2, 3})}, 1);
        t = t + at::linear(pooled, pools_[b].weight, pools_[b].bias).unsqueeze(-1).unsqueeze(-1);
      }
      x = apply(t, blocks_[b].second, 1).add_(x).relu_();
    }
    const at::Tensor p = apply(x, policy_conv_, 0).relu_().flatten(1);
    const at::Tensor l = at::linear(p, policy_fc_.weight, policy_fc_.bias);
    const at::Tensor v = apply(x, value_conv_, 0).relu_().flatten(1);
    const at::Tensor h = at::linear(v, value_fc1_.weight, value_fc1_.bias).relu_();
    const at::Tensor out = at::linear(h, value_fc2_.weight, value_fc2_.bias).tanh_();
    const at::Tensor l_cpu = l.to(at::kCPU).contiguous();
    const at::Tensor v_cpu = out.to(at::kCPU).contiguous();
    std::memcpy(logits, l_cpu.data_ptr<float>(),
                sizeof(float) * static_cast<std::size_t>(n) * static_cast<std::size_t>(num_actions()));
    std::memcpy(values, v_cpu.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(n));
  }

  std::string describe() const override {
    return std::string("torch ") + (device_.is_cuda() ? "cuda" : "cpu") + " " +
           config_.to_string() + (channels_last_ ? ", channels-last" : "") + ", " +
           std::to_string(at::get_num_threads()) + " intra-op threads";
  }

 private:
  at::Tensor to_device(const std::vector<float>& data, at::IntArrayRef shape) const {
    at::Tensor t = at::from_blob(const_cast<float*>(data.data()), shape, at::kFloat).clone();
    t = t.to(device_);
    if (channels_last_ && shape.size() == 4) t = t.contiguous(at::MemoryFormat::ChannelsLast);
    return t;
  }
  Layer conv(const FoldedConv& c) const {
    return {to_device(c.weight, {c.out, c.in, c.kernel, c.kernel}), to_device(c.bias, {c.out})};
  }
  Layer linear(const FoldedLinear& l) const {
    return {to_device(l.weight, {l.out, l.in}), to_device(l.bias, {l.out})};
  }
  static at::Tensor apply(const at::Tensor& x, const Layer& layer, int padding) {
    return at::conv2d(x, layer.weight, layer.bias, /*stride=*/{1, 1}, {padding, padding});
  }

  at::Device device_;
  bool channels_last_;
  NetConfig config_;
  Layer stem_;
  std::vector<std::pair<Layer, Layer>> blocks_;
  std::vector<Layer> pools_;
  Layer policy_conv_, policy_fc_, value_conv_, value_fc1_, value_fc2_;
};

}  // namespace

bool cuda_available() { return torch::cuda::is_available(); }

std::unique_ptr<Backend> make_torch_backend(const Checkpoint& checkpoint, Device device,
                                            bool channels_last) {
  if (device == Device::kCuda && !cuda_available())
    throw std::invalid_argument(
        "device cuda: LibTorch sees no CUDA GPU (a CPU-only LibTorch build, or no driver); use "
        "device cpu");
  return std::make_unique<TorchBackend>(checkpoint, device, channels_last);
}

std::string set_torch_threads(int intra_op, int inter_op) {
  std::string note;
  if (intra_op > 0) at::set_num_threads(intra_op);
  // LibTorch accepts the inter-op setting once per process, before its pool starts.
  static std::once_flag once;
  std::call_once(once, [&] {
    if (inter_op <= 0) return;
    try {
      at::set_num_interop_threads(inter_op);
    } catch (const std::exception& e) {
      note = " (inter-op threads already fixed)";
    }
  });
  return "torch intra-op threads " + std::to_string(at::get_num_threads()) + ", inter-op " +
         std::to_string(at::get_num_interop_threads()) + note;
}

}  // namespace oppidum::model
