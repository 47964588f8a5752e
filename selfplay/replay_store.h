// Where finished games go and where the trainer reads them back. The store is an interface so that
// a networked implementation (self-play nodes pushing to a shared server) can replace the embedded
// default, FolderReplayStore: numbered chunk files (`chunk-00000012.bin`, the game-record format
// of selfplay/game_record.h) in one folder of the run, each written whole and durably, and renamed
// into place.
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
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "selfplay/game_record.h"

namespace oppidum::selfplay {

class ReplayStore {
 public:
  virtual ~ReplayStore() = default;
  // Stores the games as one chunk; durable when it returns. Thread-safe.
  virtual void append(const std::vector<GameRecord>& games) = 0;
  // Ids of the chunks stored so far, oldest first.
  virtual std::vector<std::string> chunks() const = 0;
  // Reads one chunk; damaged content is reported in ReadResult::problems, never thrown.
  virtual ReadResult read_chunk(const std::string& id) const = 0;
};

class FolderReplayStore final : public ReplayStore {
 public:
  enum class Mode { kOwner, kReadOnly };

  // kOwner: creates the folder if needed, continues numbering after the chunks already there, and
  // removes the `.tmp` files of its own interrupted writes. kReadOnly: throws std::runtime_error
  // when the folder does not exist; never writes.
  FolderReplayStore(std::string folder, Mode mode);

  // Throws std::logic_error on a read-only store.
  void append(const std::vector<GameRecord>& games) override;
  std::vector<std::string> chunks() const override;  // file paths
  ReadResult read_chunk(const std::string& id) const override;
  const std::string& folder() const { return folder_; }
  // One line per odd entry skipped by the last chunks() call.
  std::vector<std::string> problems() const;

 private:
  std::string folder_;
  Mode mode_;
  std::mutex append_mutex_;
  std::uint64_t next_chunk_ = 0;
  mutable std::mutex problems_mutex_;
  mutable std::vector<std::string> problems_;
};

}  // namespace oppidum::selfplay
