// Internal to model/: the Eigen forward pass behind EigenNet, compiled twice from
// model/eigen_kernel.inc: once for the build's baseline instruction set (eigen_kernel_generic.cpp)
// and once with AVX2 and FMA (eigen_kernel_avx2.cpp, x86-64 only), picked at run time by what the
// CPU supports. Eigen chooses its SIMD width at compile time, so this is how a portable binary
// gets the 2-3x of AVX2+FMA without -march=native.
//
// One-definition safety: the AVX2 file renames Eigen's namespace (EigenAvx2) and keeps its own
// code in oppidum::model::avx2, and neither file instantiates std templates out of line, so the
// linker can never hand AVX2 code to the generic path. Factories return raw owning pointers for
// the same reason (no std::unique_ptr instantiated in the AVX2 file).
#pragma once

#include "model/folded_net.h"

namespace oppidum::model::detail {

class EigenKernel {
 public:
  virtual ~EigenKernel();  // defined in eigen_net.cpp, so the vtable lives there only
  // Scratch memory for one chunk at a time; reused across calls, owned by the caller.
  virtual void* new_scratch() const = 0;
  virtual void delete_scratch(void* scratch) const = 0;
  // Forward pass for m positions (planes m x C x H x W) into logits (m x A) and values (m).
  virtual void run_chunk(const float* planes, int m, float* logits, float* values,
                         void* scratch) const = 0;
  virtual const char* isa() const = 0;  // "generic" or "avx2"
  // Positions per chunk: large enough for efficient GEMMs, small enough that the scratch of a
  // 128-filter trunk stays in the cache (measured: docs/PERFORMANCE.md): 16 direct (the im2col
  // buffer), 32 Winograd (whose GEMMs have 1/9 of the depth and 1/4 of the columns per position).
  virtual int chunk_positions() const = 0;
};

// How the kernel computes its 3x3 convolutions (the public EigenConv, resolved: never kAuto).
// Winograd F(m x m, 3 x 3): m x m output cells per tile from (m + 2) x (m + 2) input cells, one
// GEMM per tile element (16 for m = 2, 36 for m = 4) instead of one GEMM 9 times as deep.
enum class ConvAlgo { kDirect, kWinograd2, kWinograd4 };

// single_direct: with Winograd, a chunk of a single position still convolves directly (the
// transformed filters are 4x (F(4x4)) the direct ones; for a large net they stream from memory).
EigenKernel* new_eigen_kernel_generic(const FoldedNet& net, ConvAlgo algo, bool single_direct);
// nullptr when this build has no AVX2 kernel (not x86-64).
EigenKernel* new_eigen_kernel_avx2(const FoldedNet& net, ConvAlgo algo, bool single_direct);

}  // namespace oppidum::model::detail
