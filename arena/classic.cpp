#include "arena/classic.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "arena/concrete_search.h"

namespace oppidum::arena {

using search::from_parent;
using search::from_table;
using search::kProvenThreshold;
using search::terminal_score;
using search::to_table;

namespace {

constexpr int kInfinity = std::numeric_limits<int>::max() / 2;
// Plies below the root a search may reach (depth plus single-reply extensions).
constexpr int kMaxPly = 2 * kMaxClassicDepth;
// Nodes with at least this many plies left order their quiet moves by the children's static
// evaluation (after the table's move and the killers); shallower ones by history counts alone.
constexpr int kEvalOrderDepth = 3;
// Late-move reductions: from this move index on, at this depth and more, one ply less (two for
// moves from kLateMoveDouble at kLateDepthDouble plies or more).
constexpr int kLateMoveIndex = 3;
constexpr int kLateMoveDepth = 3;
constexpr int kLateMoveDouble = 8;
constexpr int kLateDepthDouble = 6;
// Null-move pruning: at a node off the principal variation with at least kNullMoveDepth plies
// left, whose static evaluation reaches beta, the opponent moves twice in a search kNullMoveR
// plies shallower; if the mover still reaches beta, the node fails high without a real move.
constexpr int kNullMoveDepth = 3;
constexpr int kNullMoveR = 2;
constexpr std::int32_t kHistoryCap = 1 << 20;
// A new iteration starts only while less than this many tenths of the time per move are spent.
constexpr int kIterationStartTenths = 6;

enum Bound : std::uint8_t { kExact = 0, kLower = 1, kUpper = 2 };

}  // namespace

void ClassicTable::check_megabytes(int megabytes) {
  if (megabytes < 1 || megabytes > kMaxClassicHashMb)
    throw std::invalid_argument("classic: hash must be 1.." + std::to_string(kMaxClassicHashMb) +
                                " MB, not " + std::to_string(megabytes));
}

ClassicTable::ClassicTable(int megabytes) {
  check_megabytes(megabytes);
  static_assert(std::is_trivial_v<Entry> && sizeof(Entry) == 16, "a slot is 16 zeroed bytes");
  std::size_t slots = 1;
  const std::size_t bytes = static_cast<std::size_t>(megabytes) << 20;
  while (slots * 2 * sizeof(Entry) <= bytes) slots *= 2;
  entries_.reset(static_cast<Entry*>(std::calloc(slots, sizeof(Entry))));
  if (!entries_) throw std::bad_alloc();
  slots_ = slots;
}

std::size_t ClassicTable::used() const {
  return static_cast<std::size_t>(std::count_if(entries_.get(), entries_.get() + slots_,
                                                [](const Entry& e) { return e.depth_plus_one > 0; }));
}

template <class P>
class ClassicSearcher {
 public:
  ClassicSearcher(const ClassicOptions& options, ClassicTable& table, int num_actions)
      : options_(options),
        table_(table),
        num_actions_(num_actions),
        has_clock_(options.deadline != std::chrono::steady_clock::time_point::max() ||
                   static_cast<bool>(options.stop)) {
    if (table_.history_.size() != 2 * static_cast<std::size_t>(num_actions))
      table_.history_.assign(2 * static_cast<std::size_t>(num_actions), 0);
    for (auto& h : table_.history_) h /= 2;  // older searches count less
    table_.age_ = static_cast<std::uint8_t>((table_.age_ + 1) % 64);
    for (auto& k : killers_) k = {-1, -1};
  }

  ClassicResult run(const P& root, int max_depth) {
    const auto start = std::chrono::steady_clock::now();
    ClassicResult result;
    ActionList legal;
    root.legal_actions(legal);
    if (legal.empty()) throw std::logic_error("classic: the game is over, no move to choose");
    // Root moves with the score of the last iteration, best first; the table's move leads.
    const Action table_move = stored_move(root);
    std::vector<std::pair<int, Action>> moves;
    for (Action a : legal) moves.emplace_back(a == table_move ? kInfinity : order_key(root, a), a);
    sort_moves(moves.begin(), moves.end());
    result.action = moves.front().second;
    for (int d = 1; d <= max_depth; ++d) {
      int alpha = -kInfinity;
      const int beta = kInfinity;
      Action best = moves.front().second;
      int best_score = -kInfinity;
      std::size_t done = 0;
      for (std::size_t i = 0; i < moves.size(); ++i) {
        auto& [score, action] = moves[i];
        P child = root;
        child.apply(action);
        int s;
        if (i == 0) {
          s = child_search(root, child, d - 1, alpha, beta, 1, true);
        } else {
          s = child_search(root, child, d - 1, alpha, alpha + 1, 1, false);
          if (!stopped_ && s > alpha) s = child_search(root, child, d - 1, alpha, beta, 1, true);
        }
        if (stopped_) break;
        score = s;
        ++done;
        if (s > best_score) {
          best_score = s;
          best = action;
        }
        alpha = std::max(alpha, s);
      }
      if (stopped_) {
        // The unfinished iteration's best is sound once the previous best (searched first) is
        // done: any other move it holds beat that one with a full window.
        if (done > 0) result.action = best;
        result.stopped = true;
        break;
      }
      sort_moves(moves.begin(), moves.end());
      store(root, d, best_score, best, -kInfinity, kInfinity, 0);
      result.action = best;
      result.score = best_score;
      result.depth = d;
      if (best_score > kProvenThreshold || best_score < -kProvenThreshold) break;
      if (moves.size() == 1) break;  // the only move: no need to know more
      if (options_.deadline != std::chrono::steady_clock::time_point::max()) {
        // The next iteration takes longer than all before it: start it only while less than
        // kIterationStartTenths tenths of the time are spent (its first moves may still improve
        // the move).
        const auto now = std::chrono::steady_clock::now();
        if ((now - start) * 10 > (options_.deadline - start) * kIterationStartTenths) {
          result.stopped = d < max_depth;
          break;
        }
      }
    }
    result.nodes = nodes_;
    return result;
  }

 private:
  // Best key first, equal keys in their order (a stable insertion sort: the lists are short, and
  // std::stable_sort takes a buffer from the heap at every node).
  template <class It>
  static void sort_moves(It first, It last) {
    for (It i = first; i != last; ++i) {
      auto item = *i;
      It j = i;
      for (; j != first && std::prev(j)->first < item.first; --j) *j = *std::prev(j);
      *j = item;
    }
  }

  int child_search(const P& parent, const P& child, int depth, int alpha, int beta, int ply,
                   bool pv) {
    const int s = child.side_to_move() == parent.side_to_move()
                      ? search(child, depth, alpha, beta, ply, pv)
                      : search(child, depth, -beta, -alpha, ply, pv);
    return from_parent(parent, child, s);
  }

  int order_key(const P& pos, Action action) {
    P child = pos;
    child.apply(action);
    const int score = child.is_terminal() ? terminal_score(child, 1) : classic_evaluate(child);
    return from_parent(pos, child, score);
  }

  bool limits_reached() {
    if (options_.nodes > 0 && nodes_ >= options_.nodes) return true;
    if (!has_clock_ || nodes_ % kLimitCheckNodes != 0) return false;
    return std::chrono::steady_clock::now() >= options_.deadline ||
           (options_.stop && options_.stop());
  }

  ClassicTable::Entry& slot(std::uint64_t key) {
    return table_.entries_[key & (table_.slots_ - 1)];
  }

  Action stored_move(const P& pos) {
    const std::uint64_t key = pos.hash();
    const ClassicTable::Entry& e = slot(key);
    return e.key == key && e.depth_plus_one > 0 ? e.move : -1;
  }

  void store(const P& pos, int depth, int best, Action move, int alpha_start, int beta_start,
             int ply) {
    const std::uint64_t key = pos.hash();
    ClassicTable::Entry& e = slot(key);
    const bool same_search = (e.bound_age >> 2) == table_.age_;
    if (e.depth_plus_one > 0 && e.key != key && same_search && e.depth_plus_one - 1 > depth) return;
    const std::uint8_t bound = best <= alpha_start ? kUpper : best >= beta_start ? kLower : kExact;
    e.key = key;
    e.score = to_table(best, ply);
    e.move = static_cast<std::int16_t>(move);
    e.depth_plus_one = static_cast<std::uint8_t>(std::clamp(depth, 0, 127) + 1);
    e.bound_age = static_cast<std::uint8_t>(bound | (table_.age_ << 2));
  }

  std::int32_t& history(int side, Action a) {
    return table_.history_[static_cast<std::size_t>(side * num_actions_ + a)];
  }

  // Negamax with fail-soft bounds. A stopped search unwinds at once, returning 0 everywhere and
  // writing nothing; run() drops what it returned. `after_null`: pos is a null move's child (no
  // second null move in a row).
  int search(const P& pos, int depth, int alpha, int beta, int ply, bool pv,
             bool after_null = false) {
    if (stopped_) return 0;
    ++nodes_;
    if (limits_reached()) {
      stopped_ = true;
      return 0;
    }
    // A threat at the horizon (a Murus Gallicus breakthrough next move) is answered, not
    // evaluated: one ply more, so that a parry is seen, or that there is none.
    if (depth <= 0 && options_.selective && ply < kMaxPly - 2 && !pos.is_terminal() &&
        classic_threatened(pos))
      depth = 1;
    if (depth <= 0 || ply >= kMaxPly - 1)
      return pos.is_terminal() ? terminal_score(pos, ply) : classic_evaluate(pos);
    ActionList legal;
    pos.legal_actions(legal);
    if (legal.empty()) return terminal_score(pos, ply);
    // A forced move (a DVONN pass) costs no depth.
    if (options_.selective && legal.size() == 1 && ply + depth < kMaxPly - 1) ++depth;

    const std::uint64_t key = pos.hash();
    ClassicTable::Entry& entry = slot(key);
    Action table_move = -1;
    if (entry.key == key && entry.depth_plus_one > 0) {
      if (legal.contains(entry.move)) table_move = entry.move;
      if (entry.depth_plus_one - 1 >= depth && !pv) {
        const int score = from_table(entry.score, ply);
        const int bound = entry.bound_age & 3;
        if (bound == kExact) return score;
        if (bound == kLower && score >= beta) return score;
        if (bound == kUpper && score <= alpha) return score;
      }
    }
    const int alpha_start = alpha;

    if (options_.selective && !pv && !after_null && depth >= kNullMoveDepth &&
        std::abs(beta) < kProvenThreshold && !classic_threatened(pos) &&
        classic_evaluate(pos) >= beta) {
      P passed = pos;
      if (classic_null_move(passed)) {
        const int s = -search(passed, std::max(0, depth - 1 - kNullMoveR), -beta, -beta + 1,
                              ply + 1, false, true);
        if (stopped_) return 0;
        // A proven win found after standing still is no proof: the real moves were not searched.
        if (s >= beta) return s > kProvenThreshold ? beta : s;
      }
    }

    const int side = pos.side_to_move();
    const auto& killers = killers_[static_cast<std::size_t>(ply)];
    std::array<std::pair<int, Action>, kMaxLegalActions> moves;
    const int n = legal.size();
    for (int i = 0; i < n; ++i) {
      const Action a = legal[i];
      int key_score;
      if (a == table_move) key_score = kInfinity;
      else if (a == killers[0]) key_score = kInfinity - 1;
      else if (a == killers[1]) key_score = kInfinity - 2;
      else if (depth >= kEvalOrderDepth) key_score = order_key(pos, a);
      else key_score = history(side, a) - kInfinity / 2;
      moves[static_cast<std::size_t>(i)] = {key_score, a};
    }
    sort_moves(moves.begin(), moves.begin() + n);

    int best = -kInfinity;
    Action best_move = moves[0].second;
    for (int i = 0; i < n; ++i) {
      const Action a = moves[static_cast<std::size_t>(i)].second;
      const bool quiet = moves[static_cast<std::size_t>(i)].first < kInfinity - 2;
      P child = pos;
      child.apply(a);
      int s;
      if (i == 0) {
        s = child_search(pos, child, depth - 1, alpha, beta, ply + 1, pv);
      } else {
        int reduction = 0;
        if (options_.selective && quiet && i >= kLateMoveIndex && depth >= kLateMoveDepth)
          reduction = i >= kLateMoveDouble && depth >= kLateDepthDouble ? 2 : 1;
        s = child_search(pos, child, depth - 1 - reduction, alpha, alpha + 1, ply + 1, false);
        if (!stopped_ && reduction > 0 && s > alpha)
          s = child_search(pos, child, depth - 1, alpha, alpha + 1, ply + 1, false);
        if (!stopped_ && pv && s > alpha && s < beta)
          s = child_search(pos, child, depth - 1, alpha, beta, ply + 1, true);
      }
      if (stopped_) return 0;
      if (s > best) {
        best = s;
        best_move = a;
      }
      if (s > alpha) alpha = s;
      if (alpha >= beta) {
        if (quiet) {
          auto& k = killers_[static_cast<std::size_t>(ply)];
          if (k[0] != a) {
            k[1] = k[0];
            k[0] = a;
          }
          std::int32_t& h = history(side, a);
          h += depth * depth;
          if (h > kHistoryCap)
            for (auto& x : table_.history_) x /= 2;
        }
        break;
      }
    }
    store(pos, depth, best, best_move, alpha_start, beta, ply);
    return best;
  }

  const ClassicOptions& options_;
  ClassicTable& table_;
  int num_actions_;
  bool has_clock_;
  bool stopped_ = false;
  std::int64_t nodes_ = 0;
  std::array<std::array<Action, 2>, kMaxPly> killers_{};
};

ClassicResult classic_search(const GameState& state, const ClassicOptions& options,
                             ClassicTable& table) {
  if (options.depth < 1 || options.depth > kMaxClassicDepth)
    throw std::invalid_argument("classic: depth must be 1.." + std::to_string(kMaxClassicDepth) +
                                ", not " + std::to_string(options.depth));
  if (options.nodes < 0)
    throw std::invalid_argument("classic: nodes must be 0 (no limit) or more, not " +
                                std::to_string(options.nodes));
  const int num_actions = state.game().num_actions();
  return search::with_position(state, [&](const auto& pos) {
    using P = std::decay_t<decltype(pos)>;
    ClassicSearcher<P> searcher(options, table, num_actions);
    return searcher.run(pos, options.depth);
  });
}

ClassicPlayer::ClassicPlayer(const ClassicSettings& settings)
    : settings_(settings), clocks_(settings.time) {
  if (!settings.time.timed() && settings.depth <= 0 && settings.nodes <= 0)
    throw std::invalid_argument(
        "classic: give a budget: ms=N (time per move), clock=S (per game), depth=N or nodes=N");
  ClassicTable::check_megabytes(settings.hash_mb);
}

std::string ClassicPlayer::spec() const {
  std::string s = "classic:";
  auto add = [&s](const std::string& key, std::int64_t value) {
    if (s.back() != ':') s += ',';
    s += key + "=" + std::to_string(value);
  };
  if (settings_.time.move_ms > 0) add("ms", settings_.time.move_ms);
  if (settings_.depth > 0) add("depth", settings_.depth);
  if (settings_.nodes > 0) add("nodes", settings_.nodes);
  if (settings_.hash_mb != kDefaultClassicHashMb) add("hash", settings_.hash_mb);
  if (settings_.time.clock_seconds > 0) {
    if (s.back() == ':') return s + settings_.time.spec_suffix().substr(1);
    s += settings_.time.spec_suffix();
  }
  return s;
}

ClassicOptions ClassicPlayer::options_now() const {
  ClassicOptions options;
  if (settings_.depth > 0) options.depth = settings_.depth;
  options.nodes = settings_.nodes;
  options.stop = stop_.predicate();
  if (settings_.time.move_ms > 0)
    options.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(settings_.time.move_ms);
  return options;
}

Action ClassicPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  (void)seed;
  ClassicOptions options = options_now();
  if (settings_.time.clock_seconds > 0) {  // one move alone: the budget of a full clock
    const double budget = move_budget(settings_.time, state, settings_.time.clock_seconds, false);
    options.deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                std::chrono::duration<double>(budget));
  }
  ClassicTable table(settings_.hash_mb);
  return classic_search(state, options, table).action;
}

Action ClassicPlayer::choose_move_in_game(int game_id, const GameState& state,
                                          std::uint64_t seed) {
  (void)seed;
  const auto start = SteadyClock::now();
  ClassicOptions options = options_now();  // the clock starts before the table is made
  if (settings_.time.clock_seconds > 0) options.deadline = clocks_.deadline(game_id, state, start);
  ClassicTable* table = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = tables_[game_id];
    if (!slot) slot = std::make_unique<ClassicTable>(settings_.hash_mb);
    table = slot.get();
  }
  const ClassicResult result = classic_search(state, options, *table);
  if (settings_.time.timed())
    clocks_.charge(game_id, start, result.depth > 0 && std::abs(result.score) > kProvenThreshold);
  return result.action;
}

void ClassicPlayer::game_ended(int game_id) noexcept {
  clocks_.end_game(game_id);
  std::unique_ptr<ClassicTable> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = tables_.find(game_id);
    if (it == tables_.end()) return;
    freed = std::move(it->second);
    tables_.erase(it);
  }
}

std::size_t ClassicPlayer::tables_held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tables_.size();
}

const ClassicTable* ClassicPlayer::table_of(int game_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tables_.find(game_id);
  return it == tables_.end() ? nullptr : it->second.get();
}

}  // namespace oppidum::arena
