// store/: the Redis URL (parsing, masking, the loopback rule), and a run's keys and stream on a
// private redis-server (tests/redis_server.h): config and network publication, games pushed and
// read back after a cursor, damaged entries reported (hostile node names too), evictions counted,
// heartbeats (hostile ones left on the server), keys of a wrong type named in errors, and a client
// that rides out the server being killed and restarted.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "games/game.h"
#include "selfplay/game_record.h"
#include "store/redis_client.h"
#include "store/redis_game_sink.h"
#include "store/run_channel.h"
#include "store/redis_url.h"
#include "tests/process_util.h"
#include "tests/redis_server.h"
#include "util/file_io.h"

namespace oppidum::store {
namespace {

using test_util::RedisServer;
using test_util::RedisServerOptions;

TEST(RedisUrl, ParsesEveryPartAndMasksThePassword) {
  RedisUrl u = parse_redis_url("redis://alice:s3cret@10.0.0.5:6380/run-1", nullptr);
  EXPECT_EQ(u.host, "10.0.0.5");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.user, "alice");
  EXPECT_EQ(u.password, "s3cret");
  EXPECT_EQ(u.run, "run-1");
  EXPECT_EQ(u.key("games"), "oppidum:run-1:games");
  EXPECT_EQ(u.to_string(), "redis://alice:***@10.0.0.5:6380/run-1");
  EXPECT_EQ(u.without_password(), "redis://alice@10.0.0.5:6380/run-1");
  EXPECT_FALSE(u.is_loopback());

  u = parse_redis_url("redis://localhost/r", "from-env");
  EXPECT_EQ(u.port, 6379);
  EXPECT_EQ(u.password, "from-env");
  EXPECT_TRUE(u.is_loopback());
  EXPECT_EQ(parse_redis_url("redis://:pw@127.0.0.1:7000/r", "env").password, "pw");
  EXPECT_EQ(parse_redis_url("redis://[::1]:7000/r", nullptr).host, "::1");
  EXPECT_EQ(parse_redis_url("redis://my_redis:7000/r", nullptr).host, "my_redis");
  // Loopback only as an address or localhost: a name that starts like one can point anywhere.
  EXPECT_TRUE(parse_redis_url("redis://127.3.2.1:7000/r", nullptr).is_loopback());
  EXPECT_TRUE(parse_redis_url("redis://[::1]:7000/r", nullptr).is_loopback());
  for (const char* host : {"127.evil.example", "127.0.0.1.example", "1270.0.0.1", "128.0.0.1"})
    EXPECT_FALSE(parse_redis_url("redis://" + std::string(host) + ":7000/r", nullptr).is_loopback())
        << host;

  // Each part whole or refused: a blank or a sign in the port, a host with a blank or an '@' (a
  // user "h@st" without a password once sent no AUTH at all), an empty port.
  for (const char* bad : {"http://h/r", "redis://h", "redis://h:0/r", "redis://h:99999/r",
                          "redis://h/", "redis:///r", "redis://h/a b", "redis://h:x/r",
                          "redis://127.0.0.1: 16391/w", "redis://h:+1/r", "redis://h:/r",
                          "redis://h@st@127.0.0.1:1/w", "redis://ho st:1/r",
                          "redis://alice@h:1/r", "redis://h:000000006379/r",
                          "redis://[::1]:/r"}) {
    try {
      parse_redis_url(bad, nullptr);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("redis://[user:password@]host"), std::string::npos);
    }
  }
  try {
    parse_redis_url("redis://u:topsecret@h:99999/r", nullptr);
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("topsecret"), std::string::npos) << "a password in an error";
  }
}

TEST(RedisUrl, AServerElsewhereNeedsAPasswordOrInsecure) {
  EXPECT_NO_THROW(check_security(parse_redis_url("redis://127.0.0.1/r", nullptr), false));
  EXPECT_NO_THROW(check_security(parse_redis_url("redis://:pw@10.1.1.1/r", nullptr), false));
  EXPECT_NO_THROW(check_security(parse_redis_url("redis://10.1.1.1/r", nullptr), true));
  try {
    check_security(parse_redis_url("redis://10.1.1.1/r", nullptr), false);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--insecure"), std::string::npos) << e.what();
  }
}

// The trainer and the workers set up their store alike: the URL's password, else the one given
// (the trainer's --store), else OPPIDUM_REDIS_PASSWORD; then the security rule.
TEST(RedisUrl, ANodeTakesThePasswordFromTheUrlTheOptionOrTheEnvironment) {
  const char* saved = std::getenv("OPPIDUM_REDIS_PASSWORD");
  const std::string before = saved ? saved : "";
  setenv("OPPIDUM_REDIS_PASSWORD", "from-env", 1);
  EXPECT_EQ(node_url("redis://:own@10.1.1.1/r", "given", false).password, "own");
  EXPECT_EQ(node_url("redis://10.1.1.1/r", "given", false).password, "given");
  EXPECT_EQ(node_url("redis://10.1.1.1/r", "", false).password, "from-env");
  unsetenv("OPPIDUM_REDIS_PASSWORD");
  EXPECT_EQ(node_url("redis://127.0.0.1/r", "", false).password, "");
  EXPECT_NO_THROW(node_url("redis://10.1.1.1/r", "", true));
  EXPECT_THROW(node_url("redis://10.1.1.1/r", "", false), std::invalid_argument);
  if (saved) setenv("OPPIDUM_REDIS_PASSWORD", before.c_str(), 1);
}

// A real finished game as a record.
selfplay::GameRecord finished_game(std::uint64_t seed) {
  const Game& game = game_by_name("mg");
  auto state = game.initial_state();
  selfplay::GameRecord r;
  r.game = "mg";
  r.start = state->to_string();
  r.seed = seed;
  r.network_step = 10;
  ActionList legal;
  std::uint64_t x = seed;
  for (state->legal_actions(legal); !legal.empty(); state->legal_actions(legal)) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    selfplay::MoveRecord m;
    m.action = static_cast<std::uint16_t>(legal[static_cast<int>((x >> 33) % legal.size())]);
    m.visits = {{m.action, 3}};
    r.moves.push_back(m);
    state->apply(m.action);
  }
  r.result = static_cast<std::int8_t>(state->result(0));
  for (int p = 0; p < 2; ++p) r.score[p] = static_cast<std::int16_t>(state->score(p));
  return r;
}

// What `f` throws as a RedisError, or "no error".
std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const RedisError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

class RunChannelTest : public ::testing::Test {
 protected:
  RedisServer server_;
  std::vector<std::string> log_;
  RunChannel channel() {
    return RunChannel(parse_redis_url(server_.url("t"), nullptr),
                      [this](const std::string& line) { log_.push_back(line); });
  }
};

TEST_F(RunChannelTest, ConfigAndNetworkArePublishedWhole) {
  RunChannel c = channel();
  EXPECT_FALSE(c.config(1 << 20).has_value());
  EXPECT_EQ(c.network_version(), 0);
  EXPECT_FALSE(c.network().has_value());
  c.publish_config("run:\n  game: mg\n");
  EXPECT_EQ(*c.config(1 << 20), "run:\n  game: mg\n");
  EXPECT_EQ(*c.config(16), "run:\n  game: mg\n") << "exactly the limit";
  try {
    c.config(15);
    ADD_FAILURE() << "a config over the limit was read";
  } catch (const RedisError& e) {
    EXPECT_NE(std::string(e.what()).find("oppidum:t:config is longer than 15 bytes"),
              std::string::npos)
        << e.what();
  }
  const std::string bytes("\0binary\xff checkpoint", 18);
  EXPECT_EQ(c.publish_network(bytes, 300, 1, "mg", 1).version, 1);
  EXPECT_EQ(c.publish_network(bytes + "2", 600, 2, "mg", 1).version, 2);
  const auto n = c.network();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->checkpoint, bytes + "2");
  EXPECT_EQ(n->info.version, 2);
  EXPECT_EQ(n->info.step, 600);
  EXPECT_EQ(n->info.generation, 2);
  // Read within a bound (the run's network's most bytes): exactly the bound is read; a byte more
  // is refused with a reason, and never read (a reply over the bound would be retried forever).
  EXPECT_EQ(c.network(bytes.size() + 1)->checkpoint, bytes + "2");
  const std::string over = message([&] { c.network(bytes.size()); });
  EXPECT_NE(over.find("oppidum:t:network holds a checkpoint of 19 bytes, more than the run's "
                      "network can have (18)"),
            std::string::npos)
      << over;
  // So is every other field, within a few kilobytes (a game's name of megabytes made the reply
  // too large, retried forever).
  server_.command({"HSET", "oppidum:t:network", "game", std::string(5000, 'g')});
  const std::string field = message([&] { c.network(bytes.size() + 1); });
  EXPECT_NE(field.find("oppidum:t:network holds a field game of 5000 bytes, more than any (4096)"),
            std::string::npos)
      << field;
  server_.command({"HSET", "oppidum:t:network", "game", "mg"});
  EXPECT_TRUE(log_.empty()) << "the server never seemed lost: " << log_.front();
  // A damaged network is refused, not used.
  server_.command({"HSET", "oppidum:t:network", "checkpoint", "tampered"});
  EXPECT_THROW(c.network(), RedisError);
  const std::uint64_t first = c.new_session();
  EXPECT_EQ(c.new_session(), first + 1) << "every start gets its own session";
}

TEST_F(RunChannelTest, GamesComeBackInOrderAfterACursorAndDamageIsReported) {
  RunChannel c = channel();
  std::vector<selfplay::GameRecord> games;
  for (std::uint64_t s = 1; s <= 5; ++s) games.push_back(finished_game(s));
  c.push_games("w1", "run-a", games, 1000);
  auto entries = c.read_games("0-0", 3);
  ASSERT_EQ(entries.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(entries[i].problem, "");
    EXPECT_EQ(entries[i].node, "w1");
    EXPECT_EQ(entries[i].run, "run-a") << "every entry carries its run id";
    EXPECT_EQ(entries[i].record.node, "w1");
    EXPECT_EQ(entries[i].record.origin, entries[i].id);
    EXPECT_EQ(selfplay::encode_record(entries[i].record).size(),
              selfplay::encode_record(games[i]).size() + std::string("w1").size() +
                  entries[i].id.size())
        << "the record comes back with its node and origin stamped in";
    EXPECT_EQ(entries[i].record.seed, games[i].seed);
    EXPECT_NO_THROW(selfplay::replay(entries[i].record));
  }
  const auto rest = c.read_games(entries.back().id, 100);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[1].record.seed, 5u);
  EXPECT_LT(compare_stream_ids(entries[0].id, rest[1].id), 0);
  EXPECT_TRUE(c.read_games(rest.back().id, 100).empty());
  // Entries written by something else: a wrong CRC, missing fields.
  server_.command({"XADD", "oppidum:t:games", "*", "node", "x", "format", "2", "record", "abc",
                   "crc32", "1"});
  server_.command({"XADD", "oppidum:t:games", "*", "node", "y"});
  const auto damaged = c.read_games(rest.back().id, 100);
  ASSERT_EQ(damaged.size(), 2u);
  EXPECT_NE(damaged[0].problem.find("CRC-32"), std::string::npos) << damaged[0].problem;
  EXPECT_NE(damaged[1].problem.find("missing"), std::string::npos) << damaged[1].problem;
  EXPECT_EQ(damaged[1].run, "") << "an entry without a run id reads as none";
  const StreamInfo info = c.stream_info();
  EXPECT_EQ(info.entries_added, 7);
  EXPECT_EQ(info.length, 7);
  EXPECT_EQ(info.last_id, damaged[1].id);
}

// Stream ids are two 64-bit numbers; anything else is the std::invalid_argument the header
// promises (a part over 2^64 was std::out_of_range, from std::stoull).
TEST(StreamId, ComparesAsTwoNumbersAndRefusesWhatIsNone) {
  EXPECT_LT(compare_stream_ids("9-5", "10-0"), 0);
  EXPECT_GT(compare_stream_ids("10-10", "10-9"), 0);
  EXPECT_EQ(compare_stream_ids("7", "7-0"), 0);
  EXPECT_EQ(compare_stream_ids("18446744073709551615-18446744073709551615",
                               "18446744073709551615-18446744073709551615"),
            0);
  EXPECT_EQ(stream_id_ms("1700000000000-3"), 1700000000000u);
  for (const char* bad : {"", "-", "1-", "-1", "1-2-3", "x-1", "1 -2", "+1-0", "1-0x1",
                          "18446744073709551616-0", "1-99999999999999999999"}) {
    EXPECT_THROW(compare_stream_ids(bad, "1-0"), std::invalid_argument) << bad;
    EXPECT_THROW(stream_id_ms(bad), std::invalid_argument) << bad;
  }
}

TEST(NodeName, ShortPrintableNamesOnly) {
  EXPECT_EQ(node_name_problem("w1"), "");
  EXPECT_EQ(node_name_problem(""), "") << "an entry of an older version has none";
  EXPECT_EQ(node_name_problem(std::string(kMaxNodeNameBytes, 'n')), "");
  EXPECT_EQ(node_name_problem(std::string(kMaxNodeNameBytes + 1, 'n')),
            "129 bytes, over the limit of 128");
  EXPECT_NE(node_name_problem("a\nb"), "");
  EXPECT_NE(node_name_problem(std::string("a\0b", 3)), "");
  EXPECT_EQ(node_name_problem("h\xc3\xa9te-12"), "") << "UTF-8 is no control character";
}

// What writers put in the stream reaches the trainer bounded: an entry over what a game's entry
// can hold comes as its size alone (ten entries of 150 MB took the trainer to 3.3 GB, read 512 at a
// time), and a read stops once its entries' fields pass 32 MiB, the next read going on from there.
TEST_F(RunChannelTest, StreamReadsAreBoundedWhateverWritersPutIn) {
  RunChannel c = channel();
  const std::string record = selfplay::encode_record(finished_game(3));
  const std::string crc = std::to_string(util::crc32(record.data(), record.size()));
  const auto push = [&](const std::string& bytes) {
    server_.command({"XADD", "oppidum:t:games", "*", "node", "w", "run", "r", "network", "0",
                     "format", "2", "record", bytes, "crc32", crc});
  };
  push(std::string(70u << 20, 'x'));
  push(record);
  push(std::string(20u << 20, 'y'));
  push(std::string(20u << 20, 'z'));
  push(record);
  bool more = false;
  std::vector<StreamEntry> entries = c.read_games("0-0", 10, &more);
  ASSERT_EQ(entries.size(), 3u) << "the fields of the fourth would pass 32 MiB";
  EXPECT_TRUE(more) << "cut short by its size, not the end of the stream";
  EXPECT_NE(entries[0].problem.find("its fields hold 734"), std::string::npos)
      << entries[0].problem;
  EXPECT_NE(entries[0].problem.find("bytes, more than a game's entry can"), std::string::npos);
  EXPECT_EQ(entries[1].problem, "");
  EXPECT_NE(entries[2].problem.find("CRC-32"), std::string::npos) << entries[2].problem;
  entries = c.read_games(entries.back().id, 10, &more);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_FALSE(more);
  EXPECT_EQ(entries[1].problem, "");
  EXPECT_TRUE(c.read_games(entries.back().id, 10).empty());

  // An entry of more fields than a game's has is cut for that, and says so (it was said to be
  // over the size limit); one that names the cut's reasons among its fields is not cut.
  const std::string after = entries.back().id;
  std::vector<std::string> many = {"XADD", "oppidum:t:games", "*", "node", "w", "run", "r",
                                   "network", "0", "format", "2", "record", record, "crc32", crc};
  for (int i = 0; i < 30; ++i) many.insert(many.end(), {"f" + std::to_string(i), "v"});
  server_.command(many);
  server_.command({"XADD", "oppidum:t:games", "*", "node", "w", "run", "r", "network", "0",
                   "format", "2", "record", record, "crc32", crc, "fields", "99", "bytes", "9"});
  entries = c.read_games(after, 10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_NE(entries[0].problem.find("it has 36 fields, more than a game's entry can (32)"),
            std::string::npos)
      << entries[0].problem;
  EXPECT_EQ(entries[1].problem, "");
}

// A stream entry whose node name (or run id) is too long for a record, or holds control
// characters, is damaged: the name is never copied into the record or whole into a message.
TEST_F(RunChannelTest, AnEntryWithAHostileNodeNameIsDamaged) {
  RunChannel c = channel();
  const std::string record = selfplay::encode_record(finished_game(3));
  const std::string crc = std::to_string(util::crc32(record.data(), record.size()));
  const std::string huge(70000, 'N');
  server_.command({"XADD", "oppidum:t:games", "*", "node", huge, "run", "r", "network", "0",
                   "format", "2", "record", record, "crc32", crc});
  server_.command({"XADD", "oppidum:t:games", "*", "node", "evil\r\nnode", "run", "r", "network",
                   "0", "format", "2", "record", record, "crc32", crc});
  server_.command({"XADD", "oppidum:t:games", "*", "node", "w", "run", huge, "network", "0",
                   "format", "2", "record", record, "crc32", crc});
  server_.command({"XADD", "oppidum:t:games", "*", "node", std::string(kMaxNodeNameBytes, 'w'),
                   "run", "r", "network", "0", "format", "2", "record", record, "crc32", crc});
  const auto entries = c.read_games("0-0", 10);
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].problem, "its node name is no name: 70000 bytes, over the limit of 128");
  EXPECT_LT(entries[0].node.size(), 64u) << "a stand-in, not the name";
  EXPECT_NE(entries[0].node.find("70000 bytes"), std::string::npos) << entries[0].node;
  EXPECT_TRUE(entries[0].record.node.empty()) << "nothing decoded from a damaged entry";
  EXPECT_NE(entries[1].problem.find("control character"), std::string::npos) << entries[1].problem;
  EXPECT_EQ(entries[1].node.find_first_of("\r\n"), std::string::npos) << entries[1].node;
  EXPECT_NE(entries[2].problem.find("its run id is no run id"), std::string::npos)
      << entries[2].problem;
  EXPECT_LT(entries[2].run.size(), 64u);
  EXPECT_EQ(entries[3].problem, "") << "a name of exactly the limit is a name";
  EXPECT_NO_THROW(selfplay::encode_record(entries[3].record));
  // A bad node name and a bad run id: both stand-ins (the run id went on whole, into the log).
  server_.command({"XADD", "oppidum:t:games", "*", "node", "bad\x01node", "run",
                   "r\n[2026-12-07 08:30:00] stopped: forged" + huge, "network", "0", "format",
                   "2", "record", record, "crc32", crc});
  const auto more = c.read_games(entries[3].id, 10);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_NE(more[0].problem.find("its node name is no name"), std::string::npos);
  EXPECT_LT(more[0].run.size(), 64u) << more[0].run;
  EXPECT_EQ(more[0].run.find('\n'), std::string::npos) << more[0].run;
  EXPECT_EQ(more[0].node.find('\x01'), std::string::npos) << more[0].node;
}

TEST_F(RunChannelTest, TheCapEvictsAndEntriesAddedStillCountsEverything) {
  RunChannel c = channel();
  const selfplay::GameRecord g = finished_game(9);
  for (int i = 0; i < 30; ++i) c.push_games("w", "r", std::vector<selfplay::GameRecord>(20, g), 100);
  const StreamInfo info = c.stream_info();
  EXPECT_EQ(info.entries_added, 600);
  EXPECT_LT(info.length, 600) << "MAXLEN ~ 100 evicted nothing";
  EXPECT_GE(info.length, 100);
  std::int64_t read = 0;
  std::string cursor = "0-0";
  for (auto e = c.read_games(cursor, 64); !e.empty(); e = c.read_games(cursor, 64)) {
    read += static_cast<std::int64_t>(e.size());
    cursor = e.back().id;
  }
  EXPECT_EQ(read, info.length) << "what is left is exactly what can be read";
}

// A game too large for any chunk (a record over selfplay::kMaxRecordBytes) is one the trainer
// would drop: a worker drops it itself, saying so, and pushes the others of its batch (it used to
// stop the node).
TEST_F(RunChannelTest, AGameTooLargeForAnyChunkIsDroppedAndTheOthersPushed) {
  RunChannel c = channel();
  selfplay::GameRecord huge = finished_game(4);
  huge.start.assign(selfplay::kMaxRecordBytes + 1, 'x');
  log_.clear();
  EXPECT_NO_THROW(c.push_games("w", "r", {finished_game(1), huge, finished_game(2)}, 100));
  EXPECT_EQ(c.stream_info().entries_added, 2);
  const auto entries = c.read_games("0-0", 10);
  ASSERT_EQ(entries.size(), 2u);
  for (const StreamEntry& e : entries) EXPECT_EQ(e.problem, "") << e.problem;
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("dropped a game of " + std::to_string(huge.moves.size()) + " moves"),
            std::string::npos)
      << log_[0];
}

// A run owns its keys: a new run finds them in use, another run's claim is refused, and so is a
// second trainer of the same run while the first one's process lives; the lease of one whose
// process is gone is taken over at once.
TEST_F(RunChannelTest, ARunOwnsItsKeysAndHasOneTrainer) {
  RunChannel c = channel();
  const std::string id = random_id(), other = random_id();
  EXPECT_NO_THROW(c.reserve(id)) << "nothing there yet";
  EXPECT_EQ(c.owner(), id) << "the new run's from the reservation on";
  // Two new runs at once on one key: the second is refused before it creates anything.
  try {
    c.reserve(other);
    FAIL() << "two new runs reserved one key";
  } catch (const StoreTakenError& e) {
    EXPECT_NE(std::string(e.what()).find("is in use (oppidum:t:owner): it belongs to run " + id),
              std::string::npos)
        << e.what();
  }
  c.unreserve(other);
  EXPECT_EQ(c.owner(), id) << "only the reserving run's reservation is undone";
  c.unreserve(id);
  EXPECT_EQ(c.owner(), "");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_NE(id, other);
  const std::string lease = lease_value(id);
  Claim claim = c.claim(id, lease, 0);
  EXPECT_TRUE(claim.claimed) << "no owner: the claim made it (a reserved run's claim finds it)";
  EXPECT_EQ(c.owner(), id);
  EXPECT_FALSE(claim.config_published);
  EXPECT_EQ(claim.network_step, -1);
  claim = c.claim(id, lease, 0);  // a renewal
  EXPECT_FALSE(claim.claimed);
  EXPECT_EQ(claim.replaced, "");
  try {
    c.reserve(other);
    FAIL() << "a key in use looked free";
  } catch (const StoreTakenError& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to run " + id), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ANOTHER_NAME"), std::string::npos) << e.what();
  }
  try {
    c.claim(other, lease_value(other), 0);
    FAIL() << "another run claimed the keys";
  } catch (const StoreTakenError& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to another run (run id " + id),
              std::string::npos)
        << e.what();
  }
  // A second trainer of this run, from a live process (this one): refused.
  try {
    c.claim(id, lease_value(id), 0);
    FAIL() << "a second trainer took the lease";
  } catch (const StoreTakenError& e) {
    EXPECT_NE(std::string(e.what()).find("another trainer holds"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(lease), std::string::npos) << e.what();
  }
  // The lease of a trainer on this host whose process is gone is taken over.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  std::string gone = lease;
  gone.replace(gone.find(" pid ") + 5, std::to_string(getpid()).size(), std::to_string(child));
  server_.command({"SET", "oppidum:t:trainer", gone});
  const std::string mine = lease_value(id);
  claim = c.claim(id, mine, 0);
  EXPECT_EQ(claim.replaced, gone);
  EXPECT_NE(server_.command({"GET", "oppidum:t:trainer"}).find(mine), std::string::npos);
  const std::string ttl = server_.command({"TTL", "oppidum:t:trainer"});
  EXPECT_GT(std::atoi(ttl.c_str() + 1), 0) << ttl << ": the lease expires by itself";
  c.release(mine);
  EXPECT_EQ(server_.command({"EXISTS", "oppidum:t:trainer"}), ":0\r\n");
}

// A server that lost its data: the next claim takes the keys again, says so, restores the
// sessions counter to what was seen, and says what a worker needs is missing.
TEST_F(RunChannelTest, AClaimAfterTheServerLostItsDataSaysWhatIsMissing) {
  RunChannel c = channel();
  const std::string id = random_id(), lease = lease_value(id);
  c.claim(id, lease, 0);
  c.publish_config("x");
  c.publish_network("bytes", 40, 4, "mg", 1);
  for (int i = 0; i < 7; ++i) c.new_session();
  Claim claim = c.claim(id, lease, 0);
  EXPECT_FALSE(claim.claimed);
  EXPECT_TRUE(claim.config_published);
  EXPECT_EQ(claim.network_step, 40);
  EXPECT_EQ(claim.sessions, 7);
  server_.command({"FLUSHALL"});
  claim = c.claim(id, lease, 7);
  EXPECT_TRUE(claim.claimed);
  EXPECT_FALSE(claim.config_published);
  EXPECT_EQ(claim.network_step, -1);
  EXPECT_EQ(claim.sessions, 7);
  EXPECT_EQ(c.new_session(), 8u) << "no session number is handed out twice";
  EXPECT_EQ(c.owner(), id);
}

// A config changed on the server (a worker would play by it) is not the run's: the claim, given
// the run's config, says it is not published, and the trainer publishes it again.
TEST_F(RunChannelTest, AClaimSeesAConfigChangedOnTheServer) {
  RunChannel c = channel();
  const std::string id = random_id(), lease = lease_value(id);
  c.claim(id, lease, 0);
  c.publish_config("selfplay:\n  max_plies: 300\n");
  EXPECT_TRUE(c.claim(id, lease, 0, "selfplay:\n  max_plies: 300\n").config_published);
  server_.command({"SET", "oppidum:t:config", "selfplay:\n  max_plies: 1\n"});
  EXPECT_FALSE(c.claim(id, lease, 0, "selfplay:\n  max_plies: 300\n").config_published);
  EXPECT_TRUE(c.claim(id, lease, 0).config_published);  // no config given: there is one
  server_.command({"DEL", "oppidum:t:config"});
  server_.command({"HSET", "oppidum:t:config", "a", "b"});  // no string: not the run's, replaced
  EXPECT_FALSE(c.claim(id, lease, 0, "x").config_published);
  EXPECT_FALSE(c.claim(id, lease, 0).config_published);
  c.publish_config("x");
  EXPECT_TRUE(c.claim(id, lease, 0, "x").config_published);
}

// A network changed or damaged on the server (its checkpoint's size, CRC, step, game or encoding)
// is not the one the run published: the claim says so, and the trainer publishes it again. (A
// checkpoint changed in place under its CRC field is seen by the workers' CRC check.)
TEST_F(RunChannelTest, AClaimSeesANetworkChangedOnTheServer) {
  RunChannel c = channel();
  const std::string id = random_id(), lease = lease_value(id);
  c.claim(id, lease, 0);
  const std::string mine = c.publish_network("bytes", 40, 4, "mg", 1).signature;
  EXPECT_TRUE(c.claim(id, lease, 0, "", mine).network_published);
  for (const std::vector<std::string>& change :
       {std::vector<std::string>{"checkpoint", "longer bytes"},
        {"crc32", "1"}, {"game", "dvonn"}, {"encoding_version", "2"}, {"generation", "5"}}) {
    c.publish_network("bytes", 40, 4, "mg", 1);
    server_.command({"HSET", "oppidum:t:network", change[0], change[1]});
    const Claim claim = c.claim(id, lease, 0, "", mine);
    EXPECT_FALSE(claim.network_published) << change[0];
    EXPECT_EQ(claim.network_step, 40) << "the step alone does not tell";
    EXPECT_TRUE(c.claim(id, lease, 0).network_published) << "no network given: there is one";
  }
}

// A server busy with a script answers BUSY to everyone else: waited for with backoff like a
// server loading its data (before: every node stopped at the first BUSY).
TEST_F(RunChannelTest, AServerBusyWithAScriptIsWaitedFor) {
  RunChannel c = channel();
  server_.command({"CONFIG", "SET", "lua-time-limit", "100"});  // BUSY after 0.1 s, not 5 s
  std::thread busy([&] {
    server_.command({"EVAL",
                     "local function now() local t = redis.call('TIME') "
                     "return tonumber(t[1]) * 1000000 + tonumber(t[2]) end "
                     "local e = now() + 3000000 while now() < e do end return 1",
                     "0"});
  });
  // Until the server answers BUSY (a fixed wait failed the test when the script started late).
  const bool busy_now = test_util::wait_until(
      [&] {
        try {
          return server_.command({"PING"}).rfind("-BUSY", 0) == 0;
        } catch (...) {
          return false;
        }
      },
      std::chrono::seconds(20));
  if (!busy_now) busy.join();
  ASSERT_TRUE(busy_now) << "the script never made the server busy";
  std::string owner = "-";
  try {
    owner = c.owner();  // answered once the script ended
  } catch (...) {
    busy.join();
    throw;
  }
  busy.join();
  EXPECT_EQ(owner, "");
  bool busy_seen = false;
  for (const std::string& line : log_) busy_seen |= line.find("BUSY") != std::string::npos;
  EXPECT_TRUE(busy_seen) << "the server was never busy: the test showed nothing";
}

// An entry with the largest id ends the stream: it is read, a read after it returns nothing
// (before: XRANGE refused the '(' before it and the trainer stopped), and the stream can be
// deleted so that games go on.
TEST_F(RunChannelTest, AnEntryWithTheLargestIdIsReadAndNothingAfterIt) {
  RunChannel c = channel();
  server_.command({"XADD", "oppidum:t:games", "5-0", "node", "n", "run", "r"});
  server_.command({"XADD", "oppidum:t:games", kLastStreamId, "node", "n", "run", "r"});
  const auto entries = c.read_games("0-0", 10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].id, kLastStreamId);
  EXPECT_TRUE(c.read_games(kLastStreamId, 10).empty());
  const StreamInfo info = c.stream_info();
  EXPECT_EQ(info.last_id, kLastStreamId);
  EXPECT_EQ(info.length, 2);
  EXPECT_TRUE(c.delete_games_at_last_id());
  EXPECT_EQ(c.stream_info().last_id, "0-0");
  // A stream made again is left alone: it holds games nobody read.
  server_.command({"XADD", "oppidum:t:games", "7-0", "node", "n", "run", "r"});
  EXPECT_FALSE(c.delete_games_at_last_id());
  EXPECT_EQ(c.stream_info().length, 1);
}

TEST_F(RunChannelTest, HeartbeatsAreKeptPerNode) {
  RunChannel c = channel();
  c.heartbeat("a", 1, 10, 400);
  c.heartbeat("b", 1, 3, 90);
  c.heartbeat("a", 2, 12, 480);
  const auto nodes = c.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes.at("a").beats, 2);
  EXPECT_EQ(nodes.at("a").games, 12);
  EXPECT_EQ(nodes.at("b").positions, 90);
}

// Heartbeats are read by a script on the server that leaves out names too long or with control
// characters, values that are not three counts (a negative or 19-digit one went into metrics.csv),
// and all past kMaxNodes: a hostile field never
// comes over the wire. A node of such a name of its own is refused before it beats.
TEST_F(RunChannelTest, HostileHeartbeatsStayOnTheServer) {
  RunChannel c = channel();
  std::vector<std::string> hset = {"HSET", "oppidum:t:nodes", std::string(1 << 20, 'N'), "1 5 5",
                                   "bad\nname", "1 5 5", "w", "not a beat", "w0", "3 4 5",
                                   "negative", "2 -1000000000000000000 0",
                                   "huge", "2 1000000000000000000 0"};
  ASSERT_EQ(server_.command(hset), ":6\r\n");
  const auto nodes = c.nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes.at("w0").positions, 5);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("oppidum:t:nodes: ignoring 5 heartbeat(s)"), std::string::npos) << log_[0];
  EXPECT_LT(log_[0].size(), 400u);
  c.nodes();
  EXPECT_EQ(log_.size(), 1u) << "logged once";

  hset = {"HSET", "oppidum:t:nodes"};
  for (std::size_t i = 0; i < kMaxNodes + 100; ++i)
    hset.insert(hset.end(), {"n" + std::to_string(i), "1 1 1"});
  server_.command(hset);
  EXPECT_EQ(c.nodes().size(), kMaxNodes) << "no more nodes than are tracked";

  EXPECT_THROW(c.heartbeat(std::string(kMaxNodeNameBytes + 1, 'w'), 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(c.heartbeat("w\n", 1, 1, 1), std::invalid_argument);
}

// An error reply names the command and its key, so a key of a wrong type can be found; the nodes
// hash is telemetry only, so its errors are logged once and nothing stops.
TEST_F(RunChannelTest, AKeyOfAWrongTypeIsNamedAndTheNodesKeyOnlyWarned) {
  RunChannel c = channel();
  server_.command({"SET", "oppidum:t:games", "garbage"});
  EXPECT_NE(message([&] { c.read_games("0-0", 10); }).find("EVAL oppidum:t:games: WRONGTYPE"),
            std::string::npos)
      << message([&] { c.read_games("0-0", 10); });
  EXPECT_NE(message([&] { c.stream_info(); }).find("EVAL oppidum:t:games: WRONGTYPE"),
            std::string::npos)
      << message([&] { c.stream_info(); });
  const std::string push_error = message([&] { c.push_games("w", "r", {finished_game(1)}, 10); });
  EXPECT_NE(push_error.find("EVAL oppidum:t:games oppidum:t:pushed:"), std::string::npos)
      << push_error;
  EXPECT_NE(push_error.find(": WRONGTYPE"), std::string::npos) << push_error;
  server_.command({"DEL", "oppidum:t:games"});
  // A pusher's key is the push script's alone: what else is there (another type, a count it
  // never wrote: "inf" and "1e300" are numbers to Lua) counts nothing, and every batch is added.
  c.push_games("w", "r", {finished_game(1)}, 10);
  std::smatch key;
  const std::string keys = server_.command({"KEYS", "oppidum:t:pushed:*"});
  ASSERT_TRUE(std::regex_search(keys, key, std::regex("oppidum:t:pushed:[0-9a-f]+"))) << keys;
  for (const std::vector<std::string>& junk :
       {std::vector<std::string>{"SET", key.str(), "inf"}, {"SET", key.str(), "1e300"},
        {"SET", key.str(), "99999999999999999999"}, {"HSET", key.str(), "x", "1"}}) {
    server_.command({"DEL", key.str()});
    server_.command(junk);
    EXPECT_NO_THROW(c.push_games("w", "r", {finished_game(1)}, 10)) << junk[2];
  }
  EXPECT_EQ(server_.command({"XLEN", "oppidum:t:games"}), ":5\r\n");
  server_.command({"DEL", "oppidum:t:games", key.str()});
  server_.command({"HSET", "oppidum:t:config", "a", "b"});
  EXPECT_NE(message([&] { c.config(100); }).find("GETRANGE oppidum:t:config: WRONGTYPE"),
            std::string::npos)
      << "the command of a pipeline that failed, not the first one";
  server_.command({"SET", "oppidum:t:sessions", "abc"});
  EXPECT_NE(message([&] { c.new_session(); }).find("INCR oppidum:t:sessions: ERR"),
            std::string::npos);
  const std::string id = random_id(), lease = lease_value(id);
  const std::string claim = message([&] { c.claim(id, lease, 0); });
  EXPECT_NE(claim.find("oppidum:t:sessions: holds 3 bytes that are not a count of sessions"),
            std::string::npos)
      << claim;
  EXPECT_NE(claim.find("redis-cli DEL oppidum:t:sessions"), std::string::npos) << claim;
  EXPECT_EQ(server_.command({"EXISTS", "oppidum:t:trainer"}), ":0\r\n")
      << "a refused claim writes nothing";
  server_.command({"DEL", "oppidum:t:sessions"});
  server_.command({"HSET", "oppidum:t:owner", "a", "b"});
  EXPECT_NE(message([&] { c.claim(id, lease, 0); }).find("oppidum:t:owner: WRONGTYPE"),
            std::string::npos);

  server_.command({"SET", "oppidum:t:nodes", "garbage"});
  log_.clear();
  EXPECT_NO_THROW(c.heartbeat("w", 1, 2, 3));
  EXPECT_NO_THROW(c.heartbeat("w", 2, 2, 3));
  EXPECT_TRUE(c.nodes().empty());
  EXPECT_TRUE(c.nodes().empty());
  ASSERT_EQ(log_.size(), 2u) << "one line for each failing command, once";
  EXPECT_NE(log_[0].find("HSET oppidum:t:nodes: WRONGTYPE"), std::string::npos) << log_[0];
  EXPECT_NE(log_[0].find("telemetry only"), std::string::npos) << log_[0];
  EXPECT_NE(log_[1].find("EVAL oppidum:t:nodes: WRONGTYPE"), std::string::npos) << log_[1];
}

// A server of our own on a loopback port that answers each connection with `serve(fd, done)`
// (a server that is not Redis, or a hostile one).
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int, const std::atomic<bool>&)> serve) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 8) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &length) != 0)
      throw std::runtime_error("fake server: cannot listen");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, serve] {
      std::vector<std::thread> connections;
      while (!done_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) connections.emplace_back([this, c, serve] {
          serve(c, done_);
          ::close(c);
        });
      }
      for (std::thread& t : connections) t.join();
    });
  }
  ~FakeServer() {
    done_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_) + "/t"; }

 private:
  int fd_ = -1, port_ = 0;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// A batch of games the server added whose reply was lost (the connection dropped on the way back)
// was pushed again on the retry: its games twice in the stream, trained on twice. The server now
// holds each pusher's count of batches and adds a batch once; the next batch is added as ever.
TEST_F(RunChannelTest, ABatchWhoseReplyWasLostIsAddedOnce) {
  std::atomic<int> connections{0};
  const int port = server_.port();
  FakeServer lossy([&](int client, const std::atomic<bool>& done) {
    const bool lose_reply = connections++ == 0;
    const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(upstream);
      return;
    }
    std::vector<char> buffer(1 << 16);
    while (!done.load()) {
      pollfd p[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
      if (::poll(p, 2, 50) <= 0) continue;
      if (p[0].revents != 0) {
        const ssize_t n = ::recv(client, buffer.data(), buffer.size(), 0);
        if (n <= 0 || ::send(upstream, buffer.data(), static_cast<std::size_t>(n),
                             MSG_NOSIGNAL) != n)
          break;
      }
      if (p[1].revents != 0) {
        const ssize_t n = ::recv(upstream, buffer.data(), buffer.size(), 0);
        if (n <= 0 || lose_reply) break;  // the server has done it; its answer is lost
        if (::send(client, buffer.data(), static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
      }
    }
    ::close(upstream);
  });
  std::vector<std::string> log;
  RunChannel c(parse_redis_url(lossy.url(), nullptr),
               [&](const std::string& line) { log.push_back(line); });
  c.push_games("w", "r", {finished_game(1), finished_game(2)}, 1000);
  EXPECT_EQ(connections.load(), 2) << "the first reply was not lost: the test tests nothing";
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("lost redis://127.0.0.1:"), std::string::npos) << log[0];
  EXPECT_EQ(server_.command({"XLEN", "oppidum:t:games"}), ":2\r\n") << "a batch added twice";
  c.push_games("w", "r", {finished_game(3)}, 1000);
  EXPECT_EQ(server_.command({"XLEN", "oppidum:t:games"}), ":3\r\n");
  // Another pusher (another node, or this node's next session) counts its own batches.
  RunChannel other = channel();
  other.push_games("w2", "r", {finished_game(4)}, 1000);
  EXPECT_EQ(server_.command({"XLEN", "oppidum:t:games"}), ":4\r\n");
  const std::string keys = server_.command({"KEYS", "oppidum:t:pushed:*"});
  std::smatch key;
  ASSERT_TRUE(std::regex_search(keys, key, std::regex("oppidum:t:pushed:[0-9a-f]+"))) << keys;
  const std::string ttl = server_.command({"TTL", key.str()});
  EXPECT_EQ(ttl.rfind(":8640", 0), 0u) << "a pusher's key expires a day after its last push: " << ttl;
  bool said = false;
  for (const std::string& line : log) said = said || line.find("already") != std::string::npos;
  EXPECT_TRUE(said) << "the batch the server had already is told of";
}

// How long `command` took to end by RedisStopped (it must) after the stop flag it is given was
// set `after` it began.
std::chrono::steady_clock::duration time_to_stop(
    const std::function<void(const std::atomic<bool>*)>& command, std::chrono::milliseconds after) {
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(after);
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(command(&stop), RedisStopped);
  stopper.join();
  return std::chrono::steady_clock::now() - start;
}

// A fake server's connection that takes what it is sent and never answers.
void never_answers(int, const std::atomic<bool>& done) {
  while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Sets `stop` once the client has logged (it refused a reply), or after 60 s: a loaded machine
// may take a while to read a flood that far.
void stop_once_logged(const std::atomic<bool>& logged, std::atomic<bool>& stop) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!logged.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
}

// A reply that never ends (a byte a second) or that announces 2^62 bytes and sends them: the
// client used to wait 30 s per byte without looking at its stop flag (Ctrl-C did nothing), and to
// take memory until it was killed. Now a reply is bounded in time and in size: the connection is
// dropped as lost, logged, retried, and the stop flag is looked at all the while.
TEST(RedisClientTest, ARepliesTimeAndSizeAreBounded) {
  FakeServer trickle([](int fd, const std::atomic<bool>& done) {
    const std::string answer = "+" + std::string(1000, 'x');
    for (std::size_t i = 0; i < answer.size() && !done.load(); ++i) {
      if (::send(fd, answer.data() + i, 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::atomic<bool> stop{false};
  std::vector<std::string> log;
  RedisClient slow(parse_redis_url(trickle.url(), nullptr),
                   [&](const std::string& line) { log.push_back(line); });
  EXPECT_LT(time_to_stop([&](const std::atomic<bool>* flag) { slow.command({"PING"}, flag); },
                         std::chrono::milliseconds(700)),
            std::chrono::seconds(5))
      << "the stop flag was not looked at while the reply trickled";

  FakeServer flood([](int fd, const std::atomic<bool>& done) {
    std::string chunk = "$4611686018427387904\r\n";
    if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) return;
    chunk.assign(1 << 16, 'x');
    while (!done.load() && ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) > 0) {
    }
  });
  log.clear();
  stop = false;
  std::atomic<bool> logged{false};
  RedisClient big(parse_redis_url(flood.url(), nullptr), [&](const std::string& line) {
    log.push_back(line);
    logged = true;
  });
  std::thread stopper2([&] { stop_once_logged(logged, stop); });
  EXPECT_THROW(big.command({"GET", "k"}, &stop, 1 << 20), RedisStopped);
  stopper2.join();
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("a reply over 1 MiB, more than any it expects; retrying"),
            std::string::npos)
      << log[0];

  // A server that takes nothing: a large command waits for it as a reply does, stop flag seen.
  FakeServer deaf(never_answers);
  RedisClient sending(parse_redis_url(deaf.url(), nullptr), [](const std::string&) {});
  const std::string large(64u << 20, 'x');
  EXPECT_LT(time_to_stop([&](const std::atomic<bool>* flag) {
                           sending.command({"SET", "k", large}, flag);
                         },
                         std::chrono::milliseconds(700)),
            std::chrono::seconds(5))
      << "the stop flag was not looked at while the command waited to be taken";
}

// What a server says in an error reply reaches the terminal and the run's log: quoted and cut
// (an error of megabytes carried a forged log line and terminal escapes there), for a command and
// for the credentials alike.
TEST(RedisClientTest, AServersErrorTextIsQuotedAndCut) {
  const std::string text = "-ERR \x1b[2J" + std::string(200000, 'x') + "\r\n";
  FakeServer chatty([&text](int fd, const std::atomic<bool>& done) {
    char buffer[4096];
    while (!done.load()) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      if (::recv(fd, buffer, sizeof buffer, 0) <= 0) return;
      if (::send(fd, text.data(), text.size(), MSG_NOSIGNAL) <= 0) return;
    }
  });
  for (const std::string& password : {std::string(), std::string("pw")}) {
    const std::string url = password.empty()
                                ? chatty.url()
                                : "redis://:" + password + "@" + chatty.url().substr(8);
    RedisClient client(parse_redis_url(url, nullptr), [](const std::string&) {});
    try {
      client.command({"GET", "k"});
      FAIL() << "an error reply was taken";
    } catch (const RedisError& e) {
      const std::string what = e.what();
      EXPECT_LT(what.size(), 600u) << password;
      EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
      EXPECT_NE(what.find("ERR \\x1b[2J"), std::string::npos) << what;
    }
  }
}

// The credentials' exchange looks at the stop flag as every other does: Ctrl-C ended a node
// waiting on a server that took AUTH and never answered after 30 s, not at once.
TEST(RedisClientTest, AStopEndsTheWaitForTheCredentialsAnswer) {
  FakeServer deaf(never_answers);
  RedisClient client(parse_redis_url("redis://:pw@" + deaf.url().substr(8), nullptr),
                     [](const std::string&) {});
  EXPECT_LT(time_to_stop([&](const std::atomic<bool>* flag) { client.command({"PING"}, flag); },
                         std::chrono::milliseconds(300)),
            std::chrono::seconds(10));
}

// A server that takes the connection and never answers was waited for 30 s without a word (the
// node seemed to hang): after 5 s of silence the log says what it waits for, once, for a command
// and for the credentials alike.
TEST(RedisClientTest, AServerSilentForSecondsIsToldOf) {
  FakeServer deaf(never_answers);
  for (const std::string& password : {std::string(), std::string("pw")}) {
    std::atomic<bool> stop{false}, logged{false};
    std::vector<std::string> log;
    const std::string url =
        password.empty() ? deaf.url() : "redis://:" + password + "@" + deaf.url().substr(8);
    RedisClient client(parse_redis_url(url, nullptr), [&](const std::string& line) {
      log.push_back(line);
      logged = true;
    });
    std::thread stopper([&] { stop_once_logged(logged, stop); });
    EXPECT_THROW(client.command({"GET", "some-key"}, &stop), RedisStopped);
    stopper.join();
    ASSERT_EQ(log.size(), 1u) << password;
    EXPECT_NE(log[0].find(password.empty() ? "has not answered GET some-key for 5 s; waiting up "
                                             "to 30 s"
                                           : "has not answered AUTH for 5 s; waiting up to 30 s"),
              std::string::npos)
        << log[0];
    EXPECT_EQ(log[0].find("pw"), std::string::npos) << "the password was shown: " << log[0];
  }
}

// A silence that was told of is followed by the answer's line when it comes (it was told of, and
// nothing said when the server answered).
TEST(RedisClientTest, AnAnswerAfterASilenceIsToldOf) {
  RedisServerOptions options;
  options.append_only = false;
  RedisServer server(options);
  std::vector<std::string> log;
  RedisClient client(parse_redis_url(server.url("t"), nullptr),
                     [&](const std::string& line) { log.push_back(line); });
  client.command({"SET", "k", "v"});  // connected
  ASSERT_EQ(::kill(server.pid(), SIGSTOP), 0);
  std::thread wake([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(6500));
    ::kill(server.pid(), SIGCONT);
  });
  EXPECT_EQ(client.command({"GET", "k"}).str, "v");
  wake.join();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[0].find("has not answered GET k for 5 s"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find(" answered after 6."), std::string::npos) << log[1];
}

// A reply within the byte cap can still be millions of tiny items (hiredis makes an object of
// about 50 bytes and a slot for each: 64 MiB of ":1" items, over a gigabyte), or announce an array
// of two billion slots: both are refused by their count, as a reply too large is, before the
// objects are made, while a reply of a thousand items is read whole.
TEST(RedisClientTest, AReplysItemsAreCounted) {
  const auto serve_reply = [](std::string head, std::string item, std::size_t count) {
    return [=](int fd, const std::atomic<bool>& done) {
      char command[4096];
      if (::recv(fd, command, sizeof command, 0) <= 0) return;
      std::string batch;
      for (std::size_t i = 0; i < 4096; ++i) batch += item;
      if (::send(fd, head.data(), head.size(), MSG_NOSIGNAL) <= 0) return;
      for (std::size_t sent = 0; sent < count && !done.load(); sent += 4096)
        if (::send(fd, batch.data(), batch.size(), MSG_NOSIGNAL) <= 0) return;
      while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    };
  };
  const auto refused_by_count = [](FakeServer& server) {
    std::atomic<bool> stop{false}, logged{false};
    std::vector<std::string> log;
    RedisClient client(parse_redis_url(server.url(), nullptr), [&](const std::string& line) {
      log.push_back(line);
      logged = true;
    });
    std::thread stopper([&] { stop_once_logged(logged, stop); });
    EXPECT_THROW(client.command({"GET", "k"}, &stop), RedisStopped);
    stopper.join();
    return log.empty() ? std::string() : log[0];
  };
  const std::size_t many = (std::size_t{1} << 20) + 4096;
  FakeServer tiny(serve_reply("*" + std::to_string(many) + "\r\n", ":1\r\n", many));
  EXPECT_NE(refused_by_count(tiny).find("a reply of more than 1048576 items"), std::string::npos);
  FakeServer nested(serve_reply("*1\r\n*2000000000\r\n", "", 0));
  EXPECT_NE(refused_by_count(nested).find("a reply of more than 1048576 items"),
            std::string::npos);

  FakeServer fine(serve_reply("*4096\r\n", "$1\r\nx\r\n", 4096));
  RedisClient client(parse_redis_url(fine.url(), nullptr), [](const std::string&) {});
  const RedisReply reply = client.command({"GET", "k"});
  ASSERT_EQ(reply.elements.size(), 4096u);
  EXPECT_EQ(reply.elements.back().str, "x");
}

// A server that takes no writes for a while (a replica during a failover: READONLY) is waited
// for, told once, and the write goes when it takes writes again: it stopped the trainer and
// every worker for good. A script's write refused there is waited for too.
TEST(RedisClientTest, AReadOnlyServerIsWaitedFor) {
  RedisServerOptions options;
  options.append_only = false;
  RedisServer server(options);
  ASSERT_EQ(server.command({"REPLICAOF", "127.0.0.1", "1"}), "+OK\r\n");  // no master there
  ASSERT_EQ(server.command({"SET", "k", "v"}).rfind("-READONLY", 0), 0u);
  std::vector<std::string> log;
  std::mutex log_mutex;
  RedisClient client(parse_redis_url(server.url("t"), nullptr), [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mutex);
    log.push_back(line);
  });
  std::thread promote([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    server.command({"REPLICAOF", "NO", "ONE"});
  });
  EXPECT_EQ(client.command({"SET", "k", "v"}).str, "OK");
  EXPECT_EQ(client.command({"EVAL", "return redis.call('SET', KEYS[1], 'w')", "1", "k"}).str,
            "OK");
  promote.join();
  EXPECT_EQ(server.command({"GET", "k"}), "$1\r\nw\r\n");
  ASSERT_EQ(server.command({"REPLICAOF", "127.0.0.1", "1"}), "+OK\r\n");
  std::thread promote_again([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    server.command({"REPLICAOF", "NO", "ONE"});
  });
  EXPECT_EQ(client.command({"EVAL", "return redis.call('SET', KEYS[1], 'x')", "1", "k"}).str,
            "OK");
  promote_again.join();
  std::lock_guard<std::mutex> lock(log_mutex);
  ASSERT_EQ(log.size(), 4u) << "lost and reconnected, twice";
  EXPECT_NE(log[0].find("READONLY"), std::string::npos) << log[0];
  EXPECT_NE(log[1].find("reconnected"), std::string::npos) << log[1];
  EXPECT_NE(log[2].find("READONLY"), std::string::npos) << log[2];
}

// A server at its memory limit (maxmemory, nothing to evict) answers OOM and applies nothing;
// nothing a node does would free its memory, so the node stops with an error naming the command,
// the key and the server's words, at once.
TEST(RedisClientTest, AServerAtItsMemoryLimitIsAnErrorNamingTheKey) {
  RedisServerOptions options;
  options.append_only = false;
  options.extra_args = {"--maxmemory", "3mb"};
  RedisServer server(options);
  RedisClient client(parse_redis_url(server.url("t"), nullptr), [](const std::string&) {});
  const std::string big(512 * 1024, 'x');
  for (int i = 0; i < 16; ++i) server.command({"SET", "fill" + std::to_string(i), big});
  ASSERT_EQ(server.command({"SET", "one-more", big}).rfind("-OOM", 0), 0u) << "not full yet";
  try {
    client.command({"XADD", "oppidum:t:games", "*", "record", big});
    ADD_FAILURE() << "applied";
  } catch (const RedisError& e) {
    EXPECT_NE(std::string(e.what()).find("XADD oppidum:t:games: OOM"), std::string::npos)
        << e.what();
  }
}

// Values the program writes, read back bounded and checked: a network version at the top of the
// range once wrapped to negative versions, and workers stayed on an old network without a word;
// an owner of megabytes with terminal escapes went whole into messages, logs and every game; a
// stream reply of another shape saved its id as the cursor. Each is now an error naming the key.
TEST_F(RunChannelTest, ValuesReadBackAreBoundedAndChecked) {
  RunChannel c = channel();
  server_.command({"HSET", "oppidum:t:network", "version", "9223372036854775807"});
  const std::string version = message([&] { c.network_version(); });
  EXPECT_NE(version.find("redis: oppidum:t:network field version is not a whole number from 1 to "
                         "9223372036854775805 (\"9223372036854775807\"); delete it"),
            std::string::npos)
      << version;
  for (const std::string bad : {"-100", "abc", " 5", "99999999999999999999"}) {
    server_.command({"HSET", "oppidum:t:network", "version", bad});
    EXPECT_NE(message([&] { c.network_version(); }).find("field version is not a whole number"),
              std::string::npos)
        << bad;
  }
  server_.command({"DEL", "oppidum:t:network"});
  const std::string hostile = "\x1b]0;pwned\x07\n[fake log line]" + std::string(100000, 'x');
  server_.command({"SET", "oppidum:t:owner", hostile});
  const std::string owner = message([&] { c.owner(); });
  EXPECT_NE(owner.find("oppidum:t:owner holds no run id (100026 bytes)"), std::string::npos)
      << owner.substr(0, 300);
  EXPECT_LT(owner.size(), 400u);
  server_.command({"SET", "oppidum:t:owner", "abc\x1b[2J"});
  EXPECT_NE(message([&] { c.owner(); }).find("holds no run id (it holds a control character)"),
            std::string::npos);
  server_.command({"SET", "oppidum:t:owner", "0123456789abcdef"});
  EXPECT_EQ(c.owner(), "0123456789abcdef");
}

// The client waits out a server that is killed and restarted (AOF), logging the loss and the
// reconnection once each; nothing written before the kill is lost.
TEST_F(RunChannelTest, SurvivesTheServerGoingAwayAndComingBack) {
  RunChannel c = channel();
  c.push_games("w", "r", {finished_game(1)}, 1000);
  ASSERT_TRUE(server_.wait_until_aof_written());
  server_.kill9();
  std::atomic<bool> done{false};
  std::thread pusher([&] {
    c.push_games("w", "r", {finished_game(2)}, 1000);  // retries until the server is back
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_FALSE(done.load());
  server_.restart();
  pusher.join();
  EXPECT_EQ(c.stream_info().entries_added, 2);
  ASSERT_GE(log_.size(), 2u);
  EXPECT_NE(log_.front().find("lost redis://127.0.0.1:"), std::string::npos) << log_.front();
  EXPECT_NE(log_.back().find("reconnected"), std::string::npos) << log_.back();
  EXPECT_GT(c.seconds_disconnected(), 0.5);
}

TEST_F(RunChannelTest, AStopFlagEndsTheWait) {
  std::atomic<bool> stop{false};
  RunChannel c(parse_redis_url(server_.url("t"), nullptr), [](const std::string&) {}, &stop);
  server_.kill9();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  EXPECT_THROW(c.config(1 << 20), RedisStopped);
  stopper.join();
}

TEST(RunChannelAuth, APasswordIsSentAndNeverShown) {
  RedisServerOptions options;
  options.password = "pa55word";
  RedisServer server(options);
  std::vector<std::string> log;
  RunChannel good(parse_redis_url(server.url("t"), nullptr),
                  [&](const std::string& line) { log.push_back(line); });
  good.publish_config("x");
  EXPECT_EQ(*good.config(1 << 20), "x");
  RunChannel bad(parse_redis_url(server.url("t"), nullptr), {});
  RunChannel none(parse_redis_url("redis://127.0.0.1:" + std::to_string(server.port()) + "/t",
                                  nullptr),
                  {});
  try {
    none.config(1 << 20);
    ADD_FAILURE() << "NOAUTH is an error at once, not a retry";
  } catch (const RedisError& e) {
    EXPECT_NE(std::string(e.what()).find("NOAUTH"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("give it in the URL, redis://:PASSWORD@HOST, or in "
                                         "OPPIDUM_REDIS_PASSWORD"),
              std::string::npos)
        << e.what();
  }
  RunChannel wrong(parse_redis_url("redis://:nope@127.0.0.1:" + std::to_string(server.port()) + "/t",
                                   nullptr),
                   {});
  try {
    wrong.config(1 << 20);
    FAIL() << "a wrong password was accepted";
  } catch (const RedisError& e) {
    EXPECT_EQ(std::string(e.what()).find("nope"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("***"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace oppidum::store
