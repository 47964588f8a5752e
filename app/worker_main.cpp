// oppidum-worker: the self-play worker node alone (`oppidum selfplay` as a program of its own),
// built without LibTorch so that a CPU machine joining a run needs none (docs/DISTRIBUTED.md).
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/error_text.h"
#include "app/option_checks.h"

int main(int argc, char** argv) {
  CLI::App app{std::string("oppidum-worker: ") + oppidum::app::kWorkerDescription,
               "oppidum-worker"};
  app.set_version_flag("--version", "oppidum-worker " OPPIDUM_VERSION);
  oppidum::app::add_worker_options(app, std::make_shared<oppidum::worker::WorkerOptions>());
  oppidum::app::require_decimal_integers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "error: " << oppidum::app::error_text(e, "oppidum-worker") << '\n';
    return 1;
  }
  return 0;
}
