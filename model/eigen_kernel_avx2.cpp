// The Eigen forward pass compiled with AVX2 and FMA (this file only; see model/eigen_kernel.h),
// used when the CPU supports them. Eigen's namespace is renamed here so that none of its template
// instances can be confused with the baseline build's.
#define Eigen EigenAvx2
#define OPPIDUM_EIGEN_ISA avx2
#define OPPIDUM_EIGEN_ISA_NAME "avx2"
#include "model/eigen_kernel.inc"

namespace oppidum::model::detail {

EigenKernel* new_eigen_kernel_avx2(const FoldedNet& net, ConvAlgo algo, bool single_direct) {
  return new avx2::Kernel(net, algo, single_direct);
}

}  // namespace oppidum::model::detail
