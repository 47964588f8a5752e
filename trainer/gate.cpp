#include "trainer/gate.h"

#include <cmath>
#include <memory>
#include <string>

#include "arena/players.h"
#include "arena/spec.h"
#include "mcts/seed.h"
#include "model/inference_server.h"
#include "trainer/settings.h"

namespace oppidum::trainer {
namespace {

constexpr std::uint64_t kGateStream = 0x4741544500000000ULL;    // gate matches, by generation
constexpr std::uint64_t kAnchorStream = 0x414E43484F520000ULL;  // anchor matches, by generation

arena::MatchConfig match_config(const config::RunConfig& c, int games, std::uint64_t seed,
                                bool sprt) {
  arena::MatchConfig mc;
  mc.games = games;
  mc.threads = 1;
  mc.opening_plies = c.arena.opening_plies;
  mc.seed = seed;
  if (sprt) mc.sprt = arena::SprtConfig{c.arena.elo0, c.arena.elo1, c.arena.alpha, c.arena.beta};
  mc.max_plies = c.selfplay.max_plies;
  return mc;
}

// A generation's network as a player.
std::string player_name(int generation) { return "gen-" + std::to_string(generation); }

// A search player on a network server of its own. The candidate's refuses outputs that are not
// finite (it is then refused, play_gate); the best network's searches with uniform priors there,
// as in self-play, which goes on with it: its NaN ended the session, and the gate, played again
// at the resume with the same seeds, ended it again.
std::unique_ptr<arena::SearchPlayer> net_player(const GateInputs& in, const std::string& name,
                                                const std::string& checkpoint) {
  const config::RunConfig& c = *in.config;
  const bool best = checkpoint != in.candidate_path;
  std::shared_ptr<mcts::Evaluator> server = model::make_net_evaluator(
      *in.game, checkpoint, backend_options(c.inference),
      best ? selfplay_server_options(c.inference) : server_options(c.inference));
  return std::make_unique<arena::SearchPlayer>(
      name, search_config(c, c.arena.simulations),
      [server](std::uint64_t) { return server; }, true);
}

// The anchor player of the run (arena.anchor); a `net:` anchor gets a network server of its own.
std::unique_ptr<arena::Player> anchor_player(const Game& game, const config::RunConfig& c) {
  arena::PlayerOptions options;
  options.net_factory = model::net_evaluator_factory(backend_options(c.inference),
                                                     server_options(c.inference));
  return arena::make_player(game, c.arena.anchor, options);
}

arena::MatchHooks hooks(const GateInputs& in, const std::string& label) {
  arena::MatchHooks h;
  h.stop = in.stop;
  if (in.on_progress) {
    h.on_progress = [&in, label](const arena::MatchStatus& s) {
      in.on_progress(label + arena::format_progress(s));
    };
    // Also while a long game is played: the run's lease on its store is renewed from here (a
    // pair of games longer than the lease let it lapse).
    h.on_wait = h.on_progress;
  }
  return h;
}

}  // namespace

bool promotes(const arena::MatchStatus& gate) {
  if (gate.stopped) return false;
  if (gate.games_cap == 0) return true;  // no gate
  if (gate.verdict == arena::SprtVerdict::kAcceptH1) return true;
  if (gate.verdict == arena::SprtVerdict::kAcceptH0) return false;
  const bool at_cap = gate.games_counted >= gate.games_cap && gate.games_counted > 0;
  const double points = gate.wins + 0.5 * gate.draws;
  return at_cap && points > 0.5 * gate.games_counted;
}

void check_anchor(const Game& game, const config::RunConfig& config) {
  if (config.arena.anchor_games <= 0) return;
  std::unique_ptr<arena::Player> anchor;
  try {
    anchor = anchor_player(game, config);
  } catch (const std::exception& e) {
    throw config::ConfigError("arena.anchor: " + std::string(e.what()));
  }
  // A person cannot be the anchor of an unattended run: its first promotion would stop the run,
  // its config frozen.
  if (anchor->interactive())
    throw config::ConfigError("arena.anchor: " + anchor->spec() +
                              " reads moves from a person; the anchor must be a program");
  // run_match refuses random openings with such a player, so the first promotion would stop the
  // run, its config frozen.
  if (anchor->needs_initial_position() && config.arena.opening_plies > 0)
    throw config::ConfigError(
        "arena.anchor: " + anchor->spec() + " plays only from the initial position (an external "
        "program without openings=1), so arena.opening_plies must be 0, not " +
        std::to_string(config.arena.opening_plies));
}

void check_openings(const Game& game, const config::RunConfig& config) {
  const config::ArenaSection& a = config.arena;
  if (a.max_games <= 0 && (a.anchor_games <= 0 || a.anchor.empty())) return;  // no match is played
  // Every gate and anchor match starts its pairs from openings of this length; a length the game
  // cannot reach (it ends first) fails for every seed, so a few pairs of the run's seed tell.
  for (int pair = 0; pair < 4; ++pair) {
    try {
      arena::make_opening(game, a.opening_plies, config.run.seed, pair);
    } catch (const std::exception&) {
      throw config::ConfigError("arena.opening_plies: no opening of " +
                                std::to_string(a.opening_plies) + " random plies of " +
                                game.name() + " leaves the game running, so no gate match could "
                                "start; use fewer (the default is 4)");
    }
  }
  // A ply limit within the opening would end every game before either network moved.
  if (config.selfplay.max_plies <= a.opening_plies)
    throw config::ConfigError("arena.opening_plies (" + std::to_string(a.opening_plies) +
                              ") must be below selfplay.max_plies (" +
                              std::to_string(config.selfplay.max_plies) +
                              "), the ply limit of gate matches too");
}

std::string gate_verdict(const arena::MatchStatus& gate, bool promoted) {
  if (gate.games_cap == 0) return "no gate (arena.max_games 0)";
  std::string text = arena::describe_verdict(gate);
  // At the cap without an SPRT decision, promotes() goes by the score: say so, and by how much.
  if (gate.verdict == arena::SprtVerdict::kContinue && !gate.stopped && gate.games_counted > 0) {
    // Its points whole, beside the rounded share: a share that rounds to 50.0% cannot say which
    // side of half it is.
    const double points = gate.wins + 0.5 * gate.draws;
    text += promoted ? "; promoted on its score, " : "; kept the best: its score, ";
    text += arena::format_number(points) + " of " + std::to_string(gate.games_counted) +
            " points (" +
            arena::format_number(std::round(1000.0 * points / gate.games_counted) / 10.0) + "%), ";
    text += promoted ? "more than half" : "not more than half";
  }
  return text;
}

GateMatches play_gate(const GateInputs& in) {
  const config::RunConfig& c = *in.config;
  const auto gen = static_cast<std::uint64_t>(in.generation);
  GateMatches result;
  result.gate.games_cap = c.arena.max_games;
  // A candidate that computes nothing is refused, not promoted, and the run goes on: it stopped
  // the run at its gate, and at every resume after. Without a gate it is tried all the same, so
  // that it never becomes the best network that self-play stops on.
  // Its anchor match too: a NaN there ended the session, and the gate was played again, and
  // failed again, at every resume.
  const auto refuse = [&](const std::string& why) {
    result.refused = why;
    result.promoted = false;
    result.anchor.reset();
    return result;
  };
  try {
    if (c.arena.max_games <= 0) {
      const model::Checkpoint candidate = model::load_checkpoint(in.candidate_path, *in.game);
      model::check_finite_outputs(*in.game,
                                  *model::make_backend(candidate, backend_options(c.inference)),
                                  in.candidate_path);
    } else {
      const auto candidate = net_player(in, player_name(in.generation), in.candidate_path);
      const auto best = net_player(in, player_name(in.best_generation), in.best_path);
      result.gate = arena::run_match(
          *in.game, *candidate, *best,
          match_config(c, c.arena.max_games, mcts::derive_seed(c.run.seed, kGateStream, gen),
                       true),
          hooks(in, ""));
    }
    result.promoted = promotes(result.gate);
    if (!result.promoted || c.arena.anchor_games <= 0 || c.arena.anchor.empty()) return result;
    const auto candidate = net_player(in, player_name(in.generation), in.candidate_path);
    const auto anchor = anchor_player(*in.game, c);
    result.anchor = arena::run_match(
        *in.game, *candidate, *anchor,
        match_config(c, c.arena.anchor_games, mcts::derive_seed(c.run.seed, kAnchorStream, gen),
                     false),
        hooks(in, "anchor "));
  } catch (const model::ComputesNothing& e) {
    if (std::string(e.what()).find(in.candidate_path) == std::string::npos) throw;
    return refuse(e.what());
  } catch (const model::NonFiniteOutputs& e) {
    if (e.source() != "checkpoint " + in.candidate_path) throw;
    return refuse(e.what());
  }
  return result;
}

GateRow gate_row(const GateInputs& in, const GateMatches& m, std::int64_t step, double seconds,
                 double rating) {
  GateRow row;
  row.generation = in.generation;
  row.step = step;
  row.opponent_generation = in.best_generation;
  row.games = m.gate.games_counted;
  row.wins = m.gate.wins;
  row.draws = m.gate.draws;
  row.losses = m.gate.losses;
  row.elo = m.gate.elo.elo;
  row.elo_low = m.gate.elo.elo_low;
  row.elo_high = m.gate.elo.elo_high;
  row.llr = m.gate.llr;
  // No gate match (arena.max_games 0): nothing was measured, so no estimate, interval or pairs
  // (empty fields), never 0 [0, 0].
  if (m.gate.games_cap == 0 || !m.refused.empty())
    row.elo = row.elo_low = row.elo_high = row.llr = std::nan("");
  else
    row.pairs = arena::format_pairs(m.gate);
  row.verdict = m.refused.empty() ? gate_verdict(m.gate, m.promoted)
                                  : "not promoted: " + m.refused;
  row.promoted = m.promoted;
  row.seconds = seconds;
  row.rating = chained_rating(rating, m.promoted, row.elo);
  if (m.anchor) {
    row.anchor = in.config->arena.anchor;
    row.anchor_games = m.anchor->games_counted;
    row.anchor_score = m.anchor->elo.score;
    row.anchor_elo = m.anchor->elo.elo;
    row.anchor_elo_low = m.anchor->elo.elo_low;
    row.anchor_elo_high = m.anchor->elo.elo_high;
    row.anchor_pairs = arena::format_pairs(*m.anchor);
  }
  return row;
}

}  // namespace oppidum::trainer
