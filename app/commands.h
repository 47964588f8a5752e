// The `oppidum` subcommands. Each register_* function adds one subcommand (its options and its
// --help text) to the CLI11 app; the callbacks parse, wire and call into the modules, nothing more.
#pragma once

#include <CLI/CLI.hpp>

namespace oppidum::app {

void register_rules_commands(CLI::App& app);  // perft, moves, apply
void register_bench_command(CLI::App& app);   // bench rules
void register_games_command(CLI::App& app);   // games: list and replay records

}  // namespace oppidum::app
