// `oppidum bench store`: how many games per second one Redis server takes from several concurrent
// pushers on this machine, with real self-play records (Murus Gallicus or DVONN, searched with a
// uniform evaluator at the small configs' budgets, so their size and visit lists are those of a
// real run). Each pusher is a thread with its own connection pushing batches of games, as a worker
// node's writer does. The result is the store's headroom: divide by one worker's games per second.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "app/option_checks.h"
#include "mcts/evaluator.h"
#include "selfplay/selfplay.h"
#include "store/redis_client.h"
#include "store/run_channel.h"
#include "util/progress.h"

namespace oppidum::app {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchStoreOptions {
  std::string store;
  std::string game = "mg";
  std::vector<int> pushers{1, 2, 4};
  double seconds = 5;
  int batch = 32;
};

// Keeps the games self-play finishes, up to a number.
class CollectingSink final : public selfplay::GameSink {
 public:
  void append(const std::vector<selfplay::GameRecord>& games) override {
    std::lock_guard<std::mutex> lock(mutex_);
    records_.insert(records_.end(), games.begin(), games.end());
  }
  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_.size();
  }
  std::vector<selfplay::GameRecord> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(records_);
  }

 private:
  std::mutex mutex_;
  std::vector<selfplay::GameRecord> records_;
};

std::vector<selfplay::GameRecord> sample_records(const std::string& game, int count) {
  mcts::UniformEvaluator uniform;
  CollectingSink sink;
  selfplay::SelfPlaySettings s;
  s.game = game;
  s.concurrent_games = 32;
  s.simulations = 64;
  s.fast_simulations = 16;
  s.games_per_chunk = 8;
  s.max_plies = 200;
  s.seed = 11;
  selfplay::SelfPlay sp(uniform, sink, s, [] { return std::int64_t{0}; });
  sp.start();
  while (static_cast<int>(sink.size()) < count) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sp.stop();
  return sink.take();
}

void run_bench_store(const BenchStoreOptions& o) {
  const store::RedisUrl url = store::node_url(o.store, "", false);
  // A benchmark has no reason to wait for a server that is not there (the client would retry
  // for ever): one attempt, and a clear error.
  try {
    store::RedisClient(url).command_once({"PING"});
  } catch (const store::RedisError& e) {
    throw std::runtime_error("bench store: no Redis server answers at " + url.to_string() + " (" +
                             e.what() + "); start one first, e.g. `redis-server --port " +
                             std::to_string(url.port) +
                             " --bind 127.0.0.1 --save '' --daemonize yes`");
  }
  // The benchmark deletes the stream of the URL's run name: never a run's (a run's games were
  // deleted under its trainer).
  {
    const store::RedisReply owner =
        store::RedisClient(url).command_once({"EXISTS", url.key("owner")});
    if (owner.integer != 0)
      throw std::runtime_error("bench store: " + url.to_string() + " belongs to a run (" +
                               url.key("owner") + " exists), whose games the benchmark would "
                               "delete; give a run name of its own");
  }
  std::printf("oppidum bench store: %s, %s records, batches of %d, %g s per setting\n",
              url.to_string().c_str(), o.game.c_str(), o.batch, o.seconds);
  util::ProgressLine progress;
  progress.update("[bench store] playing 256 sample games", true);
  const auto records = sample_records(o.game, 256);
  progress.clear();
  double bytes = 0, positions = 0;
  for (const auto& r : records) {
    bytes += static_cast<double>(selfplay::encode_record(r).size());
    positions += static_cast<double>(r.moves.size());
  }
  std::printf("%zu sample games: %.0f bytes and %.1f positions per game\n", records.size(),
              bytes / static_cast<double>(records.size()),
              positions / static_cast<double>(records.size()));
  for (const int pushers : o.pushers) {
    progress.update("[bench store] " + std::to_string(pushers) + " pusher(s)", true);
    // Once: a server that has gone away is an error here, not a wait without end.
    store::RunChannel(url, {}).client().command_once({"DEL", url.key("games")});
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> games{0}, plies{0};
    std::vector<std::thread> threads;
    const auto start = Clock::now();
    // A pusher stops at --seconds also while it waits for a server that went away (the stop flag
    // reaches its retries); what went wrong in a thread is reported after the join.
    std::mutex failure_mutex;
    std::string failure;
    for (int t = 0; t < pushers; ++t)
      threads.emplace_back([&, t] {
        try {
          store::RunChannel channel(url, {}, &stop);
          std::vector<selfplay::GameRecord> batch;
          for (std::size_t i = static_cast<std::size_t>(t); !stop.load(); i += 7) {
            batch.push_back(records[i % records.size()]);
            if (static_cast<int>(batch.size()) < o.batch) continue;
            channel.push_games("bench-" + std::to_string(t), "bench", batch, 1000000);
            games += static_cast<std::int64_t>(batch.size());
            for (const auto& r : batch) plies += static_cast<std::int64_t>(r.moves.size());
            batch.clear();
          }
        } catch (const store::RedisStopped&) {
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (failure.empty()) failure = e.what();
          stop = true;
        }
      });
    std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
    stop = true;
    for (auto& th : threads) th.join();
    if (!failure.empty()) throw std::runtime_error("bench store: " + failure);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    progress.clear();
    std::printf("%3d pusher(s): %9.0f games/s %11.0f positions/s %8.1f MB/s\n", pushers,
                static_cast<double>(games.load()) / s, static_cast<double>(plies.load()) / s,
                static_cast<double>(games.load()) * bytes / static_cast<double>(records.size()) /
                    s / 1e6);
  }
  store::RunChannel(url, {}).client().command({"DEL", url.key("games")});
}

}  // namespace

void register_bench_store(CLI::App& bench) {
  auto o = std::make_shared<BenchStoreOptions>();
  auto* cmd = bench.add_subcommand(
      "store",
      "Games per second one Redis server takes from concurrent pushers (real self-play records). "
      "Uses (and deletes) the stream of the URL's run name: give a run name of its own.");
  cmd->add_option("--store", o->store, "redis://host:port/RUN (a scratch run name)")->required();
  add_game_option(*cmd, o->game)->capture_default_str();
  cmd->add_option("--pushers", o->pushers, "comma-separated pusher counts, 1 to 256 each")
      ->delimiter(',')
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--seconds", o->seconds, "seconds per setting")
      ->check(number_in(0.5, 600.0))
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "games per push (a worker pushes games_per_chunk)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->callback([o] { run_bench_store(*o); });
}

}  // namespace oppidum::app
