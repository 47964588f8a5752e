// The LibTorch seam (model/backend.h, model/cpu_tuning.h) for programs built without LibTorch, such
// as a self-play worker: library oppidum_model_no_torch. The torch backend is refused with a clear
// error, CUDA is never available, and LibTorch's thread settings do nothing.
#include <stdexcept>
#include <string>

#include "model/backend.h"
#include "model/cpu_tuning.h"

namespace oppidum::model {

bool cuda_available() { return false; }
int cuda_device_count() { return 0; }

std::unique_ptr<Backend> make_torch_backend(const Checkpoint& /*checkpoint*/,
                                            const BackendOptions& /*options*/) {
  throw std::invalid_argument(
      "backend torch: this program was built without LibTorch (a self-play worker build); use "
      "inference.backend eigen");
}

std::string set_torch_threads(int /*intra_op*/, int /*inter_op*/) {
  return "LibTorch absent (built without it): no torch threads to set";
}

}  // namespace oppidum::model
