// A Backend runs the network's forward pass on a batch of encoded positions, with fixed weights:
// the Eigen CPU backend (model/eigen_net.h, no LibTorch) or the LibTorch backend (cpu or cuda).
// The inference server drives one backend per worker thread (inference.workers); to change
// weights it builds new backends and each worker swaps its own in between batches.
//
//   forward(planes, n, logits, values):
//     planes  n x C x H x W floats (the layout of GameState::encode, positions one after another)
//     logits  n x num_actions floats, raw (not masked, not normalised)
//     values  n floats in [-1, 1], for the side to move
//
// forward may be called from several threads at once (each call uses its own scratch memory).
// make_backend builds either kind from a checkpoint; asking for cuda where LibTorch sees no GPU,
// for torch in a program built without LibTorch, or for an unknown name, throws
// std::invalid_argument saying so.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "games/game.h"
#include "model/checkpoint.h"

namespace oppidum::model {

enum class BackendKind { kEigen, kTorch };
enum class Device { kCpu, kCuda };
// The arithmetic of a forward pass: float everywhere, or weights and activations in half
// precision (IEEE fp16) or bfloat16, inputs and outputs staying float. Reduced precision needs
// backend torch on device cuda.
enum class Precision { kFloat32, kFloat16, kBFloat16 };

// "eigen" | "torch", "cpu" | "cuda", "fp32" | "fp16" | "bf16"; throw std::invalid_argument
// naming the accepted values.
BackendKind parse_backend_kind(std::string_view name);
Device parse_device(std::string_view name);
Precision parse_precision(std::string_view name);
const char* to_string(BackendKind kind);
const char* to_string(Device device);
const char* to_string(Precision precision);

// The CPU default, chosen by measurement (docs/PERFORMANCE.md, "Model inference").
inline constexpr BackendKind kDefaultCpuBackend = BackendKind::kEigen;

struct BackendOptions {
  BackendKind kind = kDefaultCpuBackend;
  Device device = Device::kCpu;  // cuda needs kind torch
  // CPU threads one forward pass may use: 0 = every core. The Eigen backend splits a batch over
  // them; LibTorch's intra-op thread count is process-wide and set by tune_cpu_runtime().
  int threads = 1;
  // LibTorch only: activations and weights in channels-last (NHWC) memory format.
  bool channels_last = false;
  // cuda only: the GPU (torch::Device(kCUDA, device_index)); 0..cuda_device_count()-1, else
  // make_backend throws std::invalid_argument. The inference server sets it per worker.
  int device_index = 0;
  // Torch on cuda only for fp16 and bf16 (make_backend refuses them for eigen or cpu).
  Precision precision = Precision::kFloat32;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual void forward(const float* planes, int n, float* logits, float* values) = 0;
  // e.g. "eigen cpu 6x64 (policy 32, value 32/128), 2 threads"
  virtual std::string describe() const = 0;
  PlaneShape input_shape() const { return input_; }
  int num_actions() const { return num_actions_; }

 protected:
  Backend(PlaneShape input, int num_actions) : input_(input), num_actions_(num_actions) {}

 private:
  PlaneShape input_;
  int num_actions_;
};

// The checkpoint's tensors are checked (check_tensors) but not its game: callers check that with
// check_compatible first.
std::unique_ptr<Backend> make_backend(const Checkpoint& checkpoint, const BackendOptions& options);

// The LibTorch seam. oppidum_model itself is LibTorch-free; these two functions (and
// set_torch_threads in model/cpu_tuning.h) are defined by exactly one provider library, which every
// program that makes backends must link (model/CMakeLists.txt):
//   oppidum_model_libtorch  model/torch_backend.cpp: the real LibTorch backend
//   oppidum_model_no_torch  model/torch_unavailable.cpp: for builds without LibTorch (self-play
//                           workers); make_torch_backend throws std::invalid_argument saying so
//                           and naming the eigen backend, cuda_available returns false
// make_backend calls make_torch_backend for BackendKind::kTorch.
// Its options' kind is kTorch; device, device_index, channels_last and precision apply.
std::unique_ptr<Backend> make_torch_backend(const Checkpoint& checkpoint,
                                            const BackendOptions& options);

// True when LibTorch was built with CUDA and sees a GPU (always false without LibTorch).
bool cuda_available();
// The GPUs LibTorch sees (0 without LibTorch or without CUDA).
int cuda_device_count();

// True when an error's message is LibTorch's for a failed allocation: its allocators throw a
// c10::Error (not std::bad_alloc) saying "DefaultCPUAllocator: can't allocate memory" on the CPU
// and "CUDA out of memory" on a GPU.
inline bool is_torch_out_of_memory(std::string_view message) {
  return message.find("DefaultCPUAllocator: can't allocate memory") != std::string_view::npos ||
         message.find("CUDA out of memory") != std::string_view::npos;
}

}  // namespace oppidum::model
