// Self-play's sink on a run spread over machines: each batch of finished games goes to the run's
// stream (store/run_channel.h) in one round trip, stamped with the node's name and the run id.
// While the server is away it retries; the self-play threads meanwhile wait on their bounded
// queue, so no game is lost and nothing grows without bound. It gives up (RedisStopped) only when
// the stop flag is set.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "selfplay/replay_store.h"
#include "store/run_channel.h"
#include "util/log.h"

namespace oppidum::store {

class RedisGameSink final : public selfplay::GameSink {
 public:
  RedisGameSink(RedisUrl url, std::string node, std::string run_id, std::int64_t max_length,
                util::LogLine log, const std::atomic<bool>* stop);

  void append(const std::vector<selfplay::GameRecord>& games) override;
  std::int64_t pushed() const { return pushed_.load(); }  // games the server acknowledged

 private:
  std::mutex mutex_;
  RunChannel channel_;
  std::string node_, run_id_;
  std::int64_t max_length_;
  std::atomic<std::int64_t> pushed_{0};
};

}  // namespace oppidum::store
