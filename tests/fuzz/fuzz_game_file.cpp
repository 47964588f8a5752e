// Self-play game files (selfplay/game_record.h): read_game_file, game_file_record_count,
// decode_record and replay. Input: a flags byte, then the file. Flag bit 0: fix each record's
// CRC (so the fuzzer gets past it to the payload); bit 1: decode the bytes as one record payload
// (version 1 or 2 by bit 2) instead of a file. A record that decodes must encode and decode back
// to the same bytes; replay() may refuse it only with RecordError.
#include <zlib.h>

#include <cstring>

#include "common.h"
#include "selfplay/game_record.h"

using namespace oppidum;
using namespace oppidum::selfplay;

namespace {

std::uint32_t get32(const std::string& s, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}

// Rewrites the CRC of every record whose length fits the file.
void fix_crcs(std::string& file) {
  std::size_t at = kGameFileHeaderBytes;
  while (at + 8 <= file.size()) {
    const std::uint32_t length = get32(file, at);
    if (length > file.size() - at - 8) break;
    const std::uint32_t crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(file.data() + at + 8), length));
    std::memcpy(&file[at + 4], &crc, 4);
    at += 8 + length;
  }
}

void check_record(const GameRecord& r) {
  const std::string bytes = encode_record(r);
  const GameRecord back = decode_record(bytes);
  FUZZ_CHECK(encode_record(back) == bytes, "encode/decode round trip");
  try {
    const auto states = replay(r);
    FUZZ_CHECK(states.size() == r.moves.size() + 1, "replay gives a state per move and the last");
  } catch (const RecordError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (flags & 2) {
    GameRecord r;
    try {
      r = decode_record(bytes, (flags & 4) ? 2 : 1);
    } catch (const std::runtime_error&) {
      return 0;
    }
    check_record(r);
    return 0;
  }
  if (flags & 1) fix_crcs(bytes);
  const std::string path = fuzz::scratch_dir() + "/chunk-00000001.bin";
  fuzz::write_file(path, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const auto count = game_file_record_count(path);
  const ReadResult result = read_game_file(path);
  if (!result.refused) FUZZ_CHECK(count.has_value(), "a file read has a record count");
  for (const GameRecord& r : result.records) check_record(r);
  return 0;
}
