// Network evaluators for search: the batching InferenceServer (one batching point per device, for
// any number of caller threads) and the DirectEvaluator (runs the backend in the caller's thread).
// Both implement mcts::Evaluator: priors over each request's legal actions only (the logits of
// illegal actions are masked out before the softmax; priors align with the request's ActionList
// and sum to 1) and the value for the side to move.
//
// InferenceServer:
// - A caller's evaluate() encodes its positions into planes in its own thread, queues them as one
//   job and sleeps until the worker has written all its results.
// - One worker thread forms batches of up to max_batch positions from the queue, in arrival order
//   (a large job may span several batches, a batch may hold several jobs). It waits for a batch to
//   fill at most max_wait, counted from the arrival of the oldest queued position, and not at all
//   once as many callers are waiting as were seen waiting together before (so a lone caller, or N
//   callers in lock-step, never wait for callers that do not exist; a wait that times out lowers
//   that count to the callers that had come). Under load the oldest position has already waited
//   through the previous forward pass and batches go at once.
// - It runs the Backend, masks and softmaxes each position's logits over its legal actions, and
//   wakes the callers whose jobs are complete.
// - swap_weights()/swap_backend() hand over a new backend, built in the caller's thread; the worker
//   installs it between batches, without stopping callers. Every position queued after the swap
//   call returns is evaluated with the new weights.
// - A failed forward pass is logged to std::cerr and each waiting caller of that batch throws its
//   own std::runtime_error with the message (the server keeps serving). stop() (also run by the
//   destructor) closes the queue: positions already queued are still evaluated, later evaluate()
//   calls throw std::runtime_error. If the worker itself dies, queued and later callers get its message.
// - stats(): batches run, mean batch size and fill, evaluations per second, mean queue wait.
//
// make_net_evaluator() is the one-call helper of the arena's `net:checkpoint=PATH` players and the
// trainer: load and check a checkpoint for a game, build the backend, start a server;
// net_evaluator_factory() wraps it as an arena::NetEvaluatorFactory.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "model/backend.h"
#include "model/checkpoint.h"

namespace oppidum::model {

struct InferenceServerOptions {
  int max_batch = 256;                          // positions per forward pass, >= 1
  std::chrono::microseconds max_wait{1000};     // how long a batch may wait to fill
};

struct InferenceStats {
  std::uint64_t batches = 0;
  std::uint64_t positions = 0;
  double mean_batch = 0.0;        // positions per batch
  double mean_fill = 0.0;         // mean_batch / max_batch
  double evals_per_second = 0.0;  // positions / seconds since start or reset_stats()
  double mean_queue_wait_ms = 0.0;  // from enqueue to the start of its batch, per position
  double forward_share = 0.0;     // share of the wall time the worker spent in forward passes
  std::uint64_t non_finite = 0;   // positions whose outputs were NaN/inf (given uniform priors)
  std::uint64_t weight_swaps = 0; // backends installed by swaps
  std::string to_string() const;  // one line for logs
};

class InferenceServer final : public mcts::Evaluator {
 public:
  // `backend_options` is kept to build backends for swap_weights(). Throws std::invalid_argument
  // for bad options and when the backend was not built for `game`'s input shape and actions.
  InferenceServer(const Game& game, std::unique_ptr<Backend> backend,
                  const BackendOptions& backend_options, const InferenceServerOptions& options);
  ~InferenceServer() override;

  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override;
  std::string describe() const override;

  // Checks the checkpoint against the game (any architecture), builds a backend like the current
  // one from it and swaps it in between batches. Throws CheckpointError for a foreign checkpoint.
  void swap_weights(const Checkpoint& checkpoint);
  void swap_backend(std::unique_ptr<Backend> backend);

  InferenceStats stats() const;
  void reset_stats();
  // Closes the queue, evaluates what is queued, joins the worker. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs the backend in the calling thread (no batching across callers); thread-safe, since
// Backend::forward is.
class DirectEvaluator final : public mcts::Evaluator {
 public:
  DirectEvaluator(const Game& game, std::unique_ptr<Backend> backend);
  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override;
  std::string describe() const override;

 private:
  const Game* game_;
  std::unique_ptr<Backend> backend_;
};

// Writes `result` from one position's raw logits (all num_actions of them) and value: softmax over
// the legal actions only. Returns false (and writes uniform priors, value 0) when the outputs are
// not finite.
bool fill_eval_result(const float* logits, float value, const ActionList& legal,
                      mcts::EvalResult& result);

// Loads `checkpoint_path`, checks it was made for `game`, builds the backend and starts a server.
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
