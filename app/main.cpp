// oppidum: trains Murus Gallicus and DVONN players by self-play. This file only wires the
// subcommands; each lives in its own app/*_command(s).cpp.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "model/cpu_tuning.h"
#include "model/inference_server.h"

int main(int argc, char** argv) {
  CLI::App app{
      "oppidum: trains Murus Gallicus and DVONN players from zero knowledge by self-play "
      "(AlphaZero-style),\nand checks, plays and measures them.",
      "oppidum"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "oppidum 0.1.0");
  oppidum::app::register_rules_commands(app);
  oppidum::app::register_bench_command(app);
  oppidum::app::register_train_command(app);
  oppidum::app::register_report_command(app);
  oppidum::app::register_games_command(app);
  oppidum::app::register_export_command(app);
  // `net:` players get a batching inference server on the CPU default backend; the process is
  // tuned for network inference the first time one is made.
  const auto make_net = oppidum::model::net_evaluator_factory({});
  const oppidum::arena::NetEvaluatorFactory net_factory =
      [make_net](const oppidum::Game& game, const std::string& checkpoint) {
        static const std::string tuned = oppidum::model::tune_cpu_runtime();
        return make_net(game, checkpoint);
      };
  oppidum::app::register_arena_commands(app, net_factory);
  oppidum::app::register_engine_command(app, net_factory);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
