// Arena games for the web page: the record files of `oppidum arena --record FILE` and
// `oppidum play --record FILE` (arena/game_record.h: one game per line, the two players' specs, the
// result and the moves from the initial position). `oppidum serve --arena-games FILE` names them;
// the gate matches of `train` keep no moves, so a run folder holds none of its own.
//
// A file is read a line at a time; what is kept of each game is its players, result, length and
// where its line starts (a game asked for is read again from there), about 32 bytes a game. A file
// that grew is read on from where the last read ended; one that changed otherwise (shorter, or
// rewritten) is read again from its start. A line that is not a game (too few fields, an unknown
// result, a move that is not legal where it is played) is counted and skipped. The game of a file
// is the first registered game (games/registry.h) its first moves are legal in.
// Read-only and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "arena/game_record.h"
#include "games/game.h"
#include "util/file_io.h"
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
  // What is kept of one game.
  struct Entry {
    std::uint64_t offset = 0;       // where its line starts
    std::uint32_t first = 0, second = 0;  // its players, in players_
    std::uint32_t plies = 0;
    std::int8_t result = 0;         // for the first player: +1, 0, -1
    const Game* game = nullptr;     // the game its moves are legal in
  };
  // What a read of the file found; replaces the reader's all at once when it is whole.
  struct Index {
    util::FollowMark mark;  // after its last whole line
    std::uint64_t size = 0;
    std::int64_t mtime = -1;
    std::string game;
    std::vector<Entry> games;
    std::vector<std::string> players;
    std::unordered_map<std::string, std::uint32_t> player_index;
    int skipped = 0;
    // What a last line without its newline added (read again once the file grows).
    int tail_games = 0, tail_skipped = 0;
  };
  void refresh_locked();
  std::uint32_t player(Index& index, const std::string& spec);

  std::string name_;
  std::filesystem::path path_;
  std::mutex mutex_;
  Index index_;
  std::optional<std::vector<SourceResults>> results_;  // results() of index_, once counted
};

}  // namespace oppidum::web
