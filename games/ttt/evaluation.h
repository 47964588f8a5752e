// A static evaluation of tic-tac-toe for the alpha-beta player (found by argument-dependent
// lookup; games/game.h, kMaxEvaluation). A score for the side to move
// of a non-terminal position, positive when good for the mover: per line still open to a player
// (none of the opponent's marks on it), 1, and 10 more when it holds two of that player's marks
// (a threat of three in a row); the mover's lines count plus, the opponent's minus. The mover's
// own threat wins on its next mark and an opponent's double threat loses, but the evaluation
// leaves that to the search, which sees the whole game (at most 9 plies). |score| <= 8 * 11.
#pragma once

#include "games/ttt/position.h"

namespace oppidum::ttt {

inline int evaluate(const Position& pos) {
  const int us = pos.side_to_move();
  int score = 0;
  for (Cells line : kLines)
    for (int player = 0; player < 2; ++player) {
      if (pos.marks(1 - player) & line) continue;  // blocked for `player`
      const int value = __builtin_popcount(pos.marks(player) & line) == 2 ? 11 : 1;
      score += player == us ? value : -value;
    }
  return score;
}

}  // namespace oppidum::ttt
