// One run's keys on a Redis server, and the operations the trainer node and the self-play worker
// nodes perform on them (docs/DISTRIBUTED.md lists who writes and who reads what):
//
//   oppidum:RUN:owner     string  the run id of the run that owns these keys; the trainer writes it
//                                 when it first starts on them, and no other run's trainer starts
//   oppidum:RUN:trainer   string  the lease of the run's one trainer ("run ID on HOST pid PID token
//                                 T"), expiring kLeaseSeconds after its last renewal (every few
//                                 seconds); another trainer is refused while it is held, unless it
//                                 is of the same run on the same host and its process is gone
//   oppidum:RUN:config    string  the run's effective config (YAML); the trainer writes it
//   oppidum:RUN:network   hash    the best network: checkpoint (the checkpoint file's bytes),
//                                 crc32, step, generation, game, encoding_version, and version
//                                 (raised by one on every publication); the trainer writes it in
//                                 one command, so a reader never sees a mixed state
//   oppidum:RUN:games     stream  one entry per finished game: node, run (the run id), network (its
//                                 step), format (the record format version), record
//                                 (encode_record's bytes), crc32 of the record; capped with XADD
//                                 MAXLEN ~
//   oppidum:RUN:pushed:ID string  the number of the last batch of games the pusher ID (a random id
//                                 for each RunChannel that pushes) added: a batch sent again
//                                 after its reply was lost is not added twice; each expires a
//                                 day after its pusher's last push
//   oppidum:RUN:sessions  counter starts of self-play nodes (each start plays new games)
//   oppidum:RUN:nodes     hash    node -> "beats games positions", updated every few seconds;
//                                 telemetry only (see heartbeat and nodes)
//
// Anything with write access to the server can put anything in these keys. A node name (in a
// stream entry or the nodes hash) over kMaxNodeNameBytes or with a control character is not a
// node's: such an entry is reported damaged, such a heartbeat ignored, so no hostile name reaches a
// record, a log line or metrics.csv.
//
// All operations retry over new connections while the server is away (store/redis_client.h)
// until they succeed or the stop flag is set (then RedisStopped).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/checkpoint.h"
#include "selfplay/game_record.h"
#include "store/redis_client.h"
#include "store/redis_url.h"
#include "util/log.h"

namespace oppidum::store {

struct NetworkInfo {
  std::int64_t version = 0;  // 0: nothing published yet
  std::int64_t step = 0;
  int generation = 0;
  std::string game;
  int encoding_version = 0;
  std::uint32_t crc32 = 0;
};

struct PublishedNetwork {
  NetworkInfo info;
  std::string checkpoint;  // the checkpoint file's bytes (model/checkpoint.h)
};

// A stream entry read back: the record, or what is wrong with it.
struct StreamEntry {
  std::string id;
  std::string node;
  std::string run;      // the run id it was pushed for ("": none, a node of an older version)
  std::string problem;  // non-empty: the entry is damaged (missing field, CRC, undecodable)
  selfplay::GameRecord record;
};

struct StreamInfo {
  std::int64_t length = 0;         // entries in the stream now
  std::int64_t entries_added = 0;  // ever added (evicted ones included)
  std::string last_id;             // "0-0" when empty
};

struct NodeBeat {
  std::int64_t beats = 0, games = 0, positions = 0;
};

// The longest node name taken from the server: a 64-byte host name and a pid (the workers'
// default, host-pid) fit.
inline constexpr std::size_t kMaxNodeNameBytes = 128;
// The most heartbeats nodes() returns: the trainer tracks at most this many nodes.
inline constexpr std::size_t kMaxNodes = 1024;

// "" when `name` can name a node (at most kMaxNodeNameBytes, no control character); else what is
// wrong with it ("70000 bytes, over the limit of 128"), never quoting it. Run ids are held to the
// same rule.
std::string node_name_problem(const std::string& name);

// How long a trainer's lease lasts after its last renewal.
inline constexpr int kLeaseSeconds = 60;

// What a trainer's claim (or renewal) of a run's keys found.
struct Claim {
  // The owner key was missing and now names this run: its first start on these keys, or a server
  // that lost its data (then nothing the workers need is there until the trainer publishes it).
  bool claimed = false;
  std::int64_t sessions = 0;       // the sessions counter now
  bool config_published = false;   // the config key holds the claim's config (any, when "")
  std::int64_t network_step = -1;  // the published network's step; -1: none
  bool network_published = false;  // the network key holds the claim's network (any, when "")
  std::string replaced;  // the lease of a trainer of this run whose process is gone, taken over
};

// A network as RunChannel::publish_network published it: its version, and its signature, what the
// claim compares with the network key (its fields but the version, and the checkpoint's size): a
// key changed or damaged on the server differs (but for a checkpoint changed in place at its size
// under the same CRC-32 field, which the workers' check of that field refuses).
struct NetworkPublication {
  std::int64_t version = 0;
  std::string signature;
};

// The keys belong to another run, or another trainer holds the run's lease; the message says who
// and what to do.
class StoreTakenError : public RedisError {
 public:
  using RedisError::RedisError;
};
// A random id of 32 hex digits (128 bits from std::random_device): run ids and lease tokens.
std::string random_id();

class RunChannel {
 public:
  RunChannel(RedisUrl url, util::LogLine log, const std::atomic<bool>* stop = nullptr);

  const RedisUrl& url() const { return client_.url(); }

  void publish_config(const std::string& yaml);
  // The published config; nothing when none is. Reads at most `max_bytes` + 1 bytes of it, and
  // throws RedisError naming the key when it is longer than `max_bytes`.
  std::optional<std::string> config(std::size_t max_bytes);

  // Publishes a network as the next version; returns that version and its signature.
  NetworkPublication publish_network(const std::string& checkpoint, std::int64_t step,
                                     int generation, const std::string& game,
                                     int encoding_version);
  std::int64_t network_version();  // 0: none yet
  // The published network, its bytes checked against the CRC; nothing when none is published.
  // Throws RedisError when the stored network is damaged, or when its checkpoint is larger than
  // `max_checkpoint_bytes` (model::max_checkpoint_bytes of the run's config: the network a
  // server holds is read only as far as the run's network can reach).
  std::optional<PublishedNetwork> network(std::uint64_t max_checkpoint_bytes =
                                              model::kMaxCheckpointBytes);

  std::uint64_t new_session();

  // A new run needs keys of its own: throws StoreTakenError when any of the run's keys (owner,
  // trainer lease, config, network, games) exists, else makes `run_id` their owner, in one step on
  // the server (two new runs started at once on one key: one gets it, the other is refused before
  // it creates anything).
  void reserve(const std::string& run_id);
  // Undoes reserve (a run that turned out not to be new) while `run_id` still owns the keys.
  void unreserve(const std::string& run_id);
  // The run id that owns the keys; "" when none does (no trainer yet, or the server lost its data).
  std::string owner();
  // In one step (a Lua script): refuses, with StoreTakenError, keys owned by another run or a
  // lease held by another trainer; takes or renews the lease `lease` (made by lease_value) for
  // kLeaseSeconds; makes `run_id` the owner when there is none; raises the sessions counter to at
  // least `sessions_floor` (it restarts low when the server lost its data); and says what is
  // published. A lease of this run from this host whose process is gone (a trainer killed moments
  // ago) is taken over at once; one from another host is waited out (it expires). Called at the
  // trainer's start and every few seconds after.
  // `config` and `network` (NetworkPublication::signature): what the run published, for Claim's
  // config_published and network_published ("": only that there is one).
  Claim claim(const std::string& run_id, const std::string& lease, std::int64_t sessions_floor,
              const std::string& config = "", const std::string& network = "");
  // Gives the lease up (a clean stop) when it is still `lease`.
  void release(const std::string& lease);

  // XADDs each record (one round trip for all, a script on the server), stamped with the node
  // and the run id, capping the stream near `max_length` entries. Exactly once: a batch whose
  // reply was lost (the connection dropped after the server had added it) is retried, and the
  // server, which holds this channel's count of batches, does not add it again.
  void push_games(const std::string& node, const std::string& run_id,
                  const std::vector<selfplay::GameRecord>& games, std::int64_t max_length);
  // Up to `count` entries after `after` ("0-0" for the start), oldest first; never blocks. The
  // entries stop early once their fields pass 32 MiB (`more` is then set: more are waiting); an
  // entry over 64 MiB comes with a problem and nothing else (the server sends its size alone).
  // An entry whose node name or run id fails node_name_problem has a problem, and a bounded
  // stand-in for that field.
  // No entry comes after kLastStreamId: a read after it returns none.
  std::vector<StreamEntry> read_games(const std::string& after, int count, bool* more = nullptr);
  // The stream's length, entries added and last id, without its entries (XINFO STREAM would send
  // the first and last whole, each up to a record's size).
  StreamInfo stream_info();
  // Deletes the games stream when it ends at kLastStreamId (where XADD refuses every new game);
  // false when it does not (gone, or made again since): a stream of games nobody read stays.
  bool delete_games_at_last_id();
  // The server's clock (TIME), in Unix milliseconds: the time part of the ids it gives entries.
  std::uint64_t server_time_ms();

  // The heartbeats are telemetry: an error reply (the nodes key of a wrong type) is logged (each
  // distinct one once) and otherwise ignored, by both. Only RedisStopped is thrown. heartbeat
  // throws std::invalid_argument for a `node` that fails node_name_problem (the trainer would
  // drop that node's games).
  void heartbeat(const std::string& node, std::int64_t beats, std::int64_t games,
                 std::int64_t positions);
  // At most kMaxNodes heartbeats, read by a script on the server that leaves out (and counts:
  // logged once) names that fail node_name_problem and values that are not "beats games
  // positions", so a hostile field is never sent here.
  std::map<std::string, NodeBeat> nodes();

  double seconds_disconnected() const { return client_.seconds_disconnected(); }
  RedisClient& client() { return client_; }

 private:
  void telemetry_error(const RedisError& e);

  RedisClient client_;
  util::LogLine log_;
  const std::atomic<bool>* stop_;
  std::set<std::string> telemetry_errors_logged_;
  bool ignored_nodes_logged_ = false;
  std::string pusher_ = random_id();  // this channel's pushed:ID key
  std::uint64_t batches_pushed_ = 0;
};

// A lease value for a trainer of run `run_id` on this machine (host, pid and a random token).
std::string lease_value(const std::string& run_id);

// The self-play seed of a node: the run seed mixed with the node's name (FNV-1a), so that nodes
// differ even before their session numbers (unique over all starts) are mixed in.
std::uint64_t node_seed(std::uint64_t run_seed, const std::string& node);

// The largest stream id: no entry can follow one with it (an id written by hand).
inline constexpr const char* kLastStreamId = "18446744073709551615-18446744073709551615";

// Compares stream ids ("<ms>-<seq>"): negative, zero or positive like strcmp. Throws
// std::invalid_argument for a malformed id.
int compare_stream_ids(const std::string& a, const std::string& b);
// The milliseconds part of a stream id; throws std::invalid_argument for a malformed one.
std::uint64_t stream_id_ms(const std::string& id);

}  // namespace oppidum::store
