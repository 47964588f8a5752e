// Game records: the binary format round-trips, and damaged files are reported and skipped.
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "games/game.h"
#include "selfplay/game_record.h"
#include "tests/record_test_util.h"
#include "util/file_io.h"

namespace oppidum::selfplay {
namespace {

using test_util::random_record;

void expect_same(const GameRecord& a, const GameRecord& b) {
  EXPECT_EQ(encode_record(a), encode_record(b));
  EXPECT_EQ(a.game, b.game);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.moves.size(), b.moves.size());
  EXPECT_EQ(a.result, b.result);
}

class GameFileTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const {
    return (std::filesystem::path(::testing::TempDir()) / name).string();
  }
  std::vector<GameRecord> records_ = {random_record("mg", 1), random_record("dvonn", 2),
                                      random_record("mg", 3)};
};

TEST_F(GameFileTest, RoundTrips) {
  const std::string file = path("round_trip.bin");
  write_game_file(file, records_);
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  const ReadResult read = read_game_file(file);
  EXPECT_TRUE(read.problems.empty());
  ASSERT_EQ(read.records.size(), records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) expect_same(read.records[i], records_[i]);
  // The record replays through the rules to the recorded result.
  const auto states = replay(read.records[1]);
  EXPECT_EQ(states.size(), records_[1].moves.size() + 1);
  EXPECT_TRUE(states.back()->is_terminal());
  EXPECT_EQ(states.back()->result(0), records_[1].result);
}

TEST_F(GameFileTest, DamagedRecordIsSkippedAndReported) {
  const std::string file = path("damaged.bin");
  write_game_file(file, records_);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Flip a byte inside the second record's payload (past the header, the first frame and payload).
  const std::size_t first_len = encode_record(records_[0]).size();
  bytes[16 + 8 + first_len + 8 + 20] ^= 0x5A;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  const ReadResult read = read_game_file(file);
  ASSERT_EQ(read.records.size(), 2u);
  expect_same(read.records[0], records_[0]);
  expect_same(read.records[1], records_[2]);
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_NE(read.problems[0].find("record 1"), std::string::npos) << read.problems[0];
  EXPECT_NE(read.problems[0].find("CRC"), std::string::npos);
}

// for_each_game hands over the intact records one at a time, with where each lies, stops when
// asked, and reports the problems read_game_file reports; read_game_at reads one record again from
// its place alone, and refuses a place whose record is no longer intact.
TEST_F(GameFileTest, RecordsOneAtATimeAndEachAgainFromItsPlace) {
  const std::string file = path("one_at_a_time.bin");
  write_game_file(file, records_);
  std::string bytes = util::read_regular_file(file, 1 << 20);
  const std::size_t first_len = encode_record(records_[0]).size();
  bytes[16 + 8 + first_len + 8 + 20] ^= 0x5A;  // the second record's payload
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;

  std::vector<RecordPlace> places;
  std::vector<GameRecord> seen;
  const ReadResult all = for_each_game(file, [&](GameRecord&& r, const RecordPlace& place) {
    seen.push_back(std::move(r));
    places.push_back(place);
    return true;
  });
  EXPECT_TRUE(all.records.empty());
  ASSERT_EQ(seen.size(), 2u);
  expect_same(seen[0], records_[0]);
  expect_same(seen[1], records_[2]);
  EXPECT_EQ(all.problems, read_game_file(file).problems);
  EXPECT_EQ(places[0].offset, 16u);
  EXPECT_EQ(places[1].offset, 16u + 8 + first_len + 8 + encode_record(records_[1]).size());
  EXPECT_EQ(places[1].version, kRecordFormatVersion);
  expect_same(read_game_at(file, places[1]), records_[2]);
  expect_same(read_game_at(file, places[0]), records_[0]);

  int visits = 0;
  const ReadResult stopped = for_each_game(file, [&](GameRecord&&, const RecordPlace&) {
    ++visits;
    return false;
  });
  EXPECT_EQ(visits, 1);
  EXPECT_TRUE(stopped.problems.empty()) << "a stop is not a problem";

  // A place that is not a record's, and a record damaged since it was read, are refused.
  EXPECT_THROW(read_game_at(file, {places[1].offset + 1, kRecordFormatVersion}),
               std::runtime_error);
  EXPECT_THROW(read_game_at(file, {4, kRecordFormatVersion}), std::runtime_error);
  EXPECT_THROW(read_game_at(file, {bytes.size() + 100, kRecordFormatVersion}),
               std::runtime_error);
  bytes[places[1].offset + 8 + 3] ^= 0x11;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  try {
    read_game_at(file, places[1]);
    ADD_FAILURE() << "a damaged record was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos) << e.what();
  }
}

TEST_F(GameFileTest, TruncatedFileKeepsTheIntactRecords) {
  const std::string file = path("truncated.bin");
  write_game_file(file, records_);
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size - 10);
  const ReadResult read = read_game_file(file);
  EXPECT_EQ(read.records.size(), 2u);
  EXPECT_FALSE(read.problems.empty());
}

// A crash can leave a chunk's tail as zeros: a zero length and a zero CRC, which is the CRC of
// nothing. That tail once read as one empty, damaged record every 8 bytes (27 s and 1.3 GB of
// messages for 64 MiB); it now ends the file at once. Frames that each hold together but fail
// their CRC are listed up to kMaxProblemsPerFile, then the rest is skipped, said once.
TEST_F(GameFileTest, ADamagedTailIsOneProblemNotOnePerFrame) {
  const std::string file = path("zero_tail.bin");
  write_game_file(file, records_);
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size + (std::size_t{8} << 20));  // sparse zeros
  ReadResult read = read_game_file(file);
  EXPECT_EQ(read.records.size(), records_.size());
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_NE(read.problems[0].find("record 3 at byte " + std::to_string(size) +
                                  ": truncated or damaged length; the rest of the file is skipped"),
            std::string::npos)
      << read.problems[0];

  std::string bytes = util::read_regular_file(file);
  bytes.resize(size);
  for (int i = 0; i < 1000; ++i) bytes += std::string("\x04\0\0\0\x01\0\0\0abcd", 12);
  bytes += bytes.substr(16, 8 + encode_record(records_[0]).size());  // an intact record after
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  read = read_game_file(file);
  EXPECT_EQ(read.records.size(), records_.size());
  // Not the header's count against the records read too: reading stopped, the file holds more.
  ASSERT_EQ(read.problems.size(), kMaxProblemsPerFile + 1);
  EXPECT_NE(read.problems[kMaxProblemsPerFile].find(
                "record 103 at byte " + std::to_string(size + 100 * 12) +
                ": 100 damaged records before it; the rest of the file is skipped"),
            std::string::npos)
      << read.problems[kMaxProblemsPerFile];
}

TEST_F(GameFileTest, NotAGameFile) {
  const std::string file = path("garbage.bin");
  std::ofstream(file) << "hello, this is not a game file at all";
  const ReadResult read = read_game_file(file);
  EXPECT_TRUE(read.records.empty());
  EXPECT_TRUE(read.refused);
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_NE(read.problems[0].find(file + ": not an oppidum game file"), std::string::npos)
      << read.problems[0];
  EXPECT_NE(read_game_file(path("missing.bin")).problems.at(0).find("cannot open"), std::string::npos);
}

// A device, a FIFO, a directory or a file over the limit is refused by name, at once: never read
// without end, never a hang.
TEST_F(GameFileTest, OnlyRegularFilesWithinTheLimitAreRead) {
  namespace fs = std::filesystem;
  const std::string zero = path("records_zero.bin"), fifo = path("records_fifo.bin"),
                    dir = path("records_dir.bin"), big = path("records_big.bin");
  for (const std::string& p : {zero, fifo, dir, big}) fs::remove_all(p);
  fs::create_symlink("/dev/zero", zero);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directory(dir);
  write_game_file(big, records_);
  fs::resize_file(big, kMaxGameFileBytes + 1);  // sparse
  for (const auto& [file, why] : {std::pair<std::string, std::string>{zero, "a character device"},
                                  {fifo, "a FIFO"},
                                  {dir, "a directory"},
                                  {big, "1073741825 bytes, more than the limit of 1073741824"}}) {
    const ReadResult read = read_game_file(file);
    EXPECT_TRUE(read.refused) << file;
    EXPECT_TRUE(read.records.empty()) << file;
    ASSERT_EQ(read.problems.size(), 1u) << file;
    EXPECT_NE(read.problems[0].find(file + ": "), std::string::npos) << read.problems[0];
    EXPECT_NE(read.problems[0].find(why), std::string::npos) << read.problems[0];
  }
}

// A record's move count is checked against the bytes the record holds before anything is
// allocated for the moves (a 64 MiB record once asked for 2.5 GB).
TEST(GameRecord, AMoveCountBeyondThePayloadIsRefusedBeforeAllocating) {
  GameRecord r = random_record("mg", 4);
  r.moves.clear();
  std::string payload = encode_record(r);
  const std::size_t count_at = payload.size() - 4;  // the move count is the last field
  payload.resize(payload.size() + (1u << 20));
  // Fewer moves than bytes, more than the bytes can hold (each move takes at least 9).
  const auto moves = static_cast<std::uint32_t>(payload.size() / 2);
  std::memcpy(&payload[count_at], &moves, 4);
  try {
    decode_record(payload);
    FAIL() << "decoded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("move count " + std::to_string(moves) +
                                         " larger than the record holds"),
              std::string::npos) << e.what();
  }
}

// No record holds more moves than self-play plays (selfplay.max_plies is at most
// kMaxRecordPlies): a longer one, legal or not, is refused before its moves are read (a 64 MiB
// record of 7 million legal plies once took a gigabyte to replay).
TEST(GameRecord, MoreMovesThanAnySelfplayGameAreRefused) {
  GameRecord r = random_record("mg", 4);
  ASSERT_FALSE(r.moves.empty());
  r.moves.resize(kMaxRecordPlies + 1, r.moves[0]);
  try {
    decode_record(encode_record(r));
    FAIL() << "decoded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("move count 100001, more than any self-play game"),
              std::string::npos)
        << e.what();
  }
  r.moves.resize(kMaxRecordPlies);
  EXPECT_EQ(decode_record(encode_record(r)).moves.size(), kMaxRecordPlies);
}

// A record's origin is a stream entry id or nothing, its network step -1 (none) or more: an
// origin "x" in one record stopped every start of its run ("malformed stream id"), naming no file.
TEST(GameRecord, AnOriginThatIsNoStreamIdAndAStepBelowNoneAreDamage) {
  GameRecord r = random_record("mg", 5);
  for (const std::string good : {"", "0-0", "1700000000000-12", "18446744073709551615-0"}) {
    r.origin = good;
    EXPECT_EQ(decode_record(encode_record(r)).origin, good);
  }
  for (const std::string bad :
       {"x", "1-", "-1", "12", "1-2-3", "18446744073709551616-0", "1-0\x1b[31m"}) {
    r.origin = bad;
    try {
      decode_record(encode_record(r));
      ADD_FAILURE() << "decoded origin " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("is no stream entry id"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << "quoted";
    }
  }
  r.origin = "";
  r.network_step = -1;
  EXPECT_EQ(decode_record(encode_record(r)).network_step, -1);
  r.network_step = std::numeric_limits<std::int64_t>::min();
  EXPECT_THROW(decode_record(encode_record(r)), std::runtime_error);
}

// A file cut inside its header says so, not that it is no game file; one whose reading stopped at
// a damaged record does not also count its records against the header.
TEST_F(GameFileTest, ACutHeaderAndAStopAreSaidAsTheyAre) {
  const std::string file = path("cut.bin");
  write_game_file(file, records_);
  const std::string bytes = util::read_regular_file(file, 1 << 20);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, 10);
  ReadResult read = for_each_game(file, [](GameRecord&&, const RecordPlace&) { return true; });
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_NE(read.problems[0].find("truncated: 10 bytes, shorter than the 16-byte header"),
            std::string::npos)
      << read.problems[0];
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 3);
  read = for_each_game(file, [](GameRecord&&, const RecordPlace&) { return true; });
  ASSERT_EQ(read.problems.size(), 1u) << read.problems.back();
  EXPECT_NE(read.problems[0].find("the rest of the file is skipped"), std::string::npos)
      << read.problems[0];
}

TEST_F(GameFileTest, RandomCorruptionNeverCrashes) {
  const std::string file = path("fuzz.bin");
  write_game_file(file, records_);
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::mt19937_64 rng(5);
  for (int i = 0; i < 300; ++i) {
    std::string damaged = bytes;
    for (int k = 0; k < 3; ++k) damaged[rng() % damaged.size()] = static_cast<char>(rng());
    if (i % 3 == 0) damaged.resize(rng() % damaged.size());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damaged;
    const ReadResult read = read_game_file(file);
    EXPECT_LE(read.records.size(), records_.size());
    for (const GameRecord& r : read.records) {
      try {
        replay(r);
      } catch (const std::exception&) {
        // A record can pass its CRC only if it was not damaged; replay must still not crash.
      }
    }
  }
}

// Version 2 added the node and the origin; a version 1 file (without them) still reads.
TEST_F(GameFileTest, ReadsVersionOneFiles) {
  GameRecord r = records_[0];
  r.node = "worker-7";
  r.origin = "1700000000000-3";
  const std::string file = path("v2.bin");
  write_game_file(file, {r});
  const ReadResult v2 = read_game_file(file);
  ASSERT_EQ(v2.records.size(), 1u);
  EXPECT_EQ(v2.records[0].node, "worker-7");
  EXPECT_EQ(v2.records[0].origin, "1700000000000-3");

  std::string payload = encode_record(records_[0]);  // empty node and origin: two zero lengths
  const std::size_t at = 2 + records_[0].game.size() + 2 + records_[0].start.size() + 8 + 8;
  ASSERT_EQ(payload.substr(at, 4), std::string(4, '\0'));
  payload.erase(at, 4);
  auto le32 = [](std::uint32_t v) {
    std::string b(4, '\0');
    for (int k = 0; k < 4; ++k) b[static_cast<std::size_t>(k)] = static_cast<char>((v >> (8 * k)) & 0xFF);
    return b;
  };
  const std::string bytes = std::string("OPPGAMES") + le32(1) + le32(1) +
                            le32(static_cast<std::uint32_t>(payload.size())) +
                            le32(util::crc32(payload.data(), payload.size())) + payload;
  std::ofstream(path("v1.bin"), std::ios::binary) << bytes;
  const ReadResult v1 = read_game_file(path("v1.bin"));
  ASSERT_TRUE(v1.problems.empty()) << v1.problems.front();
  ASSERT_EQ(v1.records.size(), 1u);
  expect_same(v1.records[0], records_[0]);
  EXPECT_EQ(v1.records[0].node, "");
}

// A resigned game: not over, a winner, the scores of its last position; the flag survives the
// file, and replay() refuses a resignation that contradicts the rules.
TEST(GameRecord, ResignedGamesRoundTripAndReplay) {
  for (const std::string name : {"mg", "dvonn"}) {
    GameRecord full = random_record(name, 21);
    GameRecord r = full;
    r.moves.resize(full.moves.size() / 2);
    const auto states = replay([&] {
      GameRecord cut = r;
      cut.adjudicated = true;
      cut.result = 0;
      return cut;
    }());
    r.resigned = true;
    r.result = -1;
    r.score[0] = static_cast<std::int16_t>(states.back()->score(0));
    r.score[1] = static_cast<std::int16_t>(states.back()->score(1));
    EXPECT_NO_THROW(replay(r)) << name;
    const GameRecord back = decode_record(encode_record(r));
    EXPECT_TRUE(back.resigned);
    EXPECT_FALSE(back.adjudicated);
    expect_same(back, r);

    GameRecord draw = r;
    draw.result = 0;
    EXPECT_THROW(replay(draw), RecordError) << "a resignation has a winner";
    GameRecord over = full;
    over.resigned = true;
    EXPECT_THROW(replay(over), RecordError) << "a finished game was not resigned";
    GameRecord both = r;
    both.adjudicated = true;
    EXPECT_THROW(decode_record(encode_record(both)), std::runtime_error);
  }
}

TEST(GameRecord, ReplayRefusesAnIllegalMove) {
  GameRecord r = random_record("mg", 9);
  r.moves[3].action = r.moves[2].action;  // almost surely illegal
  EXPECT_THROW(replay(r), RecordError);
}

}  // namespace
}  // namespace oppidum::selfplay
