// The `oppidum` subcommands. Each register_* function adds one subcommand (its options and its
// --help text) to the CLI11 app; the callbacks parse, wire and call into the modules, nothing more.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

#include "arena/player.h"
#include "worker/worker.h"

namespace oppidum::app {

void register_rules_commands(CLI::App& app);  // perft, moves, encode, apply
void register_bench_command(CLI::App& app);   // bench rules
void register_bench_model(CLI::App& bench);    // bench model (app/bench_model_command.cpp)
void register_bench_store(CLI::App& bench);    // bench store (app/bench_store_command.cpp)
void register_bench_search(CLI::App& bench);   // bench search (app/bench_search_command.cpp)
void register_bench_web(CLI::App& bench);      // bench web (app/bench_web_command.cpp)
void register_bench_train(CLI::App& bench);    // bench train (app/bench_train_command.cpp)
void register_bench_selfplay(CLI::App& bench); // bench selfplay (app/bench_selfplay_command.cpp)
void register_games_command(CLI::App& app);   // games: list and replay records
void register_export_command(CLI::App& app);  // export: a checkpoint as ONNX (model/onnx_export.h)
void register_train_command(CLI::App& app);   // train (trainer/run.h)
void register_selfplay_command(CLI::App& app);  // selfplay: a worker node (worker/worker.h)
// The worker's options and callback on `cmd` (the `selfplay` subcommand, or the whole
// oppidum-worker program), and its description.
extern const char* const kWorkerDescription;
void add_worker_options(CLI::App& cmd, const std::shared_ptr<worker::WorkerOptions>& options);
void register_tune_command(CLI::App& app);    // tune: the classical engine's weights
void register_report_command(CLI::App& app);  // report: HTML curves of a run
void register_serve_command(CLI::App& app);   // serve: the web page (web/server.h)
// arena, ratings, play. `net_factory` makes the evaluator of `net:` players; without it those
// specs are refused with a clear error (the app passes model/'s factory once it exists).
void register_arena_commands(CLI::App& app, arena::NetEvaluatorFactory net_factory = {});
// engine: one game over the CodeCup line protocol (arena/engine.h), with the same player specs.
void register_engine_command(CLI::App& app, arena::NetEvaluatorFactory net_factory = {});

}  // namespace oppidum::app
