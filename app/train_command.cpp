// `oppidum train`: the self-play / training / gating loop of trainer/run.h. Ctrl-C stops it
// cleanly (a second Ctrl-C kills it; either way the same command continues the run).
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/commands.h"
#include "model/cpu_tuning.h"
#include "trainer/config.h"
#include "trainer/report.h"
#include "trainer/run.h"

namespace oppidum::app {
namespace {

std::atomic<bool> g_stop{false};  // set by SIGINT/SIGTERM; the one flag a signal handler may touch

extern "C" void on_signal(int) {
  if (g_stop.exchange(true)) std::_Exit(130);
}

}  // namespace

void register_train_command(CLI::App& app) {
  auto o = std::make_shared<trainer::TrainOptions>();
  auto* cmd = app.add_subcommand(
      "train",
      "Train a network by self-play: self-play threads, a trainer and gating matches in one "
      "process, all state in the run folder. Stop with Ctrl-C; the same command continues the "
      "run.");
  cmd->add_option("--config", o->config_path,
                  "run config (configs/*.yaml); optional when the run folder exists");
  cmd->add_option("--run", o->run_dir, "run folder (default runs/<config name>)");
  cmd->add_option("--set", o->overrides,
                  "override a config key, e.g. --set training.batch_size=128 (repeatable)")
      ->take_all();
  cmd->add_flag("!--no-status", o->status_line, "no live status line (log lines instead)");
  cmd->add_flag("--recover", o->recover,
                "rebuild a missing or damaged trainer.ckpt, best.ckpt or state.yaml from the "
                "newest intact checkpoints instead of refusing to continue");
  cmd->footer("Config keys (section.key, default, meaning):\n" + config::describe_keys());
  cmd->callback([o] {
    if (o->run_dir.empty()) {
      if (o->config_path.empty()) throw std::runtime_error("train: give --config or --run");
      const std::string name = std::filesystem::path(o->config_path).stem().string();
      o->run_dir = "runs/" + name;
    }
    std::cerr << model::tune_cpu_runtime() << "\n";
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    trainer::train(*o, g_stop);
  });
}

}  // namespace oppidum::app

namespace oppidum::app {

void register_report_command(CLI::App& app) {
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write a self-contained HTML page with the curves of a run: losses, ratings over time, "
      "self-play speed, game length.");
  cmd->add_option("--run", *run, "run folder (runs/<name>)")->required();
  cmd->add_option("--out", *out, "output file (default <run>/report.html)");
  cmd->callback([run, out] {
    const std::string path = out->empty() ? (std::filesystem::path(*run) / "report.html").string() : *out;
    std::cout << trainer::write_report(*run, path) << "\n";
  });
}

}  // namespace oppidum::app
