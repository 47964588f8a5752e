#include "games/registry.h"

#include "games/game.h"
#include "games/quote.h"

namespace oppidum {

const std::vector<const Game*>& all_games() {
#define OPPIDUM_LIST_GAME(P, game_fn) &game_fn(),
  static const std::vector<const Game*> games = {OPPIDUM_GAMES(OPPIDUM_LIST_GAME)};
#undef OPPIDUM_LIST_GAME
  return games;
}

std::string game_names(const char* separator) {
  std::string names;
  for (const Game* g : all_games()) names += (names.empty() ? "" : separator) + g->name();
  return names;
}

const Game& game_by_name(std::string_view name) {
  for (const Game* g : all_games())
    if (name == g->name()) return *g;
  if (name == "murus-gallicus") return game_by_name("mg");
  throw GameError("unknown game \"" + quote_input(name) + "\"; the games are " +
                  game_names(", "));
}

}  // namespace oppidum
