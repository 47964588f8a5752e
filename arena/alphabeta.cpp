#include "arena/alphabeta.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "arena/concrete_search.h"

namespace oppidum::arena {
namespace {

constexpr int kInfinity = std::numeric_limits<int>::max() / 2;

using search::from_parent;
using search::from_table;
using search::kProvenThreshold;
using search::terminal_score;
using search::to_table;

enum class Bound : std::uint8_t { kExact, kLower, kUpper };

struct TableEntry {
  std::uint64_t key = 0;
  std::int32_t score = 0;
  std::int16_t move = -1;
  std::int8_t depth = -1;  // -1: empty
  Bound bound = Bound::kExact;
};

constexpr std::size_t kTableBits = 16;  // 65536 entries, 1 MiB

template <class P>
class Searcher {
 public:
  explicit Searcher(const AlphaBetaOptions& options)
      : deadline_(options.deadline),
        last_iteration_start_(options.last_iteration_start),
        forced_move_at_once_(options.forced_move_at_once),
        stop_(options.stop),
        has_limits_(options.deadline != std::chrono::steady_clock::time_point::max() ||
                    static_cast<bool>(options.stop)) {
    if (options.transposition_table) table_.resize(std::size_t{1} << kTableBits);
  }

  AlphaBetaResult run(const P& root, int depth) {
    AlphaBetaResult result;
    ActionList legal;
    root.legal_actions(legal);
    if (legal.empty()) throw std::logic_error("alpha-beta: the game is over, no move to choose");
    // Root moves with the score of the last iteration, best first.
    std::vector<std::pair<int, Action>> moves;
    for (Action a : legal) moves.emplace_back(order_key(root, a), a);
    std::stable_sort(moves.begin(), moves.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (int d = 1; d <= depth; ++d) {
      if (d > 1 && last_iteration_start_ != std::chrono::steady_clock::time_point::max() &&
          std::chrono::steady_clock::now() >= last_iteration_start_)
        break;
      int alpha = -kInfinity;
      Action best = moves.front().second;
      for (auto& [score, action] : moves) {
        P child = root;
        child.apply(action);
        score = from_parent(root, child, child_search(root, child, d - 1, alpha, kInfinity, 1));
        if (stopped_) break;
        if (score > alpha) {
          alpha = score;
          best = action;
        }
      }
      if (stopped_) {  // this iteration is unfinished: keep the last completed one
        if (d == 1) result.action = moves.front().second;  // the static order's first
        result.stopped = true;
        break;
      }
      // Moves that failed low keep their upper bounds: good enough to order the next iteration.
      std::stable_sort(moves.begin(), moves.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      result.action = best;
      result.score = alpha;
      result.depth = d;
      if (alpha > kProvenThreshold) break;  // the fastest forced win is found; deeper adds nothing
      // One legal move on a timed search: nothing to decide, the time is kept for the others.
      if (moves.size() == 1 && forced_move_at_once_) break;
    }
    result.nodes = nodes_;
    return result;
  }

 private:
  // Searches `child` with the parent's window (alpha, beta), returning its score for the child's
  // side to move.
  int child_search(const P& parent, const P& child, int depth, int alpha, int beta, int ply) {
    if (child.side_to_move() == parent.side_to_move()) return search(child, depth, alpha, beta, ply);
    return search(child, depth, -beta, -alpha, ply);
  }

  // Static score of playing `action`, for ordering, from the mover's view.
  int order_key(const P& pos, Action action) {
    P child = pos;
    child.apply(action);
    const int score = child.is_terminal() ? terminal_score(child, 1) : evaluate(child);
    return from_parent(pos, child, score);
  }

  // True once the deadline has passed or the stop predicate said so (asked every
  // kLimitCheckNodes positions).
  bool limits_reached() {
    if (!has_limits_ || nodes_ % kLimitCheckNodes != 0) return false;
    return std::chrono::steady_clock::now() >= deadline_ || (stop_ && stop_());
  }

  // A stopped search unwinds at once, returning 0 everywhere and writing no table entry; run()
  // drops the unfinished iteration.
  int search(const P& pos, int depth, int alpha, int beta, int ply) {
    if (stopped_) return 0;
    ++nodes_;
    if (limits_reached()) {
      stopped_ = true;
      return 0;
    }
    if (depth == 0) return pos.is_terminal() ? terminal_score(pos, ply) : evaluate(pos);
    ActionList legal;
    pos.legal_actions(legal);
    if (legal.empty()) return terminal_score(pos, ply);

    Action table_move = -1;
    TableEntry* entry = nullptr;
    const std::uint64_t key = table_.empty() ? 0 : pos.hash();
    if (!table_.empty()) {
      entry = &table_[key & (table_.size() - 1)];
      if (entry->key == key && entry->depth >= 0) {
        if (legal.contains(entry->move)) table_move = entry->move;
        if (entry->depth >= depth) {
          const int score = from_table(entry->score, ply);
          if (entry->bound == Bound::kExact) return score;
          if (entry->bound == Bound::kLower) alpha = std::max(alpha, score);
          else beta = std::min(beta, score);
          if (alpha >= beta) return score;
        }
      }
    }
    // The window actually searched: a stored bound may have narrowed it, and the result is exact
    // only inside it (a deeper entry's lower bound can raise alpha above what this shallower
    // search finds; failing low against the raised alpha is then an upper bound, not exact).
    const int alpha_start = alpha;
    const int beta_start = beta;

    std::array<std::pair<int, Action>, kMaxLegalActions> moves;
    const int n = legal.size();
    for (int i = 0; i < n; ++i) {
      const Action a = legal[i];
      int key_score = 0;
      if (a == table_move) key_score = kInfinity;
      else if (depth >= 2) key_score = order_key(pos, a);
      moves[static_cast<std::size_t>(i)] = {key_score, a};
    }
    std::stable_sort(moves.begin(), moves.begin() + n,
                     [](const auto& x, const auto& y) { return x.first > y.first; });

    int best = -kInfinity;
    Action best_move = moves[0].second;
    for (int i = 0; i < n; ++i) {
      const Action a = moves[static_cast<std::size_t>(i)].second;
      P child = pos;
      child.apply(a);
      const int score = from_parent(pos, child, child_search(pos, child, depth - 1, alpha, beta,
                                                             ply + 1));
      if (stopped_) return 0;
      if (score > best) {
        best = score;
        best_move = a;
      }
      alpha = std::max(alpha, score);
      if (alpha >= beta) break;
    }

    if (entry != nullptr && depth >= entry->depth) {
      entry->key = key;
      entry->score = to_table(best, ply);
      entry->move = static_cast<std::int16_t>(best_move);
      entry->depth = static_cast<std::int8_t>(depth);
      entry->bound = best <= alpha_start ? Bound::kUpper
                     : best >= beta_start ? Bound::kLower
                                          : Bound::kExact;
    }
    return best;
  }

  std::vector<TableEntry> table_;
  std::int64_t nodes_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::steady_clock::time_point last_iteration_start_;
  bool forced_move_at_once_;
  std::function<bool()> stop_;
  bool has_limits_ = false;  // a deadline or a stop predicate was given
  bool stopped_ = false;
};

template <class P>
int minimax(const P& pos, int depth, int ply) {
  if (depth == 0) return pos.is_terminal() ? terminal_score(pos, ply) : evaluate(pos);
  ActionList legal;
  pos.legal_actions(legal);
  if (legal.empty()) return terminal_score(pos, ply);
  int best = -kInfinity;
  for (Action a : legal) {
    P child = pos;
    child.apply(a);
    best = std::max(best, from_parent(pos, child, minimax(child, depth - 1, ply + 1)));
  }
  return best;
}

void check_depth(int depth) {
  if (depth < 1 || depth > kMaxAlphaBetaDepth)
    throw std::invalid_argument("alpha-beta: depth must be 1.." +
                                std::to_string(kMaxAlphaBetaDepth) + ", not " +
                                std::to_string(depth));
}

}  // namespace

AlphaBetaResult alphabeta_search(const GameState& state, const AlphaBetaOptions& options) {
  check_depth(options.depth);
  return search::with_position(state, [&](const auto& pos) {
    using P = std::decay_t<decltype(pos)>;
    Searcher<P> searcher(options);
    return searcher.run(pos, options.depth);
  });
}

int minimax_value(const GameState& state, int depth) {
  check_depth(depth);
  return search::with_position(state, [&](const auto& pos) { return minimax(pos, depth, 0); });
}

AlphaBetaPlayer::AlphaBetaPlayer(int depth, TimeControl time, bool show_depth)
    : depth_(depth), time_(time), show_depth_(show_depth || !time.timed()), clocks_(time) {
  check_depth(depth);
}

std::string AlphaBetaPlayer::spec() const {
  const std::string keys =
      (show_depth_ ? ",depth=" + std::to_string(depth_) : std::string()) + time_.spec_suffix();
  return "alphabeta:" + keys.substr(1);
}

Action AlphaBetaPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  (void)seed;
  AlphaBetaOptions options;
  options.depth = depth_;
  options.stop = stop_.predicate();
  if (time_.timed()) {
    const double budget = move_budget(time_, state, time_.clock_seconds, false);
    options.deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                std::chrono::duration<double>(budget));
    options.forced_move_at_once = true;
  }
  return alphabeta_search(state, options).action;
}

Action AlphaBetaPlayer::choose_move_in_game(int game_id, const GameState& state,
                                            std::uint64_t seed) {
  if (!time_.timed()) return choose_move(state, seed);
  const auto start = SteadyClock::now();
  AlphaBetaOptions options;
  options.depth = depth_;
  options.stop = stop_.predicate();
  options.deadline = clocks_.deadline(game_id, state, start);
  options.forced_move_at_once = true;
  // On a clock, time not spent now is kept for later moves: no iteration starts after half the
  // budget (the next one takes several times all before it).
  if (time_.clock_seconds > 0)
    options.last_iteration_start = start + (options.deadline - start) / 2;
  const AlphaBetaResult result = alphabeta_search(state, options);
  clocks_.charge(game_id, start, result.depth > 0 && std::abs(result.score) > kProvenThreshold);
  return result.action;
}

}  // namespace oppidum::arena
