// The CPU inference backend without LibTorch: the network of model/net_config.h evaluated with
// Eigen, batch norm folded into the convolutions (model/folded_net.h).
//
// The kernel is compiled twice, for the baseline instruction set and for AVX2+FMA, and the best
// one the CPU runs is picked at construction (model/eigen_kernel.h).
// Activations are kept channel-minor (one column of `channels` floats per board cell, cells of a
// position one after another); a 3x3 convolution is a Winograd F(4x4,3x3) or F(2x2,3x3) (tile
// transforms and one GEMM per tile element) or an im2col (9 neighbour columns stacked) and one
// GEMM (EigenConv), a 1x1 convolution a plain GEMM, and the head's flatten is absorbed into a column
// permutation of the first linear layer at load time. A batch is cut into chunks of positions
// that run in parallel over `threads` OpenMP threads; scratch memory is pooled and reused, so
// forward allocates nothing in the steady state and is safe to call from several threads.
#pragma once

#include <memory>
#include <string>

#include "model/backend.h"

namespace oppidum::model {

// Which compiled kernel runs: the best this CPU supports (AVX2+FMA where available), or the
// build's baseline one (for tests and measurements).
enum class EigenIsa { kBest, kGeneric, kAvx2 };

// How the 3x3 convolutions are computed: kAuto is the fastest measured (docs/PERFORMANCE.md,
// "Winograd"): F(4x4,3x3), except that single positions of a net whose transformed filters
// exceed 16 MiB (10x128) convolve directly; the others force one, for tests and measurements.
// kDirect: im2col and one GEMM; kWinograd2 / kWinograd4: Winograd F(2x2,3x3) / F(4x4,3x3).
enum class EigenConv { kAuto, kDirect, kWinograd2, kWinograd4 };
const char* to_string(EigenConv conv);  // "auto", "direct", "winograd2", "winograd4"
EigenConv parse_eigen_conv(const std::string& name);  // throws std::invalid_argument

class EigenNet final : public Backend {
 public:
  // threads: 0 = every core. Throws CheckpointError when the checkpoint's tensors are wrong, and
  // std::invalid_argument for kAvx2 on a CPU or build without it.
  EigenNet(const Checkpoint& checkpoint, int threads, EigenIsa isa = EigenIsa::kBest,
           EigenConv conv = EigenConv::kAuto);
  ~EigenNet() override;

  void forward(const float* planes, int n, float* logits, float* values) override;
  std::string describe() const override;
  EigenConv conv() const;  // resolved: never kAuto

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oppidum::model
