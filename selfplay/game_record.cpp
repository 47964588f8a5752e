#include "selfplay/game_record.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "games/quote.h"
#include "util/file_io.h"
#include "util/text.h"

namespace oppidum::selfplay {
namespace {

constexpr char kMagic[8] = {'O', 'P', 'P', 'G', 'A', 'M', 'E', 'S'};

// Little-endian writer and bounds-checked reader of the record payload.
class Writer {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));  // the formats are little-endian, like every target here
    out_.append(reinterpret_cast<const char*>(bytes), sizeof(T));
  }
  void put_string16(const std::string& s) {
    if (s.size() > 0xFFFF) throw std::runtime_error("game record: string too long");
    put<std::uint16_t>(static_cast<std::uint16_t>(s.size()));
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::string get_string16() {
    const auto n = get<std::uint16_t>();
    need(n);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(std::size_t n) const {
    if (at_ + n > in_.size())
      throw std::runtime_error("record ends early: its " + std::to_string(in_.size()) +
                               " bytes end within its fields (at byte " + std::to_string(at_) +
                               " of it, " + std::to_string(n) + " more needed)");
  }
  const std::string& in_;
  std::size_t at_ = 0;
};

std::uint32_t crc_of(const std::string& data) { return util::crc32(data.data(), data.size()); }

// The fewest payload bytes of one move: action, root value, flags and the visit entry count.
constexpr std::size_t kMinMoveBytes = 2 + 4 + 1 + 2;

}  // namespace

std::string encode_record(const GameRecord& r) {
  Writer w;
  w.put_string16(r.game);
  w.put_string16(r.start);
  w.put<std::uint64_t>(r.seed);
  w.put<std::int64_t>(r.network_step);
  w.put_string16(r.node);
  w.put_string16(r.origin);
  w.put<std::int8_t>(r.result);
  w.put<std::int16_t>(r.score[0]);
  w.put<std::int16_t>(r.score[1]);
  w.put<std::uint8_t>(static_cast<std::uint8_t>((r.adjudicated ? 1 : 0) | (r.resigned ? 2 : 0)));
  w.put<std::uint32_t>(static_cast<std::uint32_t>(r.moves.size()));
  for (const MoveRecord& m : r.moves) {
    w.put<std::uint16_t>(m.action);
    w.put<float>(m.root_value);
    w.put<std::uint8_t>(m.policy_target ? 1 : 0);
    if (m.visits.size() > 0xFFFF) throw std::runtime_error("game record: too many visit entries");
    w.put<std::uint16_t>(static_cast<std::uint16_t>(m.visits.size()));
    for (const VisitCount& v : m.visits) {
      w.put<std::uint16_t>(v.action);
      w.put<std::uint32_t>(v.visits);
    }
  }
  std::string bytes = w.take();
  // A file's reader refuses a longer frame and skips the rest of the file after it.
  if (bytes.size() > kMaxRecordBytes)
    throw std::runtime_error("game record: " + std::to_string(bytes.size()) +
                             " bytes, over the limit of " + std::to_string(kMaxRecordBytes));
  return bytes;
}

GameRecord decode_record(const std::string& payload, std::uint32_t version) {
  if (version < 1 || version > kRecordFormatVersion)
    throw std::runtime_error("record format version " + std::to_string(version) +
                             " is not supported (this build reads 1 to " +
                             std::to_string(kRecordFormatVersion) + ")");
  Reader rd(payload);
  GameRecord r;
  r.game = rd.get_string16();
  r.start = rd.get_string16();
  r.seed = rd.get<std::uint64_t>();
  r.network_step = rd.get<std::int64_t>();
  if (version >= 2) {
    r.node = rd.get_string16();
    r.origin = rd.get_string16();
  }
  // What the trainer reads on: a malformed origin stopped every start of the run.
  util::StreamId origin;
  bool out_of_range = false;
  if (!r.origin.empty() && !(util::parse_stream_id(r.origin, origin, out_of_range) &&
                             origin.has_sequence))
    throw std::runtime_error("origin \"" + quote_input(r.origin, 60) +
                             "\" is no stream entry id (<ms>-<seq>)");
  if (r.network_step < -1)
    throw std::runtime_error("network step " + std::to_string(r.network_step) +
                             " (-1 is none; a step is 0 or more)");
  r.result = rd.get<std::int8_t>();
  r.score[0] = rd.get<std::int16_t>();
  r.score[1] = rd.get<std::int16_t>();
  const auto flags = rd.get<std::uint8_t>();
  if (r.result < -1 || r.result > 1) throw std::runtime_error("result out of range");
  if (flags > 3) throw std::runtime_error("unknown game flags");
  if (flags == 3) throw std::runtime_error("a game both adjudicated and resigned");
  r.adjudicated = flags & 1;
  r.resigned = flags & 2;
  const auto n = rd.get<std::uint32_t>();
  if (n > payload.size() / kMinMoveBytes)
    throw std::runtime_error("move count " + std::to_string(n) + " larger than the record holds");
  if (n > kMaxRecordPlies)
    throw std::runtime_error("move count " + std::to_string(n) + ", more than any self-play " +
                             "game (" + std::to_string(kMaxRecordPlies) +
                             ", selfplay.max_plies at most)");
  r.moves.resize(n);
  for (MoveRecord& m : r.moves) {
    m.action = rd.get<std::uint16_t>();
    m.root_value = rd.get<float>();
    const auto move_flags = rd.get<std::uint8_t>();
    if (move_flags > 1) throw std::runtime_error("unknown move flags");
    m.policy_target = move_flags & 1;
    m.visits.resize(rd.get<std::uint16_t>());
    for (VisitCount& v : m.visits) {
      v.action = rd.get<std::uint16_t>();
      v.visits = rd.get<std::uint32_t>();
    }
  }
  if (!rd.done()) throw std::runtime_error("trailing bytes after the last move");
  return r;
}

void write_game_file(const std::string& path, const std::vector<GameRecord>& records) {
  Writer out;
  for (char c : kMagic) out.put<char>(c);
  out.put<std::uint32_t>(kRecordFormatVersion);
  out.put<std::uint32_t>(static_cast<std::uint32_t>(records.size()));
  std::string bytes = out.take();
  for (const GameRecord& r : records) {
    const std::string payload = encode_record(r);
    Writer frame;
    frame.put<std::uint32_t>(static_cast<std::uint32_t>(payload.size()));
    frame.put<std::uint32_t>(crc_of(payload));
    bytes += frame.take();
    bytes += payload;
  }
  try {
    util::write_file_atomically(path, bytes);
  } catch (const util::FileError& e) {
    throw std::runtime_error(e.what());
  }
}

namespace {

// A game file's 16-byte header (the magic, the format version, the record count): nothing when
// `size` is short of it or the magic is not there.
struct FileHeader {
  std::uint32_t version, count;
};
std::optional<FileHeader> file_header(const char* bytes, std::size_t size) {
  if (size < kGameFileHeaderBytes || std::memcmp(bytes, kMagic, 8) != 0) return std::nullopt;
  FileHeader h;
  std::memcpy(&h.version, bytes + 8, 4);
  std::memcpy(&h.count, bytes + 12, 4);
  return h;
}

// A record's frame: its payload's length and CRC-32, the 8 bytes before the payload.
struct Frame {
  std::uint32_t length = 0, crc = 0;
};
Frame frame_of(const char (&bytes)[8]) {
  Frame f;
  std::memcpy(&f.length, bytes, 4);
  std::memcpy(&f.crc, bytes + 4, 4);
  return f;
}
// Whether a frame at byte `at` of a file of `size` bytes can hold a record. No record is empty: a
// zero length is the zero-filled tail a crash can leave, not a frame.
bool frame_fits(const Frame& f, std::uint64_t at, std::uint64_t size) {
  return f.length != 0 && f.length <= kMaxRecordBytes && at + 8 + f.length <= size;
}

}  // namespace

std::optional<std::uint32_t> game_file_record_count(const std::string& path) {
  try {
    util::RegularFileReader file(path, kMaxGameFileBytes);
    char bytes[kGameFileHeaderBytes];
    const auto header = file_header(bytes, file.read(bytes, sizeof bytes));
    if (!header) return std::nullopt;
    return header->count;
  } catch (const util::FileError&) {
    return std::nullopt;
  }
}

ReadResult for_each_game(const std::string& path, const GameVisitor& visit) {
  ReadResult result;
  std::optional<util::RegularFileReader> file;
  char head[kGameFileHeaderBytes];
  std::size_t head_size = 0;
  try {
    file.emplace(path, kMaxGameFileBytes);
    head_size = file->read(head, sizeof head);
  } catch (const util::FileError& e) {
    result.problems.push_back(e.what());
    result.refused = true;
    return result;
  }
  const auto header = file_header(head, head_size);
  if (!header) {
    const bool magic = head_size >= 8 && std::memcmp(head, kMagic, 8) == 0;
    result.problems.push_back(
        path + (magic ? ": truncated: " + std::to_string(head_size) + " bytes, shorter than the " +
                            std::to_string(kGameFileHeaderBytes) + "-byte header"
                      : ": not an oppidum game file (it does not start with " +
                            std::string(kMagic, 8) + ")"));
    result.refused = true;
    return result;
  }
  const std::uint32_t version = header->version, count = header->count;
  if (version < 1 || version > kRecordFormatVersion) {
    result.problems.push_back(path + ": format version " + std::to_string(version) +
                              " is not supported (this build reads versions 1 to " +
                              std::to_string(kRecordFormatVersion) + ")");
    result.refused = true;
    return result;
  }
  // The file ends where it ended when it was opened (files are written whole and renamed).
  const std::uint64_t size = file->size();
  std::uint64_t at = kGameFileHeaderBytes;
  std::uint32_t index = 0;
  std::string payload;
  // A read error ends the file, said as a problem (only the reads: what `visit` throws is its own).
  std::string read_error;
  const auto read = [&](char* out, std::size_t bytes) -> std::size_t {
    try {
      return file->read(out, bytes);
    } catch (const util::FileError& e) {
      read_error = e.what();
      return 0;
    }
  };
  bool stopped = false;  // the rest of the file skipped, said as a problem: no count to compare
  for (; at < size; ++index) {
    const std::string where =
        path + ": record " + std::to_string(index) + " at byte " + std::to_string(at);
    char bytes[8];
    if (at + 8 > size || read(bytes, 8) < 8) {
      if (!read_error.empty()) break;
      result.problems.push_back(where + ": truncated frame");
      stopped = true;
      break;
    }
    const Frame frame = frame_of(bytes);
    if (!frame_fits(frame, at, size)) {
      result.problems.push_back(where +
                                ": truncated or damaged length; the rest of the file is skipped");
      stopped = true;
      break;
    }
    if (result.problems.size() >= kMaxProblemsPerFile) {
      result.problems.push_back(where + ": " + std::to_string(result.problems.size()) +
                                " damaged records before it; the rest of the file is skipped");
      stopped = true;
      break;
    }
    payload.resize(frame.length);
    if (read(payload.data(), frame.length) < frame.length) {
      if (!read_error.empty()) break;
      result.problems.push_back(where + ": truncated record (the file shrank while it was read)");
      stopped = true;
      break;
    }
    const RecordPlace place{at, version};
    at += 8 + frame.length;
    if (crc_of(payload) != frame.crc) {
      result.problems.push_back(where + ": CRC mismatch, record skipped");
      continue;
    }
    GameRecord record;
    try {
      record = decode_record(payload, version);
    } catch (const std::exception& e) {
      result.problems.push_back(where + ": " + e.what() + ", record skipped");
      continue;
    }
    if (!visit(std::move(record), place)) return result;
  }
  if (!read_error.empty()) {  // the rest of the file could not be read: no count to compare
    result.problems.push_back(read_error);
    return result;
  }
  if (index != count && !stopped)
    result.problems.push_back(path + ": header announces " + std::to_string(count) +
                              " records, the file holds " + std::to_string(index));
  return result;
}

ReadResult read_game_file(const std::string& path) {
  std::vector<GameRecord> records;
  ReadResult result = for_each_game(path, [&](GameRecord&& record, const RecordPlace&) {
    records.push_back(std::move(record));
    return true;
  });
  result.records = std::move(records);
  return result;
}

GameRecord read_game_at(const std::string& path, const RecordPlace& place) {
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error("the record at byte " + std::to_string(place.offset) + " " + what);
  };
  try {
    util::RegularFileReader file(path, kMaxGameFileBytes);
    char head[kGameFileHeaderBytes];
    const auto header = file_header(head, file.read(head, sizeof head));
    if (!header || header->version != place.version) fail("is in a file that changed");
    char bytes[8];
    file.seek(place.offset);
    if (place.offset < kGameFileHeaderBytes || file.read(bytes, 8) < 8) fail("is gone");
    const Frame frame = frame_of(bytes);
    if (!frame_fits(frame, place.offset, file.size())) fail("has a damaged length");
    std::string payload(frame.length, '\0');
    if (file.read(payload.data(), frame.length) < frame.length || crc_of(payload) != frame.crc)
      fail("does not match its CRC");
    return decode_record(payload, place.version);
  } catch (const util::FileError& e) {
    throw std::runtime_error(e.what());
  }
}

std::vector<std::unique_ptr<GameState>> replay(const GameRecord& record) {
  const auto fail = [](const std::string& what) { throw RecordError(what); };
  const Game* game = nullptr;
  try {
    game = &game_by_name(record.game);
  } catch (const std::exception&) {
    fail("unknown game \"" + quote_input(record.game, 40) + "\"");
  }
  std::vector<std::unique_ptr<GameState>> states;
  try {
    states.push_back(game->parse_state(record.start));
  } catch (const GameError& e) {
    fail(std::string("bad start position: ") + e.what());
  }
  ActionList legal;
  std::vector<bool> seen(static_cast<std::size_t>(game->num_actions()));
  for (std::size_t i = 0; i < record.moves.size(); ++i) {
    const MoveRecord& m = record.moves[i];
    const GameState& before = *states.back();
    const std::string where = "move " + std::to_string(i + 1);
    before.legal_actions(legal);
    if (legal.empty()) fail(where + ": the game was already over in " + before.to_string());
    if (!legal.contains(m.action))
      fail(where + " (action " + std::to_string(m.action) + ") is illegal in " + before.to_string());
    if (!std::isfinite(m.root_value) || m.root_value < -1.0f || m.root_value > 1.0f)
      fail(where + ": root value " + std::to_string(m.root_value) + " is not in [-1, 1]");
    std::fill(seen.begin(), seen.end(), false);
    for (const VisitCount& v : m.visits) {
      if (v.action >= seen.size() || !legal.contains(v.action))
        fail(where + ": visits for action " + std::to_string(v.action) +
             ", which is not a legal move there");
      if (seen[v.action])
        fail(where + ": two visit entries for action " + std::to_string(v.action));
      if (v.visits == 0) fail(where + ": a visit entry with zero visits");
      seen[v.action] = true;
    }
    auto next = before.clone();
    next->apply(m.action);
    states.push_back(std::move(next));
  }
  const GameState& last = *states.back();
  if (record.adjudicated) {
    if (last.is_terminal()) fail("marked adjudicated, but the game is over after its last move");
    if (record.result != 0) fail("adjudicated, but the result is not a draw");
    return states;
  }
  if (record.resigned) {
    if (last.is_terminal()) fail("marked resigned, but the game is over after its last move");
    if (record.result == 0) fail("resigned, but the result is a draw");
  } else {
    if (!last.is_terminal())
      fail("the game is not over after its last move (" + std::to_string(record.moves.size()) +
           " moves) and is not marked adjudicated");
    if (record.result != static_cast<int>(last.result(0)))
      fail("the result " + std::to_string(record.result) + " is not the rules' result " +
           std::to_string(static_cast<int>(last.result(0))));
  }
  // A finished or resigned game keeps the scores of its last position.
  for (int p = 0; p < 2; ++p)
    if (record.score[p] != last.score(p))
      fail("the score of player " + std::to_string(p) + " is " + std::to_string(record.score[p]) +
           ", the rules give " + std::to_string(last.score(p)));
  return states;
}

}  // namespace oppidum::selfplay
