// Gating: does a candidate network replace the best one? And how strong is the best one against
// a fixed anchor?
//
// The gate match. The candidate plays the best network over paired openings (arena/match.h) with
// arena.simulations per move, up to arena.max_games games, with the SPRT of arena.elo0/elo1/alpha/
// beta deciding early. Its seed derives from the run seed and the generation, so a gate played
// again after a kill plays the same games.
//
// With arena.max_games 0 there is no gate match: every candidate is promoted (AlphaZero's way).
//
// The promotion rule (promotes()): the candidate replaces the best network when the SPRT accepts
// H1 (elo >= elo1 more likely than elo <= elo0: the error rates hold at those two), or when the match reaches its game cap
// undecided and the candidate scored more than half of the points. The second case keeps a small
// gate (tens of games on a laptop) from freezing the run; at equal strength it promotes about half
// the time, a random walk among equals that costs nothing in strength (AlphaZero promotes every
// network). A stopped match (Ctrl-C) promotes nothing and is played again on resume.
//
// Ratings. The chained rating adds the gate estimate of each promoted candidate to the rating of
// the network it beat, starting from 0 for the initial network. Because only candidates that won
// their gate are added, it is biased upwards (winner's curse), so each new best network also plays
// arena.anchor_games games against the fixed player arena.anchor (a baseline spec such as
// alphabeta:depth=2): that score and Elo difference are an unbiased measure that does not chain,
// comparable across generations and runs (docs/BASELINES.md rates the baselines).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "arena/match.h"
#include "games/game.h"
#include "trainer/config.h"
#include "trainer/run_folder.h"

namespace oppidum::trainer {

// The rule above.
bool promotes(const arena::MatchStatus& gate);
// The gate's verdict for arena.csv: the SPRT's, and at the cap which way the score decided.
std::string gate_verdict(const arena::MatchStatus& gate, bool promoted);

// Checks, before a run starts, that the anchor player (arena.anchor) can be made as a gate makes
// it and can play from the gate's openings (an external program needs openings=1 when
// arena.opening_plies is above 0): ConfigError "arena.anchor: ..." when not. Nothing to check when
// arena.anchor_games is 0.
void check_anchor(const Game& game, const config::RunConfig& config);

// Checks, before a run starts, that its gate and anchor matches can be played at all: openings of
// arena.opening_plies random plies exist in the game (make_opening), and the ply limit
// (selfplay.max_plies) is above them. ConfigError naming arena.opening_plies when not; a run's
// config is frozen once its folder exists, so a run that failed only at its first gate could never
// continue.
// Nothing to check when no match is played (arena.max_games and arena.anchor_games 0).
void check_openings(const Game& game, const config::RunConfig& config);

struct GateMatches {
  arena::MatchStatus gate;
  bool promoted = false;
  // Why the candidate could not play, when its network computes nothing (outputs that are not
  // finite: model::ComputesNothing, model::NonFiniteOutputs); not promoted, the run goes on.
  std::string refused;
  std::optional<arena::MatchStatus> anchor;  // played when promoted and arena.anchor_games > 0
  bool stopped() const { return gate.stopped || (anchor && anchor->stopped); }
};

struct GateInputs {
  const Game* game = nullptr;
  const config::RunConfig* config = nullptr;
  int generation = 0;       // the candidate's; it plays as "gen-12"
  int best_generation = 0;  // the best network's, its opponent
  std::string candidate_path, best_path;
  const std::atomic<bool>* stop = nullptr;
  // One line, e.g. for a status line: after every counted pair and about every second while a
  // game is played (arena::MatchHooks::on_progress and on_wait: one call at a time).
  std::function<void(const std::string& progress)> on_progress;
};

// Plays the gate, and the anchor match when the candidate is promoted. Never writes a file.
GateMatches play_gate(const GateInputs& inputs);

// The arena.csv row of the gate `m` played on `inputs`: the candidate at training step `step`, the
// gate ended `seconds` into the session. `rating` is the chained rating of the best network before
// the gate; a promoted candidate adds its gate Elo to it (when finite). The anchor columns are
// filled when the anchor match was played.
GateRow gate_row(const GateInputs& inputs, const GateMatches& m, std::int64_t step, double seconds,
                 double rating);

}  // namespace oppidum::trainer
