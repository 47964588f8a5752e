// A Redis connection that survives the server going away: every command is retried over a new
// connection, with backoff (0.1 s doubling to 5 s), until it succeeds or the caller's stop flag is
// set. Losing the server and getting it back are each logged once ("lost redis://...: ...;
// retrying", "reconnected to redis://... after 10.2 s"). A server that is loading its data (after
// a restart) counts as not there yet. An error reply (a wrong password, a wrong type, out of
// memory: nothing a node does frees a server's memory) is a RedisError at once, never retried;
// its message names the command and the keys it acts on ("XADD oppidum:r:games: OOM ...").
//
// A command whose reply was lost with the connection may have been applied; it is sent again.
// Callers make their commands safe to repeat, or accept a rare duplicate (a game pushed twice).
//
// One client per thread: the class is not thread-safe. Binary-safe arguments and replies.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/redis_url.h"
#include "util/log.h"

struct redisContext;

namespace oppidum::store {

class RedisError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when a command gives up because the stop flag was set.
class RedisStopped : public RedisError {
 public:
  RedisStopped() : RedisError("stopped while waiting for redis") {}
};

struct RedisReply {
  enum class Type { kNil, kString, kInteger, kArray, kStatus };
  Type type = Type::kNil;
  std::string str;           // kString, kStatus
  long long integer = 0;     // kInteger
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return type == Type::kNil; }
};

// The objects hiredis's reader made of the reply being read (redis_client.cpp bounds them).
struct ReplyObjects {
  std::size_t made = 0;
  bool refused = false;
};

class RedisClient {
 public:
  // The largest reply taken by default (each reply of a pipeline): a batch of games is a few MB.
  static constexpr std::size_t kMaxReplyBytes = std::size_t{64} << 20;
  // How long one command (or pipeline) may take, its whole reply included.
  static constexpr int kCommandSeconds = 30;

  // Does not connect yet. `log` receives the connection lines (may be empty: then stderr).
  RedisClient(RedisUrl url, util::LogLine log = {});
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  const RedisUrl& url() const { return url_; }

  // Runs one command, retrying over new connections until it succeeds (see above). Throws
  // RedisError for an error reply, RedisStopped when `stop` becomes true while it waits (for the
  // server, or for a reply). A reply not whole within kCommandSeconds, or over `max_reply_bytes`
  // (a server that trickles its answer, or announces gigabytes), loses the connection: retried.
  RedisReply command(const std::vector<std::string>& argv, const std::atomic<bool>* stop = nullptr,
                     std::size_t max_reply_bytes = kMaxReplyBytes);
  // Runs several commands in one round trip (a pipeline); the same retries, for the whole batch.
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands,
                                   const std::atomic<bool>* stop = nullptr,
                                   std::size_t max_reply_bytes = kMaxReplyBytes);
  // One attempt: throws RedisError when the server cannot be reached or answers with an error.
  RedisReply command_once(const std::vector<std::string>& argv);

  // Seconds spent without a connection so far (for reports).
  double seconds_disconnected() const { return seconds_disconnected_; }

 private:
  void connect(const std::atomic<bool>* stop);  // throws RedisError (RedisStopped on a stop)
  void drop();
  bool attempt(const std::vector<std::vector<std::string>>& commands,
               std::vector<RedisReply>& replies, std::string& error,
               const std::atomic<bool>* stop, std::size_t max_reply_bytes);

  RedisUrl url_;
  util::LogLine log_;
  redisContext* context_ = nullptr;
  ReplyObjects reply_objects_;  // what the context's reader counts of the reply it reads
  std::vector<char> read_buffer_;  // what a recv gives, before the reader takes it
  bool lost_ = false;  // a loss was logged and not yet its end
  std::chrono::steady_clock::time_point lost_at_;
  double seconds_disconnected_ = 0;
};

}  // namespace oppidum::store
