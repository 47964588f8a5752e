// Matches: player A against player B over paired games, with Elo, a 95% interval and an optional
// sequential test (arena/elo.h).
//
// Pairs. Pair p starts from opening p: `opening_plies` uniformly random plies from the initial
// position, drawn from derive_seed(seed, kOpeningStream, p). Game 2p has A move first, game 2p+1
// has B move first from the same opening, so the luck of the opening cancels within a pair.
//
// Running. Every game goes through mcts::GameRunner, whatever the players are:
// - a search player (uct, net) is a runner agent with its own evaluator and tree, so its leaf
//   evaluations are batched across the games of the runner;
// - a direct player (random, alphabeta) is a stand-in agent that runs a 1-simulation search with a
//   uniform evaluator (a few microseconds), and the match's GameDriver::choose_move replaces the
//   stand-in's move by the player's choose_move. This keeps one game loop for every pairing (no
//   second loop for mixed matches) at a negligible cost.
// `threads` workers take chunks of pairs from a shared counter; each chunk runs in a fresh runner
// with fresh agents seeded by the chunk's number. A chunk is one pair, or `pairs_per_runner` pairs
// when a player wants batching (a network), so that the runner has many games to batch. Moves of
// direct players are seeded by the game index and ply. So a game's course depends only on the seed
// and its index (and, with batching players, on the chunk size), not on the threads or timing: the
// same seed gives the same games and the same result with any number of threads.
//
// Counting. Games are counted pair by pair in pair order, as soon as a pair and all pairs before it
// are finished, so the counted results are a prefix of the match's sequence. The SPRT is checked
// after each counted pair; when it decides, the match stops: games still running are abandoned and
// finished games beyond the decision point are not counted (nor recorded). Without a decision the
// match ends after `games` games (rounded up to whole pairs).
//
// Stopping. When MatchHooks::stop becomes true (the trainer's or the arena's Ctrl-C flag), the
// match ends in the same way within a few milliseconds (it is polled every 10 ms, and a direct
// player busy with a move on a depth or node budget is stopped too, Player::stop_moves_when; a
// timed move or an external program's ends by its own time): no game starts any more, the games in progress are
// abandoned, no pair is counted after that moment, and run_match returns the counted prefix with
// `stopped` set and `finished` clear. A stop that comes after the match decided or reached its cap
// changes nothing.
//
// Forfeits. A direct player's choose_move_in_game may throw Forfeit (an external program that sends
// an illegal move or garbage, or nothing in time). The game is then lost by that player at once:
// its record keeps the moves before the forfeit, the result and the reason (GameRecord::forfeit),
// and the report lists it. (The runner has no way to stop one game, so the driver plays the rest
// of a forfeited game out with 1-simulation stand-in moves that are thrown away; no player is
// asked again.) Every game's end, forfeited, finished or abandoned, reaches both players'
// game_ended with the game index as its id.
//
// Openings: before a game's first move both players hear its opening (Player::game_started), so
// an external program that speaks the Opening line (arena/external.h, `openings=1`) starts from
// it. A player that needs the initial position (an external program without it) makes the match
// play without random openings (opening_plies -1 becomes 0; a positive value is refused), so its
// pairs differ only by the colours; the report says so. Every report counts the distinct games
// (distinct move sequences, openings included) among the counted ones.
//
// Time per move: a direct player's time is measured around choose_move (its mean and its
// longest move are reported); a search player's is the rest of the runner's wall time (search
// and evaluation), split between two search players in proportion to the time spent in their
// evaluators (its longest move is not known). Both count the moves of the counted games only: a
// direct player's their own measured seconds; a search player's, at the mean of every move it
// searched (a runner's search time cannot be split by game), games abandoned at the end included.
//
// Losing on time: a direct player with a time control (Player::time_control; timed uct, net and
// alphabeta) loses a game on time when one move took longer than its ms= + kTimeGrace, or its
// moves of the game together longer than its clock= + kTimeGrace (arena/time_control.h). The
// game is then a forfeit (`time: ...`), counted and reported like the others. External programs
// are held to their clock by their referee (arena/external.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "arena/elo.h"
#include "arena/player.h"
#include "games/game.h"

namespace oppidum::arena {

// Stream numbers of the arena's random streams (see mcts/seed.h).
inline constexpr std::uint64_t kOpeningStream = 0x4F50454E494E4700ULL;  // openings, by pair
inline constexpr std::uint64_t kMoveStream = 0x4D4F564500000000ULL;     // direct players' moves
inline constexpr std::uint64_t kAgentStream = 0x4147454E54000000ULL;    // + side: agents, by chunk
inline constexpr std::uint64_t kRunnerStream = 0x52554E4E45520000ULL;   // runners, by chunk

struct MatchConfig {
  int games = 200;           // the cap, rounded up to whole pairs
  int threads = 1;
  int opening_plies = -1;    // -1: Game::default_opening_plies()
  std::uint64_t seed = 1;
  std::optional<SprtConfig> sprt;
  int pairs_per_runner = 32; // pairs per chunk when a player wants batching (else 1)
  int max_plies = 0;         // a game reaching this ply is a draw; 0: the game's max_game_length

  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
};

// The opening of pair `pair`: `plies` random legal actions from the initial position, redrawn
// (from the same stream) until the position is not over. Throws std::invalid_argument when no
// such opening is found.
std::vector<Action> make_opening(const Game& game, int plies, std::uint64_t seed, int pair);

struct SideTime {
  std::int64_t moves = 0;
  double seconds = 0.0;
  double max_move = 0.0;  // the longest move's seconds (direct players; 0: not measured)
  double per_move() const { return moves > 0 ? seconds / static_cast<double>(moves) : 0.0; }
};

struct GameRecord {
  int index = 0;             // game index in the match: pair * 2 + (A moved first ? 0 : 1)
  bool a_first = true;       // A was the first player (Light / White)
  std::vector<Action> moves; // from the initial position, the opening included
  int opening_plies = 0;
  double result = 0.0;       // for the first player: +1, 0, -1
  bool adjudicated = false;  // stopped at the ply limit (a draw)
  std::string forfeit;       // empty, or why the loser lost by forfeit (then `moves` ends there)
  // A's and B's moves after the opening (a forfeited one included) and, of a direct player, their
  // seconds and the longest; a search player's seconds are the match's to share
  // (MatchStatus::time).
  std::array<SideTime, 2> time;
  double score_a() const;    // A's points: 1, 1/2, 0
};

struct MatchStatus {
  std::string game;
  std::string a, b;                // specs
  int games_counted = 0;           // whole pairs, in order
  int wins = 0, draws = 0, losses = 0;  // from A's view
  int adjudicated = 0;             // counted draws by the ply limit
  int forfeits = 0;                // counted games lost by forfeit
  std::array<int, 2> forfeits_by{};  // of which A, B lost (time losses included)
  std::array<int, 2> time_losses{};  // counted games A, B lost on time
  int distinct_games = 0;          // distinct move sequences among the counted games
  int distinct_pairs = 0;          // distinct pairs of them (a pair's two games as one)
  // Why the openings are the initial position although random ones were asked for; empty else.
  std::string openings_note;
  // One line per counted forfeit, in game order: "game 3: B forfeits: timeout: ...".
  std::vector<std::string> forfeit_lines;
  std::array<int, 5> pairs{};      // pairs where A scored 0, 1/2, 1, 3/2, 2 points
  EloEstimate elo;                 // pentanomial (per pair)
  std::optional<SprtConfig> sprt;
  SprtBounds bounds;
  double llr = 0.0;
  SprtVerdict verdict = SprtVerdict::kContinue;
  std::array<SideTime, 2> time;    // A, B: the counted games' moves (see "Time per move")
  double seconds = 0.0;            // wall time so far
  int threads = 1;
  std::uint64_t seed = 0;
  int games_cap = 0;
  int opening_plies = 0;
  bool finished = false;           // decided by the SPRT or played to the cap
  bool stopped = false;            // ended early by MatchHooks::stop (then not finished)
};

struct MatchHooks {
  // After every counted pair, under the match's lock (keep it short).
  std::function<void(const MatchStatus&)> on_progress;
  // Every counted game, in index order, under the lock.
  std::function<void(const GameRecord&)> on_game;
  // About every kWaitHookSeconds while the match plays, from a thread of its own, under the lock
  // as on_progress, with the status so far: for what must go on while a long game is played (a
  // run's lease on its store). An exception from it fails the match as one from a game would.
  std::function<void(const MatchStatus&)> on_wait;
  static constexpr double kWaitHookSeconds = 1.0;
  // When it becomes true the match stops (see "Stopping" above). Must outlive run_match.
  const std::atomic<bool>* stop = nullptr;
};

// What a match of these players and this config plays from: the random plies of its openings
// (the config's, the game's default, or 0 for a player that needs the initial position, with a
// note saying so). Throws std::invalid_argument for a bad config, an interactive player, positive
// opening plies with a player that needs the initial position, openings no game survives, or a
// ply limit within the openings: what run_match refuses, asked before files are made for it.
struct MatchPlan {
  int opening_plies = 0;
  std::string openings_note;
};
MatchPlan plan_match(const Game& game, const Player& a, const Player& b,
                     const MatchConfig& config);

// Plays the match. Throws what plan_match throws, and rethrows the first exception of any worker
// (after stopping the others).
MatchStatus run_match(const Game& game, Player& a, Player& b, const MatchConfig& config,
                      const MatchHooks& hooks = {});

// The lines `oppidum arena` prints at the end.
std::string format_match_report(const MatchStatus& status);
// One progress line: games, W/D/L, score, Elo, LLR.
std::string format_progress(const MatchStatus& status);
// "H1 accepted (elo >= 20)" etc.
std::string describe_verdict(const MatchStatus& status);
// The pair counts by A's points, "n0/n0.5/n1/n1.5/n2" (what the interval is computed from).
std::string format_pairs(const MatchStatus& status);
// "850.0 us", "52.1 ms", "1.25 s".
std::string format_seconds(double seconds);
// What a reader of a match's Elo and interval must know beside them, a sentence each: the prior's
// virtual game, whenever it moves the estimate off the Elo of the observed score as printed (a
// perfect score has no finite Elo of its own), pairs of games played more than once
// (the interval and the SPRT count every pair as independent evidence, so they are too narrow),
// and a stop by the SPRT before the cap (a fixed-sample interval, biased the way it decided).
std::vector<std::string> elo_caveats(const MatchStatus& status);
// One table of a gauntlet: the matches of one player (A in each) against a list of opponents (B),
// a row per match: games, W/D/L and score from the player's view, Elo with its 95% interval and
// the pair counts it comes from, the mean and longest time per move of each side, forfeits (of
// which on time) of each side, and the distinct games; then each match's elo_caveats.
std::string format_gauntlet_table(const std::vector<MatchStatus>& matches);

}  // namespace oppidum::arena
