#include "store/redis_game_sink.h"

namespace oppidum::store {

RedisGameSink::RedisGameSink(RedisUrl url, std::string node, std::string run_id,
                             std::int64_t max_length, util::LogLine log,
                             const std::atomic<bool>* stop)
    : channel_(std::move(url), std::move(log), stop), node_(std::move(node)),
      run_id_(std::move(run_id)), max_length_(max_length) {}

void RedisGameSink::append(const std::vector<selfplay::GameRecord>& games) {
  std::lock_guard<std::mutex> lock(mutex_);
  channel_.push_games(node_, run_id_, games, max_length_);
  pushed_ += static_cast<std::int64_t>(games.size());
}

}  // namespace oppidum::store
