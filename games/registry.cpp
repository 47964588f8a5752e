#include "games/dvonn/game.h"
#include "games/game.h"
#include "games/mg/game.h"
#include "games/quote.h"

namespace oppidum {

const Game& game_by_name(std::string_view name) {
  if (name == "mg" || name == "murus-gallicus") return mg::mg_game();
  if (name == "dvonn") return dvonn::dvonn_game();
  throw GameError("unknown game \"" + quote_input(name) + "\"; the games are mg and dvonn");
}

}  // namespace oppidum
