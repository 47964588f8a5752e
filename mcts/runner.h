// Plays many games at once on one thread, batching the evaluations of all of them: the engine of
// self-play workers and of arena matches.
//
// Each round, every active game's search runs until it needs an evaluation (terminal and proven
// leaves are scored inside the tree); the pending leaves of all games go to their evaluator as ONE
// batch per evaluator, then each tree takes its result and the next round starts. When a game's
// search has run its simulations, the driver picks the move (by default the search's own choice,
// made with the agent's temperature), the move is played in the game and in the game's trees, and
// the next search starts. A finished game is handed to the driver, and a new one takes its place
// while the game budget lasts. So the batch size is the number of games in progress.
//
// Agents: an Agent is an evaluator plus search settings. Each game names the agent of each player:
// self-play gives both players agent 0 (one tree per game, reused across both players' moves); an
// arena gives them two agents (one tree per agent per game; both trees follow every move, so each
// agent reuses its own analysis). Agents may share an evaluator.
//
// Determinism: the tree of agent a in game g is seeded by
// derive_seed(config.seed, kSearchStream + a, g) (the agents' own SearchConfig::seed is not used),
// and games are stepped in a fixed order, so the same seed, driver and deterministic evaluators
// replay the same games.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/search.h"

namespace oppidum::mcts {

struct Agent {
  std::string name;
  Evaluator* evaluator = nullptr;  // not owned; must outlive the runner's run()
  SearchConfig search;             // search.simulations is the budget of every move
};

// How one game starts: its position (an opening, or the game's initial state) and its players.
struct GameSetup {
  std::unique_ptr<GameState> start;
  std::array<int, 2> agents = {0, 0};  // agent index of player 0 and of player 1
};

// The search behind one move of a finished game.
struct MoveStats {
  Action action = -1;
  int player = 0;                 // who played it
  std::vector<Action> legal;      // the legal actions of the position, in legal_actions order
  std::vector<int> visits;        // child visit counts, aligned with `legal`
  std::vector<int> search_visits;  // of which this move's search made (the rest: tree reuse)
  std::vector<float> policy;      // the search's training target, aligned with `legal`
  bool improved_policy = false;   // `policy` is Gumbel's improved policy (not visits normalised)
  Proven proven = Proven::kUnknown;  // the root's, for `player` (SearchResult::proven)
  std::vector<Proven> child_proven;  // each child's, for `player`: a target made of `visits` or
                                     // `search_visits` goes through settle_target with these
  float root_value = 0.0f;        // search value for `player` before the move
  int simulations = 0;            // simulations run for this move (reused visits not counted)
  bool full_search = true;        // searched with the full budget (GameDriver::search_budget)
};

// The search of one move: how many simulations, and whether the root gets Dirichlet noise.
struct SearchBudget {
  int simulations = 1;
  bool root_noise = true;
  bool full_search = true;  // recorded in MoveStats: a full search makes a policy target
};

struct FinishedGame {
  int index = 0;                      // the index passed to GameDriver::setup_game
  std::array<int, 2> agents = {0, 0};
  std::unique_ptr<GameState> start;
  std::unique_ptr<GameState> final_state;
  std::vector<MoveStats> moves;
  double result = 0.0;                // for player 0: +1 win, 0 draw, -1 loss
  bool adjudicated = false;           // stopped at the ply limit and scored as a draw
  int resigned = -1;                  // the player who resigned (GameDriver::resignation), or -1
};

// The owner's side of the runner: self-play and the arena each implement one.
class GameDriver {
 public:
  virtual ~GameDriver() = default;
  // The start of game `index` (0, 1, 2, ... in order).
  virtual GameSetup setup_game(int index) = 0;
  // The move to play after a search; by default the search's choice. Must be legal in `state`.
  virtual Action choose_move(int game_index, const GameState& state, const SearchResult& search) {
    (void)game_index;
    (void)state;
    return search.action;
  }
  // The budget of the next search in game `game_index`; by default the agent's simulations with
  // noise. Self-play overrides it for playout-cap randomisation (KataGo): most moves get a cheap
  // search without noise that is not used as a policy target.
  virtual SearchBudget search_budget(int game_index, const GameState& state, const Agent& agent) {
    (void)game_index;
    (void)state;
    return {agent.search.simulations, true, true};
  }
  // Asked after every move of a game that is not over: the player (0 or 1) who resigns now,
  // ending the game as a loss for that player, or -1 to play on (the default).
  virtual int resignation(int game_index, const std::vector<MoveStats>& moves) {
    (void)game_index;
    (void)moves;
    return -1;
  }
  // Receives each game once it is over, in the order games end.
  virtual void game_finished(FinishedGame game) = 0;
};

struct RunnerConfig {
  int num_games = 1;         // games to play in all (the budget)
  int concurrent_games = 64; // games in progress at once: the batch size
  int max_plies = 0;         // a game reaching this ply is adjudicated a draw; 0: the game's bound
  std::uint64_t seed = 0;    // seeds every tree (see the header comment)

  // Throws std::invalid_argument naming the first out-of-range field.
  void validate() const;
};

struct RunnerStats {
  std::int64_t games = 0;           // games finished and reported
  std::int64_t moves = 0;           // moves played
  std::int64_t rounds = 0;          // rounds with at least one evaluation
  std::int64_t evaluator_calls = 0; // evaluate() calls (one per evaluator per round)
  std::int64_t evaluations = 0;     // positions sent to evaluators
  int max_batch = 0;                // largest batch sent
};

class GameRunner {
 public:
  // Throws std::invalid_argument when there is no agent, an agent has no evaluator, or a config
  // is out of range.
  GameRunner(std::vector<Agent> agents, const RunnerConfig& config);

  // Plays config.num_games games through `driver` and returns when all were reported. When `stop`
  // becomes true, no game starts any more and the games in progress are dropped unreported.
  // Exceptions from the driver or an evaluator propagate (the games in progress are lost).
  RunnerStats run(GameDriver& driver, const std::atomic<bool>* stop = nullptr);

 private:
  struct ActiveGame;
  struct Batch;

  std::unique_ptr<ActiveGame> start_game(GameDriver& driver, int index) const;
  // Runs `game`'s searches until one needs an evaluation (added to `batches`) or the game ends
  // (returns false).
  bool step_game(ActiveGame& game, GameDriver& driver, std::vector<Batch>& batches);
  void play_move(ActiveGame& game, GameDriver& driver, SearchTree& tree);
  bool game_over(const ActiveGame& game) const;
  FinishedGame finish(ActiveGame& game) const;

  std::vector<Agent> agents_;
  RunnerConfig config_;
  RunnerStats stats_;
};

}  // namespace oppidum::mcts
