// make_player: spec string -> player (arena/player.h).
#include <iostream>
#include <memory>
#include <string>

#include "arena/alphabeta.h"
#include "arena/classic.h"
#include "arena/external.h"
#include "arena/player.h"
#include "arena/players.h"
#include "arena/spec.h"
#include "games/quote.h"
#include "mcts/rollout_evaluator.h"

namespace oppidum::arena {
namespace {

// Tuned roughly for rollout values with uniform priors (docs/BASELINES.md): 3 beat 1.5 in DVONN
// (+76 +-46 Elo over 200 games at 1000 simulations) and tied in Murus Gallicus.
constexpr double kDefaultUctCpuct = 3.0;
constexpr double kDefaultNetCpuct = 1.5;

// A timed player's time control: its spec's, else the default of the options.
TimeControl time_of(SpecReader& reader, const PlayerOptions& options) {
  const TimeControl own = read_time_control(reader);
  return own.timed() ? own : options.default_time;
}

// The simulations of a uct or net spec: required without a time key, a maximum with one.
std::int64_t simulations_of(SpecReader& reader, const TimeControl& time,
                            const std::string& example) {
  if (time.timed()) return reader.get_int_or("sims", 1, kMaxSimulations, kMaxSimulations);
  return reader.get_int("sims", 1, kMaxSimulations, example);
}

std::unique_ptr<Player> make_uct(PlayerSpec spec, const PlayerOptions& options) {
  SpecReader reader(std::move(spec), {"sims", "cpuct", "rollouts", "ms", "clock"});
  const TimeControl time = time_of(reader, options);
  const bool has_sims = reader.has("sims");
  const auto sims = simulations_of(reader, time, "uct:sims=1000");
  std::string keys;  // ",key=value" each
  if (has_sims) keys += ",sims=" + std::to_string(sims);
  keys += time.spec_suffix();
  const bool has_cpuct = reader.has("cpuct");
  const double cpuct = reader.get_double_or("cpuct", 1e-3, 1e3, kDefaultUctCpuct);
  if (has_cpuct) keys += ",cpuct=" + format_number(cpuct);
  const bool has_rollouts = reader.has("rollouts");
  const auto rollouts = static_cast<int>(reader.get_int_or("rollouts", 1, 1000, 1));
  if (has_rollouts) keys += ",rollouts=" + std::to_string(rollouts);
  reader.finish();
  const std::string canonical = "uct:" + keys.substr(1);
  return std::make_unique<SearchPlayer>(
      canonical, arena_search_config(static_cast<int>(sims), static_cast<float>(cpuct)),
      [rollouts](std::uint64_t seed) {
        return std::make_shared<mcts::RolloutEvaluator>(seed, rollouts);
      },
      /*wants_batching=*/false, time);
}

std::unique_ptr<Player> make_classic(PlayerSpec spec, const PlayerOptions& options) {
  SpecReader reader(std::move(spec), {"ms", "clock", "depth", "nodes", "hash"});
  ClassicSettings settings;
  settings.time = time_of(reader, options);  // depth= and nodes= then are maxima
  settings.depth = static_cast<int>(reader.get_int_or("depth", 1, kMaxClassicDepth, 0));
  settings.nodes = reader.get_int_or("nodes", 1, std::int64_t{1} << 40, 0);
  settings.hash_mb =
      static_cast<int>(reader.get_int_or("hash", 1, kMaxClassicHashMb, kDefaultClassicHashMb));
  reader.finish();
  if (!settings.time.timed() && settings.depth == 0 && settings.nodes == 0)
    throw PlayerSpecError("classic: give a budget: ms=N (time per move), clock=S (per game), "
                          "depth=N or nodes=N, e.g. classic:ms=80");
  return std::make_unique<ClassicPlayer>(settings);
}

std::unique_ptr<Player> make_net(const Game& game, PlayerSpec spec, const PlayerOptions& options) {
  SpecReader reader(std::move(spec), {"checkpoint", "sims", "cpuct", "root", "ms", "clock"});
  const std::string checkpoint = reader.get_string("checkpoint", "net:checkpoint=runs/x/checkpoints/best.ckpt,sims=800");
  const bool own_time = reader.has("ms") || reader.has("clock");
  const TimeControl time = time_of(reader, options);
  const bool has_sims = reader.has("sims");
  const auto sims = simulations_of(reader, time, "net:checkpoint=PATH,sims=800");
  std::string canonical = "net:checkpoint=" + checkpoint;
  if (has_sims) canonical += ",sims=" + std::to_string(sims);
  canonical += time.spec_suffix();
  const bool has_cpuct = reader.has("cpuct");
  const double cpuct = reader.get_double_or("cpuct", 1e-3, 1e3, kDefaultNetCpuct);
  if (has_cpuct) canonical += ",cpuct=" + format_number(cpuct);
  mcts::SearchConfig search = arena_search_config(static_cast<int>(sims), static_cast<float>(cpuct));
  if (reader.has("root")) {
    const std::string root = reader.get_string("root", "net:checkpoint=PATH,sims=800,root=gumbel");
    try {
      search.root = mcts::root_policy_from_string(root);
    } catch (const std::invalid_argument& e) {
      throw PlayerSpecError(std::string("net: ") + e.what());
    }
    if (search.root != mcts::RootPolicy::kPuct) canonical += ",root=" + root;
  }
  reader.finish();
  if (time.timed() && search.root != mcts::RootPolicy::kPuct)
    throw PlayerSpecError(
        own_time ? "net: root=gumbel plans a fixed number of simulations; give sims= without ms= "
                   "or clock="
                 : "net: root=gumbel plans a fixed number of simulations, so it cannot play on "
                   "the game clock given here (" + time.spec_suffix().substr(1) +
                   ", from --time or --clock); leave root=gumbel out to play on it");
  if (!options.net_factory)
    throw PlayerSpecError("net: this program was built without network support (no network "
                          "evaluator factory was given), so '" + canonical +
                          "' cannot be played");
  std::shared_ptr<mcts::Evaluator> evaluator = options.net_factory(game, checkpoint);
  if (!evaluator) throw PlayerSpecError("net: no evaluator for checkpoint " + checkpoint);
  return std::make_unique<SearchPlayer>(
      canonical, search, [evaluator](std::uint64_t) { return evaluator; }, /*wants_batching=*/true,
      time);
}

std::unique_ptr<Player> make_alphabeta(PlayerSpec spec, const PlayerOptions& options) {
  SpecReader reader(std::move(spec), {"depth", "ms", "clock"});
  const TimeControl time = time_of(reader, options);
  const bool has_depth = reader.has("depth");
  const auto depth = time.timed()
                         ? reader.get_int_or("depth", 1, kMaxAlphaBetaDepth, kMaxAlphaBetaDepth)
                         : reader.get_int("depth", 1, kMaxAlphaBetaDepth, "alphabeta:depth=3");
  reader.finish();
  return std::make_unique<AlphaBetaPlayer>(static_cast<int>(depth), time, has_depth);
}

}  // namespace

mcts::SearchConfig arena_search_config(int simulations, float cpuct) {
  mcts::SearchConfig config;
  config.simulations = simulations;
  config.cpuct = cpuct;
  config.dirichlet_weight = 0.0f;
  config.temperature_plies = 0;
  config.temperature = 0.0f;
  config.final_temperature = 0.0f;
  config.gumbel_noise = false;
  return config;
}

bool names_budget(const PlayerSpec& spec) {
  for (const auto& param : spec.params)
    for (const char* key : kBudgetKeys)
      if (param.first == key) return true;
  return false;
}

std::unique_ptr<Player> make_player(const Game& game, std::string_view text,
                                    const PlayerOptions& options) {
  PlayerSpec spec = parse_player_spec(text);
  const std::string name = spec.name;
  if (name == "random") {
    SpecReader(std::move(spec), {}).finish();
    return std::make_unique<RandomPlayer>();
  }
  if (name == "uct") return make_uct(std::move(spec), options);
  if (name == "alphabeta") return make_alphabeta(std::move(spec), options);
  if (name == "classic") return make_classic(std::move(spec), options);
  if (name == "net") return make_net(game, std::move(spec), options);
  if (name == "human") {
    SpecReader(std::move(spec), {}).finish();
    return std::make_unique<HumanPlayer>(options.human_in ? *options.human_in : std::cin,
                                         options.human_out ? *options.human_out : std::cout);
  }
  if (name == "external")
    return std::make_unique<ExternalPlayer>(parse_external_spec(std::move(spec)));
  throw PlayerSpecError("unknown player '" + quote_input(name, 40) + "'; players: " + kPlayerList);
}

}  // namespace oppidum::arena
