#include "arena/players.h"

#include <algorithm>
#include <iostream>
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

SearchPlayer::SearchPlayer(std::string spec, mcts::SearchConfig search,
                           EvaluatorMaker make_evaluator, bool wants_batching)
    : spec_(std::move(spec)),
      search_(search),
      make_evaluator_(std::move(make_evaluator)),
      wants_batching_(wants_batching) {
  search_.validate();
}

std::optional<SearchAgent> SearchPlayer::search_agent(std::uint64_t seed) const {
  SearchAgent agent;
  agent.evaluator = make_evaluator_(seed);
  agent.search = search_;
  agent.search.seed = seed;
  return agent;
}

Action SearchPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  const SearchAgent agent = *search_agent(seed);
  mcts::SearchTree tree(state, agent.search);
  return tree.run(*agent.evaluator, agent.search.simulations).action;
}

Action HumanPlayer::choose_move(const GameState& state, std::uint64_t seed) {
  (void)seed;
  out_ << '\n' << state.pretty();
  std::string line;
  while (true) {
    out_ << "Your move (" << state.game().side_name(state.current_player()) << "; `moves` lists them, `quit` ends): "
         << std::flush;
    if (!std::getline(in_, line)) throw QuitGame();
    const std::string move = trim(line);
    if (move.empty()) continue;
    if (move == "quit" || move == "exit") throw QuitGame();
    if (move == "moves" || move == "help" || move == "?") {
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
