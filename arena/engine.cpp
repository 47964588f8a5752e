#include "arena/engine.h"

#include <cctype>
#include <istream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "arena/play.h"
#include "games/quote.h"
#include "util/text.h"

namespace oppidum::arena {

using util::trim;

namespace {

std::string first_word(const std::string& text) {
  return text.substr(0, text.find_first_of(" \t"));
}

bool is_word(const std::string& text, const char* word) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == word;
}

struct GameEnder {
  Player& player;
  ~GameEnder() { player.game_ended(0); }
};

}  // namespace

void run_engine(const Game& game, Player& player, std::istream& in, std::ostream& out,
                std::uint64_t seed, std::chrono::steady_clock::time_point started) {
  auto state = game.initial_state();
  const GameEnder ender{player};
  int me = -1;  // our side, known from the first line (after an Opening line: the second)
  bool first_line = true;
  // The start-up, which a referee's clock may see (it writes the first line at once).
  player.charge_time(
      0, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  std::string raw;
  for (int line_number = 1;; ++line_number) {
    try {
      if (!util::read_line(in, raw)) break;
    } catch (const util::LineTooLong& e) {
      throw EngineError("engine: line " + std::to_string(line_number) + ": " + e.what());
    }
    const std::string line = trim(raw);
    if (line.empty()) continue;
    const std::string where =
        "engine: line " + std::to_string(line_number) + " ('" + quote_input(line, 60) + "'): ";
    if (is_word(line, "quit")) return;
    if (state->is_terminal())
      throw EngineError(where + "the game is over (" + state->to_string() + "); expected Quit");
    const bool opening = is_word(first_word(line), "opening");
    if (opening && !first_line) throw EngineError(where + "Opening comes only as the first line");
    first_line = false;
    if (opening) {
      std::istringstream moves(line.substr(line.find_first_of(" \t") == std::string::npos
                                               ? line.size()
                                               : line.find_first_of(" \t")));
      std::string move;
      std::vector<Action> played;
      while (moves >> move) {
        try {
          played.push_back(state->parse_action(move));
          state->apply(played.back());
        } catch (const GameError& e) {
          throw EngineError(where + "the opening's move '" + quote_input(move, 60) +
                            "' is not playable in " + state->to_string() + ": " + e.what());
        }
        if (state->is_terminal())
          throw EngineError(where + "the opening ends the game (" + state->to_string() + ")");
      }
      // The player hears the opening as a match's players do (an external program with
      // openings=1 passes it on as its own Opening line); one that can play only from the
      // initial position cannot take it.
      if (!played.empty() && player.needs_initial_position())
        throw EngineError(where + player.spec() +
                          " plays only from the initial position: it cannot be given an Opening "
                          "(an external program that reads the Opening line needs openings=1)");
      player.game_started(0, played);
      continue;
    }
    if (is_word(line, "start")) {
      if (me >= 0)
        throw EngineError(where + "Start comes only as the first line (or after Opening)");
      me = state->current_player();
    } else {
      if (me < 0) me = 1 - state->current_player();
      Action opponent = -1;
      try {
        opponent = state->parse_action(line);
      } catch (const GameError& e) {
        throw EngineError(where + "the opponent's move is not playable in " + state->to_string() +
                          ": " + e.what());
      }
      state->apply(opponent);
    }
    // Our moves, as long as we are to move (twice in a row for DVONN's White after the last
    // placement); nothing when the game is over.
    while (!state->is_terminal() && state->current_player() == me) {
      Action mine = -1;
      try {
        mine = choose_in_game(player, *state, seed);
      } catch (const Forfeit& e) {  // whose it is, the message says
        throw EngineError(std::string("engine: ") + e.what());
      }
      out << state->action_to_string(mine) << '\n' << std::flush;
      if (!out) throw EngineError("engine: cannot write the move to the output");
      state->apply(mine);
    }
  }
}

}  // namespace oppidum::arena
