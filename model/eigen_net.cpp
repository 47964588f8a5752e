#include "model/eigen_net.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "model/eigen_kernel.h"
#include "model/folded_net.h"

namespace oppidum::model {

namespace detail {
EigenKernel::~EigenKernel() = default;
#ifndef OPPIDUM_HAVE_AVX2_KERNEL
EigenKernel* new_eigen_kernel_avx2(const FoldedNet&, ConvAlgo, bool) { return nullptr; }
#endif
}  // namespace detail

namespace {

// Flush-to-zero and denormals-are-zero for the calling thread while it lives, the thread's own
// mode put back after: a subnormal activation (tiny but normal weights give them; subnormal weights
// are already folded to 0, model/folded_net.cpp) made every forward pass about 8 times slower on
// x86, and changes no output by more than 1.2e-38. Set per chunk, since OpenMP's threads and the
// callers' (arena, the page) each have their own mode.
class FlushSubnormals {
 public:
#if defined(__SSE__) || defined(__x86_64__)
  static constexpr unsigned kFtzDaz = 0x8040;  // MXCSR bits 15 (FTZ) and 6 (DAZ)
  FlushSubnormals() : saved_(_mm_getcsr()) {
    if ((saved_ & kFtzDaz) != kFtzDaz) _mm_setcsr(saved_ | kFtzDaz);
  }
  ~FlushSubnormals() {
    if ((saved_ & kFtzDaz) != kFtzDaz) _mm_setcsr(saved_);
  }

 private:
  unsigned saved_;
#else
  FlushSubnormals() {}  // (no such mode to set)
#endif
};

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// kAuto: the algorithm measured fastest (docs/PERFORMANCE.md, "Winograd"): F(4x4,3x3) for every
// size and both games, at every batch size but one, single positions of the 10x128 net.
EigenConv resolve(EigenConv conv) { return conv == EigenConv::kAuto ? EigenConv::kWinograd4 : conv; }

// kAuto: single positions convolve directly when the F(4x4,3x3) filters of the net exceed this
// (10x128: 50 MB, out of the cache; 6x64: 7 MB, 4x32: 1.3 MB).
constexpr double kSingleWinogradBytes = 16.0 * 1024 * 1024;

double winograd4_filter_bytes(const FoldedNet& net) {
  double bytes = 0;
  const auto add = [&](const FoldedConv& c) {
    if (c.kernel == 3) bytes += 36.0 * c.in * c.out * sizeof(float);
  };
  add(net.stem);
  for (const FoldedBlock& b : net.blocks) {
    add(b.conv1);
    add(b.conv2);
  }
  return bytes;
}

detail::ConvAlgo to_algo(EigenConv conv) {
  switch (conv) {
    case EigenConv::kWinograd2:
      return detail::ConvAlgo::kWinograd2;
    case EigenConv::kWinograd4:
      return detail::ConvAlgo::kWinograd4;
    default:
      return detail::ConvAlgo::kDirect;
  }
}

}  // namespace

const char* to_string(EigenConv conv) {
  switch (conv) {
    case EigenConv::kAuto:
      return "auto";
    case EigenConv::kDirect:
      return "direct";
    case EigenConv::kWinograd2:
      return "winograd2";
    case EigenConv::kWinograd4:
      return "winograd4";
  }
  return "?";
}

EigenConv parse_eigen_conv(const std::string& name) {
  for (EigenConv c :
       {EigenConv::kAuto, EigenConv::kDirect, EigenConv::kWinograd2, EigenConv::kWinograd4})
    if (name == to_string(c)) return c;
  throw std::invalid_argument("unknown Eigen convolution '" + name +
                              "' (auto, direct, winograd2, winograd4)");
}

struct EigenNet::Impl {
  NetConfig config;
  EigenConv conv = EigenConv::kDirect;
  bool single_direct = false;
  int threads = 1;
  int num_actions = 0;
  std::ptrdiff_t plane_size = 0;
  detail::EigenKernel* kernel = nullptr;

  std::mutex scratch_mutex;
  std::vector<void*> free_scratch;

  ~Impl() {
    for (void* s : free_scratch) kernel->delete_scratch(s);
    delete kernel;
  }
  void* acquire() {
    {
      std::lock_guard<std::mutex> lock(scratch_mutex);
      if (!free_scratch.empty()) {
        void* s = free_scratch.back();
        free_scratch.pop_back();
        return s;
      }
    }
    return kernel->new_scratch();
  }
  void release(void* s) {
    std::lock_guard<std::mutex> lock(scratch_mutex);
    free_scratch.push_back(s);
  }
};

EigenNet::EigenNet(const Checkpoint& checkpoint, int threads, EigenIsa isa, EigenConv conv)
    : Backend(checkpoint.input, checkpoint.num_actions), impl_(std::make_unique<Impl>()) {
  const FoldedNet net = fold_batch_norm(checkpoint);
  Impl& m = *impl_;
  m.config = net.config;
  m.conv = resolve(conv);
  m.single_direct = conv == EigenConv::kAuto && winograd4_filter_bytes(net) > kSingleWinogradBytes;
  const detail::ConvAlgo algo = to_algo(m.conv);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  m.threads = threads > 0 ? threads : cores;
  m.num_actions = net.num_actions;
  m.plane_size = net.input.size();
  // A build for the native CPU (-march=native with AVX2) is at least as good as the AVX2 kernel.
#if defined(__AVX2__) && defined(__FMA__)
  const bool baseline_has_avx2 = true;
#else
  const bool baseline_has_avx2 = false;
#endif
  if (isa == EigenIsa::kBest && !baseline_has_avx2 && cpu_has_avx2_fma())
    m.kernel = detail::new_eigen_kernel_avx2(net, algo, m.single_direct);
  if (isa == EigenIsa::kAvx2) {
    if (!cpu_has_avx2_fma()) throw std::invalid_argument("this CPU has no AVX2 and FMA");
    m.kernel = detail::new_eigen_kernel_avx2(net, algo, m.single_direct);
    if (m.kernel == nullptr) throw std::invalid_argument("this build has no AVX2 Eigen kernel");
  }
  if (m.kernel == nullptr) m.kernel = detail::new_eigen_kernel_generic(net, algo, m.single_direct);
}

EigenNet::~EigenNet() = default;

void EigenNet::forward(const float* planes, int n, float* logits, float* values) {
  if (n <= 0) return;
  Impl& m = *impl_;
  const int per_thread = (n + m.threads - 1) / m.threads;
  const int chunk = std::max(1, std::min(m.kernel->chunk_positions(), per_thread));
  const int chunks = (n + chunk - 1) / chunk;
  const auto run = [&](int k) {
    const int first = k * chunk;
    const int count = std::min(chunk, n - first);
    const FlushSubnormals flush;
    void* s = m.acquire();
    m.kernel->run_chunk(planes + first * m.plane_size, count,
                        logits + static_cast<std::ptrdiff_t>(first) * m.num_actions,
                        values + first, s);
    m.release(s);
  };
#ifdef _OPENMP
  if (chunks > 1 && m.threads > 1) {
#pragma omp parallel for num_threads(m.threads) schedule(dynamic, 1)
    for (int k = 0; k < chunks; ++k) run(k);
    return;
  }
#endif
  for (int k = 0; k < chunks; ++k) run(k);
}

std::string EigenNet::describe() const {
  return std::string("eigen cpu (") + impl_->kernel->isa() + ", " + to_string(impl_->conv) +
         (impl_->single_direct ? ", direct for single positions" : "") + ") " +
         impl_->config.to_string() +
         ", " + std::to_string(impl_->threads) + (impl_->threads == 1 ? " thread" : " threads");
}

EigenConv EigenNet::conv() const { return impl_->conv; }

}  // namespace oppidum::model
