// The games for the command line: the registry's concrete position types for commands that need
// speed (perft, benchmarks; games/registry.h), and the one --game option of every subcommand.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "games/registry.h"

namespace oppidum::app {

using oppidum::PositionTag;
using oppidum::with_position_type;

// Adds --game to `cmd`, with one help text that lists the registered games; the command looks the
// name up (game_by_name), so an unknown name is an error listing the games.
inline CLI::Option* add_game_option(CLI::App& cmd, std::string& game) {
  std::string help = "game:";
  for (const Game* g : all_games())
    help += std::string(g == all_games().front() ? " " : ", ") + g->name() + " (" +
            g->display_name() + ")";
  return cmd.add_option("--game", game, help);
}

}  // namespace oppidum::app
