// The Murus Gallicus entry of the game contract (see games/mg/position.h for the rules).
#pragma once

#include "games/game.h"

namespace oppidum::mg {

const Game& mg_game();

}  // namespace oppidum::mg
