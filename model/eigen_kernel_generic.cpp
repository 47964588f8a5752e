// The Eigen forward pass for the build's baseline instruction set (see model/eigen_kernel.h).
#define OPPIDUM_EIGEN_ISA generic
#define OPPIDUM_EIGEN_ISA_NAME "generic"
#include "model/eigen_kernel.inc"

namespace oppidum::model::detail {

EigenKernel* new_eigen_kernel_generic(const FoldedNet& net, ConvAlgo algo, bool single_direct) {
  return new generic::Kernel(net, algo, single_direct);
}

}  // namespace oppidum::model::detail
