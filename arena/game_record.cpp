#include "arena/game_record.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "games/quote.h"
#include "util/file_io.h"

namespace oppidum::arena {

const char* result_notation(double result_first) {
  if (result_first > 0) return "1-0";
  if (result_first < 0) return "0-1";
  return "1/2-1/2";
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
  if (g.result != "1-0" && g.result != "0-1" && g.result != "1/2-1/2") return std::nullopt;
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

void for_each_record_line(const std::string& path, std::uint64_t max_bytes, std::uint64_t from,
                          const std::function<void(const RecordFileLine&)>& visit) {
  util::RegularFileReader file(path, max_bytes);
  file.seek(from);
  std::string pending;              // the line read so far
  RecordFileLine line;
  line.offset = from;
  line.number = 1;
  const auto hand_over = [&](bool ended) {
    std::string_view text = line.too_long ? std::string_view() : std::string_view(pending);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line.text = text;
    line.ended = ended;
    visit(line);
  };
  std::vector<char> block(std::size_t{1} << 16);
  std::uint64_t at = from;
  for (std::size_t n; (n = file.read(block.data(), block.size())) > 0;) {
    for (std::size_t i = 0; i < n;) {
      const char* newline = static_cast<const char*>(std::memchr(block.data() + i, '\n', n - i));
      const std::size_t end = newline ? static_cast<std::size_t>(newline - block.data()) : n;
      if (!line.too_long) {
        if (pending.size() + (end - i) > kMaxRecordLineBytes) {
          line.too_long = true;
          pending.clear();
          pending.shrink_to_fit();
        } else {
          pending.append(block.data() + i, end - i);
        }
      }
      at += end - i;
      i = end;
      if (!newline) break;
      line.next = at + 1;
      hand_over(true);
      ++i;
      ++at;
      pending.clear();
      const std::uint64_t next = line.number + 1;
      line = RecordFileLine{};
      line.offset = at;
      line.number = next;
    }
  }
  line.next = at;
  if (!pending.empty() || line.too_long) hand_over(false);
}

std::optional<std::string> read_record_line(const std::string& path, std::uint64_t max_bytes,
                                            std::uint64_t offset) {
  util::RegularFileReader file(path, max_bytes);
  if (offset >= file.size()) return std::nullopt;
  file.seek(offset);
  std::string line(static_cast<std::size_t>(
                       std::min<std::uint64_t>(file.size() - offset, kMaxRecordLineBytes + 1)),
                   '\0');
  line.resize(file.read(line.data(), line.size()));
  const auto newline = line.find('\n');
  if (newline == std::string::npos && line.size() > kMaxRecordLineBytes) return std::nullopt;
  if (newline != std::string::npos) line.resize(newline);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

RecordWriter::RecordWriter(std::string path) : path_(std::move(path)) {
  write_line("");
}

void RecordWriter::write(const std::string& line) { write_line(line + '\n'); }

void RecordWriter::write_line(const std::string& text) const {
  try {
    util::append_to_file(path_, text);
  } catch (const util::FileError& e) {
    throw std::runtime_error("record file: " + std::string(e.what()));
  }
}

}  // namespace oppidum::arena
