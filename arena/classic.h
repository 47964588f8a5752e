// The classical engine (`classic:` players, docs/BASELINES.md "The classical engine"): a
// principal-variation search (negamax with null windows after the first move, re-searched when
// one fails high) with iterative deepening, a transposition table that a player keeps across the
// moves of a game, the table's move first, two killer moves per ply and the history heuristic for
// ordering, late-move reductions, null-move pruning where the game allows it (Murus Gallicus:
// games/classic_eval.h, classic_null_move), one ply more where a position has a single legal move
// (a DVONN pass), and each game's feature evaluation at the leaves (weights fitted to game results
// in DVONN, set by hand in Murus Gallicus; games/classic_eval.h,
// `classic_evaluate`). A finished game scores +-(kWinScore - plies from the root), 0 for a draw,
// so near the end (DVONN's final count, a Murus Gallicus breakthrough) the search sees the exact
// result. Moves come from the rules module (Position::legal_actions), never a second generator.
//
// The search runs on the concrete position types (copy-make) like arena/alphabeta.h, for every
// registered game. Budgets: a depth (plies), a node count, a deadline and a stop predicate (the
// deadline and the predicate behave as in AlphaBetaOptions: looked at every kLimitCheckNodes
// positions; the search then answers with the deepest completed iteration, or a better root move
// its unfinished iteration had already proved). Iterative deepening also stops before an
// iteration that the deadline would very likely cut short (more than 60% of the time spent), and
// after depth 1 when there is only one legal move.
//
// Determinism: a search with only a depth and/or a node budget is a pure function of the position
// and of the table's content, so a `classic:depth=N` or `classic:nodes=N` player's move is a pure
// function of the position and the game's earlier positions that the player searched (its table
// and history counts carry over between the moves of one game, nothing between games).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arena/alphabeta.h"  // kWinScore, kLimitCheckNodes: the same scores and checks
#include "arena/player.h"
#include "arena/time_control.h"
#include "games/game.h"

namespace oppidum::arena {

inline constexpr int kMaxClassicDepth = 64;
inline constexpr int kDefaultClassicHashMb = 16;
inline constexpr int kMaxClassicHashMb = 4096;

// The transposition table and history counts of one game: one entry per slot (replaced by a newer
// search's entry, or by one at least as deep), a power of two of 16-byte slots within `megabytes`.
// An all-zero entry is empty, so the slots come from calloc: the kernel's zero pages, touched only
// as the search writes them. Making a table therefore costs microseconds whatever its size, and
// a move timed from before its table was made is not charged for clearing gigabytes.
class ClassicTable {
 public:
  explicit ClassicTable(int megabytes = kDefaultClassicHashMb);
  // Throws std::invalid_argument unless 1 <= megabytes <= kMaxClassicHashMb (allocates nothing).
  static void check_megabytes(int megabytes);

  struct Entry {
    std::uint64_t key;
    std::int32_t score;
    std::int16_t move;
    std::uint8_t depth_plus_one;  // 0: empty
    std::uint8_t bound_age;       // bound in the low 2 bits, the search's age above
  };
  std::size_t slots() const { return slots_; }
  // Entries written by any search so far (a test's way to see that the table is kept).
  std::size_t used() const;

 private:
  template <class P>
  friend class ClassicSearcher;
  struct Free {
    void operator()(Entry* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<Entry[], Free> entries_;
  std::size_t slots_ = 0;
  std::vector<std::int32_t> history_;  // [side * actions + action], halved before each search
  std::uint8_t age_ = 0;               // counts searches, modulo 64
};

struct ClassicOptions {
  int depth = kMaxClassicDepth;   // 1..kMaxClassicDepth plies
  std::int64_t nodes = 0;          // stop after this many positions (0: no limit)
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<bool()> stop;      // empty: never; called from the searching thread
  // Late-move reductions, null-move pruning, single-reply extensions and the threat extension at
  // the horizon; off: a full-width search to `depth` that returns the minimax value (what tests
  // compare it with).
  bool selective = true;
};

struct ClassicResult {
  Action action = -1;
  int score = 0;           // for the side to move at the root
  int depth = 0;           // the deepest completed iteration
  std::int64_t nodes = 0;  // positions visited, all iterations together
  bool stopped = false;    // a budget other than the depth ended the search
};

// Searches a non-terminal position with `table` (kept by the caller across the moves of a game).
// Throws std::invalid_argument for a depth or node count out of range, std::logic_error for a
// terminal position.
ClassicResult classic_search(const GameState& state, const ClassicOptions& options,
                             ClassicTable& table);

struct ClassicSettings {
  TimeControl time;           // ms= per move or clock= per game (arena/time_control.h); none: 0
  int depth = 0;              // plies (0: kMaxClassicDepth)
  std::int64_t nodes = 0;     // positions per move (0: none)
  int hash_mb = kDefaultClassicHashMb;
};

// `classic:ms=N`, `classic:clock=S`, `classic:depth=N`, `classic:nodes=N` (at least one; together,
// the first reached ends the move), `hash=MB` the table of each game in progress. On a clock the
// move's deadline comes from the clock rule of arena/time_control.h (GameClocks), and a mate score
// counts as a decided result.
class ClassicPlayer final : public Player {
 public:
  explicit ClassicPlayer(const ClassicSettings& settings);
  std::string spec() const override;
  Action choose_move(const GameState& state, std::uint64_t seed) override;
  Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) override;
  void game_ended(int game_id) noexcept override;
  TimeControl time_control() const override { return settings_.time; }
  void charge_time(int game_id, double seconds) override {
    clocks_.charge_seconds(game_id, seconds);
  }
  void stop_moves_when(const std::atomic<bool>* flag) override { stop_.set(flag); }
  const ClassicSettings& settings() const { return settings_; }
  // Games whose table is held now.
  std::size_t tables_held() const;
  // The table of a game in progress (nullptr when none): for tests.
  const ClassicTable* table_of(int game_id) const;

 private:
  ClassicOptions options_now() const;
  ClassicSettings settings_;
  GameClocks clocks_;
  MoveStopFlag stop_;
  mutable std::mutex mutex_;
  std::map<int, std::unique_ptr<ClassicTable>> tables_;
};

}  // namespace oppidum::arena
