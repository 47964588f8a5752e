// One run's keys on a Redis server, and the operations the trainer node and the self-play worker
// nodes perform on them (docs/DISTRIBUTED.md lists who writes and who reads what):
//
//   oppidum:RUN:config    string  the run's effective config (YAML); the trainer writes it
//   oppidum:RUN:network   hash    the best network: checkpoint (the checkpoint file's bytes),
//                                 crc32, step, generation, game, encoding_version, and version
//                                 (raised by one on every publication); the trainer writes it in
//                                 one command, so a reader never sees a mixed state
//   oppidum:RUN:games     stream  one entry per finished game: node, network (its step), format
//                                 (the record format version), record (encode_record's bytes),
//                                 crc32 of the record; capped with XADD MAXLEN ~
//   oppidum:RUN:sessions  counter starts of self-play nodes (each start plays new games)
//   oppidum:RUN:nodes     hash    node -> "beats games positions", updated every few seconds
//
// All operations retry over new connections while the server is away (store/redis_client.h)
// until they succeed or the stop flag is set (then RedisStopped).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "selfplay/game_record.h"
#include "store/redis_client.h"
#include "store/redis_url.h"

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

class RunChannel {
 public:
  RunChannel(RedisUrl url, RedisClient::Log log, const std::atomic<bool>* stop = nullptr);

  const RedisUrl& url() const { return client_.url(); }

  void publish_config(const std::string& yaml);
  std::optional<std::string> config();

  // Publishes a network as the next version; returns that version.
  std::int64_t publish_network(const std::string& checkpoint, std::int64_t step, int generation,
                               const std::string& game, int encoding_version);
  std::int64_t network_version();  // 0: none yet
  // The published network, its bytes checked against the CRC; nothing when none is published.
  // Throws RedisError when the stored network is damaged.
  std::optional<PublishedNetwork> network();

  std::uint64_t new_session();

  // XADDs each record (one round trip for all), capping the stream near `max_length` entries.
  void push_games(const std::string& node, const std::vector<selfplay::GameRecord>& games,
                  std::int64_t max_length);
  // Up to `count` entries after `after` ("0-0" for the start), oldest first; never blocks.
  std::vector<StreamEntry> read_games(const std::string& after, int count);
  StreamInfo stream_info();

  void heartbeat(const std::string& node, std::int64_t beats, std::int64_t games,
                 std::int64_t positions);
  std::map<std::string, NodeBeat> nodes();

  double seconds_disconnected() const { return client_.seconds_disconnected(); }
  RedisClient& client() { return client_; }

 private:
  RedisClient client_;
  const std::atomic<bool>* stop_;
};

// The self-play seed of a node: the run seed mixed with the node's name (FNV-1a), so that nodes
// differ even before their session numbers (unique over all starts) are mixed in.
std::uint64_t node_seed(std::uint64_t run_seed, const std::string& node);

// Compares stream ids ("<ms>-<seq>"): negative, zero or positive like strcmp. Throws
// std::invalid_argument for a malformed id.
int compare_stream_ids(const std::string& a, const std::string& b);

}  // namespace oppidum::store
