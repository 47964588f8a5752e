// Game records: what self-play keeps of each finished game, and the versioned binary file format
// that holds them (docs/FORMATS.md, "Game records", documents every byte).
//
// A record holds the start position, every move with the search's visit distribution and root
// value, the result, the network that played it and the seed; that is enough to replay the game
// and to train on it. Files are written whole to a temporary name and renamed, so a reader never
// sees a half-written file. Each record carries its own length and CRC-32, so a damaged record is
// reported and skipped while the rest of the file is still read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "games/game.h"

namespace oppidum::selfplay {

// Version 2 adds the node and the origin; version 1 files are still read (both fields empty).
inline constexpr std::uint32_t kRecordFormatVersion = 2;

// One policy-target entry: a visit count (PUCT), or the improved policy times kPolicyWeightScale,
// rounded (Gumbel root search). Either way the target is the entries normalised.
struct VisitCount {
  std::uint16_t action = 0;
  std::uint32_t visits = 0;
};
inline constexpr double kPolicyWeightScale = 65536.0;

struct MoveRecord {
  std::uint16_t action = 0;         // the move played
  float root_value = 0.0f;          // search value for the side to move, in [-1, 1]
  bool policy_target = true;        // a full search, usable as a policy target
  std::vector<VisitCount> visits;   // policy weights of the legal actions (those above zero)
};

struct GameRecord {
  std::string game;                 // a registered game's name (games/registry.h)
  std::string start;                // start position in docs/RULES.md notation
  std::uint64_t seed = 0;           // the seed of the game's search streams
  std::int64_t network_step = -1;   // step of the network of its last move (-1: none)
  std::string node;                 // the self-play node that played it ("": the trainer itself)
  std::string origin;               // where the trainer got it: a stream entry id ("": local)
  std::int8_t result = 0;           // for player 0: +1 win, 0 draw, -1 loss
  std::int16_t score[2] = {0, 0};   // final scores (DVONN heights; Murus Gallicus 1 for the winner)
  bool adjudicated = false;         // stopped at the ply limit and scored as a draw
  bool resigned = false;            // ended by the loser's resignation (result +1 or -1)
  std::vector<MoveRecord> moves;
};

// Result of reading a file: the intact records and one message per problem found.
struct ReadResult {
  std::vector<GameRecord> records;
  std::vector<std::string> problems;  // e.g. "games/chunk-3.bin: record 5 at byte 812: CRC mismatch"
  // The file as a whole is not a game file this program reads (not a regular file, larger than
  // kMaxGameFileBytes, another magic or format version): no records, and problems says why.
  bool refused = false;
};

// The most damaged records of one file that read_game_file lists: past them the rest of the file
// is skipped, said in one more problem (a file that damaged is not worth a message per record).
inline constexpr std::size_t kMaxProblemsPerFile = 100;

// The largest record a game file (or a stream entry) holds; a game is a few KiB.
inline constexpr std::uint32_t kMaxRecordBytes = 64u << 20;
// The most moves a record holds: self-play adjudicates a game at selfplay.max_plies, which is at
// most this (trainer/config.h takes its bound from here). A longer record is refused: replaying it
// holds a state per move.
inline constexpr std::uint32_t kMaxRecordPlies = 100'000;

// The largest game file read (1 GiB; a chunk of 1,000 games is a few MiB).
inline constexpr std::size_t kMaxGameFileBytes = std::size_t{1} << 30;
// A game file starts with 16 bytes: the magic, the format version and the record count.
inline constexpr std::size_t kGameFileHeaderBytes = 16;

// In the current format version; throws std::runtime_error for a record over kMaxRecordBytes.
std::string encode_record(const GameRecord& record);
// Throws std::runtime_error when the payload is malformed or the version unknown.
GameRecord decode_record(const std::string& payload, std::uint32_t version = kRecordFormatVersion);

// Writes all records to `path`, durably and atomically (util/file_io.h). Throws std::runtime_error
// on I/O errors, leaving any existing file at `path` untouched.
void write_game_file(const std::string& path, const std::vector<GameRecord>& records);
// Never throws for damaged content: problems are listed and intact records returned. Only regular
// files of at most kMaxGameFileBytes are read (a directory, a device or a FIFO is a problem, not a
// hang). Records are not replayed here: use replay() before trusting one.
ReadResult read_game_file(const std::string& path);

// Where an intact record lies: the byte its frame starts at and its file's format version.
struct RecordPlace {
  std::uint64_t offset = 0;
  std::uint32_t version = kRecordFormatVersion;
};
// Called for each intact record of a file, in order; returns false to stop reading.
using GameVisitor = std::function<bool(GameRecord&& record, const RecordPlace& place)>;
// read_game_file one record at a time: each intact record goes to `visit` instead of into
// ReadResult::records (left empty), so a large file takes the memory of its largest record, not
// about seven times its size. Problems are reported as read_game_file reports them; a stop by
// `visit` ends the reading without a word.
ReadResult for_each_game(const std::string& path, const GameVisitor& visit);
// The one record at `place` (from for_each_game) of the file at `path`: for reading a game again
// without reading the file again. Throws std::runtime_error when the record there is not intact
// (the file was replaced or damaged since).
GameRecord read_game_at(const std::string& path, const RecordPlace& place);

// The number of records a game file's header announces, read from its first 16 bytes alone (for a
// check of a chunk's index row without reading the chunk); nothing for a file that is not a game
// file or cannot be read.
std::optional<std::uint32_t> game_file_record_count(const std::string& path);

// A record that does not hold up against the rules; the message says which move and why.
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Replays a record through the rules and checks everything the trainer would use, since a record
// can pass its CRC and still be wrong (written by a buggy or foreign program, or a rules change):
// a known game and a valid start position; every move legal where it is played, and played before
// the game is over; every visit entry for a legal action, once, with at least one visit; root
// values finite and in [-1, 1]; at the end, a game over with the rules' result and scores, or,
// when adjudicated, a game not over and scored a draw, or, when resigned, a game not over with a
// winner and the scores of its last position. Throws RecordError. Returns the states
// before each move and the final state (moves.size() + 1 states).
std::vector<std::unique_ptr<GameState>> replay(const GameRecord& record);

}  // namespace oppidum::selfplay
