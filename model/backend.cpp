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

Precision parse_precision(std::string_view name) {
  if (name == "fp32") return Precision::kFloat32;
  if (name == "fp16") return Precision::kFloat16;
  if (name == "bf16") return Precision::kBFloat16;
  throw std::invalid_argument("unknown precision \"" + std::string(name) +
                              "\"; the precisions are fp32, fp16 and bf16");
}

const char* to_string(BackendKind kind) { return kind == BackendKind::kEigen ? "eigen" : "torch"; }
const char* to_string(Device device) { return device == Device::kCpu ? "cpu" : "cuda"; }
const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::kFloat16: return "fp16";
    case Precision::kBFloat16: return "bf16";
    case Precision::kFloat32: break;
  }
  return "fp32";
}

std::unique_ptr<Backend> make_backend(const Checkpoint& checkpoint, const BackendOptions& options) {
  if (options.kind == BackendKind::kEigen) {
    if (options.device != Device::kCpu)
      throw std::invalid_argument("backend eigen runs on the cpu only; use backend torch for cuda");
    if (options.precision != Precision::kFloat32)
      throw std::invalid_argument(std::string("precision ") + to_string(options.precision) +
                                  " (inference.precision) needs backend torch on device cuda, "
                                  "not backend eigen");
    return std::make_unique<EigenNet>(checkpoint, options.threads);
  }
  if (options.precision != Precision::kFloat32 && options.device != Device::kCuda)
    throw std::invalid_argument(std::string("precision ") + to_string(options.precision) +
                                " (inference.precision) needs device cuda; the torch backend on "
                                "the cpu runs in fp32");
  if (options.device_index < 0)
    throw std::invalid_argument("device index " + std::to_string(options.device_index) +
                                " is negative");
  return make_torch_backend(checkpoint, options);
}

}  // namespace oppidum::model
