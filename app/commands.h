// The `oppidum` subcommands. Each register_* function adds one subcommand (its options and its
// --help text) to the CLI11 app; the callbacks parse, wire and call into the modules, nothing more.
#pragma once

#include <CLI/CLI.hpp>

#include "arena/player.h"

namespace oppidum::app {

void register_rules_commands(CLI::App& app);  // perft, moves, encode, apply
void register_bench_command(CLI::App& app);   // bench rules
void register_bench_model(CLI::App& bench);    // bench model (app/bench_model_command.cpp)
void register_games_command(CLI::App& app);   // games: list and replay records
void register_export_command(CLI::App& app);  // export: a checkpoint as ONNX (model/onnx_export.h)
void register_train_command(CLI::App& app);   // train (trainer/run.h)
void register_selfplay_command(CLI::App& app);  // selfplay: a worker node (worker/worker.h)
void register_report_command(CLI::App& app);  // report: HTML curves of a run
// arena, ratings, play. `net_factory` makes the evaluator of `net:` players; without it those
// specs are refused with a clear error (the app passes model/'s factory once it exists).
void register_arena_commands(CLI::App& app, arena::NetEvaluatorFactory net_factory = {});
// engine: one game over the CodeCup line protocol (arena/engine.h), with the same player specs.
void register_engine_command(CLI::App& app, arena::NetEvaluatorFactory net_factory = {});

}  // namespace oppidum::app
