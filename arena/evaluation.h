// Static evaluations for the alpha-beta baseline: simple, documented, hand-set weights (the full
// description and the reasoning are in docs/BASELINES.md). Each returns a score for the side to move
// of a non-terminal position: positive is good for the mover, in "points" where one Murus Gallicus
// wall or one DVONN piece of controlled height is worth 10. Scores stay within +-kMaxEvaluation, far
// below the search's proven-win scores, so a proven result always outranks a heuristic one.
#pragma once

#include "games/dvonn/position.h"
#include "games/mg/position.h"

namespace oppidum::arena {

inline constexpr int kMaxEvaluation = 100'000;
// What a leaf is worth when its side to move can win with its next action (a Murus Gallicus
// breakthrough): not proven by the search, but as good as won.
inline constexpr int kWinNextMove = 50'000;

// Murus Gallicus, per side (mover minus opponent): towers 24, walls 10; advancement, 3 per row a
// tower stands ahead of its home row (up to the launch row, 2 rows before the enemy home row) and 1
// per row for a wall; 1 per legal distribution (mobility); -60 per opponent tower that threatens to
// break through next move. A mover that can break through now gets kWinNextMove.
int evaluate_mg(const mg::Position& pos);

// Murus Gallicus: the towers of `player` that can break through with their next distribution.
mg::Bitboard mg_breakthrough_towers(const mg::Position& pos, int player);
// Murus Gallicus: the number of distributions `player` would have if it were to move.
int mg_distributions(const mg::Position& pos, int player);

// DVONN, per side (mover minus opponent).
// Placement phase: 3 per own piece next to a DVONN piece (safe from being cut off), 1 per own
// piece with a free side (on the edge or next to an empty space: it can move early).
// Moving phase: 10 per unit of controlled height (the final score), 4 per own stack that can move,
// 3 per own stack next to or holding a DVONN piece.
int evaluate_dvonn(const dvonn::Position& pos);

inline int evaluate(const mg::Position& pos) { return evaluate_mg(pos); }
inline int evaluate(const dvonn::Position& pos) { return evaluate_dvonn(pos); }

}  // namespace oppidum::arena
