// The alpha-beta baseline: negamax with alpha-beta pruning to a fixed depth (in plies; a DVONN pass
// is a ply), iterative deepening from depth 1, a transposition table (cleared before every move,
// so a move depends on the position alone) and move ordering: the transposition table's move
// first, then, where at least two plies remain, the children sorted by their static evaluation.
// Leaves are scored by arena/evaluation.h; a finished game scores +-(kWinScore - plies from the
// root), so the search prefers the fastest win and the slowest loss.
//
// The search runs on the concrete position types (copy-make), not through GameState's virtual
// calls; AlphaBetaPlayer picks the type from the game.
#pragma once

#include <cstdint>
#include <string>

#include "arena/player.h"
#include "games/game.h"

namespace oppidum::arena {

// A won game at the root; a win found k plies ahead scores kWinScore - k.
inline constexpr int kWinScore = 1'000'000;
inline constexpr int kMaxAlphaBetaDepth = 12;

struct AlphaBetaOptions {
  int depth = 3;                     // 1..kMaxAlphaBetaDepth plies
  bool transposition_table = true;   // off only to compare with plain minimax in tests
};

struct AlphaBetaResult {
  Action action = -1;        // the best move found
  int score = 0;             // for the side to move at the root
  int depth = 0;             // the deepest completed iteration (less than asked when a win was
                             // proven sooner)
  std::int64_t nodes = 0;    // positions visited, all iterations together
};

// Searches a non-terminal position of "mg" or "dvonn". Throws std::invalid_argument for a depth out
// of range, std::logic_error for a terminal position.
AlphaBetaResult alphabeta_search(const GameState& state, const AlphaBetaOptions& options);

// Plain minimax value (no pruning, no table) of `state` for its side to move, with the same leaf
// scores as alphabeta_search: the reference that tests compare alpha-beta against.
int minimax_value(const GameState& state, int depth);

class AlphaBetaPlayer final : public Player {
 public:
  explicit AlphaBetaPlayer(int depth);
  std::string spec() const override { return "alphabeta:depth=" + std::to_string(depth_); }
  Action choose_move(const GameState& state, std::uint64_t seed) override;

 private:
  int depth_;
};

}  // namespace oppidum::arena
