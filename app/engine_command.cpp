// engine: one game over the engine line protocol on standard input and output (arena/engine.h).
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "app/option_checks.h"
#include "arena/engine.h"
#include "arena/player.h"
#include "games/game.h"

namespace oppidum::app {
namespace {

struct EngineOptions {
  std::string game, player;
  std::uint64_t seed = 0;
  bool seed_given = false;
};

void run_engine_command(const EngineOptions& o, const arena::NetEvaluatorFactory& net_factory) {
  const Game& game = game_by_name(o.game);
  arena::PlayerOptions player_options;
  player_options.net_factory = net_factory;
  auto player = arena::make_player(game, o.player, player_options);
  if (player->interactive())
    throw std::runtime_error("engine: the player must be a program, not " + player->spec());
  const std::uint64_t seed = o.seed_given ? o.seed : std::random_device{}();
  arena::run_engine(game, *player, std::cin, std::cout, seed);
}

}  // namespace

void register_engine_command(CLI::App& app, arena::NetEvaluatorFactory net_factory) {
  auto o = std::make_shared<EngineOptions>();
  auto* cmd = app.add_subcommand(
      "engine",
      "Play one game over the CodeCup line protocol on standard input and output: `Start` makes "
      "this the first player; every other line is the opponent's move (docs/RULES.md notation, DVONN "
      "PASS included), answered by one line with this player's move; `Quit` ends. Diagnostics go "
      "to standard error; an unplayable opponent move exits with status 1.");
  add_game_option(*cmd, o->game)->required();
  cmd->add_option("--player", o->player,
                  std::string("the player, any but human: ") + arena::kPlayerList)
      ->required();
  auto* seed_opt =
      cmd->add_option("--seed", o->seed, "seed of the player's random choices (default: random)")
          ->check(unsigned_whole_number());
  cmd->callback([o, seed_opt, net_factory] {
    o->seed_given = seed_opt->count() > 0;
    run_engine_command(*o, net_factory);
  });
}

}  // namespace oppidum::app
