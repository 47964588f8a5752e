// The alpha-beta baseline: negamax with alpha-beta pruning to a fixed depth (in plies; a DVONN pass
// is a ply), iterative deepening from depth 1, a transposition table (cleared before every move,
// so a move depends on the position alone) and move ordering: the transposition table's move
// first, then, where at least two plies remain, the children sorted by their static evaluation.
// Leaves are scored by each game's evaluation (games/<game>/evaluation.h, games/game.h); a finished game scores +-(kWinScore - plies from the
// root), so the search prefers the fastest win and the slowest loss.
//
// The search runs on the concrete position types (copy-make), not through GameState's virtual
// calls; AlphaBetaPlayer picks the type from the game.
//
// Limits (the web server's): a search may be given a deadline and a stop predicate. Both are
// checked every kLimitCheckNodes positions, so a search ends within a few milliseconds of either;
// it then answers with the deepest completed iteration. They only cut a search short: a search
// that ends before them returns exactly what it returns without them (same move, score and nodes).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "arena/player.h"
#include "arena/time_control.h"
#include "games/game.h"

namespace oppidum::arena {

// A won game at the root; a win found k plies ahead scores kWinScore - k.
inline constexpr int kWinScore = 1'000'000;
inline constexpr int kMaxAlphaBetaDepth = 12;
// Positions visited between two looks at the deadline and the stop predicate.
inline constexpr std::int64_t kLimitCheckNodes = 32;

struct AlphaBetaOptions {
  int depth = 3;                     // 1..kMaxAlphaBetaDepth plies
  bool transposition_table = true;   // off only to compare with plain minimax in tests
  // The search stops at this time (steady clock) ...
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // ... or once this returns true (empty: never). Called from the searching thread.
  std::function<bool()> stop;
  // No iteration deeper than the first starts at or after this time (a clock's player: the next
  // iteration would not end before the deadline).
  std::chrono::steady_clock::time_point last_iteration_start =
      std::chrono::steady_clock::time_point::max();
  // A player's move on a time control: with one legal move, one iteration is enough (the time is
  // kept for the others). Off for a search asked for its depth (the web page's analysis).
  bool forced_move_at_once = false;
};

struct AlphaBetaResult {
  Action action = -1;        // the best move found
  int score = 0;             // for the side to move at the root
  int depth = 0;             // the deepest completed iteration (less than asked when a win was
                             // proven sooner)
  std::int64_t nodes = 0;    // positions visited, all iterations together
  // True when the deadline or the stop predicate ended the search before `depth` plies: `action`
  // and `score` are those of the deepest completed iteration (`depth`), or, when not even depth 1
  // was completed (`depth` 0, `score` 0), the move the static evaluation ranks first.
  bool stopped = false;
};

// Searches a non-terminal position of "mg" or "dvonn". Throws std::invalid_argument for a depth out
// of range, std::logic_error for a terminal position.
AlphaBetaResult alphabeta_search(const GameState& state, const AlphaBetaOptions& options);

// Plain minimax value (no pruning, no table) of `state` for its side to move, with the same leaf
// scores as alphabeta_search: the reference that tests compare alpha-beta against.
int minimax_value(const GameState& state, int depth);

// `alphabeta:depth=N` searches every move to depth N, as it always did. With a time key
// (`alphabeta:ms=T`, `alphabeta:clock=S`, arena/time_control.h) it deepens iteratively until the
// move's deadline, to at most `depth` plies (default kMaxAlphaBetaDepth), and answers with the
// deepest completed iteration; a search that finds a proven win or loss counts as decided for
// the clock's rule.
class AlphaBetaPlayer final : public Player {
 public:
  // `show_depth`: the canonical spec names the depth (always when untimed).
  explicit AlphaBetaPlayer(int depth, TimeControl time = {}, bool show_depth = true);
  std::string spec() const override;
  int depth() const { return depth_; }
  Action choose_move(const GameState& state, std::uint64_t seed) override;
  Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) override;
  void game_ended(int game_id) noexcept override { clocks_.end_game(game_id); }
  TimeControl time_control() const override { return time_; }
  void charge_time(int game_id, double seconds) override {
    clocks_.charge_seconds(game_id, seconds);
  }
  void stop_moves_when(const std::atomic<bool>* flag) override { stop_.set(flag); }

 private:
  int depth_;
  TimeControl time_;
  bool show_depth_;
  GameClocks clocks_;
  MoveStopFlag stop_;
};

}  // namespace oppidum::arena
