// oppidum: trains Murus Gallicus and DVONN players by self-play. This file only wires the
// subcommands; each lives in its own app/*_command(s).cpp.
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/error_text.h"
#include "app/option_checks.h"
#include "games/quote.h"
#include "model/cpu_tuning.h"
#include "model/inference_server.h"

namespace {

// The first argument that is not an option: where the subcommand's name goes ("" if none).
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.empty() && arg[0] != '-') return std::string(arg);
  }
  return "";
}

bool is_subcommand(const CLI::App& app, const std::string& name) {
  return !app.get_subcommands([&](const CLI::App* sub) { return sub->check_name(name); }).empty();
}

std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands(std::function<bool(const CLI::App*)>{}))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "oppidum: trains Murus Gallicus and DVONN players from zero knowledge by self-play "
      "(AlphaZero-style),\nand checks, plays and measures them.",
      "oppidum"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "oppidum " OPPIDUM_VERSION);
  oppidum::app::register_rules_commands(app);
  oppidum::app::register_bench_command(app);
  oppidum::app::register_train_command(app);
  oppidum::app::register_selfplay_command(app);
  oppidum::app::register_report_command(app);
  oppidum::app::register_games_command(app);
  oppidum::app::register_tune_command(app);
  oppidum::app::register_export_command(app);
  oppidum::app::register_serve_command(app);
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
  oppidum::app::require_decimal_integers(app);
  // CLI11 quotes the arguments it refuses whole; a refused argument can be 100 KB long, so long
  // messages are cut like every other quote of user input (games/quote.h).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    std::string message = e.what();
    // Never a control character of an argument to the terminal (`--depth $'\e[2J'` cleared it),
    // nor a line break (`--games $'1\nerror: ...'` forged a line of its own).
    message = oppidum::printable_line(message, 300);
    return message + "\nRun with --help for more information.\n";
  });
  // "oppidum SUBCOMMAND", for errors.
  const auto command_name = [&app] {
    const auto parsed = app.get_subcommands();
    return "oppidum" + (parsed.empty() ? std::string() : " " + parsed.front()->get_name());
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // `oppidum frobnicate`: CLI11 says only that a subcommand is required or that an argument was
    // not expected; say which subcommand is unknown and list the known ones.
    if (e.get_exit_code() != 0 && app.get_subcommands().empty()) {
      const std::string word = first_word(argc, argv);
      if (!word.empty() && !is_subcommand(app, word)) {
        std::cerr << "error: unknown subcommand \"" << oppidum::quote_input(word)
                  << "\"; the subcommands are " << subcommand_names(app)
                  << "\nRun with --help for more information.\n";
        return e.get_exit_code();
      }
    }
    return app.exit(e);
  } catch (const std::exception& e) {
    // Errors quote user input in many places (a path, an option's value, a file's line): what
    // reaches the terminal is made printable here, once for all of them.
    std::cerr << "error: "
              << oppidum::printable_text(oppidum::app::error_text(e, command_name())) << '\n';
    return 1;
  }
  // Output that could not be written (a full disk, a closed standard output) fails the command:
  // a match report or a move list lost is no success.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "error: " << command_name() << ": cannot write its output to standard output\n";
    return 1;
  }
  return 0;
}
