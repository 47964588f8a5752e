#include "web/arena_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>
#include <tuple>

#include "arena/game_record.h"
#include "games/game.h"
#include "games/quote.h"
#include "util/file_io.h"
#include "util/text.h"
#include "web/board_json.h"
#include "web/errors.h"
#include "web/run_reader.h"

namespace oppidum::web {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;

}  // namespace

ArenaReader::ArenaReader(std::string name, fs::path path)
    : name_(std::move(name)), path_(std::move(path)) {
  std::error_code ec;
  const fs::file_status status = fs::status(path_, ec);
  if (!fs::exists(status))
    throw std::runtime_error(path_.string() + ": no such record file (give a file written by "
                             "`oppidum arena --record FILE`)");
  if (!fs::is_regular_file(status))
    throw std::runtime_error(path_.string() + ": not a regular file, so no record file (give a "
                             "file written by `oppidum arena --record FILE`)");
}

std::uint32_t ArenaReader::player(Index& index, const std::string& spec) {
  const auto [it, added] =
      index.player_index.emplace(spec, static_cast<std::uint32_t>(index.players.size()));
  if (added) index.players.push_back(spec);
  return it->second;
}

void ArenaReader::refresh_locked() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0)
    throw NotFound(name_ + ": the record file cannot be read (" + std::strerror(errno) + ")");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto inode = static_cast<std::uint64_t>(st.st_ino);
  const std::int64_t mtime =
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (size == index_.size && mtime == index_.mtime && inode == index_.mark.inode) return;
  if (size > kMaxFileBytes)
    throw BadRequest(name_ + ": the record file is larger than 256 MiB");
  // A file that grew (a match still recording) is read on from its last whole line; anything else
  // from its start, into a new index that replaces the old one only when it is whole.
  std::optional<util::RegularFileReader> file;
  bool grew = false;
  try {
    file.emplace(path_.string(), kMaxFileBytes);
    grew = index_.mtime >= 0 && size > index_.size && util::still_follows(*file, index_.mark);
  } catch (const util::FileError& e) {
    throw NotFound(name_ + ": the record file cannot be read (" + e.what() + ")");
  }
  Index fresh;
  Index& index = grew ? index_ : fresh;
  if (grew) {  // a last line without its newline was counted; it is read again, whole
    index.games.resize(index.games.size() - index.tail_games);
    index.skipped -= index.tail_skipped;
  }
  index.tail_games = index.tail_skipped = 0;
  std::uint64_t until = grew ? index.mark.until : 0, last_line = grew ? index.mark.last_line : 0;
  const auto visit = [&](const util::FileLine& l) {
    if (l.ended) until = l.next, last_line = l.offset;
    const auto skip = [&] {
      ++index.skipped;
      if (!l.ended) index.tail_skipped = 1;
    };
    if (l.too_long) return skip();
    std::optional<arena::GameLine> split = arena::split_game_line(l.text);
    if (!split) {
      if (!util::trim_blanks(std::string(l.text)).empty()) skip();
      return;
    }
    const arena::GameLine& g = *split;
    // The line's game: the one it names, else the first in which its moves are legal; a file
    // holds one game.
    const oppidum::Game* found = nullptr;
    for (const oppidum::Game* game : all_games()) {
      if (g.game && game != g.game) continue;
      if (!index.game.empty() && index.game != game->name()) continue;
      auto state = game->initial_state();
      try {
        for (const std::string& m : g.moves) state->apply(state->parse_action(m));
      } catch (const GameError&) {
        continue;
      }
      found = game;
      if (index.game.empty() && !g.moves.empty()) index.game = game->name();
      break;
    }
    if (found == nullptr) return skip();
    Entry e;
    e.offset = l.offset;
    e.first = player(index, g.first);
    e.second = player(index, g.second);
    e.plies = static_cast<std::uint32_t>(g.moves.size());
    e.result = static_cast<std::int8_t>(arena::result_of_notation(g.result));
    e.game = found;
    index.games.push_back(e);
    if (!l.ended) index.tail_games = 1;
  };
  try {
    util::for_each_line(*file, arena::kMaxRecordLineBytes, until, visit);
    index.mark = util::follow_mark(*file, until, last_line);
  } catch (const std::exception& e) {
    if (grew) index_ = Index{};  // read again from the start next time
    throw NotFound(name_ + ": the record file cannot be read (" + e.what() + ")");
  }
  index.size = size;
  index.mtime = mtime;
  if (!grew) index_ = std::move(fresh);
  results_.reset();
}

json ArenaReader::info() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  return {{"name", name_},
          {"game", index_.game},
          {"games", index_.games.size()},
          {"skipped", index_.skipped}};
}

json ArenaReader::list_games(int page, int per_page, const std::string& player,
                             const std::string& result) {
  if (page < 0) throw BadRequest("page must be 0 or more");
  if (per_page < 1 || per_page > kMaxGamesPerPage)
    throw BadRequest("per_page must be 1.." + std::to_string(kMaxGamesPerPage) + ", got " +
                     std::to_string(per_page));
  // Both listings take both spellings of a draw.
  const std::string wanted = result == "draw" ? "1/2-1/2" : result;
  if (!wanted.empty() && !arena::is_result_notation(wanted))
    throw BadRequest("result must be 1-0, 0-1 or 1/2-1/2 (draw), got \"" + quote_input(result) +
                     "\"");
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  json games = json::array();
  std::int64_t total = 0;
  const std::int64_t first = static_cast<std::int64_t>(page) * per_page;
  for (std::size_t i = index_.games.size(); i-- > 0;) {
    const Entry& g = index_.games[i];
    const std::string result_text = arena::result_notation(g.result);
    const std::string& a = index_.players[g.first];
    const std::string& b = index_.players[g.second];
    if (!wanted.empty() && result_text != wanted) continue;
    if (!player.empty() && a.find(player) == std::string::npos &&
        b.find(player) == std::string::npos)
      continue;
    if (total >= first && total < first + per_page)
      games.push_back({{"index", i}, {"first", a}, {"second", b},
                       {"result", result_text}, {"plies", g.plies}});
    ++total;
  }
  return {{"total", total},
          {"all", index_.games.size()},
          {"page", page},
          {"per_page", per_page},
          {"pages", (total + per_page - 1) / per_page},
          {"games", games}};
}

std::vector<SourceResults> ArenaReader::results() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  // Kept until the file changes: the page asks every few seconds, and a file of 200,000 games
  // took some 0.1 s to count again.
  if (results_) return *results_;
  std::vector<SourceResults> out;
  // One line per game and pair of players, whoever moved first: (game, players) -> line.
  std::map<std::tuple<const Game*, std::uint32_t, std::uint32_t>, std::size_t> line_of;
  for (const Entry& g : index_.games) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const SourceResults& s) { return s.game == g.game->name(); });
    if (it == out.end()) {
      out.push_back({g.game->name(), name_, {}, {}});
      it = out.end() - 1;
    }
    const auto key = std::make_tuple(g.game, std::min(g.first, g.second),
                                     std::max(g.first, g.second));
    auto line = line_of.find(key);
    if (line == line_of.end()) {
      line = line_of.emplace(key, it->matches.size()).first;
      it->matches.push_back({index_.players[g.first], index_.players[g.second], 0, 0, 0});
    }
    arena::MatchLine& m = it->matches[line->second];
    // The line counts from its first-seen player's view.
    const bool first_is_a = m.a == index_.players[g.first];
    if (g.result > 0) (first_is_a ? m.wins : m.losses) += 1;
    else if (g.result < 0) (first_is_a ? m.losses : m.wins) += 1;
    else m.draws += 1;
  }
  results_ = out;
  return out;
}

json ArenaReader::game_record(int index) {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  if (index < 0 || static_cast<std::size_t>(index) >= index_.games.size())
    throw NotFound(name_ + " has no game " + std::to_string(index) + " (" +
                   std::to_string(index_.games.size()) + " games)");
  const Entry& entry = index_.games[static_cast<std::size_t>(index)];
  // Its line read again from where it starts (the file was checked when it was read) and replayed:
  // moves, positions and views are not kept in memory.
  std::optional<std::string> text;
  try {
    text = util::read_line_at(path_.string(), kMaxFileBytes, arena::kMaxRecordLineBytes,
                              entry.offset);
  } catch (const std::exception& e) {
    throw NotFound(name_ + ": the record file cannot be read (" + e.what() + ")");
  }
  const auto changed = [&] {
    index_ = Index{};  // the next request reads the file again from its start
    return NotFound(name_ + ": game " + std::to_string(index) +
                    " changed since the file was read; ask again");
  };
  std::optional<arena::GameLine> line;
  if (text) line = arena::split_game_line(*text);
  if (!line || line->first != index_.players[entry.first] ||
      line->second != index_.players[entry.second] || line->moves.size() != entry.plies)
    throw changed();
  const arena::GameLine& g = *line;
  auto state = entry.game->initial_state();
  json moves = json::array();
  json positions = {state->to_string()};
  json boards = {board_json(*state)};
  for (const std::string& m : g.moves) {
    Action action = -1;
    try {
      action = state->parse_action(m);
    } catch (const GameError&) {
      throw changed();
    }
    json move = move_json(*state, action);
    move["side"] = state->current_player();
    moves.push_back(std::move(move));
    state->apply(action);
    positions.push_back(state->to_string());
    boards.push_back(board_json(*state));
  }
  return {{"file", name_},       {"index", index},      {"game", entry.game->name()},
          {"first", g.first},    {"second", g.second},  {"result", g.result},
          {"forfeit", g.forfeit}, {"moves", moves},     {"positions", positions},
          {"boards", boards}};
}

}  // namespace oppidum::web
