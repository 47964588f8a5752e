// Arena games for the web page: the record files of `oppidum arena --record FILE` and
// `oppidum play --record FILE` (arena/game_record.h: one game per line, the two players' specs, the
// result and the moves from the initial position). `oppidum serve --arena-games FILE` names them;
// the gate matches of `train` keep no moves, so a run folder holds none of its own.
//
// A file is read whole when it changed (size or modification time) and kept parsed in memory; a
// line that is not a game (too few fields, an unknown result, a move that is not legal where it is
// played) is counted and skipped. The game of a file is the first registered game (games/registry.h)
// its first moves are legal in.
// Read-only and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arena/game_record.h"
#include "games/game.h"
#include "web/ladder.h"

namespace oppidum::web {

class ArenaReader {
 public:
  // `name` is the file's name in the API. Throws std::runtime_error when the file is missing.
  ArenaReader(std::string name, std::filesystem::path path);

  const std::string& name() const { return name_; }
  // {name, game, games, skipped}
  nlohmann::json info();
  // A page of the games, newest (last line) first; `player` keeps the games where either spec
  // contains it, `result` is "1-0", "0-1", "1/2-1/2" or empty. Throws BadRequest for bad pages.
  nlohmann::json list_games(int page, int per_page, const std::string& player,
                            const std::string& result);
  // One game replayed: players, result, moves with their cells and sides, every position and its
  // board view. Throws NotFound.
  nlohmann::json game_record(int index);
  // The games' results for the ratings tab: per game, one match line per pair of players (first
  // against second, from the first's view).
  std::vector<SourceResults> results();

 private:
  void refresh_locked();

  std::string name_;
  std::filesystem::path path_;
  std::mutex mutex_;
  std::uintmax_t size_ = 0;
  std::int64_t mtime_ = -1;
  std::string game_;
  std::vector<arena::GameLine> games_;  // `game`: the game the moves are legal in
  int skipped_ = 0;
};

}  // namespace oppidum::web
