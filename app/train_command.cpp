// `oppidum train`: the self-play / training / gating loop of trainer/run.h. Ctrl-C stops it
// cleanly (a second Ctrl-C kills it; either way the same command continues the run).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "app/option_checks.h"
#include "app/stop_signal.h"
#include "model/cpu_tuning.h"
#include "store/redis_url.h"
#include "trainer/config.h"
#include "trainer/output_file.h"
#include "trainer/report.h"
#include "trainer/run_folder.h"
#include "trainer/run.h"

namespace oppidum::app {

void register_train_command(CLI::App& app) {
  auto o = std::make_shared<trainer::TrainOptions>();
  auto* cmd = app.add_subcommand(
      "train",
      "Train a network by self-play: self-play threads, a trainer and gating matches in one "
      "process, all state in the run folder. Stop with Ctrl-C; the same command continues the "
      "run.");
  cmd->add_option("--config", o->config_path,
                  "run config (configs/*.yaml); optional when the run folder exists");
  cmd->add_option("--run", o->run_dir, "run folder (default runs/<config name>)")
      ->check(non_empty("leave --run out for runs/<config name>"));
  cmd->add_option("--set", o->overrides,
                  "override a config key, e.g. --set training.batch_size=128 (repeatable; of a "
                  "key given twice the last counts, so scripts can layer settings)")
      ->take_all();
  cmd->add_flag_callback("--no-status", [o] { o->status_line = false; },
                         "no live status line (log lines instead)");
  auto store = std::make_shared<std::string>();
  cmd->add_option("--store", *store,
                  "a Redis store for self-play on many machines: redis://[user[:password]@]host"
                  "[:port]/RUN (sets run.store; the password may come from OPPIDUM_REDIS_PASSWORD "
                  "and is never written to the run folder; a run owns RUN's keys: a new run needs "
                  "keys no other run uses, and a run has one trainer)");
  cmd->add_flag("--insecure", o->insecure,
                "allow a Redis store that is not on this machine without a password");
  cmd->add_flag("--recover", o->recover,
                "rebuild a missing or damaged trainer.ckpt, best.ckpt, state.yaml, arena.csv or "
                "metrics.csv from what is intact (the newest intact checkpoints, metrics.csv's "
                "gate rows, log.txt) instead of refusing to continue; an intact best.ckpt is "
                "never replaced by an older generation");
  cmd->footer("Config keys (section.key, default, meaning):\n" + config::describe_keys());
  cmd->callback([o, store] {
    if (!store->empty()) {
      // The password stays in memory; the config (copied into the run folder) gets the URL
      // without it.
      // (The variable's password too: a URL's user without one in the URL was refused here.)
      const store::RedisUrl url =
          store::parse_redis_url(*store, std::getenv("OPPIDUM_REDIS_PASSWORD"));
      o->store_password = url.password;
      o->overrides.push_back("run.store=" + url.without_password());
    }
    if (o->run_dir.empty()) {
      if (o->config_path.empty()) throw std::runtime_error("train: give --config or --run");
      const std::string name = std::filesystem::path(o->config_path).stem().string();
      o->run_dir = "runs/" + name;
    }
    std::cerr << model::tune_cpu_runtime() << "\n";
    trainer::train(*o, install_stop_signals());
  });
}

}  // namespace oppidum::app

namespace oppidum::app {

void register_report_command(CLI::App& app) {
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write a self-contained HTML page with the curves of a run: losses by step, ratings and "
      "self-play speed by generation, game length.");
  cmd->add_option("--run", *run, "run folder (runs/<name>)")
      ->required()
      ->check(non_empty("give the run folder"));
  cmd->add_option("--out", *out,
                  "output file (default <run>/report.html); never one of a run folder's own "
                  "files, nor a directory, device or FIFO")
      ->check(non_empty("leave --out out for <run>/report.html"));
  cmd->callback([run, out] {
    if (!out->empty()) trainer::check_output_file(*out, "report --out");
    const std::string path =
        out->empty() ? trainer::RunPaths{*run}.report().string() : *out;
    std::cout << trainer::write_report(*run, path) << "\n";
  });
}

}  // namespace oppidum::app
