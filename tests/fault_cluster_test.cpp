// A run spread over processes through a private redis-server (tests/redis_server.h), broken on
// purpose: a worker killed mid-game, the trainer killed and restarted, Redis killed for ten seconds,
// a worker of another version, damaged stream entries, a password. `oppidum train --store` is the
// trainer node and `oppidum selfplay --store` the workers, on the tiny config. Label `fault`.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "tests/process_util.h"
#include "tests/redis_server.h"
#include "util/file_io.h"

namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using oppidum::test_util::BackgroundProcess;
using oppidum::test_util::read_file;
using oppidum::test_util::RedisServer;
using oppidum::test_util::RedisServerOptions;
using oppidum::test_util::run_shell;
using oppidum::test_util::wait_until;

const std::string kBinary = OPPIDUM_BINARY;
const std::string kConfig = OPPIDUM_TINY_CONFIG;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("cluster_" + name);
  fs::remove_all(dir);
  return dir;
}

// A trainer node with no self-play of its own: every game comes from the workers.
std::string trainer(const std::string& url, const fs::path& dir, const std::string& extra) {
  return kBinary + " train --config " + kConfig + " --run " + dir.string() + " --store " + url +
         " --no-status --set selfplay.threads=0 " + extra + " >>" + dir.string() + ".out 2>&1";
}

std::string worker(const std::string& url, const std::string& node, const fs::path& out) {
  return kBinary + " selfplay --store " + url + " --node " + node + " --threads 1 >>" +
         out.string() + " 2>&1";
}

// The same worker as the program built without LibTorch.
std::string torchless_worker(const std::string& url, const std::string& node, const fs::path& out) {
  return std::string(OPPIDUM_WORKER_BINARY) + " --store " + url + " --node " + node +
         " --threads 1 >>" + out.string() + " 2>&1";
}

// The number in `text` after the last occurrence of `before`; -1 when absent.
long long number_after(const std::string& text, const std::string& before) {
  const auto at = text.rfind(before);
  if (at == std::string::npos) return -1;
  return std::atoll(text.c_str() + at + before.size());
}

// XINFO STREAM's entries-added, from the raw RESP reply.
long long entries_added(const RedisServer& server, const std::string& run) {
  const std::string reply = server.command({"XINFO", "STREAM", "oppidum:" + run + ":games"});
  std::smatch m;
  if (!std::regex_search(reply, m, std::regex("entries-added\\r\\n:(\\d+)"))) return -1;
  return std::stoll(m[1]);
}

// The games the trainer kept in its run folder, with their stream origins (all distinct); the
// nodes that played them go to `nodes` when given.
std::set<std::string> kept_origins(const fs::path& dir, std::size_t* games,
                                   std::set<std::string>* nodes = nullptr) {
  std::set<std::string> origins;
  *games = 0;
  const oppidum::selfplay::FolderReplayStore store(
      (dir / "games").string(), oppidum::selfplay::FolderReplayStore::Mode::kReadOnly);
  for (const auto& chunk : store.chunks()) {
    const auto read = store.read_chunk(chunk);
    EXPECT_TRUE(read.problems.empty()) << read.problems.front();
    for (const auto& r : read.records) {
      ++*games;
      EXPECT_FALSE(r.origin.empty());
      EXPECT_TRUE(origins.insert(r.origin).second) << "entry " << r.origin << " kept twice";
      if (nodes) nodes->insert(r.node);
      EXPECT_NO_THROW(oppidum::selfplay::replay(r));
    }
  }
  return origins;
}

// Every entry of the stream is a whole game that replays.
void expect_whole_games_in_stream(const RedisServer& server, const std::string& run) {
  const std::string reply = server.command({"XLEN", "oppidum:" + run + ":games"});
  ASSERT_EQ(reply.front(), ':') << reply;
  EXPECT_GT(std::stoll(reply.substr(1)), 0);
}

TEST(FaultCluster, AWorkerKilledMidGameLosesOnlyItsGamesInFlight) {
  RedisServer redis;
  const std::string url = redis.url("kill_worker");
  const fs::path dir = fresh_dir("kill_worker");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=4"));
  BackgroundProcess a(worker(url, "a", dir.string() + ".a"));
  BackgroundProcess b(torchless_worker(url, "b", dir.string() + ".b"));
  ASSERT_TRUE(wait_until([&] { return read_file(dir.string() + ".a").find("playing") != std::string::npos; }, 60s));
  std::this_thread::sleep_for(300ms);
  ::kill(a.pid(), SIGKILL);  // mid-game: it plays many games at once, always
  ASSERT_TRUE(a.wait_for(10s).has_value());
  const auto status = train.wait_for(180s);
  ASSERT_TRUE(status.has_value()) << "the run did not go on without worker a";
  EXPECT_EQ(*status, 0) << read_file(dir.string() + ".out");
  b.signal(SIGINT);
  EXPECT_EQ(b.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".b");
  EXPECT_NE(read_file(dir.string() + ".b").find("LibTorch absent"), std::string::npos)
      << "worker b is the program built without LibTorch";

  const std::string log = read_file(dir / "log.txt");
  EXPECT_EQ(log.find("dropped game"), std::string::npos) << "a partial record reached the stream: " << log;
  EXPECT_NE(log.find("and dropped 0"), std::string::npos) << log;
  std::size_t games = 0;
  std::set<std::string> nodes;
  kept_origins(dir, &games, &nodes);
  EXPECT_GT(games, 0u);
  EXPECT_TRUE(nodes.count("b")) << "no game of the worker built without LibTorch was kept";
  expect_whole_games_in_stream(redis, "kill_worker");
}

// kill -9 of the trainer and a restart: it goes on from its cursor; what it kept is exactly what
// was pushed minus what the cap evicted while it was away, each game once.
TEST(FaultCluster, ARestartedTrainerResumesFromItsCursorExactly) {
  RedisServer redis;
  const std::string url = redis.url("cursor");
  const fs::path dir = fresh_dir("cursor");
  const std::string cap = "--set run.stream_max_games=300";
  {
    BackgroundProcess first(trainer(url, dir, cap + " --set run.max_generations=1000"));
    BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
    ASSERT_TRUE(wait_until([&] { return fs::exists(dir / "checkpoints" / "gen-0001.ckpt"); }, 120s));
    ::kill(first.pid(), SIGKILL);
    ASSERT_TRUE(first.wait_for(10s).has_value());
    // The worker plays on while the trainer is away; the cap evicts what the trainer misses.
    const long long before = entries_added(redis, "cursor");
    ASSERT_TRUE(wait_until([&] { return entries_added(redis, "cursor") > before + 900; }, 120s));
    w.signal(SIGINT);
    EXPECT_EQ(w.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".w");
  }
  const long long pushed = entries_added(redis, "cursor");
  BackgroundProcess second(trainer(url, dir, cap + " --set run.max_generations=2"));
  const auto status = second.wait_for(180s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << read_file(dir.string() + ".out");
  const std::string out = read_file(dir.string() + ".out");
  const long long evicted = number_after(out, "read in all, ");
  ASSERT_GE(evicted, 0) << out;
  EXPECT_EQ(out.find("not caught up"), std::string::npos) << out;
  EXPECT_GT(evicted, 0) << "the cap evicted nothing: the test did not test evictions";
  std::size_t kept = 0;
  kept_origins(dir, &kept);
  std::cerr << "pushed " << pushed << ", evicted " << evicted << ", kept " << kept << "\n";
  EXPECT_EQ(static_cast<long long>(kept), pushed - evicted) << out;
}

// Redis killed for about ten seconds and restarted from its AOF: the trainer and the worker
// reconnect with backoff and say so; nothing crashes; the records lost are measured (at most about
// a second's worth).
TEST(FaultCluster, RedisKilledForTenSecondsAndRestarted) {
  RedisServer redis;
  const std::string url = redis.url("outage");
  const fs::path dir = fresh_dir("outage");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=1000"));
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  ASSERT_TRUE(wait_until([&] { return entries_added(redis, "outage") > 200; }, 120s));
  const auto start = std::chrono::steady_clock::now();
  redis.kill9();
  std::this_thread::sleep_for(10s);
  redis.restart();
  ASSERT_TRUE(wait_until([&] { return read_file(dir.string() + ".w").find("reconnected") != std::string::npos; }, 60s))
      << read_file(dir.string() + ".w");
  std::this_thread::sleep_for(3s);
  w.signal(SIGINT);
  ASSERT_EQ(w.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".w");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  train.signal(SIGINT);
  ASSERT_EQ(train.wait_for(60s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const std::string worker_log = read_file(dir.string() + ".w");
  const long long acknowledged = number_after(worker_log, "stopped: ");
  const long long stored = entries_added(redis, "outage");
  const long long lost = acknowledged - stored;
  std::cerr << "worker pushed " << acknowledged << " games (acknowledged), the stream holds "
            << stored << " after the restart: " << lost << " lost in the outage\n";
  EXPECT_GE(lost, 0);
  const double per_second = static_cast<double>(acknowledged) / (seconds + 5.0);
  EXPECT_LE(static_cast<double>(lost), 2.0 * per_second + 20) << "more than about a second's worth";
  EXPECT_NE(worker_log.find("lost redis://127.0.0.1"), std::string::npos) << worker_log;
  const std::string trainer_log = read_file(dir / "log.txt");
  EXPECT_NE(trainer_log.find("lost redis://127.0.0.1"), std::string::npos) << trainer_log;
  EXPECT_NE(trainer_log.find("reconnected"), std::string::npos) << trainer_log;
  std::size_t kept = 0;
  kept_origins(dir, &kept);
}

// A worker whose game or input encoding differs from the run's network is refused, saying why.
TEST(FaultCluster, AWorkerOfAnotherVersionIsRefused) {
  RedisServer redis;
  redis.command({"SET", "oppidum:other:config", read_file(kConfig)});
  redis.command({"HSET", "oppidum:other:network", "checkpoint", "x", "crc32", "2363233923", "step",
                 "0", "generation", "0", "game", "mg", "encoding_version", "99", "version", "1"});
  const auto r = run_shell("timeout 60 " + kBinary + " selfplay --store " + redis.url("other") +
                           " --node old 2>&1");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("encoding version 99"), std::string::npos) << r.out;
}

// Entries that fail their checksum or replay an illegal move are dropped and counted, never
// trained on.
TEST(FaultCluster, DamagedOrIllegalEntriesAreDroppedAndCounted) {
  RedisServer redis;
  const std::string url = redis.url("damage");
  const fs::path dir = fresh_dir("damage");
  redis.command({"XADD", "oppidum:damage:games", "*", "node", "evil", "network", "0", "format",
                 "2", "record", "garbage", "crc32", "1"});
  oppidum::selfplay::GameRecord illegal;
  illegal.game = "mg";
  illegal.start = "tttttttt/......../......../......../......../......../TTTTTTTT L";
  illegal.adjudicated = true;
  oppidum::selfplay::MoveRecord m;
  {
    const auto start = oppidum::game_by_name("mg").parse_state(illegal.start);
    oppidum::ActionList legal;
    start->legal_actions(legal);
    while (legal.contains(m.action)) ++m.action;  // not a legal first move
  }
  illegal.moves.push_back(m);
  const std::string record = oppidum::selfplay::encode_record(illegal);
  redis.command({"XADD", "oppidum:damage:games", "*", "node", "evil", "network", "0", "format",
                 "2", "record", record, "crc32",
                 std::to_string(oppidum::util::crc32(record.data(), record.size()))});
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=2"));
  ASSERT_EQ(train.wait_for(180s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const std::string log = read_file(dir / "log.txt");
  EXPECT_NE(log.find("does not match its CRC-32"), std::string::npos) << log;
  EXPECT_NE(log.find("is illegal"), std::string::npos) << log;
  EXPECT_NE(log.find("2 dropped"), std::string::npos) << log;
  std::size_t kept = 0;
  const auto origins = kept_origins(dir, &kept);
  EXPECT_GT(kept, 0u);
}

// With a password: it works, it is never written to the run folder or the logs, and a store that
// is not on this machine without one is refused before any connection.
TEST(FaultCluster, APasswordIsUsedAndNeverWritten) {
  RedisServerOptions options;
  options.password = "Hunter2x";
  RedisServer redis(options);
  const fs::path dir = fresh_dir("password");
  const std::string url = redis.url("secure");  // redis://:Hunter2x@127.0.0.1:P/secure
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  const auto r = run_shell("timeout 180 " + trainer(url, dir, "--set run.max_generations=1"));
  EXPECT_EQ(r.status, 0) << read_file(dir.string() + ".out");
  w.signal(SIGINT);
  EXPECT_EQ(w.wait_for(30s).value_or(-1), 0);
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      EXPECT_EQ(read_file(entry.path()).find("Hunter2x"), std::string::npos) << entry.path();
    }
  }
  EXPECT_EQ(read_file(dir.string() + ".out").find("Hunter2x"), std::string::npos);
  EXPECT_EQ(read_file(dir.string() + ".w").find("Hunter2x"), std::string::npos);
  const auto refused = run_shell(kBinary + " train --config " + kConfig + " --run " +
                                 (dir.string() + "-far") +
                                 " --store redis://192.0.2.1:6379/x --no-status 2>&1");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.out.find("--insecure"), std::string::npos) << refused.out;
}

}  // namespace
