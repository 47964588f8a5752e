// engine: one game over the engine line protocol on standard input and output (arena/engine.h).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "app/option_checks.h"
#include "app/stop_signal.h"
#include "arena/engine.h"
#include "arena/player.h"
#include "games/game.h"

namespace oppidum::app {
namespace {

struct EngineOptions {
  std::string game, player;
  std::uint64_t seed = 0;
  bool seed_given = false;
  double time = 0;  // seconds per game; 0: the spec decides
};

// When this process started, on the steady clock: its age from /proc/self/stat (start time in
// clock ticks after boot) and /proc/uptime, to within a tick (10 ms); now when they cannot be read.
std::chrono::steady_clock::time_point process_start() {
  const auto now = std::chrono::steady_clock::now();
  std::ifstream stat("/proc/self/stat");
  std::ifstream uptime_file("/proc/uptime");
  std::string text;
  double uptime = 0;
  if (!std::getline(stat, text) || !(uptime_file >> uptime)) return now;
  const auto paren = text.rfind(')');
  if (paren == std::string::npos) return now;
  std::istringstream fields(text.substr(paren + 2));  // from field 3, the state
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {}
  unsigned long long ticks = 0;
  const long per_second = sysconf(_SC_CLK_TCK);
  if (!(fields >> ticks) || per_second <= 0) return now;
  const double age = uptime - static_cast<double>(ticks) / static_cast<double>(per_second);
  if (age < 0 || age > 3600) return now;
  return now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(age));
}

void run_engine_command(const EngineOptions& o, const arena::NetEvaluatorFactory& net_factory) {
  const auto started = process_start();
  const Game& game = game_by_name(o.game);
  arena::PlayerOptions player_options;
  player_options.net_factory = net_factory;
  player_options.default_time.clock_seconds = o.time;
  auto player = arena::make_player(game, o.player, player_options);
  if (player->interactive())
    throw std::runtime_error("engine: the player must be a program, not " + player->spec());
  const std::uint64_t seed = o.seed_given ? o.seed : std::random_device{}();
  arena::run_engine(game, *player, std::cin, std::cout, seed, started);
}

}  // namespace

void register_engine_command(CLI::App& app, arena::NetEvaluatorFactory net_factory) {
  auto o = std::make_shared<EngineOptions>();
  auto* cmd = app.add_subcommand(
      "engine",
      "Play one game over the CodeCup line protocol on standard input and output: `Start` makes "
      "this the first player (a first line `Opening MOVE...` sets up an opening first); every "
      "other line is the opponent's move (docs/RULES.md notation, DVONN PASS included), "
      "answered by one line with this player's move; `Quit` ends. Diagnostics go to standard "
      "error; an unplayable opponent move exits with status 1.");
  add_game_option(*cmd, o->game)->required();
  cmd->add_option("--player", o->player,
                  std::string("the player: ") + arena::kProgramList)
      ->required();
  auto* seed_opt =
      cmd->add_option("--seed", o->seed, "seed of the player's random choices (default: random)")
          ->check(unsigned_whole_number());
  cmd->add_option("--time", o->time,
                  "the player's clock for the whole game in seconds, as the protocol's referee "
                  "keeps it (the CodeCup's was about 5): a searching player (uct, net, alphabeta, "
                  "classic) whose spec has no ms= or clock= plays on clock=SECONDS, spending it by "
                  "the rule of docs/FORMATS.md (\"Time controls\"), with a reserve for the I/O")
      ->check(number_in(arena::kMinClockSeconds, arena::kMaxClockSeconds));
  cmd->callback([o, seed_opt, net_factory] {
    install_exit_signals();
    // A referee that stops reading is an error on the write (arena::run_engine says so), not a
    // silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    o->seed_given = seed_opt->count() > 0;
    run_engine_command(*o, net_factory);
  });
}

}  // namespace oppidum::app
