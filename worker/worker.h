// The self-play worker node of a run spread over machines (`oppidum selfplay --store redis://...`).
//
// It reads the run's config, run id and best network from the Redis store (store/run_channel.h),
// stamps every game it pushes with that run id (so that another run never trains on it), refuses
// to play when the published network is for another game or another input encoding than this
// program's, and then plays with the same self-play code as the trainer (selfplay/selfplay.h) on
// an Eigen (CPU) inference server, pushing every finished game to the run's stream stamped with
// its node name and the network's step. Every second it looks at the network's version and swaps
// a newly published network in between two batches (a network lost by the server is waited for
// until the trainer publishes it again), and stops with an error when the keys come to belong to
// another run; every two seconds it leaves a heartbeat. A game in progress is never pushed: only
// whole records reach the stream, so killing a worker at any moment loses only its games in flight.
//
// Seeds: every start of a worker takes a session number from the store's counter (unique over all
// nodes and starts), and its self-play streams derive from the run seed, the node's name and that
// session.
//
// While the server is away, pushes and polls retry with backoff (store/redis_client.h) and
// self-play waits on its bounded queue; the worker goes on when the server is back. A stop (the
// flag, or stop_after_minutes counted from the start) ends every wait: for the server, for the
// trainer's first publication, and for pushes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "util/log.h"

namespace oppidum::worker {

struct WorkerOptions {
  std::string store;      // redis://[user[:password]@]host[:port]/RUN
  std::string node;       // the node's name (default: host name and pid)
  int threads = 0;        // self-play threads (0: the run's selfplay.threads, at least 1)
  bool insecure = false;  // allow a non-loopback server without a password
  double stop_after_minutes = 0;  // from the start, waiting included; 0: until stopped
};

struct WorkerSummary {
  std::int64_t games = 0, positions = 0;  // pushed and acknowledged by the server
  std::int64_t not_pushed = 0;  // finished, never acknowledged (queued or in flight at an end)
  int network_swaps = 0;
  double seconds = 0;
};

// Runs until `stop` becomes true (or stop_after_minutes pass). Throws with a clear message when the
// store cannot be used (bad URL, refused credentials) or the run's network does not fit this
// program. `log` receives one line per event (default: standard error).
WorkerSummary run_worker(const WorkerOptions& options, const std::atomic<bool>& stop,
                         util::LogLine log = {});

}  // namespace oppidum::worker
