#include "store/redis_client.h"

// hiredis's string buffer, before hiredis.h takes it in: its header has no C++ guard.
extern "C" {
#include <sds.h>
}
#include <hiredis.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <thread>
#include <vector>

#include "games/quote.h"
#include "util/text.h"

namespace oppidum::store {
namespace {

using Clock = std::chrono::steady_clock;

constexpr timeval kConnectTimeout{5, 0};
constexpr std::chrono::seconds kCommandTimeout{RedisClient::kCommandSeconds};
constexpr std::chrono::seconds kStopGrace{1};  // how long a reply is awaited after a stop
constexpr std::chrono::seconds kSilentNotice{5};  // a silence the log tells of before the timeout
// How long a server that refuses writes as a replica is waited for before it is an error.
constexpr std::chrono::seconds kReadOnlyWait{300};

// A replica's refusal of a write (a failover under way, or a node pointed at a replica): READONLY
// or MASTERDOWN, also inside a script's error (Redis 6 and 7 word it differently).
bool is_read_only_error(const std::string& message) {
  return message.rfind("READONLY", 0) == 0 || message.rfind("MASTERDOWN", 0) == 0 ||
         message.find("-READONLY") != std::string::npos ||
         message.find("READONLY You can't write") != std::string::npos;
}

RedisReply convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

// The objects one reply may make (strings, numbers, nils and arrays, each counted; an array's
// announced length counts before its slots are allocated). hiredis bounds neither: a reply within
// its byte cap can still be 16 million four-byte items (":1\r\n"), each an object of about 50 bytes
// and a slot: more than a gigabyte for 64 MiB. The largest reply oppidum expects is a few thousand
// items.
constexpr std::size_t kMaxReplyObjects = std::size_t{1} << 20;

// A reply's objects are counted against kMaxReplyObjects as hiredis's reader makes them (in the
// reader's privdata, which it hands to every task); the objects themselves are hiredis's own. A
// refused object is a null, which the reader reports as out of memory; read_reply says what it was.
const redisReplyObjectFunctions& hiredis_objects() {
  static const redisReplyObjectFunctions functions = [] {
    redisReader* reader = redisReaderCreate();
    if (reader == nullptr) throw std::bad_alloc();
    const redisReplyObjectFunctions copy = *reader->fn;
    redisReaderFree(reader);
    return copy;
  }();
  return functions;
}

bool take_objects(const redisReadTask* task, std::size_t count) {
  auto* objects = static_cast<ReplyObjects*>(task->privdata);
  if (objects == nullptr) return true;
  if (count > kMaxReplyObjects - std::min(objects->made, kMaxReplyObjects)) {
    objects->refused = true;
    return false;
  }
  objects->made += count;
  return true;
}

redisReplyObjectFunctions counted_objects() {
  redisReplyObjectFunctions f{};
  f.createString = [](const redisReadTask* task, char* str, size_t len) -> void* {
    return take_objects(task, 1) ? hiredis_objects().createString(task, str, len) : nullptr;
  };
  f.createArray = [](const redisReadTask* task, int elements) -> void* {
    const std::size_t slots = elements > 0 ? static_cast<std::size_t>(elements) : 0;
    return take_objects(task, 1 + slots) ? hiredis_objects().createArray(task, elements) : nullptr;
  };
  f.createInteger = [](const redisReadTask* task, long long value) -> void* {
    return take_objects(task, 1) ? hiredis_objects().createInteger(task, value) : nullptr;
  };
  f.createNil = [](const redisReadTask* task) -> void* {
    return take_objects(task, 1) ? hiredis_objects().createNil(task) : nullptr;
  };
  f.freeObject = [](void* object) { hiredis_objects().freeObject(object); };
  return f;
}

// Appends one command to the context's output buffer.
void append(redisContext* c, const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  redisAppendCommandArgv(c, static_cast<int>(args.size()), args.data(), lengths.data());
}

// A failed command as its errors name it: the command and the keys it acts on, so that an error
// reply about a key (WRONGTYPE) says which key. Commands that may carry a password (AUTH, ...)
// or take no key show their name alone.
std::string describe(const std::vector<std::string>& argv) {
  if (argv.empty()) return "(no command)";
  std::string name;
  for (char c : argv[0]) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::size_t first = 1, count = argv.size() > 1 ? 1 : 0;
  if (name == "EVAL" || name == "EVALSHA" || name == "EVAL_RO" || name == "EVALSHA_RO" ||
      name == "FCALL" || name == "FCALL_RO") {
    first = 3;
    count = argv.size() > 2 ? std::strtoul(argv[2].c_str(), nullptr, 10) : 0;
  } else if (name == "XREAD" || name == "XREADGROUP") {
    count = 0;
    for (std::size_t i = 1; i < argv.size(); ++i)
      if (strcasecmp(argv[i].c_str(), "STREAMS") == 0) {
        first = i + 1;
        count = (argv.size() - first) / 2;
        break;
      }
  } else if (name == "XINFO" || name == "OBJECT") {
    first = 2;
  } else if (name == "AUTH" || name == "HELLO" || name == "ACL" || name == "CONFIG" ||
             name == "MIGRATE" || name == "CLIENT" || name == "PING" || name == "ECHO" ||
             name == "SELECT" || name == "INFO" || name == "SCRIPT" || name == "FUNCTION") {
    count = 0;
  }
  std::string out = name;
  for (std::size_t i = first; i < argv.size() && i < first + std::min<std::size_t>(count, 8); ++i)
    out += " " + quote_input(argv[i], 200);
  return out;
}

// The time a transfer may take: kCommandTimeout, and a second more for every kMinRate bytes that
// moved, so a large network crosses a slow link while a server that trickles (a byte a second) is
// cut at kCommandTimeout.
constexpr std::size_t kMinRate = 64 * 1024;

// One command's (or one pipeline's) exchange: when it began, the bytes that moved both ways, and
// when a stop was first seen.
struct Transfer {
  Clock::time_point start = Clock::now();
  std::size_t moved = 0;
  std::optional<Clock::time_point> stop_seen;
  // Called once when the server has been silent for kSilentNotice in one wait (empty: never): a
  // server that takes a connection and never answers was waited for 30 s without a word.
  std::function<void()> on_silent;
  Clock::time_point deadline() const {
    return start + kCommandTimeout + std::chrono::seconds(moved / kMinRate);
  }
};

// Waits until the socket is ready for `events`, looking at `stop` every 50 ms: true when ready;
// false with `error` set at the deadline or on a poll error; RedisStopped a second after a stop
// is first seen (a command on its way could have been applied: a game pushed, and not counted as
// pushed, if it were given up at once).
bool wait_socket(int fd, short events, Transfer& transfer, const std::atomic<bool>* stop,
                 std::string& error) {
  const Clock::time_point deadline = transfer.deadline();
  const Clock::time_point waiting_since = Clock::now();
  for (;;) {
    const auto now = Clock::now();
    if (transfer.on_silent && now - waiting_since >= kSilentNotice) {
      transfer.on_silent();
      transfer.on_silent = nullptr;
    }
    if (stop != nullptr && stop->load()) {
      if (!transfer.stop_seen) transfer.stop_seen = now;
      if (now - *transfer.stop_seen >= kStopGrace) throw RedisStopped();
    }
    if (now >= deadline) {
      error = std::string(events == POLLIN ? "no whole reply" : "the command not taken") +
              " within " + std::to_string(kCommandTimeout.count()) + " s (and a second a " +
              std::to_string(kMinRate >> 10) + " KiB)";
      return false;
    }
    pollfd p{fd, events, 0};
    const auto slice = std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(50));
    const int ready = ::poll(
        &p, 1,
        static_cast<int>(std::max<long long>(
            1, std::chrono::ceil<std::chrono::milliseconds>(slice).count())));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) {
      error = std::string("poll: ") + std::strerror(errno);
      return false;
    }
  }
}

// The log's line for a server silent for kSilentNotice while `what` waits for its answer.
void tell_silence(const util::LogLine& log, const RedisUrl& url, const std::string& what) {
  log(url.to_string() + " has not answered " + what + " for " +
      std::to_string(kSilentNotice.count()) + " s; waiting up to " +
      std::to_string(kCommandTimeout.count()) + " s");
}

// Sends the commands appended to the context, and reads one reply, within the transfer's time
// (the whole batch's), a reply within `max_bytes`, looking at `stop` all the while (hiredis's own
// blocking calls wait 30 s per byte and bound no reply's size: a server that trickled its answer
// held a node, Ctrl-C included, for as long as it liked, and one that announced a bulk of 2^62
// bytes took memory until the node was killed). False with `error` set when the connection fails,
// the time is up or the reply is too large.
bool send_commands(redisContext* c, Transfer& transfer, const std::atomic<bool>* stop,
                   std::string& error) {
  const std::size_t size = sdslen(c->obuf);
  for (std::size_t sent = 0; sent < size;) {
    if (!wait_socket(c->fd, POLLOUT, transfer, stop, error)) return false;
    const ssize_t n = ::send(c->fd, c->obuf + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) {
      error = std::strerror(errno);
      return false;
    }
    sent += static_cast<std::size_t>(n);
    transfer.moved += static_cast<std::size_t>(n);
  }
  // All sent: a fresh buffer (as hiredis does), so a large command's memory goes with it.
  sdsfree(c->obuf);
  c->obuf = sdsempty();
  return true;
}

// `buffer` takes what a recv gives: a megabyte, for the reader looks through a line it has not
// seen the end of again at each feed (a status line of 60 MiB fed 16 KiB at a time took a core
// for a minute before the reply limit ended it).
bool read_reply(redisContext* c, void** raw, std::size_t max_bytes, Transfer& transfer,
                const std::atomic<bool>* stop, std::string& error, std::vector<char>& buffer) {
  std::size_t read = 0;
  // The reader makes one reply's objects only while it is asked for that reply.
  auto* objects = static_cast<ReplyObjects*>(c->reader->privdata);
  *objects = ReplyObjects{};
  for (;;) {
    if (redisGetReplyFromReader(c, raw) != REDIS_OK) {
      error = objects->refused ? "a reply of more than " + std::to_string(kMaxReplyObjects) +
                                     " items, more than any it expects"
              : c->errstr[0] != '\0' ? c->errstr
                                     : "a malformed reply";
      return false;
    }
    if (*raw != nullptr) return true;
    if (!wait_socket(c->fd, POLLIN, transfer, stop, error)) return false;
    buffer.resize(std::size_t{1} << 20);
    const ssize_t n = ::recv(c->fd, buffer.data(), buffer.size(), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      error = n == 0 ? "Server closed the connection" : std::strerror(errno);
      return false;
    }
    read += static_cast<std::size_t>(n);
    transfer.moved += static_cast<std::size_t>(n);
    if (read > max_bytes) {
      error = "a reply over " + std::to_string(max_bytes >> 20) + " MiB, more than any it expects";
      return false;
    }
    if (redisReaderFeed(c->reader, buffer.data(), static_cast<std::size_t>(n)) != REDIS_OK) {
      error = c->reader->errstr[0] != '\0' ? c->reader->errstr : "a malformed reply";
      return false;
    }
  }
}

}  // namespace

RedisClient::RedisClient(RedisUrl url, util::LogLine log) : url_(std::move(url)), log_(std::move(log)) {
  if (!log_) log_ = [](const std::string& line) { std::cerr << line << std::endl; };
}

RedisClient::~RedisClient() { drop(); }

void RedisClient::drop() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

void RedisClient::connect(const std::atomic<bool>* stop) {
  drop();
  std::string host = url_.host;
  context_ = redisConnectWithTimeout(host.c_str(), url_.port, kConnectTimeout);
  if (context_ == nullptr) throw RedisError("cannot allocate a redis context");
  if (context_->err != 0) {
    const std::string why = context_->errstr;
    drop();
    throw RedisError("cannot connect to " + url_.to_string() + ": " + why);
  }
  static redisReplyObjectFunctions counted = counted_objects();
  context_->reader->fn = &counted;
  context_->reader->privdata = &reply_objects_;
  if (url_.password.empty()) return;
  std::vector<std::string> auth = {"AUTH"};
  if (!url_.user.empty()) auth.push_back(url_.user);
  auth.push_back(url_.password);
  append(context_, auth);
  void* raw = nullptr;
  std::string lost;
  Transfer transfer;
  if (!lost_) transfer.on_silent = [&] { tell_silence(log_, url_, "AUTH"); };
  bool answered = false;
  try {  // (a stop while the server is silent: the credentials' exchange is waited for no longer)
    answered = send_commands(context_, transfer, stop, lost) &&
               read_reply(context_, &raw, 1 << 20, transfer, stop, lost, read_buffer_);
  } catch (const RedisStopped&) {
    drop();
    throw;
  }
  if (!answered) {
    drop();
    throw RedisError("cannot connect to " + url_.to_string() + ": " + lost);
  }
  const auto* reply = static_cast<redisReply*>(raw);
  const bool refused = reply->type == REDIS_REPLY_ERROR;
  // The server's words, quoted and cut: they reach the terminal and the run's log.
  const std::string why = refused ? quote_input(std::string(reply->str, reply->len), 300) : "";
  freeReplyObject(raw);
  if (refused) {
    drop();
    // Never retried: a wrong password does not get right by waiting.
    throw RedisError(url_.to_string() + " refused the credentials: " + why);
  }
}

// One try of the whole batch; false with `error` set when the connection failed (retry), throws
// RedisError for an error reply.
bool RedisClient::attempt(const std::vector<std::vector<std::string>>& commands,
                          std::vector<RedisReply>& replies, std::string& error,
                          const std::atomic<bool>* stop, std::size_t max_reply_bytes) {
  if (context_ == nullptr) {
    try {
      connect(stop);
    } catch (const RedisStopped&) {
      throw;
    } catch (const RedisError& e) {
      const std::string what = e.what();
      if (what.find("refused the credentials") != std::string::npos) throw;
      error = what;
      return false;
    }
  }
  for (const auto& argv : commands) append(context_, argv);
  replies.clear();
  std::string first_error;
  std::size_t failed = 0;  // the command that gave first_error
  Transfer transfer;  // the whole batch's: its time, and its stop's grace
  bool told_silent = false;  // its answer is told of too (the silence was, and nothing after it)
  if (!lost_)  // (once lost, the retries are told of when they succeed)
    transfer.on_silent = [&] {
      told_silent = true;
      tell_silence(log_, url_,
                   describe(commands.front()) +
                       (commands.size() > 1
                            ? " (and " + std::to_string(commands.size() - 1) + " more)"
                            : ""));
    };
  // A stop while commands go or replies come leaves the connection out of step: dropped.
  const auto exchange = [&](const auto& step) {
    try {
      if (step()) return true;
    } catch (const RedisStopped&) {
      drop();
      throw;
    }
    drop();
    return false;
  };
  if (!exchange([&] { return send_commands(context_, transfer, stop, error); })) return false;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (!exchange([&] {
          return read_reply(context_, &raw, max_reply_bytes, transfer, stop, error,
                            read_buffer_);
        }))
      return false;
    const auto* reply = static_cast<redisReply*>(raw);
    if (reply->type == REDIS_REPLY_ERROR) {
      // The server's words, quoted and cut: they reach the terminal and the run's log (an error
      // of megabytes carried a forged log line and terminal escapes there).
      std::string message = quote_input(std::string(reply->str, reply->len), 300);
      // Replies that waiting mends: a restarted server reading its AOF, a server busy with a
      // script, a stream at its last id (the trainer deletes it; intake.cpp), a replica that
      // takes no writes or a master it lost (a failover under way: READONLY, MASTERDOWN; they
      // stopped the trainer and every worker for good, though the server took writes again
      // seconds later). A script's write refused by a replica says READONLY inside its error.
      if (message.rfind("LOADING", 0) == 0 || message.rfind("BUSY ", 0) == 0 ||
          message.find("exhausted the last possible ID") != std::string::npos ||
          is_read_only_error(message)) {
        freeReplyObject(raw);
        error = message;
        drop();
        return false;
      }
      // A server that asks for a password this client does not give (its words for a large
      // command are "Protocol error: unauthenticated ...", which name no password).
      if (message.rfind("NOAUTH", 0) == 0 || message.find("unauthenticated") != std::string::npos)
        message += " (the server asks for a password: give it in the URL, redis://:PASSWORD@HOST, "
                   "or in OPPIDUM_REDIS_PASSWORD)";
      if (first_error.empty()) {
        first_error = message;
        failed = i;
      }
      replies.emplace_back();
    } else {
      replies.push_back(convert(reply));
    }
    freeReplyObject(raw);
  }
  if (told_silent) {
    const double seconds = std::chrono::duration<double>(Clock::now() - transfer.start).count();
    log_(url_.to_string() + " answered after " + util::fixed(seconds, 1) + " s");
  }
  if (!first_error.empty())
    throw RedisError(url_.to_string() + ": " + describe(commands[failed]) + ": " + first_error);
  return true;
}

std::vector<RedisReply> RedisClient::pipeline(const std::vector<std::vector<std::string>>& commands,
                                              const std::atomic<bool>* stop,
                                              std::size_t max_reply_bytes) {
  std::vector<RedisReply> replies;
  auto backoff = std::chrono::milliseconds(100);
  // Since when the server has refused writes as a replica (READONLY, MASTERDOWN): a failover ends
  // within minutes, a node pointed at a replica by mistake never.
  Clock::time_point read_only_since = Clock::time_point::max();
  while (true) {
    std::string error;
    if (attempt(commands, replies, error, stop, max_reply_bytes)) {
      if (lost_) {
        const double seconds = std::chrono::duration<double>(Clock::now() - lost_at_).count();
        seconds_disconnected_ += seconds;
        log_("reconnected to " + url_.to_string() + " after " + util::fixed(seconds, 1) + " s");
        lost_ = false;
      }
      return replies;
    }
    if (!lost_) {
      lost_ = true;
      lost_at_ = Clock::now();
      log_("lost " + url_.to_string() + ": " + error + "; retrying");
    }
    if (is_read_only_error(error)) {
      if (read_only_since == Clock::time_point::max()) read_only_since = Clock::now();
      if (Clock::now() - read_only_since >= kReadOnlyWait)
        throw RedisError(url_.to_string() + ": " + describe(commands.front()) + ": " + error +
                         " for " + std::to_string(kReadOnlyWait.count()) +
                         " s: the server is a replica that takes no writes; give the node the "
                         "master's address");
    } else {
      read_only_since = Clock::time_point::max();
    }
    const auto until = Clock::now() + backoff;
    while (Clock::now() < until) {
      if (stop != nullptr && stop->load()) throw RedisStopped();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(5));
  }
}

RedisReply RedisClient::command(const std::vector<std::string>& argv, const std::atomic<bool>* stop,
                                std::size_t max_reply_bytes) {
  return pipeline({argv}, stop, max_reply_bytes).front();
}

RedisReply RedisClient::command_once(const std::vector<std::string>& argv) {
  std::vector<RedisReply> replies;
  std::string error;
  if (!attempt({argv}, replies, error, nullptr, kMaxReplyBytes))
    throw RedisError(url_.to_string() + ": " + error);
  return replies.front();
}

}  // namespace oppidum::store
