// A run spread over processes through a private redis-server (tests/redis_server.h), broken on
// purpose: a worker killed mid-game, the trainer killed and restarted, Redis killed for ten seconds,
// a worker of another version, damaged stream entries, a nodes key of a wrong type, a password. `oppidum train --store` is the
// trainer node and `oppidum selfplay --store` the workers, on the tiny config. Label `fault`.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "games/registry.h"
#include "model/checkpoint.h"
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

// OPPIDUM_TEST_BINARY runs the scenarios against another build (an older one, to see them fail).
const std::string kBinary =
    std::getenv("OPPIDUM_TEST_BINARY") ? std::getenv("OPPIDUM_TEST_BINARY") : OPPIDUM_BINARY;
const std::string kConfig = OPPIDUM_TINY_CONFIG;

// An empty place for a run folder; the logs of earlier runs beside it (name.out, .w, ...) go too.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("cluster_" + name);
  fs::remove_all(dir);
  for (const char* log : {".out", ".w", ".w1", ".w2", ".a", ".b"}) fs::remove(dir.string() + log);
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
    const auto read = oppidum::selfplay::read_game_file(chunk);
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

// The run id that owns `run`'s keys; empty when none does.
std::string owner_of(const RedisServer& server, const std::string& run) {
  const std::string reply = server.command({"GET", "oppidum:" + run + ":owner"});
  if (reply.rfind("$-1", 0) == 0 || reply.front() != '$') return "";
  const auto start = reply.find("\r\n") + 2;
  return reply.substr(start, reply.find("\r\n", start) - start);
}

// A real finished game of random moves, as a record.
oppidum::selfplay::GameRecord random_game(std::uint64_t seed) {
  const oppidum::Game& game = oppidum::game_by_name("mg");
  auto state = game.initial_state();
  oppidum::selfplay::GameRecord r;
  r.game = "mg";
  r.start = state->to_string();
  r.seed = seed;
  oppidum::ActionList legal;
  std::uint64_t x = seed;
  for (state->legal_actions(legal); !legal.empty(); state->legal_actions(legal)) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    oppidum::selfplay::MoveRecord m;
    m.action = static_cast<std::uint16_t>(legal[static_cast<int>((x >> 33) % legal.size())]);
    m.visits = {{m.action, 3}};
    r.moves.push_back(m);
    state->apply(m.action);
  }
  r.result = static_cast<std::int8_t>(state->result(0));
  for (int p = 0; p < 2; ++p) r.score[p] = static_cast<std::int16_t>(state->score(p));
  return r;
}

// XADDs `record` to `run`'s stream as node `node` of run id `run_id` (none when empty).
void push_entry(const RedisServer& server, const std::string& run, const std::string& node,
                const std::string& run_id, const std::string& record, const std::string& crc) {
  std::vector<std::string> args = {"XADD", "oppidum:" + run + ":games", "*", "node", node};
  if (!run_id.empty()) args.insert(args.end(), {"run", run_id});
  args.insert(args.end(), {"network", "0", "format", "2", "record", record, "crc32", crc});
  server.command(args);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
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
  // The rate of pushes just before the outage: what "a second's worth" is.
  const long long counted_before = entries_added(redis, "outage");
  const auto counting = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(3s);
  const double per_second =
      static_cast<double>(entries_added(redis, "outage") - counted_before) /
      std::chrono::duration<double>(std::chrono::steady_clock::now() - counting).count();
  redis.kill9();
  std::this_thread::sleep_for(10s);
  redis.restart();
  ASSERT_TRUE(wait_until([&] { return read_file(dir.string() + ".w").find("reconnected") != std::string::npos; }, 60s))
      << read_file(dir.string() + ".w");
  std::this_thread::sleep_for(3s);
  w.signal(SIGINT);
  ASSERT_EQ(w.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".w");
  train.signal(SIGINT);
  ASSERT_EQ(train.wait_for(60s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const std::string worker_log = read_file(dir.string() + ".w");
  const long long acknowledged = number_after(worker_log, "stopped: ");
  const long long stored = entries_added(redis, "outage");
  const long long lost = acknowledged - stored;
  std::cerr << "worker pushed " << acknowledged << " games (acknowledged), the stream holds "
            << stored << " after the restart: " << lost << " lost in the outage\n";
  EXPECT_GE(lost, 0);
  // appendfsync everysec loses at most about a second of writes, two when a write waited for a
  // slow fsync; three allowed for a loaded machine.
  EXPECT_LE(static_cast<double>(lost), 3.0 * per_second + 20)
      << "more than about a second's worth (" << per_second << " a second)";
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

// A published network of the run's game but another architecture than the run's config names is
// none the trainer published (a run's keys written by something else): the worker refuses it,
// naming what differs, instead of playing with it. One larger than the run's network can be is
// refused before it is read (a server's network was read up to 4 GiB, whatever the run's).
TEST(FaultCluster, AWorkerRefusesANetworkOfAnotherArchitecture) {
  const oppidum::Game& game = oppidum::game_by_name("mg");
  // The run's network is 1x8 with heads of 2, 1 and 16 (tests/data/tiny-mg.yaml).
  oppidum::model::NetConfig narrower = oppidum::model::NetConfig::sized(1, 4);
  narrower.policy_channels = 2;
  narrower.value_channels = 1;
  narrower.value_hidden = 16;
  for (const auto& [net, said] : std::vector<std::pair<oppidum::model::NetConfig, std::string>>{
           {narrower, "network 1x4"},
           // (over the run's tensors and 2 MiB for its name and metadata: 10x128 is 12 MB)
           {oppidum::model::NetConfig::sized(10, 128), "more than the run's network can have"}}) {
    RedisServer redis;
    redis.command({"SET", "oppidum:arch:config", read_file(kConfig)});
    const std::string checkpoint = oppidum::model::serialize_checkpoint(
        oppidum::model::random_checkpoint(game, net, 5));
    redis.command({"HSET", "oppidum:arch:network", "checkpoint", checkpoint, "crc32",
                   std::to_string(oppidum::util::crc32(checkpoint.data(), checkpoint.size())),
                   "step", "0", "generation", "0", "game", "mg", "encoding_version",
                   std::to_string(game.encoding_version()), "version", "1"});
    const auto r = run_shell("timeout 60 " + kBinary + " selfplay --store " +
                             redis.url("arch") + " --node n --threads 1 2>&1");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_EQ(r.status == 124, false) << "it waited instead of refusing: " << r.out;
    EXPECT_NE(r.out.find(said), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("lost "), std::string::npos) << "the server seemed lost: " << r.out;
    EXPECT_EQ(redis.command({"XLEN", "oppidum:arch:games"}), ":0\r\n") << "a game was played";
  }
}

// scripts/cluster.sh stopped as a terminal's Ctrl-C stops it (SIGINT to its whole process group):
// the trainer used to get the terminal's SIGINT and then the script's, and a second one makes it
// exit at once, unsaved (no `stopped:` line, no stop row; the steps since its last save lost).
// Each node now has a process group of its own, so the script alone hears the terminal and stops
// each node once, Redis after the trainer.
TEST(FaultCluster, ClusterScriptStopsTheTrainerCleanlyOnCtrlC) {
  const fs::path root = fs::path(OPPIDUM_SOURCE_DIR);
  if (fs::path(kBinary) != root / "build" / "bin" / "oppidum")
    GTEST_SKIP() << "scripts/cluster.sh runs build/bin/oppidum; this test's binary is " << kBinary;
  const fs::path dir = fresh_dir("script");
  const fs::path run = dir / "run";
  fs::create_directories(dir);
  // The nodes are in process groups of their own: whatever this test ends by, none outlives it.
  // The trainer's command names the run, the worker's and redis-server's the port (the patterns'
  // "[r]un" and "[1]27" do not match the shell that runs pgrep, whose command holds them).
  const fs::path out_file = dir / "script.out";
  const auto leftovers = [&] {
    const long long port = number_after(read_file(out_file.string()), "redis-server on 127.0.0.1:");
    return std::vector<std::string>{(dir / "[r]un").string(),
                                    "[1]27.0.0.1:" + std::to_string(port) + "\\b"};
  };
  struct Cleanup {
    std::function<std::vector<std::string>()> patterns;
    ~Cleanup() {
      for (const std::string& p : patterns()) run_shell("pkill -9 -f -- '" + p + "'");
    }
  } cleanup{leftovers};
  BackgroundProcess script("env CONFIG=" + kConfig + " RUN=" + run.string() + " " +
                           (root / "scripts" / "cluster.sh").string() +
                           " 1 -- --set run.max_generations=1000 >" +
                           out_file.string() + " 2>&1");
  ASSERT_TRUE(script.started());
  const fs::path metrics = run / "metrics.csv";
  const bool started = wait_until(
      [&] {
        return fs::exists(metrics) &&
               read_file(metrics.string()).find("\nstart,") != std::string::npos;
      },
      std::chrono::seconds(90));
  ASSERT_TRUE(started) << read_file(out_file.string());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ::kill(-script.pid(), SIGINT);  // the terminal's Ctrl-C: the script's whole process group
  const auto status = script.wait_for(std::chrono::seconds(90));
  ASSERT_TRUE(status.has_value()) << "the script did not end";
  const std::string trainer_log = read_file((dir / "run-logs" / "trainer.log").string());
  EXPECT_NE(trainer_log.find("stopped: "), std::string::npos) << trainer_log;
  EXPECT_NE(read_file(metrics.string()).find("\nstop,"), std::string::npos)
      << read_file(metrics.string());
  const std::string out = read_file(out_file.string());
  EXPECT_NE(out.find("cluster: stopped"), std::string::npos) << out;
  const long long port = number_after(out, "redis-server on 127.0.0.1:");
  EXPECT_GT(port, 0) << out;
  EXPECT_NE(run_shell("redis-cli -p " + std::to_string(port) + " ping 2>&1").out, "PONG\n")
      << "redis-server is left running";
  for (const std::string& p : leftovers())
    EXPECT_NE(run_shell("pgrep -f -- '" + p + "'").status, 0)
        << "a node or redis-server of the run is left running: " << p;
}

// Entries that fail their checksum or replay an illegal move are dropped and counted, never
// trained on. Entries of another run (or of none: a node of an older version), valid games
// included, are never trained on either: skipped, counted, and said once per run, not per entry
// (issue 25: a trainer used to train on another run's games, or log every one it dropped).
TEST(FaultCluster, DamagedOrIllegalEntriesAreDroppedAndCounted) {
  RedisServer redis;
  const std::string url = redis.url("damage");
  const fs::path dir = fresh_dir("damage");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=2"));
  ASSERT_TRUE(wait_until([&] { return !owner_of(redis, "damage").empty(); }, 60s))
      << read_file(dir.string() + ".out");
  const std::string run_id = owner_of(redis, "damage");
  push_entry(redis, "damage", "evil", run_id, "garbage", "1");
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
  const auto crc_of = [](const std::string& record) {
    return std::to_string(oppidum::util::crc32(record.data(), record.size()));
  };
  const std::string record = oppidum::selfplay::encode_record(illegal);
  push_entry(redis, "damage", "evil", run_id, record, crc_of(record));
  for (int i = 0; i < 300; ++i) {
    const std::string good = oppidum::selfplay::encode_record(random_game(1000 + i));
    push_entry(redis, "damage", "other", "0123456789abcdef0123456789abcdef", good, crc_of(good));
  }
  const std::string good = oppidum::selfplay::encode_record(random_game(7));
  push_entry(redis, "damage", "old", "", good, crc_of(good));
  // A good game under a node name no record can hold: it used to stop the trainer at every start.
  const std::string huge_node(70000, 'N');
  push_entry(redis, "damage", huge_node, run_id, good, crc_of(good));
  // Entries each of a run of its own: a few runs are named, then one line for the rest (each
  // had a line). A run id that is no id beside a node name that is no name never reaches the
  // log (it did whole: a forged line and a megabyte).
  for (int i = 0; i < 20; ++i) {
    char id[40];
    std::snprintf(id, sizeof id, "%032x", i + 1);
    push_entry(redis, "damage", "many", id, good, crc_of(good));
  }
  push_entry(redis, "damage", "bad\x01node",
             run_id + "\n[2026-12-07 08:30:00] stopped: FORGED " + std::string(1 << 20, 'F'),
             good, crc_of(good));
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  ASSERT_EQ(train.wait_for(180s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const std::string log = read_file(dir / "log.txt");
  EXPECT_NE(log.find("does not match its CRC-32"), std::string::npos) << log;
  EXPECT_NE(log.find("is illegal"), std::string::npos) << log;
  EXPECT_NE(log.find("its node name is no name: 70000 bytes"), std::string::npos) << log;
  EXPECT_EQ(log.find(std::string(100, 'N')), std::string::npos) << "the node name was logged";
  EXPECT_NE(log.find("3 dropped"), std::string::npos) << log;
  EXPECT_EQ(count_of(log, "skipping entries of another run"), 7u) << log;
  EXPECT_EQ(count_of(log, "skipping entries of no run"), 1u) << log;
  EXPECT_EQ(count_of(log, "skipping entries of more runs than 8, no longer named"), 1u) << log;
  EXPECT_NE(log.find("skipped 322 of other runs"), std::string::npos) << log;
  EXPECT_EQ(log.find("FORGED"), std::string::npos) << "a run id that is no id was logged";
  EXPECT_LT(log.size(), 200000u);
  std::size_t kept = 0;
  std::set<std::string> nodes;
  kept_origins(dir, &kept, &nodes);
  EXPECT_GT(kept, 0u);
  EXPECT_EQ(nodes.count("other"), 0u) << "another run's games were trained on";
  EXPECT_EQ(nodes.count("old"), 0u) << "a game without a run id was trained on";
}

// The nodes key is telemetry only: one of a wrong type (a string) is warned about, once, by the
// trainer and the worker, and the run goes on; its error names the key, not only the command.
TEST(FaultCluster, ANodesKeyOfAWrongTypeStopsNothing) {
  RedisServer redis;
  const std::string url = redis.url("nodes_type");
  const fs::path dir = fresh_dir("nodes_type");
  redis.command({"SET", "oppidum:nodes_type:nodes", "garbage"});
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=1"));
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  ASSERT_EQ(train.wait_for(180s).value_or(-1), 0) << read_file(dir.string() + ".out");
  w.signal(SIGINT);
  EXPECT_EQ(w.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".w");
  const std::string log = read_file(dir / "log.txt"), worker_log = read_file(dir.string() + ".w");
  EXPECT_EQ(count_of(log, "EVAL oppidum:nodes_type:nodes: WRONGTYPE"), 1u) << log;
  EXPECT_LE(count_of(log, "HSET oppidum:nodes_type:nodes: WRONGTYPE"), 1u) << log;
  EXPECT_EQ(count_of(worker_log, "HSET oppidum:nodes_type:nodes: WRONGTYPE"), 1u) << worker_log;
  std::size_t kept = 0;
  kept_origins(dir, &kept);
  EXPECT_GT(kept, 0u);
}

// A new run makes itself its keys' owner before it creates its folder; one that then fails (its
// folder cannot be made) gives them back, where it left them owned by a run that never was.
TEST(FaultCluster, ANewRunThatFailsLeavesItsKeysFree) {
  RedisServer redis;
  const fs::path dir = fresh_dir("reserve");
  const fs::path file = dir.string() + ".file";
  std::ofstream(file) << "not a folder";
  BackgroundProcess train(kBinary + " train --config " + kConfig + " --run " +
                          (file / "run").string() + " --store " + redis.url("reserve") +
                          " --no-status >" + dir.string() + ".out 2>&1");
  const auto status = train.wait_for(120s);
  ASSERT_TRUE(status.has_value());
  EXPECT_NE(*status, 0) << read_file(dir.string() + ".out");
  EXPECT_NE(read_file(dir.string() + ".out").find("Not a directory"), std::string::npos)
      << read_file(dir.string() + ".out");
  EXPECT_EQ(redis.command({"EXISTS", "oppidum:reserve:owner"}), ":0\r\n");
  fs::remove(file);
}

// A run owns its key (issue 25): a new run on a key used before is refused before it creates
// anything, instead of training on the old run's games; a second trainer of a run (here a copy of
// its folder) is refused while the first lives, and the refusal counts no session.
TEST(FaultCluster, ARunOwnsItsKeyAndHasOneTrainer) {
  RedisServer redis;
  const std::string url = redis.url("owned");
  const fs::path a = fresh_dir("owned_a"), b = fresh_dir("owned_b"), c = fresh_dir("owned_c");
  {
    BackgroundProcess w(worker(url, "w", a.string() + ".w"));
    const auto r = run_shell("timeout 180 " + trainer(url, a, "--set run.max_generations=1"));
    ASSERT_EQ(r.status, 0) << read_file(a.string() + ".out");
    w.signal(SIGINT);
    EXPECT_EQ(w.wait_for(30s).value_or(-1), 0);
  }
  // The second trainer's folder: a copy made while nothing writes (a copy of the live folder
  // could catch a generation's files half-way, and its resume stopped at that, not at the lease).
  run_shell("cp -r " + a.string() + " " + c.string() + " 2>/dev/null");
  const std::string run_id = owner_of(redis, "owned");
  EXPECT_EQ(run_id.size(), 32u);
  EXPECT_NE(read_file(a / "state.yaml").find(run_id), std::string::npos);

  const auto refused = run_shell("timeout 60 " + trainer(url, b, "--set run.max_generations=1"));
  EXPECT_NE(refused.status, 0);
  const std::string why = read_file(b.string() + ".out");
  EXPECT_NE(why.find("is in use"), std::string::npos) << why;
  EXPECT_NE(why.find("belongs to run " + run_id), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(b)) << "a refused run created its folder";

  BackgroundProcess live(trainer(url, a, "--set run.max_generations=1000"));
  BackgroundProcess w(worker(url, "w", a.string() + ".w"));
  ASSERT_TRUE(wait_until(
      [&] { return read_file(a / "log.txt").find("(session 2") != std::string::npos; }, 60s));
  std::this_thread::sleep_for(1s);
  const std::string sessions = read_file(c / "state.yaml");
  const auto second = run_shell("timeout 60 " + trainer(url, c, "--set run.max_generations=1000"));
  EXPECT_NE(second.status, 0);
  const std::string second_out = read_file(c.string() + ".out");
  EXPECT_NE(second_out.find("another trainer holds"), std::string::npos) << second_out;
  EXPECT_EQ(read_file(c / "state.yaml"), sessions) << "a refused resume counted a session";
  live.signal(SIGINT);
  EXPECT_EQ(live.wait_for(60s).value_or(-1), 0) << read_file(a.string() + ".out");
  w.signal(SIGINT);
  EXPECT_EQ(w.wait_for(30s).value_or(-1), 0);
  EXPECT_EQ(read_file(a / "log.txt").find("another trainer"), std::string::npos)
      << "the first trainer was disturbed";
}

// Ctrl-C while the server is away: the trainer, waiting on it, stops as at any stop, its steps
// saved and exit status 0 (the wait ended by an error: "stopped by an error", the steps since the
// last generation lost).
TEST(FaultCluster, CtrlCWhileTheServerIsAwayStopsCleanly) {
  RedisServer redis;
  const std::string url = redis.url("away");
  const fs::path dir = fresh_dir("away");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=1000"));
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  ASSERT_TRUE(wait_until([&] { return entries_added(redis, "away") > 50; }, 120s));
  // The worker stopped while the server does not answer: the games it finished and could not
  // push are counted (they were dropped without a word).
  ASSERT_EQ(::kill(redis.pid(), SIGSTOP), 0);
  std::this_thread::sleep_for(3s);
  w.signal(SIGINT);
  EXPECT_EQ(w.wait_for(30s).value_or(-1), 0);
  ::kill(redis.pid(), SIGCONT);
  const std::string worker_log = read_file(dir.string() + ".w");
  EXPECT_NE(worker_log.find("finished game(s) of this session were not pushed"),
            std::string::npos)
      << worker_log;
  EXPECT_NE(worker_log.find("finished game(s) not pushed"), std::string::npos) << worker_log;
  redis.kill9();
  ASSERT_TRUE(wait_until(
      [&] { return read_file(dir / "log.txt").find("retrying") != std::string::npos; }, 60s))
      << read_file(dir / "log.txt");
  train.signal(SIGINT);
  EXPECT_EQ(train.wait_for(60s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const std::string log = read_file(dir / "log.txt");
  EXPECT_EQ(log.find("stopped by an error"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped: "), std::string::npos) << log;
}

// `bench store` deletes the stream of its URL's run name: a run's is refused, untouched (a run's
// games were deleted under its trainer).
TEST(FaultCluster, BenchStoreNeverDeletesARunsGames) {
  RedisServer redis;
  redis.command({"SET", "oppidum:owned_bench:owner", "0123456789abcdef0123456789abcdef"});
  redis.command({"XADD", "oppidum:owned_bench:games", "*", "node", "n"});
  const auto r = run_shell("timeout 120 " + kBinary + " bench store --store " +
                           redis.url("owned_bench") + " --seconds 0.5 --pushers 1 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("belongs to a run"), std::string::npos) << r.out;
  EXPECT_EQ(redis.command({"XLEN", "oppidum:owned_bench:games"}), ":1\r\n");
}

// A worker plays by the config the server holds: a config changed there (here only by a comment
// line) ends its session, and the next plays by it; when the trainer puts the run's back, the
// worker follows within seconds. (A worker that joined while the config was not the run's played
// by it for as long as it lived, and its games went into training.)
TEST(FaultCluster, AWorkerPlaysByTheConfigOnTheServer) {
  RedisServer redis;
  const std::string url = redis.url("follow");
  const fs::path dir = fresh_dir("follow");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=1000"));
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  const auto sessions = [&] { return count_of(read_file(dir.string() + ".w"), "playing "); };
  ASSERT_TRUE(wait_until([&] { return sessions() == 1; }, 120s)) << read_file(dir.string() + ".w");
  const std::string reply = redis.command({"GET", "oppidum:follow:config"});
  const std::string config = reply.substr(reply.find("\r\n") + 2, reply.rfind("\r\n") -
                                                                     reply.find("\r\n") - 2);
  ASSERT_NE(config.find("game"), std::string::npos) << reply;
  // The worker's next session, then the trainer's repair and the session after it. (The trainer
  // is held until the worker has seen the change: its repair could come first.)
  train.signal(SIGSTOP);
  redis.command({"SET", "oppidum:follow:config", config + "# not the run's\n"});
  EXPECT_TRUE(wait_until([&] { return sessions() >= 2; }, 30s)) << read_file(dir.string() + ".w");
  train.signal(SIGCONT);
  EXPECT_TRUE(wait_until([&] { return sessions() >= 3; }, 60s)) << read_file(dir.string() + ".w");
  const std::string worker_log = read_file(dir.string() + ".w");
  EXPECT_GE(count_of(worker_log, "the run's config on the server changed"), 2u) << worker_log;
  EXPECT_EQ(redis.command({"GET", "oppidum:follow:config"}), reply) << "the run's is back";
  // A config that is no config at all: the worker waits for the run's, and plays again by it.
  // (The trainer is held meanwhile, so that it cannot put the run's back before the worker saw.)
  const std::size_t before = sessions();
  train.signal(SIGSTOP);
  redis.command({"SET", "oppidum:follow:config", "run: [not a config"});
  EXPECT_TRUE(wait_until(
      [&] {
        return read_file(dir.string() + ".w").find("cannot be played") != std::string::npos;
      },
      30s))
      << read_file(dir.string() + ".w");
  train.signal(SIGCONT);
  EXPECT_TRUE(wait_until([&] { return sessions() > before; }, 60s))
      << read_file(dir.string() + ".w");
  // A config key of another type (a list) while the worker plays: the session ends and the worker
  // waits, and plays again once the run's config is back (one such write ended every worker of
  // the run for good). The trainer is held: it would stop, naming the key to delete.
  const std::size_t before_list = sessions();
  train.signal(SIGSTOP);
  redis.command({"DEL", "oppidum:follow:config"});
  redis.command({"RPUSH", "oppidum:follow:config", "not", "a", "config"});
  EXPECT_TRUE(wait_until(
      [&] {
        return read_file(dir.string() + ".w").find("the run's keys on the server cannot be read") !=
               std::string::npos;
      },
      30s))
      << read_file(dir.string() + ".w");
  redis.command({"SET", "oppidum:follow:config", config});
  train.signal(SIGCONT);
  EXPECT_TRUE(wait_until([&] { return sessions() > before_list; }, 60s))
      << read_file(dir.string() + ".w");
  w.signal(SIGINT);
  EXPECT_EQ(w.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".w");
  train.signal(SIGINT);
  EXPECT_EQ(train.wait_for(60s).value_or(-1), 0) << read_file(dir.string() + ".out");
  EXPECT_NE(read_file(dir / "log.txt").find("published it again"), std::string::npos);
}

// Redis restarted without its data (issue 25): the trainer used to publish the network again but
// not the config, so new workers waited forever, and it logged a negative eviction count. Now it
// publishes everything a worker needs, reads the new stream from its start, and counts never go
// below zero.
TEST(FaultCluster, RedisRestartedWithoutItsDataGetsEverythingBack) {
  RedisServerOptions options;
  options.append_only = false;  // a restart comes back empty
  RedisServer redis(options);
  const std::string url = redis.url("amnesia");
  const fs::path dir = fresh_dir("amnesia");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=1000"));
  BackgroundProcess w1(worker(url, "w1", dir.string() + ".w1"));
  ASSERT_TRUE(wait_until([&] { return entries_added(redis, "amnesia") > 100; }, 120s));
  redis.kill9();
  redis.restart();
  ASSERT_EQ(entries_added(redis, "amnesia"), -1) << "the server kept its data";
  BackgroundProcess w2(worker(url, "w2", dir.string() + ".w2"));
  ASSERT_TRUE(wait_until(
      [&] { return read_file(dir.string() + ".w2").find("playing") != std::string::npos; }, 90s))
      << "a new worker got nothing to play with: " << read_file(dir.string() + ".w2");
  const long long before = entries_added(redis, "amnesia");
  ASSERT_TRUE(wait_until([&] { return entries_added(redis, "amnesia") > before + 50; }, 60s));
  std::this_thread::sleep_for(2s);
  for (BackgroundProcess* p : {&w1, &w2}) {
    p->signal(SIGINT);
    EXPECT_EQ(p->wait_for(30s).value_or(-1), 0);
  }
  train.signal(SIGINT);
  ASSERT_EQ(train.wait_for(60s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const std::string log = read_file(dir / "log.txt");
  EXPECT_NE(log.find("the run's keys were gone"), std::string::npos) << log;
  EXPECT_NE(log.find("the config and network are published again"), std::string::npos) << log;
  // Not also "changed on the server": nobody changed it, the server lost it.
  EXPECT_EQ(log.find("changed on the server"), std::string::npos) << log;
  EXPECT_EQ(log.find("evicted -"), std::string::npos) << log;
  const long long evicted = number_after(log, "read in all, ");
  EXPECT_GE(evicted, 0) << log;
  EXPECT_EQ(owner_of(redis, "amnesia").size(), 32u);
  std::size_t kept = 0;
  kept_origins(dir, &kept);  // each entry once, each game replays
}

// A worker whose run was deleted (every key gone, its trainer stopped) ends its session within
// half a minute and then makes no key again while it waits for a trainer: it pushed on into a
// stream nobody read, and that stream refused every new run of the name as "in use".
TEST(FaultCluster, AWorkerOfADeletedRunStopsPushingAndWaits) {
  RedisServer redis;
  const std::string url = redis.url("deleted");
  const fs::path dir = fresh_dir("deleted");
  BackgroundProcess train(trainer(url, dir, "--set run.max_generations=1000"));
  BackgroundProcess w(worker(url, "w", dir.string() + ".w"));
  ASSERT_TRUE(wait_until([&] { return entries_added(redis, "deleted") > 20; }, 120s))
      << read_file(dir.string() + ".w");
  train.signal(SIGINT);
  ASSERT_EQ(train.wait_for(60s).value_or(-1), 0) << read_file(dir.string() + ".out");
  const auto delete_the_run = [&] {
    for (const char* key : {"owner", "config", "network", "games", "nodes", "sessions"})
      redis.command({"DEL", std::string("oppidum:deleted:") + key});
    redis.command({"EVAL",
                   "for _, k in ipairs(redis.call('KEYS', 'oppidum:deleted:*')) do "
                   "redis.call('DEL', k) end return 0",
                   "0"});
  };
  delete_the_run();
  ASSERT_TRUE(wait_until(
      [&] {
        return read_file(dir.string() + ".w").find("this session ends") != std::string::npos;
      },
      60s))
      << read_file(dir.string() + ".w");
  delete_the_run();  // what it pushed meanwhile
  std::this_thread::sleep_for(4s);
  EXPECT_EQ(redis.command({"KEYS", "oppidum:deleted:*"}), "*0\r\n") << "made again";
  EXPECT_NE(read_file(dir.string() + ".w").find("waiting for the trainer"), std::string::npos)
      << read_file(dir.string() + ".w");
  w.signal(SIGINT);
  EXPECT_EQ(w.wait_for(30s).value_or(-1), 0) << read_file(dir.string() + ".w");
}

// `selfplay --minutes` holds while the worker waits for a trainer that never comes, and for a
// server that is not there (issue 25: it was ignored there).
TEST(FaultCluster, SelfplayMinutesHoldWhileWaiting) {
  RedisServer redis;
  auto r = run_shell("timeout 60 " + kBinary + " selfplay --store " + redis.url("nobody") +
                     " --node w --minutes 0.05 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("stopped before playing"), std::string::npos) << r.out;
  const std::string url = redis.url("nobody");
  redis.kill9();
  r = run_shell("timeout 60 " + kBinary + " selfplay --store " + url +
                " --node w --minutes 0.05 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("lost redis://"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stopped before playing"), std::string::npos) << r.out;
}

// Wrong Redis credentials are found before a new run creates anything (issue 25: the folder, with
// its frozen config, used to exist by then).
TEST(FaultCluster, WrongRedisCredentialsCreateNothing) {
  RedisServerOptions options;
  options.password = "Right1";
  RedisServer redis(options);
  const fs::path dir = fresh_dir("credentials");
  const std::string url = "redis://:Wrong2@127.0.0.1:" + std::to_string(redis.port()) + "/creds";
  const auto r = run_shell("timeout 60 " + kBinary + " train --config " + kConfig + " --run " +
                           dir.string() + " --store " + url + " --no-status 2>&1");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("refused the credentials"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "a refused run created its folder";
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
  // A user in the URL and the password in OPPIDUM_REDIS_PASSWORD, as docs/DISTRIBUTED.md shows
  // it for an ACL user (train refused it: "the user ... has no password").
  {
    const fs::path acl = fresh_dir("password_acl");
    const std::string user_url =
        "redis://default@127.0.0.1:" + std::to_string(redis.port()) + "/secure_acl";
    BackgroundProcess acl_train("env OPPIDUM_REDIS_PASSWORD=Hunter2x " +
                                trainer(user_url, acl, "--set run.max_generations=1"));
    EXPECT_TRUE(wait_until([&] { return !owner_of(redis, "secure_acl").empty(); }, 60s))
        << read_file(acl.string() + ".out");
    acl_train.signal(SIGINT);
    EXPECT_EQ(acl_train.wait_for(60s).value_or(-1), 0) << read_file(acl.string() + ".out");
    EXPECT_EQ(read_file(acl.string() + ".out").find("Hunter2x"), std::string::npos);
  }
  const auto refused = run_shell(kBinary + " train --config " + kConfig + " --run " +
                                 (dir.string() + "-far") +
                                 " --store redis://192.0.2.1:6379/x --no-status 2>&1");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.out.find("--insecure"), std::string::npos) << refused.out;
}

}  // namespace
