// Network evaluators for search: the batching InferenceServer (one queue, one or more forward
// workers, for any number of caller threads) and the DirectEvaluator (runs the backend in the
// caller's thread). Both implement mcts::Evaluator: priors over each request's legal actions only
// (the logits of illegal actions are masked out before the softmax; priors align with the
// request's ActionList and sum to 1) and the value for the side to move.
//
// InferenceServer:
// - A caller's evaluate() encodes its positions into planes in its own thread, queues them as one
//   job and sleeps until the workers have written all its results.
// - `workers` forward threads (InferenceServerOptions::workers, config inference.workers, 1..64)
//   share the one queue; each owns its own Backend, built from the same weights. A worker forms
//   a batch of up to max_batch positions from the queue, in arrival order (a large job may span
//   several batches and workers, a batch may hold several jobs). It waits for a batch to fill at
//   most max_wait, counted from the arrival of the oldest queued position, and not at all once as
//   many callers are waiting as were seen waiting together before (so a lone caller, or N callers
//   in lock-step, never wait for callers that do not exist; a wait that times out lowers that
//   count to the callers that had come). Under load the oldest position has already waited
//   through a forward pass and batches go at once; a worker that finds the queue taken by another
//   starts over.
// - Devices, per worker (worker_backend_options): on cuda, worker k runs on
//   cuda_devices[k mod size], or with cuda_devices empty on cuda:((index + k) mod GPUs seen), where
//   index is BackendOptions::device_index (0 by default), so `workers: 2` on a two-GPU machine puts
//   one worker on each GPU and `workers: 4` two on each. On the cpu every worker uses the cpu; the
//   Eigen backend's `threads` are per worker (threads 0: the cores divided among the workers).
//   The cuda paths (device index, pinned buffers, non-blocking copies, half precision) compile
//   but have not yet been run on a GPU.
// - It runs the Backend, masks and softmaxes each position's logits over its legal actions, and
//   wakes the callers whose jobs are complete.
// - swap_weights()/swap_backends() hand over new backends, one per worker, built in the caller's
//   thread; each worker installs its own between its batches, without stopping callers. Every
//   position queued after the swap call returns is evaluated with the new weights, whichever
//   worker takes it.
// - A failed forward pass is logged to std::cerr and each waiting caller of that batch throws its
//   own std::runtime_error with the message (the server and the worker keep serving). stop() (also
//   run by the destructor) closes the queue: positions already queued are still evaluated, later
//   evaluate() calls throw std::runtime_error. If a worker itself dies, the server closes and
//   queued and later callers get its message.
// - Outputs that are not finite (NaN or infinite) for a position are no result: the caller throws
//   NonFiniteOutputs naming the position (both evaluators), so that no NaN becomes a move, a
//   value or an Elo; stats().non_finite counts such positions. Self-play's servers take uniform
//   priors and value 0 there instead (InferenceServerOptions::uniform_for_non_finite).
// - stats(): batches run, mean batch size and fill, evaluations per second, mean queue wait, and
//   the forward workers' busy time: forward_share is the busy time summed over the workers divided
//   by (workers x wall time), so 1.0 means every worker always busy; forward_seconds is that sum.
//
// make_net_evaluator() is the one-call helper of the arena's `net:checkpoint=PATH` players and the
// trainer: load and check a checkpoint for a game, build the backends, start a server;
// net_evaluator_factory() wraps it as an arena::NetEvaluatorFactory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "model/backend.h"
#include "model/checkpoint.h"

namespace oppidum::model {

// A network's outputs for a position are not finite (NaN or infinite): finite weights whose
// products overflow float there. Thrown by evaluate() instead of a result; `index` is the
// request's index in that call. The message names the network by `source` (e.g. "checkpoint
// PATH"; nothing when empty) and the position.
class NonFiniteOutputs : public std::runtime_error {
 public:
  NonFiniteOutputs(const std::string& source, const GameState& state, int index);
  int index() const { return index_; }
  const std::string& source() const { return source_; }

 private:
  int index_;
  std::string source_;
};

// A network refused before it is used (check_finite_outputs, make_net_evaluator): its outputs are
// not finite for a position it was tried on.
class ComputesNothing : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

inline constexpr int kMaxInferenceWorkers = 64;

struct InferenceServerOptions {
  int max_batch = 256;                          // positions per forward pass, >= 1
  std::chrono::microseconds max_wait{1000};     // how long a batch may wait to fill
  int workers = 1;                              // forward threads, 1..kMaxInferenceWorkers
  // cuda only: the GPUs the workers use in turn (worker k: cuda_devices[k mod size]); empty: every
  // GPU LibTorch sees, in turn.
  std::vector<int> cuda_devices;
  // Outputs that are not finite for a position: false, NonFiniteOutputs (whatever measures a
  // network: arena, gauntlet, engine, the gate); true, uniform priors and value 0 there, counted
  // in stats().non_finite, for self-play, which goes on and says so (a NaN on one position of a
  // long run stopped the run and every worker, and again at every resume). make_net_evaluator
  // then refuses no network for its probe either: its failures are counted the same way.
  bool uniform_for_non_finite = false;
};

struct InferenceStats {
  std::uint64_t batches = 0;
  std::uint64_t positions = 0;
  double mean_batch = 0.0;        // positions per batch
  double mean_fill = 0.0;         // mean_batch / max_batch
  double evals_per_second = 0.0;  // positions / seconds since start or reset_stats()
  double mean_queue_wait_ms = 0.0;  // from enqueue to the start of its batch, per position
  int workers = 1;
  double seconds = 0.0;           // wall time since start or reset_stats()
  double forward_seconds = 0.0;   // time in forward passes, summed over the workers
  double forward_share = 0.0;     // forward_seconds / (workers x seconds), 0..1
  // positions / forward_seconds: the backend's own rate at the batch sizes seen (per worker; the
  // server can do at most workers times this, if the workers do not share cores)
  double forward_rate = 0.0;
  std::uint64_t non_finite = 0;   // positions whose outputs were NaN/inf (NonFiniteOutputs)
  std::uint64_t weight_swaps = 0; // swaps handed over (each reaches every worker); not reset
  std::string to_string() const;  // one line for logs
};

class InferenceServer final : public mcts::Evaluator {
 public:
  // `backend_options` is kept to build backends for swap_weights(). Throws std::invalid_argument
  // for bad options, when the number of backends is not options.workers, and when a backend was
  // not built for `game`'s input shape and actions.
  InferenceServer(const Game& game, std::unique_ptr<Backend> backend,
                  const BackendOptions& backend_options, const InferenceServerOptions& options);
  InferenceServer(const Game& game, std::vector<std::unique_ptr<Backend>> backends,
                  const BackendOptions& backend_options, const InferenceServerOptions& options);
  // Builds options.workers backends from the checkpoint, worker k's with
  // worker_backend_options(backend_options, options, k). The caller checks the checkpoint's game.
  InferenceServer(const Game& game, const Checkpoint& checkpoint,
                  const BackendOptions& backend_options, const InferenceServerOptions& options);
  ~InferenceServer() override;

  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override;
  std::string describe() const override;
  // The network's name in errors (NonFiniteOutputs), e.g. "checkpoint PATH"; set before use.
  void set_source(std::string source);

  // Checks the checkpoint against the game (any architecture), builds one backend per worker like
  // the current ones from it and swaps them in, each between its worker's batches. Throws
  // CheckpointError for a foreign checkpoint.
  void swap_weights(const Checkpoint& checkpoint);
  // One backend per worker (swap_backend: a one-worker server); std::invalid_argument otherwise.
  void swap_backend(std::unique_ptr<Backend> backend);
  void swap_backends(std::vector<std::unique_ptr<Backend>> backends);
  int workers() const;

  InferenceStats stats() const;
  void reset_stats();
  // Closes the queue, evaluates what is queued, joins the workers. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs the backend in the calling thread (no batching across callers); thread-safe, since
// Backend::forward is.
class DirectEvaluator final : public mcts::Evaluator {
 public:
  // `source`: the network's name in errors (NonFiniteOutputs), e.g. "checkpoint NAME".
  DirectEvaluator(const Game& game, std::unique_ptr<Backend> backend, std::string source = "");
  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override;
  std::string describe() const override;

 private:
  const Game* game_;
  std::unique_ptr<Backend> backend_;
  std::string source_;
};

// Worker k's backend options: on cuda its GPU (see above), for the Eigen backend with threads 0
// the cores divided among the workers (at least 1); otherwise `base` as it is.
BackendOptions worker_backend_options(const BackendOptions& base,
                                      const InferenceServerOptions& options, int worker);

// Writes `result` from one position's raw logits (all num_actions of them) and value: softmax over
// the legal actions only. Returns false (and writes uniform priors, value 0) when the outputs are
// not finite; the evaluators then throw NonFiniteOutputs.
bool fill_eval_result(const float* logits, float value, const ActionList& legal,
                      mcts::EvalResult& result);

// Throws ComputesNothing naming `source` when the backend's outputs are not finite for one of up
// to 24 positions spread over a seeded random game played to its end (its initial position, its
// last and those between, so every phase of the game: DVONN's placement and its moves): finite
// weights whose products overflow float compute nothing, and such a network is refused before it
// plays rather than at its first such position (NonFiniteOutputs).
void check_finite_outputs(const Game& game, Backend& backend, const std::string& source);

// Loads `checkpoint_path`, checks it was made for `game`, builds the backend and starts a server;
// a network whose outputs are not finite on those positions is refused (ComputesNothing).
std::unique_ptr<InferenceServer> make_net_evaluator(const Game& game,
                                                    const std::string& checkpoint_path,
                                                    const BackendOptions& backend,
                                                    const InferenceServerOptions& server = {});

// make_net_evaluator as a factory with the signature of arena::NetEvaluatorFactory, for the
// arena's `net:checkpoint=PATH` players: each call starts its own server.
using NetEvaluatorMaker =
    std::function<std::shared_ptr<mcts::Evaluator>(const Game& game, const std::string& checkpoint)>;
NetEvaluatorMaker net_evaluator_factory(const BackendOptions& backend,
                                        const InferenceServerOptions& server = {});

}  // namespace oppidum::model
