// The board side of the web page: positions and their legal moves, a player's move, the analysis
// of a position and a network's opinion of it. Stateless: every request carries the game, a start
// position and the moves played since, and the rules (games/) answer; the page never applies
// rules itself.
//
// Players are arena/ specs limited to what a page may ask for: `random`, `uct:sims=N`,
// `alphabeta:depth=N`, `classic:...` (docs/WEB.md says its limits) and
// `net:checkpoint=RUN/NAME,sims=N`, where RUN is a run served and NAME one
// of its checkpoint files (best, gen-0003); no path, no external program, no human. Networks run
// on the torch-free Eigen backend and are loaded once (again when the file changes).
//
// Limits keep one page from taking the machine: at most `max_searches` searches run at once (a
// further request is refused as busy, HTTP 503); every search, MCTS and alpha-beta alike, stops
// at `search_ms` milliseconds from its request's start and answers with what it has
// (`out_of_time`); simulations, rollouts and alpha-beta depth are capped. Networks load one at a
// time; a request waits for another's load only until its time is up (busy, 503, past it), and a
// load itself, once for each version of a file, is not cut short. A search also stops, within a few milliseconds, once the
// caller's StopCheck says so (its client left, the server is stopping), and then throws Cancelled.
//
// A match between two players (to compare two checkpoints) is capped the same way: at most
// kMaxMatchGames games, one place among `max_searches` for the whole match, and `search_ms` for
// all of it; at the limit it answers with the games counted so far.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "arena/player.h"
#include "games/game.h"
#include "mcts/evaluator.h"
#include "web/errors.h"

namespace oppidum::web {

struct Limits {
  int max_searches = 2;            // searches running at once, all requests together
  int search_ms = 10000;           // wall time of one search
  int max_simulations = 20000;     // uct and net players, analysis
  int max_alphabeta_depth = 5;
};

// The most games one match request may ask for.
inline constexpr int kMaxMatchGames = 20;

// Asked every few milliseconds during a search; true stops it (empty: never).
using StopCheck = std::function<bool()>;

class GameService {
 public:
  // Maps "RUN/NAME" to a checkpoint file of a run served; throws NotFound or BadRequest.
  using CheckpointResolver = std::function<std::filesystem::path(const std::string& name)>;

  GameService(CheckpointResolver resolve_checkpoint, Limits limits);

  const Limits& limits() const { return limits_; }

  // {game, start?, moves?} -> the position reached: notation, side to move, ply, board view, legal
  // moves with their cells, terminal, result and scores.
  nlohmann::json position(const nlohmann::json& request);
  // + {player, seed?}: the player's move in that position and its cells, and the position after it.
  nlohmann::json move(const nlohmann::json& request, const StopCheck& stop = {});
  // + {player}: a search player's statistics at the root (visits, Q, prior of the top moves,
  // value, principal variation), or an alpha-beta player's best move, score and completed depth.
  nlohmann::json analyse(const nlohmann::json& request, const StopCheck& stop = {});
  // + {checkpoint: "RUN/NAME"}: the network's value and its top moves by prior.
  nlohmann::json evaluate(const nlohmann::json& request, const StopCheck& stop = {});
  // {game, a, b, games?, seed?}: a paired match of a against b (arena/match.h) from the game's
  // openings, of `games` (2..kMaxMatchGames, default 10) games: the games counted, wins, draws
  // and losses from a's view, its score and Elo with a 95% interval (null ends where the interval
  // has none), and `out_of_time` when the time limit ended it early.
  nlohmann::json match(const nlohmann::json& request, const StopCheck& stop = {});

 private:
  struct CachedNet {
    std::filesystem::path path;
    std::string game;
    std::array<std::int64_t, 4> version{};  // the file's inode, size and modification time
    std::shared_ptr<mcts::Evaluator> evaluator;  // null: the file could not be loaded
    std::string error;  // why, when its content failed (a failure of the moment is not kept)
  };
  // What a request may take: from `start` until `deadline`, and not past `stop`.
  struct Budget {
    std::chrono::steady_clock::time_point start, deadline;
    StopCheck stop;
  };
  Budget budget_from_now(const StopCheck& stop) const {
    const auto now = std::chrono::steady_clock::now();
    return {now, now + std::chrono::milliseconds(limits_.search_ms), stop};
  }
  // The network of a checkpoint, loaded or from the cache; waits for another request's load only
  // within `budget` (Busy past its deadline, Cancelled at its stop).
  std::shared_ptr<mcts::Evaluator> network(const Game& game, const std::string& name,
                                           const Budget& budget);
  // The player of a spec string, within the limits; throws BadRequest.
  std::unique_ptr<arena::Player> make_player(const Game& game, const std::string& spec,
                                             const Budget& budget);

  CheckpointResolver resolve_;
  Limits limits_;
  std::mutex load_mutex_;  // held while a file loads: one load at a time
  std::mutex nets_mutex_;  // held to look up and to add, never while a file loads
  std::list<CachedNet> nets_;  // most recently used first: networks, and files that failed
  std::mutex searches_mutex_;
  int searches_ = 0;
  friend class SearchSlot;
};

}  // namespace oppidum::web
