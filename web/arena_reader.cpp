#include "web/arena_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "arena/game_record.h"
#include "games/game.h"
#include "games/quote.h"
#include "util/file_io.h"
#include "util/text.h"
#include "web/board_json.h"
#include "web/errors.h"

namespace oppidum::web {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{256} << 20;

}  // namespace

ArenaReader::ArenaReader(std::string name, fs::path path)
    : name_(std::move(name)), path_(std::move(path)) {
  if (!fs::is_regular_file(path_))
    throw std::runtime_error(path_.string() + ": no such record file (give a file written by "
                             "`oppidum arena --record FILE`)");
}

void ArenaReader::refresh_locked() {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path_, ec);
  const auto mtime = static_cast<std::int64_t>(fs::last_write_time(path_, ec).time_since_epoch().count());
  if (ec) throw NotFound(name_ + ": the record file cannot be read (" + ec.message() + ")");
  if (size == size_ && mtime == mtime_) return;
  if (size > kMaxFileBytes)
    throw BadRequest(name_ + ": the record file is larger than 256 MiB");
  std::string text;
  try {
    text = util::read_regular_file(path_.string(), kMaxFileBytes);
  } catch (const util::FileError& e) {
    throw NotFound(name_ + ": the record file cannot be read (" + e.what() + ")");
  }
  std::istringstream in(text);
  games_.clear();
  skipped_ = 0;
  game_.clear();
  std::string line;
  while (std::getline(in, line)) {
    std::optional<arena::GameLine> split = arena::split_game_line(line);
    if (!split) {
      skipped_ += !util::trim_blanks(line).empty();
      continue;
    }
    arena::GameLine g = std::move(*split);
    const oppidum::Game* named = g.game;
    g.game = nullptr;
    // The line's game: the one it names, else the first in which its moves are legal; a file
    // holds one game.
    for (const oppidum::Game* game : all_games()) {
      if (named && game != named) continue;
      if (!game_.empty() && game_ != game->name()) continue;
      auto state = game->initial_state();
      try {
        for (const std::string& m : g.moves) state->apply(state->parse_action(m));
      } catch (const GameError&) {
        continue;
      }
      g.game = game;
      if (game_.empty() && !g.moves.empty()) game_ = game->name();
      break;
    }
    if (g.game == nullptr) {
      ++skipped_;
      continue;
    }
    games_.push_back(std::move(g));
  }
  size_ = size;
  mtime_ = mtime;
}

json ArenaReader::info() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  return {{"name", name_}, {"game", game_}, {"games", games_.size()}, {"skipped", skipped_}};
}

json ArenaReader::list_games(int page, int per_page, const std::string& player,
                             const std::string& result) {
  if (page < 0) throw BadRequest("page must be 0 or more");
  if (per_page < 1 || per_page > 200) throw BadRequest("per_page must be 1..200");
  // Both listings take both spellings of a draw.
  const std::string wanted = result == "draw" ? "1/2-1/2" : result;
  if (!wanted.empty() && wanted != "1-0" && wanted != "0-1" && wanted != "1/2-1/2")
    throw BadRequest("result must be 1-0, 0-1 or 1/2-1/2 (draw), got \"" + quote_input(result) +
                     "\"");
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  json games = json::array();
  std::int64_t total = 0;
  const std::int64_t first = static_cast<std::int64_t>(page) * per_page;
  for (std::size_t i = games_.size(); i-- > 0;) {
    const arena::GameLine& g = games_[i];
    if (!wanted.empty() && g.result != wanted) continue;
    if (!player.empty() && g.first.find(player) == std::string::npos &&
        g.second.find(player) == std::string::npos)
      continue;
    if (total >= first && total < first + per_page)
      games.push_back({{"index", i}, {"first", g.first}, {"second", g.second},
                       {"result", g.result}, {"plies", g.moves.size()}});
    ++total;
  }
  return {{"total", total},
          {"all", games_.size()},
          {"page", page},
          {"per_page", per_page},
          {"pages", (total + per_page - 1) / per_page},
          {"games", games}};
}

std::vector<SourceResults> ArenaReader::results() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  std::vector<SourceResults> out;
  // One line per game and pair of players, whoever moved first: (game, players) -> line.
  std::map<std::pair<std::string, std::pair<std::string, std::string>>, std::size_t> line_of;
  for (const arena::GameLine& g : games_) {
    if (!g.game) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const SourceResults& s) { return s.game == g.game->name(); });
    if (it == out.end()) {
      out.push_back({g.game->name(), name_, {}, {}});
      it = out.end() - 1;
    }
    const auto key = std::make_pair(g.game->name(), g.first < g.second
                                                        ? std::make_pair(g.first, g.second)
                                                        : std::make_pair(g.second, g.first));
    auto line = line_of.find(key);
    if (line == line_of.end()) {
      line = line_of.emplace(key, it->matches.size()).first;
      it->matches.push_back({g.first, g.second, 0, 0, 0});
    }
    arena::MatchLine& m = it->matches[line->second];
    const bool first_is_a = m.a == g.first;  // the line counts from its first-seen player's view
    if (g.result == "1-0") (first_is_a ? m.wins : m.losses) += 1;
    else if (g.result == "0-1") (first_is_a ? m.losses : m.wins) += 1;
    else m.draws += 1;
  }
  return out;
}

json ArenaReader::game_record(int index) {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_locked();
  if (index < 0 || static_cast<std::size_t>(index) >= games_.size())
    throw NotFound(name_ + " has no game " + std::to_string(index) + " (" +
                   std::to_string(games_.size()) + " games)");
  const arena::GameLine& g = games_[static_cast<std::size_t>(index)];
  // Replayed again (the file was checked when read): positions and views are not kept in memory.
  auto state = g.game->initial_state();
  json moves = json::array();
  json positions = {state->to_string()};
  json boards = {board_json(*state)};
  for (const std::string& m : g.moves) {
    const Action action = state->parse_action(m);
    json move = move_json(*state, action);
    move["side"] = state->current_player();
    moves.push_back(std::move(move));
    state->apply(action);
    positions.push_back(state->to_string());
    boards.push_back(board_json(*state));
  }
  return {{"file", name_},       {"index", index},      {"game", g.game->name()},
          {"first", g.first},    {"second", g.second},  {"result", g.result},
          {"forfeit", g.forfeit}, {"moves", moves},     {"positions", positions},
          {"boards", boards}};
}

}  // namespace oppidum::web
