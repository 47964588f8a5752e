// The LibTorch inference backend (cpu or cuda) and LibTorch's thread settings. Inference runs the
// folded network (model/folded_net.h) with ATen's functional ops under InferenceMode: no autograd
// bookkeeping, no batch-norm arithmetic, the same function as the Eigen backend.
//
// On cuda (BackendOptions::device_index picks the GPU) each backend owns a CUDA stream from
// LibTorch's pool of high-priority streams (the trainer's comes from the other pool, so that the
// pools' round-robin never hands a worker the trainer's stream, whose synchronize would wait for a
// training step; and self-play, which waits on every batch, goes first when both have work): its
// weights are copied, and every forward pass runs, on that stream. The planes
// are copied into a pinned host buffer and sent with a non-blocking copy; logits and values come
// back the same way into pinned buffers; then the backend waits for its own stream only (not the
// whole device), so several workers on one GPU, and a trainer on its own stream, overlap. With
// precision fp16 or bf16, weights and activations are in that type on the GPU (inputs and outputs
// stay float). The cuda path holds a mutex (one set of pinned buffers per backend), so concurrent
// forward calls on one cuda backend take turns; the inference server gives each worker its own
// backend. Streams are reached through c10's device-generic interface, so this file needs no
// CUDA headers and compiles against a CPU-only LibTorch as well.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "model/backend.h"
#include "model/cpu_tuning.h"
#include "model/folded_net.h"

namespace oppidum::model {

void use_ieee_fp32_on_cuda();

namespace {

struct Layer {
  at::Tensor weight;
  at::Tensor bias;
};

class TorchBackend final : public Backend {
 public:
  TorchBackend(const Checkpoint& checkpoint, const BackendOptions& options)
      : Backend(checkpoint.input, checkpoint.num_actions),
        device_(options.device == Device::kCuda
                    ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(options.device_index))
                    : at::Device(at::kCPU)),
        channels_last_(options.channels_last),
        dtype_(scalar_type(options)),
        precision_(options.device == Device::kCuda ? options.precision : Precision::kFloat32),
        config_(checkpoint.config) {
    std::optional<c10::StreamGuard> on_stream;
    if (device_.is_cuda()) {
      use_ieee_fp32_on_cuda();
      stream_ = c10::impl::VirtualGuardImpl(c10::DeviceType::CUDA)
                    .getStreamFromGlobalPool(device_, /*isHighPriority=*/true);
      on_stream.emplace(*stream_);
    }
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
    if (stream_) stream_->synchronize();  // the weights are in place before the first batch
  }

  void forward(const float* planes, int n, float* logits, float* values) override {
    if (n <= 0) return;
    c10::InferenceMode guard;
    if (device_.is_cuda()) return forward_cuda(planes, n, logits, values);
    const PlaneShape in = input_shape();
    const at::Tensor x = at::from_blob(const_cast<float*>(planes),
                                       {n, in.planes, in.height, in.width}, at::kFloat);
    const auto [l, out] = network(x);
    const at::Tensor l_cpu = l.contiguous();
    const at::Tensor v_cpu = out.contiguous();
    std::memcpy(logits, l_cpu.data_ptr<float>(),
                sizeof(float) * static_cast<std::size_t>(n) * static_cast<std::size_t>(num_actions()));
    std::memcpy(values, v_cpu.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(n));
  }

  std::string describe() const override {
    return std::string("torch ") +
           (device_.is_cuda() ? "cuda:" + std::to_string(device_.index()) : std::string("cpu")) +
           " " + config_.to_string() + (channels_last_ ? ", channels-last" : "") + ", " +
           to_string(precision_) +
           (device_.is_cuda() ? ", stream " + std::to_string(stream_->id())
                              : ", " + std::to_string(at::get_num_threads()) + " intra-op threads");
  }

 private:
  static at::ScalarType scalar_type(const BackendOptions& options) {
    if (options.device != Device::kCuda) return at::kFloat;
    switch (options.precision) {
      case Precision::kFloat16: return at::kHalf;
      case Precision::kBFloat16: return at::kBFloat16;
      case Precision::kFloat32: break;
    }
    return at::kFloat;
  }

  // On this backend's stream: pinned host buffers in, a non-blocking copy to the GPU, the network,
  // non-blocking copies back into pinned buffers, a wait for this stream alone, then plain copies
  // out.
  void forward_cuda(const float* planes, int n, float* logits, float* values) {
    std::lock_guard<std::mutex> lock(cuda_mutex_);
    const c10::StreamGuard on_stream(*stream_);
    const PlaneShape in = input_shape();
    if (!pinned_in_.defined() || pinned_in_.size(0) < n) {
      const auto pinned = at::TensorOptions().dtype(at::kFloat).pinned_memory(true);
      const std::int64_t capacity = std::max<std::int64_t>(n, 64);
      pinned_in_ = at::empty({capacity, in.planes, in.height, in.width}, pinned);
      pinned_logits_ = at::empty({capacity, num_actions()}, pinned);
      pinned_values_ = at::empty({capacity, 1}, pinned);
    }
    const std::size_t plane_floats = static_cast<std::size_t>(in.size());
    std::memcpy(pinned_in_.data_ptr<float>(), planes,
                sizeof(float) * static_cast<std::size_t>(n) * plane_floats);
    const at::Tensor x = pinned_in_.narrow(0, 0, n).to(device_, /*non_blocking=*/true);
    const auto [l, out] = network(x);
    pinned_logits_.narrow(0, 0, n).copy_(l, /*non_blocking=*/true);
    pinned_values_.narrow(0, 0, n).copy_(out, /*non_blocking=*/true);
    stream_->synchronize();
    std::memcpy(logits, pinned_logits_.data_ptr<float>(),
                sizeof(float) * static_cast<std::size_t>(n) * static_cast<std::size_t>(num_actions()));
    std::memcpy(values, pinned_values_.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(n));
  }

  // The folded network on x (n x C x H x W float, on device_): float logits (n x num_actions) and
  // values (n x 1), on device_.
  std::pair<at::Tensor, at::Tensor> network(at::Tensor x) const {
    if (dtype_ != at::kFloat) x = x.to(dtype_);
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
    if (dtype_ != at::kFloat) return {l.to(at::kFloat), out.to(at::kFloat)};
    return {l, out};
  }

  at::Tensor to_device(const std::vector<float>& data, at::IntArrayRef shape) const {
    at::Tensor t = at::from_blob(const_cast<float*>(data.data()), shape, at::kFloat).clone();
    t = t.to(device_);
    if (dtype_ != at::kFloat) t = t.to(dtype_);
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
  at::ScalarType dtype_;  // of weights and activations
  Precision precision_;
  NetConfig config_;
  std::optional<c10::Stream> stream_;  // cuda only: this backend's own stream
  std::mutex cuda_mutex_;  // guards the pinned buffers
  at::Tensor pinned_in_, pinned_logits_, pinned_values_;
  Layer stem_;
  std::vector<std::pair<Layer, Layer>> blocks_;
  std::vector<Layer> pools_;
  Layer policy_conv_, policy_fc_, value_conv_, value_fc1_, value_fc2_;
};

}  // namespace

// Declared in model/torch_net.h (the trainer calls it too); defined here, where ATen is at hand.
void use_ieee_fp32_on_cuda() {
  at::globalContext().setAllowTF32CuDNN(false);
  at::globalContext().setAllowTF32CuBLAS(false);
}

bool cuda_available() { return torch::cuda::is_available(); }
int cuda_device_count() { return static_cast<int>(torch::cuda::device_count()); }

std::unique_ptr<Backend> make_torch_backend(const Checkpoint& checkpoint,
                                            const BackendOptions& options) {
  if (options.device == Device::kCuda) {
    if (!cuda_available())
      throw std::invalid_argument(
          "device cuda: LibTorch sees no CUDA GPU (a CPU-only LibTorch build, or no driver); use "
          "device cpu");
    if (options.device_index >= cuda_device_count())
      throw std::invalid_argument("device cuda:" + std::to_string(options.device_index) +
                                  ": LibTorch sees " + std::to_string(cuda_device_count()) +
                                  " GPU(s)");
  }
  return std::make_unique<TorchBackend>(checkpoint, options);
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
