#include "model/inference_server.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "games/quote.h"

namespace oppidum::model {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Checks the evaluator contract on the caller's side, so a bad request fails in its own thread.
void check_requests(const mcts::EvalRequest* requests, int n, int num_actions) {
  if (n < 0) throw std::logic_error("evaluate: negative batch size");
  for (int i = 0; i < n; ++i) {
    const ActionList* legal = requests[i].legal;
    if (requests[i].state == nullptr || legal == nullptr || legal->empty())
      throw std::logic_error("evaluate: request without a state or legal actions");
    for (Action a : *legal)
      if (a < 0 || a >= num_actions)
        throw std::logic_error("evaluate: action " + std::to_string(a) + " outside [0, " +
                               std::to_string(num_actions) + ")");
  }
}

void check_backend(const Game& game, const Backend& backend) {
  const PlaneShape g = game.input_shape();
  const PlaneShape b = backend.input_shape();
  if (g.planes != b.planes || g.height != b.height || g.width != b.width ||
      game.num_actions() != backend.num_actions())
    throw std::invalid_argument("backend " + backend.describe() + " was not built for " +
                                game.name() + "'s input planes and actions");
}

// Encodes the requests' positions into a buffer owned by the calling thread; it stays untouched
// until the same thread's next evaluate(), and the thread is blocked in this one meanwhile.
const float* encode_requests(const mcts::EvalRequest* requests, int n, int plane_size) {
  thread_local std::vector<float> planes;
  planes.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(plane_size));
  for (int i = 0; i < n; ++i)
    requests[i].state->encode(planes.data() + static_cast<std::ptrdiff_t>(i) * plane_size);
  return planes.data();
}

// One caller's evaluate(): lives on the caller's stack until `done`.
struct Job {
  const mcts::EvalRequest* requests = nullptr;
  mcts::EvalResult* results = nullptr;
  const float* planes = nullptr;
  int n = 0;
  int next = 0;       // first position not yet taken into a batch
  int remaining = 0;  // positions not yet evaluated
  Clock::time_point enqueued;
  std::optional<std::string> error;  // what a failed forward pass said; rethrown by the caller
  int non_finite_at = -1;  // the first position whose outputs were not finite, or -1
  bool done = false;
  std::condition_variable done_cv;
};

}  // namespace

NonFiniteOutputs::NonFiniteOutputs(const std::string& source, const GameState& state, int index)
    : std::runtime_error((source.empty() ? std::string() : source + ": ") +
                         "the network's outputs are not finite (NaN or infinite: its weights "
                         "overflow float) for the position \"" +
                         quote_input(state.to_string(), 200) + "\": it computes nothing there"),
      index_(index),
      source_(source) {}

bool fill_eval_result(const float* logits, float value, const ActionList& legal,
                      mcts::EvalResult& result) {
  const int k = legal.size();
  result.priors.resize(static_cast<std::size_t>(k));
  bool finite = std::isfinite(value);
  float top = -INFINITY;
  for (int i = 0; i < k; ++i) {
    const float l = logits[legal[i]];
    finite = finite && std::isfinite(l);
    top = std::max(top, l);
  }
  double sum = 0.0;
  if (finite) {
    for (int i = 0; i < k; ++i) {
      const float e = std::exp(logits[legal[i]] - top);
      result.priors[static_cast<std::size_t>(i)] = e;
      sum += e;
    }
  }
  if (!finite || !(sum > 0.0)) {
    mcts::set_uniform_priors(legal, result.priors);
    result.value = 0.0f;
    return false;
  }
  const float scale = static_cast<float>(1.0 / sum);
  for (float& p : result.priors) p *= scale;
  result.value = std::clamp(value, -1.0f, 1.0f);
  return true;
}

std::string InferenceStats::to_string() const {
  char line[384];
  std::snprintf(line, sizeof line,
                "%llu batches, mean batch %.1f (fill %.2f), %.0f evals/s, queue wait %.3f ms, "
                "forward %.0f%% of the time (%d worker%s), forward rate %.0f positions/s, "
                "%llu non-finite, %llu weight swaps",
                static_cast<unsigned long long>(batches), mean_batch, mean_fill, evals_per_second,
                mean_queue_wait_ms, 100.0 * forward_share, workers, workers == 1 ? "" : "s",
                forward_rate, static_cast<unsigned long long>(non_finite),
                static_cast<unsigned long long>(weight_swaps));
  return line;
}

BackendOptions worker_backend_options(const BackendOptions& base,
                                      const InferenceServerOptions& options, int worker) {
  BackendOptions b = base;
  if (b.device == Device::kCuda) {
    if (!options.cuda_devices.empty()) {
      b.device_index = options.cuda_devices[static_cast<std::size_t>(worker) %
                                            options.cuda_devices.size()];
    } else {
      const int count = cuda_device_count();
      b.device_index = count > 0 ? (base.device_index + worker) % count : base.device_index;
    }
  }
  if (b.kind == BackendKind::kEigen && b.threads == 0) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    b.threads = std::max(1, cores / std::max(1, options.workers));
  }
  return b;
}

namespace {

// One forward thread, with the backend only it runs.
struct Worker {
  std::unique_ptr<Backend> backend;  // touched by this worker's thread only, once it runs
  std::unique_ptr<Backend> pending;  // guarded by Impl::mutex; installed before the next batch
  std::string description;           // of the newest backend handed to it; guarded by the mutex
  std::thread thread;
};

std::string describe_backends(const std::vector<std::unique_ptr<Worker>>& workers) {
  std::string out;
  bool same = true;
  for (const auto& w : workers) same = same && w->description == workers.front()->description;
  if (same) {
    out = workers.front()->description;
    if (workers.size() > 1) out += " (each of " + std::to_string(workers.size()) + " workers)";
    return out;
  }
  for (std::size_t k = 0; k < workers.size(); ++k)
    out += (k ? "; " : "") + std::string("worker ") + std::to_string(k) + ": " +
           workers[k]->description;
  return out;
}

}  // namespace

struct InferenceServer::Impl {
  const Game* game = nullptr;
  BackendOptions backend_options;
  InferenceServerOptions options;
  int plane_size = 0;
  int num_actions = 0;

  mutable std::mutex mutex;  // guards everything below except each worker's `backend`
  std::condition_variable work_cv;
  std::deque<Job*> queue;
  int queued_positions = 0;
  // Callers seen waiting together: a batch goes as soon as that many jobs are queued. Raised when
  // more are queued at once, lowered to what had arrived when a wait for the batch times out.
  int expected_callers = 1;
  bool closed = false;
  std::optional<std::string> worker_error;
  std::string source;  // set_source()

  // Statistics since start or reset_stats().
  Clock::time_point stats_start = Clock::now();
  std::uint64_t batches = 0;
  std::uint64_t positions = 0;
  double wait_seconds = 0.0;
  double forward_seconds = 0.0;  // summed over the workers
  std::uint64_t non_finite = 0;
  std::uint64_t swaps = 0;

  std::vector<std::unique_ptr<Worker>> workers;

  void start(const Game& g, std::vector<std::unique_ptr<Backend>> backends);
  void run(Worker& w);
  void serve(Worker& w);
  // Takes the next batch into `batch` (with the lock held); false once closed and drained.
  bool take_batch(std::unique_lock<std::mutex>& lock, std::vector<std::pair<Job*, int>>& batch,
                  Clock::time_point& batch_start);
  void fail_all(std::vector<std::pair<Job*, int>>& batch, const std::string& error);
};

void InferenceServer::Impl::run(Worker& w) {
  try {
    serve(w);
  } catch (const std::exception& e) {
    std::cerr << "oppidum inference server: worker stopped: " << e.what() << std::endl;
  } catch (...) {
    std::cerr << "oppidum inference server: worker stopped by an unknown exception" << std::endl;
  }
}

void InferenceServer::Impl::fail_all(std::vector<std::pair<Job*, int>>& batch,
                                     const std::string& error) {
  std::lock_guard<std::mutex> lock(mutex);
  worker_error = error;
  closed = true;
  // Each job gives up the positions this worker held and those never taken; it is done only when
  // no other worker still holds some of it: that worker writes its results and counts them down
  // after its forward pass, and the caller's buffers (and the job) must outlive that write.
  const auto fail = [&error](Job* job, int given_up) {
    if (job->done) return;
    if (!job->error) job->error = error;
    job->remaining -= given_up;
    if (job->remaining == 0) {
      job->done = true;
      job->done_cv.notify_one();
    }
  };
  for (auto& entry : batch)
    if (entry.first != nullptr) fail(entry.first, 1);
  for (Job* job : queue) {
    fail(job, job->n - job->next);
    job->next = job->n;
  }
  queue.clear();
  queued_positions = 0;
  batch.clear();
  work_cv.notify_all();
}

bool InferenceServer::Impl::take_batch(std::unique_lock<std::mutex>& lock,
                                       std::vector<std::pair<Job*, int>>& batch,
                                       Clock::time_point& batch_start) {
  const int max_batch = options.max_batch;
  const auto ready = [this, max_batch] {
    return closed || queued_positions >= max_batch ||
           static_cast<int>(queue.size()) >= expected_callers;
  };
  for (;;) {
    work_cv.wait(lock, [this] { return closed || !queue.empty(); });
    if (queue.empty()) return false;  // closed and drained
    if (ready()) break;
    // Wait for the batch to fill, unless every caller we expect is already waiting. Another
    // worker may take the queued positions meanwhile: then start over.
    Job* const oldest = queue.front();
    const Clock::time_point deadline = oldest->enqueued + options.max_wait;
    const bool filled = work_cv.wait_until(lock, deadline, [&] {
      return ready() || queue.empty() || queue.front() != oldest;
    });
    if (queue.empty() || queue.front() != oldest) continue;
    if (!filled) expected_callers = static_cast<int>(queue.size());  // the others came too late
    break;
  }
  expected_callers = std::max(expected_callers, static_cast<int>(queue.size()));
  batch_start = Clock::now();
  while (!queue.empty() && static_cast<int>(batch.size()) < max_batch) {
    Job* job = queue.front();
    const int take = std::min(job->n - job->next, max_batch - static_cast<int>(batch.size()));
    for (int k = 0; k < take; ++k) batch.emplace_back(job, job->next + k);
    job->next += take;
    wait_seconds += take * seconds(batch_start - job->enqueued);
    if (job->next == job->n) queue.pop_front();
  }
  queued_positions -= static_cast<int>(batch.size());
  if (!queue.empty()) work_cv.notify_one();  // the rest for another worker
  return true;
}

void InferenceServer::Impl::serve(Worker& w) {
  const int max_batch = options.max_batch;
  std::vector<std::pair<Job*, int>> batch;  // (job, position index in the job)
  std::vector<float> planes(static_cast<std::size_t>(max_batch) * static_cast<std::size_t>(plane_size));
  std::vector<float> logits(static_cast<std::size_t>(max_batch) * static_cast<std::size_t>(num_actions));
  std::vector<float> values(static_cast<std::size_t>(max_batch));
  std::vector<char> finite;  // per position of the batch: were its outputs finite
  try {
    for (;;) {
      std::unique_ptr<Backend> retired;
      Clock::time_point batch_start;
      {
        std::unique_lock<std::mutex> lock(mutex);
        if (!take_batch(lock, batch, batch_start)) return;
        // A swap that returned before this batch was taken has left its backend here.
        if (w.pending) {
          retired = std::move(w.backend);
          w.backend = std::move(w.pending);
        }
      }
      retired.reset();

      const int m = static_cast<int>(batch.size());
      for (int k = 0; k < m; ++k)
        std::memcpy(planes.data() + static_cast<std::ptrdiff_t>(k) * plane_size,
                    batch[k].first->planes + static_cast<std::ptrdiff_t>(batch[k].second) * plane_size,
                    sizeof(float) * static_cast<std::size_t>(plane_size));
      std::optional<std::string> error;
      try {
        w.backend->forward(planes.data(), m, logits.data(), values.data());
      } catch (const std::exception& e) {
        std::cerr << "oppidum inference server: forward pass of " << m
                  << " positions failed: " << e.what() << std::endl;
        error = e.what();
      }
      const Clock::time_point forward_end = Clock::now();
      std::uint64_t bad = 0;
      finite.assign(static_cast<std::size_t>(m), 1);
      if (!error)
        for (int k = 0; k < m; ++k) {
          Job& job = *batch[k].first;
          const int i = batch[k].second;
          if (!fill_eval_result(logits.data() + static_cast<std::ptrdiff_t>(k) * num_actions,
                                values[k], *job.requests[i].legal, job.results[i])) {
            finite[static_cast<std::size_t>(k)] = 0;
            ++bad;
          }
        }

      std::lock_guard<std::mutex> lock(mutex);
      for (int k = 0; k < m; ++k) {
        Job* job = batch[k].first;
        const int i = batch[k].second;
        if (error && !job->error) job->error = error;
        const bool first_bad = job->non_finite_at < 0 || i < job->non_finite_at;
        if (!finite[static_cast<std::size_t>(k)] && first_bad && !options.uniform_for_non_finite)
          job->non_finite_at = i;
        batch[k].first = nullptr;  // counted: not this worker's to give up should it fail now
        if (--job->remaining == 0) {
          job->done = true;
          job->done_cv.notify_one();
        }
      }
      batch.clear();
      ++batches;
      positions += static_cast<std::uint64_t>(m);
      non_finite += bad;
      forward_seconds += seconds(forward_end - batch_start);
    }
  } catch (const std::exception& e) {
    fail_all(batch, e.what());
    throw;
  } catch (...) {
    fail_all(batch, "inference server worker stopped by an unknown exception");
    throw;
  }
}

void InferenceServer::Impl::start(const Game& g, std::vector<std::unique_ptr<Backend>> backends) {
  if (options.max_batch < 1 || options.max_batch > 65536)
    throw std::invalid_argument("inference server: max_batch " +
                                std::to_string(options.max_batch) + " is not in 1..65536");
  if (options.max_wait.count() < 0 || options.max_wait > std::chrono::seconds(1))
    throw std::invalid_argument("inference server: max_wait must be 0..1 s");
  if (options.workers < 1 || options.workers > kMaxInferenceWorkers)
    throw std::invalid_argument("inference server: workers " + std::to_string(options.workers) +
                                " is not in 1.." + std::to_string(kMaxInferenceWorkers));
  if (static_cast<int>(backends.size()) != options.workers)
    throw std::invalid_argument("inference server: " + std::to_string(backends.size()) +
                                " backends for " + std::to_string(options.workers) +
                                " workers (one backend per worker)");
  for (const auto& b : backends) {
    if (b == nullptr) throw std::invalid_argument("InferenceServer: no backend");
    check_backend(g, *b);
  }
  game = &g;
  plane_size = g.input_shape().size();
  num_actions = g.num_actions();
  for (auto& b : backends) {
    auto w = std::make_unique<Worker>();
    w->description = b->describe();
    w->backend = std::move(b);
    workers.push_back(std::move(w));
  }
  try {
    for (auto& w : workers) {
      Worker* worker = w.get();
      w->thread = std::thread([this, worker] { run(*worker); });
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      closed = true;
    }
    work_cv.notify_all();
    for (auto& w : workers)
      if (w->thread.joinable()) w->thread.join();
    throw;
  }
}

namespace {

std::vector<std::unique_ptr<Backend>> one_backend(std::unique_ptr<Backend> backend) {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(std::move(backend));
  return v;
}

std::vector<std::unique_ptr<Backend>> worker_backends(const Checkpoint& checkpoint,
                                                      const BackendOptions& backend,
                                                      const InferenceServerOptions& options) {
  std::vector<std::unique_ptr<Backend>> v;
  const int n = std::clamp(options.workers, 1, kMaxInferenceWorkers);
  for (int k = 0; k < n; ++k)
    v.push_back(make_backend(checkpoint, worker_backend_options(backend, options, k)));
  return v;
}

}  // namespace

InferenceServer::InferenceServer(const Game& game, std::unique_ptr<Backend> backend,
                                 const BackendOptions& backend_options,
                                 const InferenceServerOptions& options)
    : InferenceServer(game, one_backend(std::move(backend)), backend_options, options) {}

InferenceServer::InferenceServer(const Game& game, std::vector<std::unique_ptr<Backend>> backends,
                                 const BackendOptions& backend_options,
                                 const InferenceServerOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->backend_options = backend_options;
  impl_->options = options;
  impl_->start(game, std::move(backends));
}

InferenceServer::InferenceServer(const Game& game, const Checkpoint& checkpoint,
                                 const BackendOptions& backend_options,
                                 const InferenceServerOptions& options)
    : InferenceServer(game, worker_backends(checkpoint, backend_options, options),
                      backend_options, options) {}

InferenceServer::~InferenceServer() { stop(); }

void InferenceServer::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.closed = true;
  }
  s.work_cv.notify_all();
  for (auto& w : s.workers)
    if (w->thread.joinable()) w->thread.join();
}

void InferenceServer::evaluate(const mcts::EvalRequest* requests, int n,
                               mcts::EvalResult* results) {
  Impl& s = *impl_;
  check_requests(requests, n, s.num_actions);
  if (n == 0) return;
  Job job;
  job.requests = requests;
  job.results = results;
  job.n = n;
  job.remaining = n;
  job.planes = encode_requests(requests, n, s.plane_size);
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    if (s.worker_error) throw std::runtime_error(*s.worker_error);
    if (s.closed) throw std::runtime_error("inference server is stopped");
    job.enqueued = Clock::now();
    s.queue.push_back(&job);
    s.queued_positions += n;
    // Every worker may be waiting, one for a batch to fill and others idle: each must see it.
    if (s.workers.size() == 1) s.work_cv.notify_one();
    else s.work_cv.notify_all();
    job.done_cv.wait(lock, [&job] { return job.done; });
  }
  // Each caller throws its own exception: one exception object shared by several threads would
  // be destroyed by whichever lets go last, behind a reference count ThreadSanitizer cannot see.
  if (job.error) throw std::runtime_error(*job.error);
  if (job.non_finite_at >= 0)
    throw NonFiniteOutputs(s.source, *requests[job.non_finite_at].state, job.non_finite_at);
}

void InferenceServer::set_source(std::string source) { impl_->source = std::move(source); }

std::string InferenceServer::describe() const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  const int n = static_cast<int>(s.workers.size());
  return "server(" + (n > 1 ? std::to_string(n) + " workers, " : std::string()) + "max_batch " +
         std::to_string(s.options.max_batch) + ", wait " +
         std::to_string(s.options.max_wait.count()) + " us) over " + describe_backends(s.workers);
}

int InferenceServer::workers() const { return static_cast<int>(impl_->workers.size()); }

void InferenceServer::swap_weights(const Checkpoint& checkpoint) {
  check_compatible(checkpoint, *impl_->game, "for " + checkpoint.game + " (swap_weights)");
  swap_backends(worker_backends(checkpoint, impl_->backend_options, impl_->options));
}

void InferenceServer::swap_backend(std::unique_ptr<Backend> backend) {
  swap_backends(one_backend(std::move(backend)));
}

void InferenceServer::swap_backends(std::vector<std::unique_ptr<Backend>> backends) {
  Impl& s = *impl_;
  if (backends.size() != s.workers.size())
    throw std::invalid_argument("swap: " + std::to_string(backends.size()) + " backends for " +
                                std::to_string(s.workers.size()) +
                                " workers (one backend per worker)");
  for (const auto& b : backends) {
    if (b == nullptr) throw std::invalid_argument("swap_backend: no backend");
    check_backend(*s.game, *b);
  }
  std::vector<std::unique_ptr<Backend>> replaced;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (std::size_t k = 0; k < backends.size(); ++k) {
      Worker& w = *s.workers[k];
      w.description = backends[k]->describe();
      replaced.push_back(std::move(w.pending));
      w.pending = std::move(backends[k]);
    }
    ++s.swaps;
  }
}

InferenceStats InferenceServer::stats() const {
  const Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  InferenceStats st;
  st.workers = static_cast<int>(s.workers.size());
  st.batches = s.batches;
  st.positions = s.positions;
  if (s.batches > 0) {
    st.mean_batch = static_cast<double>(s.positions) / static_cast<double>(s.batches);
    st.mean_fill = st.mean_batch / s.options.max_batch;
  }
  const double elapsed = seconds(Clock::now() - s.stats_start);
  st.seconds = elapsed;
  st.forward_seconds = s.forward_seconds;
  if (elapsed > 0) {
    st.evals_per_second = static_cast<double>(s.positions) / elapsed;
    st.forward_share = std::min(1.0, s.forward_seconds / (elapsed * st.workers));
  }
  if (s.forward_seconds > 0)
    st.forward_rate = static_cast<double>(s.positions) / s.forward_seconds;
  if (s.positions > 0)
    st.mean_queue_wait_ms = 1000.0 * s.wait_seconds / static_cast<double>(s.positions);
  st.non_finite = s.non_finite;
  st.weight_swaps = s.swaps;
  return st;
}

void InferenceServer::reset_stats() {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.stats_start = Clock::now();
  s.batches = s.positions = s.non_finite = 0;
  s.wait_seconds = s.forward_seconds = 0.0;
}

DirectEvaluator::DirectEvaluator(const Game& game, std::unique_ptr<Backend> backend,
                                 std::string source)
    : game_(&game), backend_(std::move(backend)), source_(std::move(source)) {
  if (backend_ == nullptr) throw std::invalid_argument("DirectEvaluator: no backend");
  check_backend(game, *backend_);
}

void DirectEvaluator::evaluate(const mcts::EvalRequest* requests, int n,
                               mcts::EvalResult* results) {
  const int num_actions = game_->num_actions();
  check_requests(requests, n, num_actions);
  if (n == 0) return;
  const float* planes = encode_requests(requests, n, game_->input_shape().size());
  thread_local std::vector<float> logits, values;
  logits.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(num_actions));
  values.resize(static_cast<std::size_t>(n));
  backend_->forward(planes, n, logits.data(), values.data());
  for (int i = 0; i < n; ++i)
    if (!fill_eval_result(logits.data() + static_cast<std::ptrdiff_t>(i) * num_actions, values[i],
                          *requests[i].legal, results[i]))
      throw NonFiniteOutputs(source_, *requests[i].state, i);
}

std::string DirectEvaluator::describe() const { return "direct over " + backend_->describe(); }

namespace {

// The positions a network is tried on before it is used: up to kProbePositions spread evenly
// over one seeded random game played to its end (at most kProbePlies plies), its initial position
// and its last one before the end among them, with their legal actions. The whole game, not its
// first plies: a network may overflow only in a later phase (DVONN's moves, after 49 placements).
constexpr int kProbePositions = 24;
constexpr int kProbePlies = 2000;

struct ProbePositions {
  std::vector<std::unique_ptr<GameState>> states;
  std::vector<int> plies;  // each state's ply in the random game
  std::vector<ActionList> legal;
  std::vector<mcts::EvalRequest> requests;
};

ProbePositions probe_positions(const Game& game) {
  std::vector<std::unique_ptr<GameState>> game_states;  // every position before the end
  auto state = game.initial_state();
  std::mt19937_64 rng(20261206);
  ActionList legal;
  for (int ply = 0; ply < kProbePlies; ++ply) {
    state->legal_actions(legal);
    if (legal.empty()) break;
    game_states.push_back(state->clone());
    state->apply(legal[static_cast<int>(rng() % static_cast<unsigned>(legal.size()))]);
  }
  ProbePositions p;
  const int length = static_cast<int>(game_states.size());
  const int picks = std::min(kProbePositions, length);
  for (int k = 0; k < picks; ++k) {
    const int ply = picks == 1 ? 0 : static_cast<int>(std::lround(
                                         static_cast<double>(k) * (length - 1) / (picks - 1)));
    if (!p.plies.empty() && p.plies.back() == ply) continue;
    p.plies.push_back(ply);
    p.states.push_back(std::move(game_states[static_cast<std::size_t>(ply)]));
    p.legal.emplace_back();
    p.states.back()->legal_actions(p.legal.back());
  }
  for (std::size_t i = 0; i < p.states.size(); ++i)
    p.requests.push_back({p.states[i].get(), &p.legal[i]});
  return p;
}

std::string probe_failure(const std::string& source, const ProbePositions& probe, int position) {
  const int ply = probe.plies.at(static_cast<std::size_t>(position));
  return "checkpoint " + source +
         ": the network's outputs are not finite (its weights overflow float) for " +
         (ply == 0 ? std::string("the initial position")
                   : "the position after " + std::to_string(ply) + " random plies (\"" +
                         quote_input(probe.states.at(static_cast<std::size_t>(position))
                                         ->to_string(), 200) + "\")") +
         ": it computes nothing";
}

}  // namespace

void check_finite_outputs(const Game& game, Backend& backend, const std::string& source) {
  const ProbePositions probe = probe_positions(game);
  const int n = static_cast<int>(probe.states.size());
  const std::size_t plane_size = static_cast<std::size_t>(game.input_shape().size());
  const std::size_t actions = static_cast<std::size_t>(game.num_actions());
  std::vector<float> planes(static_cast<std::size_t>(n) * plane_size);
  for (int i = 0; i < n; ++i)
    probe.states[static_cast<std::size_t>(i)]->encode(planes.data() + i * plane_size);
  std::vector<float> logits(static_cast<std::size_t>(n) * actions), values(static_cast<std::size_t>(n));
  backend.forward(planes.data(), n, logits.data(), values.data());
  mcts::EvalResult result;
  for (int i = 0; i < n; ++i)
    if (!fill_eval_result(logits.data() + i * actions, values[static_cast<std::size_t>(i)],
                          probe.legal[static_cast<std::size_t>(i)], result))
      throw ComputesNothing(probe_failure(source, probe, i));
}

std::unique_ptr<InferenceServer> make_net_evaluator(const Game& game,
                                                    const std::string& checkpoint_path,
                                                    const BackendOptions& backend,
                                                    const InferenceServerOptions& server) {
  const Checkpoint checkpoint = load_checkpoint(checkpoint_path, game);
  auto evaluator = std::make_unique<InferenceServer>(game, checkpoint, backend, server);
  evaluator->set_source("checkpoint " + checkpoint_path);
  // Through the server's own backends, as one request (one batch, one wait).
  const ProbePositions probe = probe_positions(game);
  std::vector<mcts::EvalResult> results(probe.requests.size());
  try {
    evaluator->evaluate(probe.requests.data(), static_cast<int>(probe.requests.size()),
                        results.data());
  } catch (const NonFiniteOutputs& e) {
    throw ComputesNothing(probe_failure(checkpoint_path, probe, e.index()));
  }
  // (Self-play's: the probe's non-finite outputs stay counted, for its user to tell.)
  if (evaluator->stats().non_finite == 0) evaluator->reset_stats();
  return evaluator;
}

NetEvaluatorMaker net_evaluator_factory(const BackendOptions& backend,
                                        const InferenceServerOptions& server) {
  return [backend, server](const Game& game,
                           const std::string& checkpoint) -> std::shared_ptr<mcts::Evaluator> {
    return make_net_evaluator(game, checkpoint, backend, server);
  };
}

}  // namespace oppidum::model
