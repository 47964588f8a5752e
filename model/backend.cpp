#include "model/backend.h"

#include <stdexcept>
#include <string>

#include "model/eigen_net.h"

namespace oppidum::model {

BackendKind parse_backend_kind(std::string_view name) {
  if (name == "eigen") return BackendKind::kEigen;
  if (name == "torch") return BackendKind::kTorch;
  throw std::invalid_argument("unknown backend \"" + std::string(name) +
                              "\"; the backends are eigen and torch");
}

Device parse_device(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  throw std::invalid_argument("unknown device \"" + std::string(name) +
                              "\"; the devices are cpu and cuda");
}

const char* to_string(BackendKind kind) { return kind == BackendKind::kEigen ? "eigen" : "torch"; }
const char* to_string(Device device) { return device == Device::kCpu ? "cpu" : "cuda"; }

std::unique_ptr<Backend> make_backend(const Checkpoint& checkpoint, const BackendOptions& options) {
  if (options.kind == BackendKind::kEigen) {
    if (options.device != Device::kCpu)
      throw std::invalid_argument("backend eigen runs on the cpu only; use backend torch for cuda");
    if (options.half)
      throw std::invalid_argument(
          "half precision (inference.half) needs backend torch on device cuda, not backend eigen");
    return std::make_unique<EigenNet>(checkpoint, options.threads);
  }
  if (options.half && options.device != Device::kCuda)
    throw std::invalid_argument(
        "half precision (inference.half) needs device cuda; the torch backend on the cpu runs in "
        "float");
  if (options.device_index < 0)
    throw std::invalid_argument("device index " + std::to_string(options.device_index) +
                                " is negative");
  return make_torch_backend(checkpoint, options);
}

}  // namespace oppidum::model
