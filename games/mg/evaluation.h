// Murus Gallicus's static evaluation for the alpha-beta player (arena/alphabeta.h finds
// `evaluate` by argument-dependent lookup): simple, documented, hand-set weights (the reasoning is
// in docs/BASELINES.md). A score for the side to move of a non-terminal position, positive when
// good for the mover, in points where a wall is worth 10, within +-kMaxEvaluation (games/game.h).
//
// Per side (mover minus opponent): towers 24, walls 10; advancement, 3 per row a tower stands
// ahead of its home row (up to the launch row, 2 rows before the enemy home row) and 1 per row for
// a wall; 1 per legal distribution (mobility); -60 per opponent tower that threatens to break
// through next move. A mover that can break through now gets kWinNextMove.
#pragma once

#include "games/game.h"
#include "games/mg/position.h"

namespace oppidum::mg {

int evaluate(const Position& pos);

// The towers of `player` that can break through with their next distribution.
Bitboard breakthrough_towers(const Position& pos, int player);
// The number of distributions `player` would have if it were to move.
int distributions(const Position& pos, int player);

}  // namespace oppidum::mg
