#include "arena/engine.h"

#include <cctype>
#include <istream>
#include <ostream>
#include <string>

#include "arena/match.h"
#include "games/quote.h"
#include "mcts/seed.h"
#include "util/text.h"

namespace oppidum::arena {

using util::trim;

namespace {

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
                std::uint64_t seed) {
  auto state = game.initial_state();
  const GameEnder ender{player};
  int me = -1;  // our side, known from the first line
  std::string raw;
  for (int line_number = 1; std::getline(in, raw); ++line_number) {
    const std::string line = trim(raw);
    if (line.empty()) continue;
    const std::string where =
        "engine: line " + std::to_string(line_number) + " ('" + quote_input(line, 60) + "'): ";
    if (is_word(line, "quit")) return;
    if (state->is_terminal())
      throw EngineError(where + "the game is over (" + state->to_string() + "); expected Quit");
    if (is_word(line, "start")) {
      if (me >= 0) throw EngineError(where + "Start comes only as the first line");
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
      const Action mine = player.choose_move_in_game(
          0, *state, mcts::derive_seed(seed, kMoveStream, static_cast<std::uint64_t>(state->ply())));
      out << state->action_to_string(mine) << '\n' << std::flush;
      if (!out) throw EngineError("engine: cannot write the move to the output");
      state->apply(mine);
    }
  }
}

}  // namespace oppidum::arena
