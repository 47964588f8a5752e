// Where finished games go (GameSink, what self-play writes to) and where the trainer keeps them
// (FolderReplayStore): numbered chunk files (`chunk-00000012.bin`, the game-record format of
// selfplay/game_record.h) in one folder of the run, each written whole and durably, and renamed
// into place. The other sink is the Redis stream of a run spread over machines
// (store/redis_game_sink.h); the trainer node then writes what it reads from the stream into its
// folder store.
//
// Owner and readers. Exactly one process writes a run's games: the one holding the run folder's
// lock (trainer/run_folder.h). Its store is opened with FolderReplayStore::Mode::kOwner, which
// creates the folder, continues the numbering and removes the temporary files its own interrupted
// writes left. Every other user (`oppidum games`, `report`, the web page) opens it with kReadOnly:
// it never creates, deletes or renames anything, so it can run beside a live `train` and on a
// read-only copy.
//
// Odd entries in the folder never stop a reader: a directory, a FIFO, a device or a symlink to one
// named like a chunk, and a chunk number too large to be one, are skipped and named in problems().
//
// The owner also keeps `index.csv` beside the chunks: one line per chunk it wrote (chunk number,
// games, positions, bytes), appended after the chunk is in place. With it a restarted trainer knows
// how many positions the old chunks hold without reading them, and reads only the newest ones its
// window needs. A chunk without its line (a kill between the two writes) is simply read.
//
// The index is checked, not trusted: when the owner opens the store, every row is checked against
// its chunk (a whole row of numbers, one row per chunk, the chunk there, the games no more than the
// chunk's header holds, the positions no more than its bytes can hold, the bytes the file's size).
// An index that disagrees, or that is not an index at all, is rebuilt by reading every chunk
// (index_repair() says why). A chunk number is never used twice: a row for a chunk that is gone
// stays in the index with 0 games, and the next number is above every number on disk or in it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "selfplay/game_record.h"
#include "util/csv_table.h"

namespace oppidum::selfplay {

class GameSink {
 public:
  virtual ~GameSink() = default;
  // Stores the games (one chunk); durable when it returns. Thread-safe. Throws on failure.
  virtual void append(const std::vector<GameRecord>& games) = 0;
};

class FolderReplayStore final : public GameSink {
 public:
  enum class Mode { kOwner, kReadOnly };

  // kOwner: creates the folder if needed, removes the `.tmp` files of its own interrupted writes,
  // checks the index (rebuilding it when it disagrees with the chunks) and continues numbering
  // above every chunk number seen. kReadOnly: throws std::runtime_error when the folder does not
  // exist; never writes.
  FolderReplayStore(std::string folder, Mode mode);

  // Throws std::logic_error on a read-only store.
  void append(const std::vector<GameRecord>& games) override;
  // The chunk files stored so far, oldest first (by number). A listing taken while chunks are
  // added may lack one added during it and hold a later one: a reader that follows the folder
  // goes by the chunks' numbers (number_of), not by their places in the list.
  std::vector<std::string> chunks() const;
  // The number of a chunk file (its path or name), nothing for a name that is no chunk's.
  static std::optional<std::uint64_t> number_of(const std::string& path);
  // One line per odd entry skipped by the last chunks() call.
  std::vector<std::string> problems() const;

  struct ChunkSize {
    std::int64_t games = 0, positions = 0;
  };
  // Where the owner keeps the index of the chunks in `folder`.
  static std::string index_path(const std::string& folder);
  // Owner only: the sizes index.csv records, by chunk file path.
  std::map<std::string, ChunkSize> sizes() const;
  // Owner only: why index.csv was rebuilt or completed when the store was opened; empty when it
  // held up.
  const std::string& index_repair() const { return index_repair_; }

 private:
  std::string folder_;
  Mode mode_;
  std::mutex append_mutex_;
  void open_index();
  // Why the open index disagrees with the chunks on disk; empty when it holds up.
  std::string index_disagreement() const;
  // Why row `i` (from 0) disagrees with the chunks' sizes on disk.
  std::string row_disagreement(const util::CsvTable::Row& row, std::size_t i,
                               const std::map<std::uint64_t, std::int64_t>& bytes_on_disk) const;
  void rebuild_index(const std::string& why);

  std::unique_ptr<util::CsvTable> index_;  // owner only
  std::string index_repair_;
  std::uint64_t next_chunk_ = 0;
  mutable std::mutex problems_mutex_;
  mutable std::vector<std::string> problems_;
};

}  // namespace oppidum::selfplay
