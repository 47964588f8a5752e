// The trainer node's side of a run's Redis store (store/run_channel.h, docs/DISTRIBUTED.md): its
// own connection (main thread), its lease on the run's keys, and what the workers read there (the
// config and the best network), published again whenever the server lost them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "games/game.h"
#include "store/run_channel.h"
#include "trainer/intake.h"
#include "trainer/run_folder.h"
#include "util/log.h"

namespace oppidum::trainer {

class StoreLease {
 public:
  // Takes the run's keys: StoreTakenError when they belong to another run or another trainer
  // holds them. Keys that were missing on a run that read from them before (the server lost its
  // data, the run moved to this key, or it last ran with a version before run ids) are read from
  // the start of their stream: `state`'s cursor is reset (the caller saves it). `config_yaml` is
  // the run's effective config; `paths` give best.ckpt. Redis retries stop when `stop` is set.
  StoreLease(const store::RedisUrl& url, RunState& state, const RunPaths& paths, const Game& game,
             std::string config_yaml, util::LogLine info,
             util::LogLine warn, const std::atomic<bool>& stop);

  store::RunChannel& channel() { return channel_; }

  // Publishes the config and best.ckpt (the network of step `best_step`, generation
  // `best_generation`) and counts a self-play session; returns the session's number.
  std::uint64_t open_session(std::int64_t best_step, int best_generation);
  // Publishes best.ckpt as the run's network (workers switch to it).
  void publish_best(std::int64_t best_step, int best_generation);
  // Every few seconds: renews the lease (another trainer that took it stops this one with
  // StoreTakenError) and publishes again whatever a worker needs that the server lost; when the
  // run's keys were gone, `intake` reads the new stream from its start.
  void renew(Intake& intake, std::int64_t best_step, int best_generation);
  // At a clean stop: gives the lease up (or lets it expire when the server is away).
  void release();

 private:
  store::RunChannel channel_;
  const RunPaths& paths_;
  const Game& game_;
  std::string config_yaml_, run_id_, lease_;
  std::string network_signature_;  // of the network it published (store::NetworkPublication)
  std::int64_t sessions_seen_ = 0;  // the highest sessions counter seen
  util::LogLine info_, warn_;
};

}  // namespace oppidum::trainer
