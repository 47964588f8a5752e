#include "model/cpu_tuning.h"

#include <algorithm>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace oppidum::model {

std::string tune_cpu_runtime(int threads) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int n = threads > 0 ? threads : cores;
  std::string summary = "cpu: " + std::to_string(cores) + " cores; ";
#if defined(__GLIBC__)
  // 32 MiB is glibc's largest mmap threshold on 64-bit systems. Fixed thresholds also switch off
  // glibc's dynamic threshold, which would otherwise mmap the first few large buffers anyway.
  const bool ok =
      mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 512 << 20) == 1;
  summary += ok ? "malloc mmap threshold 32 MiB, trim threshold 512 MiB; "
                : "malloc thresholds unchanged (mallopt refused); ";
#endif
  summary += set_torch_threads(n, 1);
  return summary;
}

}  // namespace oppidum::model
