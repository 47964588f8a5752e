#include "arena/game_record.h"

#include <fstream>
#include <stdexcept>

namespace oppidum::arena {

const char* result_notation(double result_first) {
  if (result_first > 0) return "1-0";
  if (result_first < 0) return "0-1";
  return "1/2-1/2";
}

std::string format_game_line(const Game& game, const std::array<std::string, 2>& specs,
                             const std::vector<Action>& moves, double result_first) {
  std::string line = specs[0] + ' ' + specs[1] + ' ' + result_notation(result_first);
  auto state = game.initial_state();
  for (Action action : moves) {
    line += ' ' + state->action_to_string(action);
    state->apply(action);
  }
  return line;
}

RecordWriter::RecordWriter(std::string path) : path_(std::move(path)) {
  std::ofstream out(path_, std::ios::app);
  if (!out) throw std::runtime_error("cannot open record file " + path_ + " for writing");
}

void RecordWriter::write(const std::string& line) {
  std::ofstream out(path_, std::ios::app);
  out << line << '\n';
  out.flush();
  if (!out) throw std::runtime_error("cannot write to record file " + path_);
}

}  // namespace oppidum::arena
