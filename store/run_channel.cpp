#include "store/run_channel.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>

#include "games/quote.h"
#include "model/checkpoint.h"
#include "util/file_io.h"
#include "util/text.h"

namespace oppidum::store {
namespace {

// A whole number from `lo` to `hi` read from the server; `what` names the key and field. Anything
// else (not a number, out of range: a counter that would overflow) is a RedisError saying so and
// what to do, never wrapped.
std::int64_t to_int(const std::string& text, const std::string& what, std::int64_t lo,
                    std::int64_t hi,
                    const std::string& advice =
                        "delete it, and the run's trainer writes it again") {
  std::int64_t v = 0;
  bool out_of_range = false;
  if (!util::parse_decimal(text, v, out_of_range) || v < lo || v > hi)
    throw RedisError("redis: " + what + " is not a whole number from " + std::to_string(lo) +
                     " to " + std::to_string(hi) + " (\"" + quote_input(text, 40) + "\")" +
                     (advice.empty() ? "" : "; " + advice));
  return v;
}

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// The fields of a flat [field, value, field, value, ...] array reply.
std::map<std::string, std::string> fields_of(const RedisReply& r) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2)
    out[r.elements[i].str] = r.elements[i + 1].str;
  return out;
}

std::pair<std::uint64_t, std::uint64_t> split_id(const std::string& id) {
  util::StreamId parsed;
  bool out_of_range = false;
  if (!util::parse_stream_id(id, parsed, out_of_range))
    throw std::invalid_argument("malformed stream id \"" + quote_input(id, 40) + "\"" +
                                (out_of_range ? " (a part over 2^64)" : ""));
  return {parsed.ms, parsed.sequence};
}

// The claim of RunChannel::claim, atomic on the server. KEYS: owner, trainer, sessions, config,
// network; ARGV: run id, lease, a lease that may be replaced ("": none), lease milliseconds,
// sessions floor, the run's config ("": any), its network's signature ("": any; what
// RunChannel::publish_network returns). A key that holds what no trainer or worker wrote (a wrong
// type, a sessions counter that is no count) is answered with {'bad', key, what}, before
// anything is written. Returns {'ok', claimed, sessions, config published, network step, network
// published}.
constexpr const char* kClaimScript = R"lua(
local function get(i)
  local v = redis.pcall('GET', KEYS[i])
  if type(v) == 'table' and v.err then return nil, v.err end
  return v
end
local owner, err = get(1)
if err then return {'bad', KEYS[1], err} end
-- Another run's id, or what is no id: its start, never a value of any length (the reply was read
-- whole, and one of 70 MiB was over the reply limit: a lost server retried without end).
if owner and owner ~= ARGV[1] then return {'run', string.sub(owner, 1, 129)} end
local lease
lease, err = get(2)
if err then return {'bad', KEYS[2], err} end
if lease and lease ~= ARGV[2] and lease ~= ARGV[3] then
  return {'trainer', string.sub(lease, 1, 512), tostring(redis.call('PTTL', KEYS[2]))}
end
local held
held, err = get(3)
if err then return {'bad', KEYS[3], err} end
if held and not (#held <= 18 and string.match(held, '^%d+$')) then
  return {'bad', KEYS[3], 'holds ' .. #held .. ' bytes that are not a count of sessions'}
end
local step = redis.pcall('HGET', KEYS[5], 'step')
if type(step) == 'table' and step.err then return {'bad', KEYS[5], step.err} end
-- The config as the run wrote it (ARGV[6]; '' for: any string): of another type or length, or
-- missing, it is not (the trainer's SET replaces it), and a long hostile value is never copied.
local size = redis.pcall('STRLEN', KEYS[4])
local current = type(size) == 'number' and size > 0
if current and ARGV[6] ~= '' then
  current = size == #ARGV[6] and redis.call('GET', KEYS[4]) == ARGV[6]
end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4])
-- Kept as text: tostring of a Lua number writes 1e+14 for 100000000000000.
local sessions = held or '0'
if tonumber(sessions) < tonumber(ARGV[5]) then
  sessions = ARGV[5]
  redis.call('SET', KEYS[3], ARGV[5])
end
local claimed = '0'
if not owner then
  redis.call('SET', KEYS[1], ARGV[1])
  claimed = '1'
end
-- The network as the run published it (ARGV[7], its signature; '' for: any).
local network = '1'
if ARGV[7] ~= '' then
  local f = redis.call('HMGET', KEYS[5], 'crc32', 'step', 'generation', 'game', 'encoding_version')
  local parts = {}
  for i = 1, 5 do parts[i] = f[i] or '' end
  parts[6] = tostring(redis.call('HSTRLEN', KEYS[5], 'checkpoint'))
  if table.concat(parts, '|') ~= ARGV[7] then network = '0' end
end
return {'ok', claimed, sessions, current and '1' or '0', step or '', network}
)lua";

// The network's fields for RunChannel::network. KEYS: network; ARGV: the checkpoint's most bytes,
// any other field's most bytes, then the fields. Returns {1, [values, HMGET's]}, or {0, bytes,
// field} for the first field over its most: the server sends no more than the reader takes,
// whatever the hash holds.
constexpr const char* kNetworkScript = R"lua(
local checkpoint, other = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 3, #ARGV do
  local size = redis.call('HSTRLEN', KEYS[1], ARGV[i])
  if size > (ARGV[i] == 'checkpoint' and checkpoint or other) then return {0, size, ARGV[i]} end
end
return {1, redis.call('HMGET', KEYS[1], unpack(ARGV, 3))}
)lua";

// The most bytes of a network field but its checkpoint (a number, or a game's name).
constexpr std::size_t kMaxNetworkFieldBytes = 4096;

// A batch of games for RunChannel::push_games, added once. KEYS: games, the pusher's key
// (pushed:ID); ARGV: the batch's number, the stream's length cap, the number F of fields of an
// entry, then each game's F names and values in turn. A batch the pusher's key says was added (a
// retry whose first try's reply was lost) adds nothing; returns the entries added. The key
// expires a day after the pusher's last batch.
constexpr const char* kPushScript = R"lua(
local batch = tonumber(ARGV[1])
-- Only this script writes the key: a value there that is not a count it wrote (a hostile or
-- mistaken write: another type, 'inf', '1e300') counts nothing, rather than stopping the pushes.
local done = 0
if redis.call('TYPE', KEYS[2]).ok == 'string' then
  local text = redis.call('GET', KEYS[2])
  if string.match(text, '^%d+$') and #text <= 15 then done = tonumber(text) end
end
if batch <= done then return 0 end
local each, added = 2 * tonumber(ARGV[3]), 0
for i = 4, #ARGV, each do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, i, i + each - 1))
  added = added + 1
end
redis.call('SET', KEYS[2], ARGV[1], 'EX', 86400)
return added
)lua";

// The heartbeats of RunChannel::nodes. KEYS: nodes; ARGV: the longest name, the most entries.
// Returns {entries left out, name, value, name, value, ...}: names over the limit or with a
// control character, values that are not three counts (0 or more, at most 15 digits: a hostile
// beat's -10^18 games went into metrics.csv), and entries past the most (or past a
// scan of 16 times as many fields) stay on the server, only counted.
constexpr const char* kNodesScript = R"lua(
local longest, most = tonumber(ARGV[1]), tonumber(ARGV[2])
local out, kept, seen, cursor = {0}, 0, 0, '0'
repeat
  local page = redis.call('HSCAN', KEYS[1], cursor, 'COUNT', 256)
  cursor = page[1]
  for i = 1, #page[2], 2 do
    local name, value = page[2][i], page[2][i + 1]
    seen = seen + 1
    local beats, games, positions = string.match(value, '^(%d+) (%d+) (%d+)$')
    if kept < most and #name <= longest and not string.find(name, '%c') and beats and
        #beats <= 15 and #games <= 15 and #positions <= 15 then
      out[#out + 1] = name
      out[#out + 1] = value
      kept = kept + 1
    end
  end
until cursor == '0' or kept >= most or seen >= 16 * most
out[1] = redis.call('HLEN', KEYS[1]) - kept
return out
)lua";

// The stream's entries for RunChannel::read_games. KEYS: games; ARGV: the id they follow, the most
// entries, the most bytes one entry's fields may hold, the most bytes of fields in all. Returns
// {more, [[id, [field, value, ...]], ...]}: the entries as XRANGE gives them, but an entry over its
// limit as [id, [], 'bytes', its bytes] and one of more than ARGV[6] fields as [id, [], 'fields',
// its fields] (what no entry of XRANGE's has, whatever its fields hold); they stop once their fields
// would pass the total (one is always returned), and `more` is 1 when that cut them short. Read
// one at a time, so the server holds no more than that of them at once either. ARGV[5] is
// kLastStreamId: nothing follows it (and '(' before it is no id XRANGE takes).
constexpr const char* kReadScript = R"lua(
local count, entry_limit, reply_limit = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local last, field_limit = ARGV[5], tonumber(ARGV[6])
if ARGV[1] == last then return {0, {}} end
local out, total, start, more = {}, 0, '(' .. ARGV[1], 0
while #out < count do
  local page = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', 1)
  if #page == 0 then break end
  local e = page[1]
  local size = 0
  for _, v in ipairs(e[2]) do size = size + #v end
  if size > entry_limit then
    e = {e[1], {}, 'bytes', tostring(size)}
    size = 0
  elseif #e[2] > 2 * field_limit then
    e = {e[1], {}, 'fields', tostring(#e[2] / 2)}
    size = 0
  end
  if #out > 0 and total + size > reply_limit then
    more = 1
    break
  end
  out[#out + 1] = e
  total = total + size
  if e[1] == last then break end
  start = '(' .. e[1]
end
return {more, out}
)lua";

// XINFO STREAM's counters of KEYS[1]: length, entries-added, last-generated-id (name, value, ...).
constexpr const char* kStreamInfoScript = R"lua(
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local out = {}
for i = 1, #info - 1, 2 do
  local name = info[i]
  if name == 'length' or name == 'entries-added' or name == 'last-generated-id' then
    out[#out + 1] = name
    out[#out + 1] = info[i + 1]
  end
end
return out
)lua";

// Deletes the stream KEYS[1] when its last id is ARGV[1] (the largest); 1 when it did. A stream
// made again since (the old one deleted by hand, a server that lost its data) holds games
// nobody read: it stays.
constexpr const char* kDeleteAtLastIdScript = R"lua(
if redis.call('TYPE', KEYS[1]).ok ~= 'stream' then return 0 end  -- 'none' when missing
local info = redis.call('XINFO', 'STREAM', KEYS[1])
for i = 1, #info - 1, 2 do
  if info[i] == 'last-generated-id' and info[i + 1] == ARGV[1] then
    redis.call('DEL', KEYS[1])
    return 1
  end
end
return 0
)lua";

// What one entry of a game may hold: its record and a few short fields.
constexpr std::size_t kMaxEntryBytes = selfplay::kMaxRecordBytes + (64 << 10);
// What one entry may have of fields: a game's are six.
constexpr int kMaxEntryFields = 32;
// The fields of one read of the stream, in all (past the first entry).
constexpr std::size_t kMaxReadBytes = std::size_t{32} << 20;

// A new run's keys, for RunChannel::reserve. KEYS: owner, trainer, config, network, games; ARGV:
// the new run's id. Returns the keys that exist; when none does, the owner is set first.
constexpr const char* kReserveScript = R"lua(
local found = {}
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then found[#found + 1] = KEYS[i] end
end
if #found == 0 then redis.call('SET', KEYS[1], ARGV[1]) end
return found
)lua";

constexpr const char* kReleaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
)lua";

// How to free a run's keys for a new run, for messages.
std::string how_to_free(const RedisUrl& url) {
  return "give the new run a key of its own (--store redis://" + url.host + ":" +
         std::to_string(url.port) + "/ANOTHER_NAME), or, when the old run is done with, delete its "
         "keys (redis-cli -h " + url.host + " -p " + std::to_string(url.port) +
         " --scan --pattern 'oppidum:" + url.run + ":*' | xargs redis-cli -h " + url.host + " -p " +
         std::to_string(url.port) + " del)";
}

std::string this_host() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  return host;
}

// Whether `lease` (lease_value's "run ID on HOST pid PID token T") is run `run_id`'s, from this
// host, held by a process that is gone.
bool lease_of_gone_process(const std::string& lease, const std::string& run_id) {
  const std::string prefix = "run " + run_id + " on " + this_host() + " pid ";
  if (lease.rfind(prefix, 0) != 0) return false;
  const long pid = std::strtol(lease.c_str() + prefix.size(), nullptr, 10);
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// A bounded, printable stand-in for a name that failed node_name_problem, for messages.
std::string stand_in(const std::string& name) {
  std::string shown;
  for (unsigned char c : name.substr(0, 24)) shown += c < 0x20 || c == 0x7f ? '?' : char(c);
  return "\"" + shown + "...\" (" + std::to_string(name.size()) + " bytes)";
}

}  // namespace

std::string node_name_problem(const std::string& name) {
  if (name.size() > kMaxNodeNameBytes)
    return std::to_string(name.size()) + " bytes, over the limit of " +
           std::to_string(kMaxNodeNameBytes);
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return "it holds a control character";
  return "";
}

std::string random_id() {
  std::random_device device;
  std::string id;
  char part[16];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(device()));
    id += part;
  }
  return id;
}

std::string lease_value(const std::string& run_id) {
  return "run " + run_id + " on " + this_host() + " pid " + std::to_string(getpid()) + " token " +
         random_id();
}

std::uint64_t node_seed(std::uint64_t run_seed, const std::string& node) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : node) h = (h ^ c) * 0x100000001b3ULL;
  return run_seed ^ h;
}

int compare_stream_ids(const std::string& a, const std::string& b) {
  const auto x = split_id(a), y = split_id(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

std::uint64_t stream_id_ms(const std::string& id) { return split_id(id).first; }

RunChannel::RunChannel(RedisUrl url, util::LogLine log, const std::atomic<bool>* stop)
    : client_(std::move(url), log), log_(std::move(log)), stop_(stop) {
  if (!log_) log_ = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
}

void RunChannel::telemetry_error(const RedisError& e) {
  // Each distinct error once (a bounded few): a key of a wrong type fails every few seconds.
  if (telemetry_errors_logged_.size() >= 8 || !telemetry_errors_logged_.insert(e.what()).second)
    return;
  log_(std::string(e.what()) + "; the nodes' heartbeats are telemetry only: going on without them");
}

void RunChannel::publish_config(const std::string& yaml) {
  client_.command({"SET", url().key("config"), yaml}, stop_);
}

std::optional<std::string> RunChannel::config(std::size_t max_bytes) {
  // GETRANGE bounds what is read even if the value grows between the two commands.
  const auto replies = client_.pipeline(
      {{"EXISTS", url().key("config")},
       {"GETRANGE", url().key("config"), "0", std::to_string(max_bytes)}},
      stop_);
  if (replies[0].integer == 0) return std::nullopt;
  if (replies[1].str.size() > max_bytes)
    throw RedisError(url().key("config") + " is longer than " + std::to_string(max_bytes) +
                     " bytes, the limit of a config; publish the run's config again");
  return replies[1].str;
}

NetworkPublication RunChannel::publish_network(const std::string& checkpoint, std::int64_t step,
                                               int generation, const std::string& game,
                                               int encoding_version) {
  const std::int64_t version = network_version() + 1;  // network_version() < kMaxInt64
  const std::string crc = std::to_string(util::crc32(checkpoint.data(), checkpoint.size()));
  client_.command({"HSET", url().key("network"), "checkpoint", checkpoint, "crc32", crc, "step",
                   std::to_string(step), "generation", std::to_string(generation), "game", game,
                   "encoding_version", std::to_string(encoding_version), "version",
                   std::to_string(version)},
                  stop_);
  // As the claim script builds it from the key: its HMGET's fields, then the checkpoint's size.
  return {version, crc + "|" + std::to_string(step) + "|" + std::to_string(generation) + "|" +
                       game + "|" + std::to_string(encoding_version) + "|" +
                       std::to_string(checkpoint.size())};
}

std::int64_t RunChannel::network_version() {
  const RedisReply r = client_.command({"HGET", url().key("network"), "version"}, stop_);
  // Below the top by two: the next version (+1) is one network() still takes.
  return r.is_nil() ? 0
                    : to_int(r.str, url().key("network") + " field version", 1, kMaxInt64 - 2);
}

std::optional<PublishedNetwork> RunChannel::network(std::uint64_t max_checkpoint_bytes) {
  // Its fields by name (HMGET): the hash may hold others, which are never read.
  static const std::vector<std::string> kFields = {
      "checkpoint", "crc32", "step", "generation", "game", "encoding_version", "version"};
  max_checkpoint_bytes = std::min(max_checkpoint_bytes, model::kMaxCheckpointBytes);
  std::vector<std::string> command = {"EVAL", kNetworkScript, "1", url().key("network"),
                                      std::to_string(max_checkpoint_bytes),
                                      std::to_string(kMaxNetworkFieldBytes)};
  command.insert(command.end(), kFields.begin(), kFields.end());
  // The checkpoint is read only within the bound, the other fields within theirs (a reply over
  // its limit would be a connection lost, retried forever).
  RedisReply r = client_.command(
      command, stop_, max_checkpoint_bytes + kFields.size() * kMaxNetworkFieldBytes + (1 << 16));
  using Type = RedisReply::Type;
  const auto wrong_shape = [&] {
    return RedisError(url().to_string() + ": EVAL " + url().key("network") +
                      ": a reply of the wrong shape");
  };
  if (r.type != Type::kArray || r.elements.size() < 2 || r.elements[0].type != Type::kInteger)
    throw wrong_shape();
  if (r.elements[0].integer == 0) {
    if (r.elements.size() != 3 || r.elements[2].str != "checkpoint")
      throw RedisError(url().key("network") + " holds a field " +
                       quote_input(r.elements.size() == 3 ? r.elements[2].str : "", 40) + " of " +
                       std::to_string(r.elements[1].integer) + " bytes, more than any (" +
                       std::to_string(kMaxNetworkFieldBytes) + "); republish the network");
    throw RedisError(url().key("network") + " holds a checkpoint of " +
                     std::to_string(r.elements[1].integer) + " bytes, more than the run's network " +
                     "can have (" + std::to_string(max_checkpoint_bytes) + "); republish the " +
                     "network");
  }
  std::vector<RedisReply>& got = r.elements[1].elements;
  if (r.elements.size() != 2 || r.elements[1].type != Type::kArray ||
      got.size() != kFields.size())
    throw wrong_shape();
  if (std::all_of(got.begin(), got.end(), [](const RedisReply& e) { return e.is_nil(); }))
    return std::nullopt;
  std::map<std::string, std::string> f;
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    if (got[i].is_nil())
      throw RedisError(url().key("network") + " has no field " + kFields[i] +
                       "; republish the network");
    f[kFields[i]] = std::move(got[i].str);
  }
  PublishedNetwork n;
  n.checkpoint = std::move(f["checkpoint"]);
  const auto field = [&](const char* name, std::int64_t lo, std::int64_t hi) {
    return to_int(f[name], url().key("network") + " field " + name, lo, hi);
  };
  n.info.version = field("version", 1, kMaxInt64 - 1);
  n.info.step = field("step", 0, kMaxInt64);
  n.info.generation = static_cast<int>(field("generation", 0, kMaxInt));
  n.info.game = f["game"];
  n.info.encoding_version = static_cast<int>(field("encoding_version", 0, kMaxInt));
  n.info.crc32 = static_cast<std::uint32_t>(field("crc32", 0, 0xffffffffLL));
  if (util::crc32(n.checkpoint.data(), n.checkpoint.size()) != n.info.crc32)
    throw RedisError(url().key("network") + ": the checkpoint does not match its CRC-32");
  return n;
}

std::uint64_t RunChannel::new_session() {
  return static_cast<std::uint64_t>(client_.command({"INCR", url().key("sessions")}, stop_).integer);
}

void RunChannel::reserve(const std::string& run_id) {
  std::vector<std::string> command = {"EVAL", kReserveScript, "5"};
  for (const char* name : {"owner", "trainer", "config", "network", "games"})
    command.push_back(url().key(name));
  command.push_back(run_id);
  const RedisReply r = client_.command(command, stop_);
  std::string found;
  for (const RedisReply& key : r.elements) found += (found.empty() ? "" : ", ") + key.str;
  if (found.empty()) return;
  const std::string run = owner();
  throw StoreTakenError(url().to_string() + " is in use (" + found + ")" +
                        (run.empty() ? "" : ": it belongs to run " + run) +
                        "; a run owns its key, so a new run never trains on another's games: " +
                        how_to_free(url()));
}

void RunChannel::unreserve(const std::string& run_id) {
  client_.command({"EVAL", kReleaseScript, "1", url().key("owner"), run_id}, stop_);
}

std::string RunChannel::owner() {
  // Read no more of it than a run id can hold: the value reaches messages, logs and every game.
  const auto replies = client_.pipeline(
      {{"STRLEN", url().key("owner")},
       {"GETRANGE", url().key("owner"), "0", std::to_string(kMaxNodeNameBytes)}},
      stop_);
  std::string id = replies[1].str;
  if (replies[0].integer > static_cast<long long>(kMaxNodeNameBytes))
    id.resize(kMaxNodeNameBytes + 1);  // node_name_problem counts it as over the limit
  if (const std::string why = node_name_problem(id); !why.empty())
    throw RedisError(url().key("owner") + " holds no run id (" +
                     (replies[0].integer > static_cast<long long>(kMaxNodeNameBytes)
                          ? std::to_string(replies[0].integer) + " bytes"
                          : why) +
                     "); oppidum never writes that: delete the key (redis-cli DEL " +
                     url().key("owner") + ") and the run's trainer writes it again");
  return id;
}

Claim RunChannel::claim(const std::string& run_id, const std::string& lease,
                        std::int64_t sessions_floor, const std::string& config,
                        const std::string& network) {
  std::string replaceable;
  for (;;) {
    const RedisReply r = client_.command(
        {"EVAL", kClaimScript, "5", url().key("owner"), url().key("trainer"),
         url().key("sessions"), url().key("config"), url().key("network"), run_id, lease,
         replaceable, std::to_string(kLeaseSeconds * 1000), std::to_string(sessions_floor),
         config, network},
        stop_);
    const auto at = [&](std::size_t i) -> const std::string& {
      if (i >= r.elements.size())
        throw RedisError(url().to_string() + ": the claim script gave a short reply");
      return r.elements[i].str;
    };
    if (at(0) == "bad")
      throw RedisError(url().to_string() + ": " + at(1) + ": " + at(2) +
                       "; oppidum never writes that: delete the key (redis-cli DEL " + at(1) +
                       ") and the trainer writes it again");
    if (at(0) == "run")
      throw StoreTakenError(url().to_string() + " belongs to another run (run id " +
                            quote_input(at(1), 60) + "), not to this one (run id " + run_id +
                            "): a run owns its key and trains only on its own games; " +
                            how_to_free(url()));
    if (at(0) == "trainer") {
      if (at(1) != replaceable && lease_of_gone_process(at(1), run_id)) {
        replaceable = at(1);
        continue;
      }
      const std::int64_t ms = std::atoll(at(2).c_str());
      throw StoreTakenError("another trainer holds " + url().to_string() + " (" +
                            quote_input(at(1), 200) +
                            ", for " + std::to_string(ms < 0 ? 0 : (ms + 999) / 1000) +
                            " s more unless it renews it): a run has one trainer; stop that one "
                            "first (one killed on another machine lets go within " +
                            std::to_string(kLeaseSeconds) + " s)");
    }
    Claim c;
    c.claimed = at(1) == "1";
    c.sessions = to_int(at(2), url().key("sessions"), 0, kMaxInt64 - 1);
    c.config_published = at(3) == "1";
    c.network_step =
        at(4).empty() ? -1 : to_int(at(4), url().key("network") + " field step", 0, kMaxInt64);
    c.network_published = at(5) == "1";
    c.replaced = replaceable;
    return c;
  }
}

void RunChannel::release(const std::string& lease) {
  client_.command({"EVAL", kReleaseScript, "1", url().key("trainer"), lease}, stop_);
}

void RunChannel::push_games(const std::string& node, const std::string& run_id,
                            const std::vector<selfplay::GameRecord>& games,
                            std::int64_t max_length) {
  if (games.empty()) return;
  constexpr int kPushFields = 6;  // node, run, network, format, record, crc32
  // Each call its own number, also after a call that a stop ended (its batch may be on the
  // server: the next batch under its number would read as added). Retries send the same.
  const std::uint64_t batch = ++batches_pushed_;
  std::vector<std::string> command = {"EVAL", kPushScript, "2", url().key("games"),
                                      url().key("pushed:" + pusher_), std::to_string(batch),
                                      std::to_string(max_length), std::to_string(kPushFields)};
  const std::size_t head = command.size();
  for (const selfplay::GameRecord& g : games) {
    std::string record;
    try {
      record = selfplay::encode_record(g);
    } catch (const std::exception& e) {  // a game no chunk could hold: the trainer would drop it
      log_("dropped a game of " + std::to_string(g.moves.size()) + " moves: " + e.what());
      continue;
    }
    const std::string crc = std::to_string(util::crc32(record.data(), record.size()));
    command.insert(command.end(),
                   {"node", node, "run", run_id, "network", std::to_string(g.network_step),
                    "format", std::to_string(selfplay::kRecordFormatVersion), "record", record,
                    "crc32", crc});
  }
  if (command.size() == head) return;
  const std::int64_t games_sent =
      static_cast<std::int64_t>((command.size() - head) / (2 * kPushFields));
  const RedisReply r = client_.command(command, stop_);
  // All of the batch, or none where the server had it already (a retry after a lost reply).
  if (r.type == RedisReply::Type::kInteger && r.integer == 0)
    log_("batch " + std::to_string(batch) + " of " + std::to_string(games_sent) + " games was " +
         "on " + url().to_string() + " already (its reply was lost on the way back): not added again");
  else if (r.type != RedisReply::Type::kInteger || r.integer != games_sent)
    throw RedisError(url().to_string() + ": EVAL " + url().key("games") + ": the push of " +
                     std::to_string(games_sent) + " games answered " +
                     (r.type == RedisReply::Type::kInteger ? std::to_string(r.integer)
                                                           : std::string("no count")) +
                     " (a server that is not Redis?)");
}

std::vector<StreamEntry> RunChannel::read_games(const std::string& after, int count, bool* more) {
  if (more != nullptr) *more = false;
  const RedisReply r = client_.command(
      {"EVAL", kReadScript, "1", url().key("games"), after, std::to_string(count),
       std::to_string(kMaxEntryBytes), std::to_string(kMaxReadBytes), kLastStreamId,
       std::to_string(kMaxEntryFields)},
      stop_, kMaxReadBytes + kMaxEntryBytes + (1 << 20));
  std::vector<StreamEntry> out;
  // {more, [[id, [field, value, ...]], ...]}, the ids increasing from `after`: a reply of another
  // shape stops the reader before any of it is kept or its cursor saved.
  const auto malformed = [&](const std::string& what) {
    return RedisError(url().to_string() + ": XRANGE " + url().key("games") + ": " + what +
                      " (a server that is not Redis, or a damaged connection?)");
  };
  using Type = RedisReply::Type;
  if (r.type != Type::kArray || r.elements.size() != 2 ||
      r.elements[0].type != Type::kInteger || r.elements[1].type != Type::kArray)
    throw malformed("a reply of the wrong shape");
  if (more != nullptr) *more = r.elements[0].integer == 1;
  std::string last = after;
  for (const RedisReply& e : r.elements[1].elements) {
    // [id, fields], or [id, [], why, how many] for one cut (kReadScript)
    const bool cut = e.elements.size() == 4;
    if (e.type != Type::kArray || (e.elements.size() != 2 && !cut) ||
        e.elements[0].type != Type::kString || e.elements[1].type != Type::kArray ||
        (cut && (e.elements[2].type != Type::kString || e.elements[3].type != Type::kString)))
      throw malformed("an entry of the wrong shape");
    bool follows = false;
    try {
      follows = compare_stream_ids(e.elements[0].str, last) > 0;
    } catch (const std::logic_error&) {  // not an id, or out of range
    }
    if (!follows)
      throw malformed("entry id \"" + quote_input(e.elements[0].str, 40) +
                      "\" does not follow " + last);
    last = e.elements[0].str;
    StreamEntry entry;
    entry.id = e.elements[0].str;
    auto f = fields_of(e.elements.at(1));
    entry.node = f["node"];
    entry.run = f["run"];
    try {
      if (cut && e.elements[2].str == "fields")
        throw std::runtime_error("it has " + quote_input(e.elements[3].str, 20) +
                                 " fields, more than a game's entry can (" +
                                 std::to_string(kMaxEntryFields) + ")");
      if (cut)
        throw std::runtime_error("its fields hold " + quote_input(e.elements[3].str, 20) +
                                 " bytes, more than a game's entry can (" +
                                 std::to_string(kMaxEntryBytes) + ")");
      // Hostile or damaged names go no further than this: the record, a chunk and the logs
      // would carry them. Both are checked before either refuses the entry (a bad node name
      // once left the run id unchecked, and the log took a forged line of 8 MB from it).
      const std::string node_problem = node_name_problem(entry.node);
      const std::string run_problem = node_name_problem(entry.run);
      if (!node_problem.empty()) entry.node = stand_in(entry.node);
      if (!run_problem.empty()) entry.run = stand_in(entry.run);
      if (!node_problem.empty())
        throw std::runtime_error("its node name is no name: " + node_problem);
      if (!run_problem.empty())
        throw std::runtime_error("its run id is no run id: " + run_problem);
      if (!f.count("record") || !f.count("crc32") || !f.count("format"))
        throw std::runtime_error("missing fields");
      const std::string& record = f["record"];
      if (std::to_string(util::crc32(record.data(), record.size())) != f["crc32"])
        throw std::runtime_error("the record does not match its CRC-32");
      entry.record = selfplay::decode_record(
          record, static_cast<std::uint32_t>(
                      to_int(f["format"], "the entry's format", 0, 0xffffffffLL, "")));
      entry.record.node = entry.node;
      entry.record.origin = entry.id;
    } catch (const std::exception& ex) {
      entry.problem = ex.what();
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::uint64_t RunChannel::server_time_ms() {
  const RedisReply r = client_.command({"TIME"}, stop_);
  if (r.elements.size() != 2)
    throw RedisError(url().to_string() + ": TIME: a reply of the wrong shape");
  return static_cast<std::uint64_t>(
      to_int(r.elements[0].str, "the server's TIME", 0, kMaxInt64 / 1000 - 1, "") * 1000 +
      to_int(r.elements[1].str, "the server's TIME", 0, 999999, "") / 1000);
}

StreamInfo RunChannel::stream_info() {
  StreamInfo info;
  info.last_id = "0-0";
  const RedisReply exists = client_.command({"EXISTS", url().key("games")}, stop_);
  if (exists.integer == 0) return info;
  // XINFO STREAM in a script, only its counters sent: its first and last entries stay on the
  // server (a hostile one of 100 MB would pass the reply limit at every try).
  const auto f = client_.command(
      {"EVAL", kStreamInfoScript, "1", url().key("games")}, stop_, std::size_t{1} << 16);
  for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
    const std::string& name = f.elements[i].str;
    const RedisReply& value = f.elements[i + 1];
    if (name == "length") info.length = value.integer;
    else if (name == "entries-added") info.entries_added = value.integer;
    else if (name == "last-generated-id") info.last_id = value.str;
  }
  return info;
}

bool RunChannel::delete_games_at_last_id() {
  return client_.command({"EVAL", kDeleteAtLastIdScript, "1", url().key("games"), kLastStreamId},
                         stop_)
             .integer == 1;
}

void RunChannel::heartbeat(const std::string& node, std::int64_t beats, std::int64_t games,
                           std::int64_t positions) {
  if (const std::string why = node_name_problem(node); !why.empty())
    throw std::invalid_argument("the node name " + stand_in(node) + " cannot name a node (" + why +
                                "): the trainer would drop its games; choose another");
  try {
    client_.command({"HSET", url().key("nodes"), node,
                     std::to_string(beats) + " " + std::to_string(games) + " " +
                         std::to_string(positions)},
                    stop_);
  } catch (const RedisStopped&) {
    throw;
  } catch (const RedisError& e) {
    telemetry_error(e);
  }
}

std::map<std::string, NodeBeat> RunChannel::nodes() {
  std::map<std::string, NodeBeat> out;
  RedisReply r;
  try {
    r = client_.command({"EVAL", kNodesScript, "1", url().key("nodes"),
                         std::to_string(kMaxNodeNameBytes), std::to_string(kMaxNodes)},
                        stop_);
  } catch (const RedisStopped&) {
    throw;
  } catch (const RedisError& e) {
    telemetry_error(e);
    return out;
  }
  if (r.elements.empty()) return out;
  const long long left_out = r.elements.front().integer;
  for (std::size_t i = 1; i + 1 < r.elements.size(); i += 2) {
    long long beats = 0, games = 0, positions = 0;
    if (std::sscanf(r.elements[i + 1].str.c_str(), "%lld %lld %lld", &beats, &games,
                    &positions) == 3)
      out[r.elements[i].str] = NodeBeat{beats, games, positions};
  }
  if (left_out > 0 && !ignored_nodes_logged_) {
    ignored_nodes_logged_ = true;
    log_(url().key("nodes") + ": ignoring " + std::to_string(left_out) +
         " heartbeat(s) with a name over " + std::to_string(kMaxNodeNameBytes) +
         " bytes or with a control character, a value that is not \"beats games positions\" "
         "(counts of at most 15 digits), "
         "or beyond the " + std::to_string(kMaxNodes) + " nodes tracked (logged once)");
  }
  return out;
}

}  // namespace oppidum::store
