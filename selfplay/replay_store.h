// Where finished games go and where the trainer reads them back. The store is an interface so that
// a networked implementation (self-play nodes pushing to a shared server) can replace the embedded
// default, FolderReplayStore: numbered chunk files (`chunk-00000012.bin`, the game-record format
// of selfplay/game_record.h) in one folder of the run, each written whole and renamed into place.
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
  // Creates the folder if needed; continues numbering after the chunks already there, and removes
  // leftover temporary files of an interrupted write.
  explicit FolderReplayStore(std::string folder);

  void append(const std::vector<GameRecord>& games) override;
  std::vector<std::string> chunks() const override;  // file paths
  ReadResult read_chunk(const std::string& id) const override;
  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
  mutable std::mutex mutex_;
  std::uint64_t next_chunk_ = 0;
};

}  // namespace oppidum::selfplay
