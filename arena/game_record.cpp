#include "arena/game_record.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "games/quote.h"
#include "util/file_io.h"
#include "util/text.h"

namespace oppidum::arena {

const char* result_notation(double result_first) {
  if (result_first > 0) return "1-0";
  if (result_first < 0) return "0-1";
  return "1/2-1/2";
}

bool is_result_notation(std::string_view text) {
  return text == "1-0" || text == "0-1" || text == "1/2-1/2";
}

int result_of_notation(std::string_view notation) {
  return notation == "1-0" ? 1 : notation == "0-1" ? -1 : 0;
}

std::string format_game_line(const Game& game, const std::array<std::string, 2>& specs,
                             const std::vector<Action>& moves, double result_first,
                             const std::string& forfeit) {
  std::string line =
      game.name() + ' ' + specs[0] + ' ' + specs[1] + ' ' + result_notation(result_first);
  auto state = game.initial_state();
  for (Action action : moves) {
    line += ' ' + state->action_to_string(action);
    state->apply(action);
  }
  if (!forfeit.empty()) line += std::string(" ") + kForfeitMarker + quote_input(forfeit, 300);
  return line;
}

std::optional<GameLine> split_game_line(std::string_view line) {
  std::istringstream fields{std::string(line)};
  GameLine g;
  if (!(fields >> g.first)) return std::nullopt;
  for (const Game* game : all_games())
    if (g.first == game->name()) g.game = game;
  if (g.game && !(fields >> g.first)) return std::nullopt;
  if (!(fields >> g.second >> g.result)) return std::nullopt;
  if (!is_result_notation(g.result)) return std::nullopt;
  // A player is a spec, as a results file holds it: no control characters (a NUL, an escape).
  for (const std::string* player : {&g.first, &g.second})
    if (std::any_of(player->begin(), player->end(),
                    [](char c) { return std::iscntrl(static_cast<unsigned char>(c)) != 0; }))
      return std::nullopt;
  const std::string marker(kForfeitMarker);
  for (std::string move; fields >> move;) {
    if (g.moves.size() >= kMaxRecordedMoves) return std::nullopt;  // no game is that long
    if (move == "#") {  // the rest of the line: the forfeit's reason
      std::string rest;
      std::getline(fields, rest);
      if (rest.rfind(marker.substr(1), 0) == 0) g.forfeit = rest.substr(marker.size() - 1);
      break;
    }
    if (move.size() > kMaxRecordedMoveBytes) return std::nullopt;  // no move is that long
    g.moves.push_back(move);
  }
  return g;
}

RecordWriter::RecordWriter(std::string path) : path_(std::move(path)) {
  // A file already there takes games only when it is a record file (its first line that is not
  // blank holds a game's result: a game line, or one whose quoted spec held a blank): anything
  // else (a script, a results file, a config) is refused before a byte goes into it. What is no
  // regular file (a directory, a FIFO) write_line refuses, naming it.
  std::error_code ec;
  if (std::filesystem::is_regular_file(std::filesystem::status(path_, ec))) {
    std::optional<std::string> first;
    std::uintmax_t size = 0, at = 0;
    try {
      size = std::filesystem::file_size(path_);
      for (int line = 0; line < 1000 && at < size; ++line) {  // past blank lines
        first = util::read_line_at(path_, UINT64_MAX, kMaxRecordLineBytes, at);
        if (!first || !util::trim_blanks(*first).empty()) break;
        at += first->size() + 1;
      }
    } catch (const std::exception& e) {
      throw std::runtime_error("record file: " + std::string(e.what()));
    }
    // Every game line holds one (split_game_line), whatever its specs.
    const auto holds_result = [](const std::string& line) {
      const auto fields = util::blank_fields(line);
      return std::any_of(fields.begin(), fields.end(), is_result_notation);
    };
    if (at < size && (!first || !holds_result(*first)))
      throw std::runtime_error(
          "record file: " + path_ + " is not a record file (its first line is " +
          (first ? "\"" + quote_input(*first, 80) + "\"" : std::string("longer than any game's")) +
          ", not a game line: GAME FIRST SECOND RESULT MOVES); give a new file or one that "
          "--record wrote");
  }
  write_line("");
}

void RecordWriter::write(const std::string& line) { write_line(line + '\n'); }

void RecordWriter::write_line(const std::string& text) const {
  try {
    util::append_lines_to_file(path_, text);
  } catch (const util::FileError& e) {
    throw std::runtime_error("record file: " + std::string(e.what()));
  }
}

}  // namespace oppidum::arena
