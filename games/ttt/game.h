// The tic-tac-toe entry of the game contract (see games/ttt/position.h for the rules, the
// notation, the symmetries and the input planes).
#pragma once

#include "games/game.h"

namespace oppidum::ttt {

const Game& ttt_game();

}  // namespace oppidum::ttt
