// `oppidum selfplay`: a self-play worker node of a run spread over machines (worker/worker.h).
// Ctrl-C or SIGTERM stops it cleanly (the games in progress are dropped; a second signal exits).
#include <memory>

#include "app/commands.h"
#include "app/option_checks.h"
#include "app/stop_signal.h"
#include "trainer/config.h"
#include "worker/worker.h"

namespace oppidum::app {

const char* const kWorkerDescription =
    "Play self-play games for a run whose trainer (`oppidum train --store ...`) may be on another "
    "machine: read the run's config and best network from its Redis store, push every finished "
    "game to it, and switch to each newly published network. CPU only (the Eigen backend). "
    "docs/DISTRIBUTED.md explains the setup.";

void add_worker_options(CLI::App& cmd, const std::shared_ptr<worker::WorkerOptions>& o) {
  cmd.add_option("--store", o->store,
                 "the run's store: redis://[user[:password]@]host[:port]/RUN (the password may "
                 "come from OPPIDUM_REDIS_PASSWORD)")
      ->required();
  cmd.add_option("--threads", o->threads,
                 "self-play threads (default: the run's selfplay.threads, at least 1)")
      ->check(CLI::Range(1, config::kMaxSelfplayThreads));
  cmd.add_option("--node", o->node, "this node's name in records and metrics (default host-pid)")
      ->check(non_empty("leave --node out for the default name"));
  cmd.add_option("--minutes", o->stop_after_minutes,
                 "stop this many minutes after the start, time spent waiting for the store or the "
                 "trainer included (default: never; at most 1e7, as run.stop_after_minutes)")
      ->check(positive_number())
      ->check(number_in(0, config::kMaxStopAfterMinutes));
  cmd.add_flag("--insecure", o->insecure,
               "allow a store that is not on this machine without a password");
  cmd.callback([o] { worker::run_worker(*o, install_stop_signals()); });
}

void register_selfplay_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("selfplay", kWorkerDescription);
  add_worker_options(*cmd, std::make_shared<worker::WorkerOptions>());
}

}  // namespace oppidum::app
