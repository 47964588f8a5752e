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
#include "mcts/rollout_evaluator.h"

namespace oppidum::arena {
namespace {

constexpr std::int64_t kMaxSimulations = 10'000'000;
// Tuned roughly for rollout values with uniform priors (docs/BASELINES.md): 3 beat 1.5 in DVONN
// (+76 +-46 Elo over 200 games at 1000 simulations) and tied in Murus Gallicus.
constexpr double kDefaultUctCpuct = 3.0;
constexpr double kDefaultNetCpuct = 1.5;

std::unique_ptr<Player> make_uct(PlayerSpec spec) {
  SpecReader reader(std::move(spec), {"sims", "cpuct", "rollouts"});
  const auto sims = reader.get_int("sims", 1, kMaxSimulations, "uct:sims=1000");
  std::string canonical = "uct:sims=" + std::to_string(sims);
  const bool has_cpuct = reader.has("cpuct");
  const double cpuct = reader.get_double_or("cpuct", 1e-3, 1e3, kDefaultUctCpuct);
  if (has_cpuct) canonical += ",cpuct=" + format_number(cpuct);
  const bool has_rollouts = reader.has("rollouts");
  const auto rollouts = static_cast<int>(reader.get_int_or("rollouts", 1, 1000, 1));
  if (has_rollouts) canonical += ",rollouts=" + std::to_string(rollouts);
  reader.finish();
  return std::make_unique<SearchPlayer>(
      canonical, arena_search_config(static_cast<int>(sims), static_cast<float>(cpuct)),
      [rollouts](std::uint64_t seed) {
        return std::make_shared<mcts::RolloutEvaluator>(seed, rollouts);
      },
      /*wants_batching=*/false);
}

std::unique_ptr<Player> make_classic(PlayerSpec spec) {
  SpecReader reader(std::move(spec), {"ms", "depth", "nodes", "hash"});
  ClassicSettings settings;
  settings.ms = static_cast<int>(reader.get_int_or("ms", 1, 3'600'000, 0));
  settings.depth = static_cast<int>(reader.get_int_or("depth", 1, kMaxClassicDepth, 0));
  settings.nodes = reader.get_int_or("nodes", 1, std::int64_t{1} << 40, 0);
  settings.hash_mb =
      static_cast<int>(reader.get_int_or("hash", 1, kMaxClassicHashMb, kDefaultClassicHashMb));
  reader.finish();
  if (settings.ms == 0 && settings.depth == 0 && settings.nodes == 0)
    throw PlayerSpecError("classic: give a budget: ms=N (time per move), depth=N or nodes=N, "
                          "e.g. classic:ms=80");
  return std::make_unique<ClassicPlayer>(settings);
}

std::unique_ptr<Player> make_net(const Game& game, PlayerSpec spec, const PlayerOptions& options) {
  SpecReader reader(std::move(spec), {"checkpoint", "sims", "cpuct", "root"});
  const std::string checkpoint = reader.get_string("checkpoint", "net:checkpoint=runs/x/best.pt,sims=800");
  const auto sims = reader.get_int("sims", 1, kMaxSimulations, "net:checkpoint=PATH,sims=800");
  std::string canonical = "net:checkpoint=" + checkpoint + ",sims=" + std::to_string(sims);
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
  if (!options.net_factory)
    throw PlayerSpecError("net: this program was built without network support (no network "
                          "evaluator factory was given), so '" + canonical +
                          "' cannot be played");
  std::shared_ptr<mcts::Evaluator> evaluator = options.net_factory(game, checkpoint);
  if (!evaluator) throw PlayerSpecError("net: no evaluator for checkpoint " + checkpoint);
  return std::make_unique<SearchPlayer>(
      canonical, search, [evaluator](std::uint64_t) { return evaluator; }, /*wants_batching=*/true);
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

std::unique_ptr<Player> make_player(const Game& game, std::string_view text,
                                    const PlayerOptions& options) {
  PlayerSpec spec = parse_player_spec(text);
  const std::string name = spec.name;
  if (name == "random") {
    SpecReader(std::move(spec), {}).finish();
    return std::make_unique<RandomPlayer>();
  }
  if (name == "uct") return make_uct(std::move(spec));
  if (name == "alphabeta") {
    SpecReader reader(std::move(spec), {"depth"});
    const auto depth = reader.get_int("depth", 1, kMaxAlphaBetaDepth, "alphabeta:depth=3");
    reader.finish();
    return std::make_unique<AlphaBetaPlayer>(static_cast<int>(depth));
  }
  if (name == "classic") return make_classic(std::move(spec));
  if (name == "net") return make_net(game, std::move(spec), options);
  if (name == "human") {
    SpecReader(std::move(spec), {}).finish();
    return std::make_unique<HumanPlayer>(options.human_in ? *options.human_in : std::cin,
                                         options.human_out ? *options.human_out : std::cout);
  }
  if (name == "external")
    return std::make_unique<ExternalPlayer>(parse_external_spec(std::move(spec)));
  throw PlayerSpecError("unknown player '" + name + "'; players: " + kPlayerList);
}

}  // namespace oppidum::arena
