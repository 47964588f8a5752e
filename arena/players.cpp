#include "arena/players.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iostream>
#include <limits>
#include <utility>
#include <vector>

#include "mcts/rng.h"
#include "util/text.h"

namespace oppidum::arena {

using util::trim;

Action RandomPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  ActionList legal;
  state.legal_actions(legal);
  if (legal.empty()) throw std::logic_error("random player: the game is over, no move to choose");
  mcts::Rng rng(seed);
  return legal[rng.uniform_int(legal.size())];
}

// The tree and evaluator of one game of a timed search player.
struct SearchPlayer::GameTree {
  std::shared_ptr<mcts::Evaluator> evaluator;
  std::unique_ptr<mcts::SearchTree> tree;
};

SearchPlayer::SearchPlayer(std::string spec, mcts::SearchConfig search,
                           EvaluatorMaker make_evaluator, bool wants_batching, TimeControl time)
    : spec_(std::move(spec)),
      search_(search),
      make_evaluator_(std::move(make_evaluator)),
      wants_batching_(wants_batching),
      time_(time),
      clocks_(time) {
  search_.validate();
}

SearchPlayer::~SearchPlayer() = default;

std::optional<SearchAgent> SearchPlayer::search_agent(std::uint64_t seed) const {
  if (time_.timed()) return std::nullopt;  // a direct player (see the class comment)
  SearchAgent agent;
  agent.evaluator = make_evaluator_(seed);
  agent.search = search_;
  agent.search.seed = seed;
  return agent;
}

Action SearchPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  const auto start = SteadyClock::now();
  mcts::SearchConfig config = search_;
  config.seed = seed;
  const auto evaluator = make_evaluator_(seed);
  mcts::SearchTree tree(state, config);
  if (!time_.timed()) return tree.run(*evaluator, config.simulations).action;
  const double budget = move_budget(time_, state, time_.clock_seconds, false);
  const auto deadline = start + std::chrono::duration_cast<SteadyClock::duration>(
                                    std::chrono::duration<double>(budget));
  return tree.run_until(*evaluator, deadline, config.simulations, stop_.predicate()).action;
}

namespace {

// True when `from` leads to `to` by `plies` legal moves of any side; `path` gets them.
bool reach(const GameState& from, const GameState& to, int plies, std::vector<Action>& path) {
  if (plies == 0) return from.hash() == to.hash() && from.to_string() == to.to_string();
  if (from.is_terminal()) return false;
  ActionList legal;
  from.legal_actions(legal);
  for (Action a : legal) {
    auto next = from.clone();
    next->apply(a);
    path.push_back(a);
    if (reach(*next, to, plies - 1, path)) return true;
    path.pop_back();
  }
  return false;
}

}  // namespace

Action SearchPlayer::choose_move_in_game(int game_id, const GameState& state,
                                         std::uint64_t seed) {
  if (!time_.timed()) return choose_move(state, seed);
  const auto start = SteadyClock::now();
  const auto deadline = clocks_.deadline(game_id, state, start);
  GameTree* game = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = trees_[game_id];
    if (!slot) slot = std::make_unique<GameTree>();
    game = slot.get();
  }
  if (!game->evaluator) game->evaluator = make_evaluator_(seed);
  // Tree reuse: follow the moves since the tree's root (none, one, or two plies).
  std::vector<Action> path;
  constexpr int kMaxFollowedPlies = 2;
  const int plies = game->tree ? state.ply() - game->tree->root_state().ply() : -1;
  if (plies >= 0 && plies <= kMaxFollowedPlies &&
      reach(game->tree->root_state(), state, plies, path)) {
    for (Action a : path) game->tree->advance(a);
  } else {
    mcts::SearchConfig config = search_;
    config.seed = seed;
    game->tree = std::make_unique<mcts::SearchTree>(state, config);
  }
  const mcts::SearchResult result = game->tree->run_until(*game->evaluator, deadline,
                                                          search_.simulations, stop_.predicate());
  game->tree->advance(result.action);
  clocks_.charge(game_id, start, result.proven != mcts::Proven::kUnknown);
  return result.action;
}

void SearchPlayer::game_ended(int game_id) noexcept {
  std::unique_ptr<GameTree> ended;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = trees_.find(game_id);
    if (it != trees_.end()) {
      ended = std::move(it->second);
      trees_.erase(it);
    }
  }
  clocks_.end_game(game_id);
}

Action HumanPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  (void)seed;
  out_ << '\n' << state.pretty();
  std::string line;
  // Each line that is no move gets a prompt and an answer: input that is no person's (50 MB of
  // bad lines gave 2.3 GB of output) ends after as many lines in a row as nobody types.
  constexpr int kMaxLinesWithoutAMove = 1000;
  for (int lines = 0;; ++lines) {
    if (lines == kMaxLinesWithoutAMove)
      throw std::runtime_error("standard input: " + std::to_string(kMaxLinesWithoutAMove) +
                               " lines in a row without a playable move; no person types that");
    out_ << "Your move (" << state.game().side_name(state.current_player()) << "; `moves` lists them, `quit` ends): "
         << std::flush;
    try {
      if (!util::read_line(in_, line)) throw QuitGame();
    } catch (const util::LineTooLong& e) {
      // Its rest is skipped, unkept, up to a limit: a line with no end (/dev/zero) is no person's,
      // and skipping it would read forever.
      constexpr std::size_t kMaxSkipped = std::size_t{1} << 20;
      std::size_t skipped = 0;
      for (int c = in_.get(); c != std::char_traits<char>::eof() && c != '\n'; c = in_.get())
        if (++skipped > kMaxSkipped)
          throw std::runtime_error(std::string("standard input: ") + e.what() +
                                   " that does not end within " + std::to_string(kMaxSkipped) +
                                   " more; no move is that long");
      out_ << "That line is too long; type a move.\n";
      continue;
    }
    const std::string move = trim(line);
    if (move.empty()) continue;
    // The commands in any case (`Quit`, as the engine protocol writes it); no move is one.
    std::string command = move;
    for (char& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (command == "quit" || command == "exit") throw QuitGame();
    if (command == "moves" || command == "help" || command == "?") {
      ActionList legal;
      state.legal_actions(legal);
      std::vector<std::string> names;
      for (Action a : legal) names.push_back(state.action_to_string(a));
      std::sort(names.begin(), names.end());
      out_ << "Legal moves:";
      for (const auto& name : names) out_ << ' ' << name;
      out_ << '\n';
      continue;
    }
    try {
      return state.parse_action(move);
    } catch (const GameError& e) {
      out_ << "Not playable: " << e.what() << '\n';
    }
  }
}

}  // namespace oppidum::arena
