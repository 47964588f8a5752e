// The concrete players behind make_player (arena/player.h), except alpha-beta (arena/alphabeta.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "arena/player.h"
#include "games/game.h"
#include "mcts/evaluator.h"

namespace oppidum::arena {

// A uniformly random legal move, drawn from the seed.
class RandomPlayer final : public Player {
 public:
  std::string spec() const override { return "random"; }
  Action choose_move(const GameState& state, std::uint64_t seed) override;
};

// PUCT search with a given evaluator: `uct` (a fresh RolloutEvaluator per seed) and `net` (one
// shared network evaluator).
class SearchPlayer final : public Player {
 public:
  // `make_evaluator(seed)` gives the evaluator of one batch of games.
  using EvaluatorMaker = std::function<std::shared_ptr<mcts::Evaluator>(std::uint64_t seed)>;

  SearchPlayer(std::string spec, mcts::SearchConfig search, EvaluatorMaker make_evaluator,
               bool wants_batching);

  std::string spec() const override { return spec_; }
  std::optional<SearchAgent> search_agent(std::uint64_t seed) const override;
  // One fresh search of search.simulations simulations from `state`.
  Action choose_move(const GameState& state, std::uint64_t seed) override;
  bool wants_batching() const override { return wants_batching_; }

 private:
  std::string spec_;
  mcts::SearchConfig search_;
  EvaluatorMaker make_evaluator_;
  bool wants_batching_;
};

// Thrown by HumanPlayer::choose_move when the person types `quit` or the input ends.
class QuitGame : public std::runtime_error {
 public:
  QuitGame() : std::runtime_error("the game was abandoned (quit or end of input)") {}
};

// A person: draws the board to `out`, reads a move in docs/RULES.md notation from `in`, explains an
// illegal or malformed move (the GameError message) and asks again. `moves` lists the legal moves,
// `quit` or the end of input throws QuitGame.
class HumanPlayer final : public Player {
 public:
  HumanPlayer(std::istream& in, std::ostream& out) : in_(in), out_(out) {}

  std::string spec() const override { return "human"; }
  Action choose_move(const GameState& state, std::uint64_t seed) override;
  bool interactive() const override { return true; }

 private:
  std::istream& in_;
  std::ostream& out_;
};

}  // namespace oppidum::arena
