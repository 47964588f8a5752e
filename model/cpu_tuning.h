// Process-wide CPU settings for network inference and training, applied by the program itself
// rather than left to the user's environment (OMP_NUM_THREADS, MALLOC_* variables). The app calls
// tune_cpu_runtime() once at startup, before any network work.
//
// What it does (measured: docs/PERFORMANCE.md, "Model inference"):
// - glibc malloc: M_MMAP_THRESHOLD and M_TRIM_THRESHOLD raised, so the multi-MiB activation and
//   im2col buffers of a forward pass are reused from the heap instead of being mmapped, faulted in
//   and unmapped again on every batch.
// - LibTorch: intra-op threads = `threads` (0: every core), inter-op threads = 1 (nothing here
//   runs inter-op work; LibTorch accepts this setting once per process, before its pool starts,
//   so only the first call sets it). In a program built without LibTorch (oppidum_model_no_torch)
//   this part does nothing and the summary says LibTorch is absent.
// Safe to call again (e.g. with another thread count); returns a one-line summary for the log.
#pragma once

#include <string>

namespace oppidum::model {

std::string tune_cpu_runtime(int threads = 0);

// The LibTorch part, tune_cpu_runtime calls it; part of the LibTorch seam (model/backend.h):
// defined by model/torch_backend.cpp (oppidum_model_libtorch) or, doing nothing, by
// model/torch_unavailable.cpp (oppidum_model_no_torch). Returns a summary for the log.
std::string set_torch_threads(int intra_op, int inter_op);

}  // namespace oppidum::model
