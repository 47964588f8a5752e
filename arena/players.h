// The concrete players behind make_player (arena/player.h), except alpha-beta (arena/alphabeta.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "arena/player.h"
#include "arena/time_control.h"
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
//
// Untimed (no time key): a search agent of search.simulations per move, run by a match's
// runner. Timed (`ms=` or `clock=`, arena/time_control.h): a direct player that searches each
// move on the caller's thread until its deadline (at most search.simulations simulations), so a
// move's thinking time is its own; it keeps one tree per game in progress (with its evaluator,
// seeded by the game's first move) and reuses it across the game's moves: the tree follows the
// player's own move and then the opponent's (found among the legal moves, two plies deep for
// DVONN's double move), or starts afresh when it cannot.
class SearchPlayer final : public Player {
 public:
  // `make_evaluator(seed)` gives the evaluator of one batch of games (timed: of one game).
  using EvaluatorMaker = std::function<std::shared_ptr<mcts::Evaluator>(std::uint64_t seed)>;

  // Throws std::invalid_argument for a bad search config. A timed player needs a PUCT root
  // (mcts::SearchTree::run_until).
  SearchPlayer(std::string spec, mcts::SearchConfig search, EvaluatorMaker make_evaluator,
               bool wants_batching, TimeControl time = {});
  ~SearchPlayer() override;

  std::string spec() const override { return spec_; }
  std::optional<SearchAgent> search_agent(std::uint64_t seed) const override;
  // One fresh search from `state`: search.simulations simulations, or to the time control's
  // deadline (a clock= player spends its budget for this position on a full clock).
  Action choose_move(const GameState& state, std::uint64_t seed) override;
  Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) override;
  void game_ended(int game_id) noexcept override;
  bool wants_batching() const override { return wants_batching_ && !time_.timed(); }
  TimeControl time_control() const override { return time_; }
  void charge_time(int game_id, double seconds) override {
    clocks_.charge_seconds(game_id, seconds);
  }
  void stop_moves_when(const std::atomic<bool>* flag) override { stop_.set(flag); }

 private:
  struct GameTree;

  MoveStopFlag stop_;
  std::string spec_;
  mcts::SearchConfig search_;
  EvaluatorMaker make_evaluator_;
  bool wants_batching_;
  TimeControl time_;
  GameClocks clocks_;
  std::mutex mutex_;
  std::map<int, std::unique_ptr<GameTree>> trees_;  // timed: by game id
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
