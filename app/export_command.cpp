// `oppidum export`: writes a checkpoint's network in a format other programs load (ONNX), with
// batch norm folded and the encoding described in the file (model/onnx_export.h, docs/EXPORT.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "app/commands.h"
#include "games/game.h"
#include "model/backend.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "model/onnx_export.h"
#include "trainer/output_file.h"
#include "util/progress.h"

namespace oppidum::app {
namespace {

struct ExportOptions {
  std::string checkpoint;
  std::string format = "onnx";
  std::string out;
};

void run_export(const ExportOptions& o) {
  trainer::check_output_file(o.out, "export --out");
  std::error_code ec;
  if (std::filesystem::equivalent(o.checkpoint, o.out, ec))
    throw std::runtime_error("export: --out " + o.out +
                             " is the checkpoint itself; refusing to overwrite it");
  util::ProgressLine progress;
  progress.update("[export] reading " + o.checkpoint);
  const model::Checkpoint c = model::load_checkpoint(o.checkpoint);
  const Game* game = nullptr;
  try {
    game = &game_by_name(c.game);
  } catch (const GameError& e) {
    throw model::CheckpointError("checkpoint " + o.checkpoint + ": " + e.what());
  }
  model::check_compatible(c, *game, o.checkpoint);
  // A network that computes nothing is not exported.
  model::check_finite_outputs(*game, *model::make_backend(c, model::BackendOptions{}),
                              o.checkpoint);
  progress.update("[export] building, checking and writing the ONNX model", true);
  model::export_onnx(c, o.checkpoint, o.out);
  progress.done();
  std::cout << "wrote " << o.out << ": " << c.game << " network " << c.config.to_string()
            << ", training step " << c.step << ", ONNX opset " << model::kOnnxOpset << ", "
            << std::filesystem::file_size(o.out) << " bytes; input '" << model::kOnnxInput
            << "' [batch, " << c.input.planes << ", " << c.input.height << ", " << c.input.width
            << "], outputs '" << model::kOnnxPolicyOutput << "' [batch, " << c.num_actions
            << "] and '" << model::kOnnxValueOutput << "' [batch, 1]\n";
}

}  // namespace

void register_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand(
      "export",
      "Write a checkpoint's network as an ONNX model for other engines and runtimes: batch norm "
      "folded, a dynamic batch dimension, input 'planes', outputs 'policy_logits' and 'value', "
      "and metadata properties describing the game, the input planes, the action layout and the "
      "outputs. The model passes ONNX's checker before it is written; the file is replaced only "
      "by a complete model. See docs/EXPORT.md.");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "checkpoint file (e.g. runs/<name>/checkpoints/best.ckpt)")
      ->required();
  cmd->add_option("--format", o->format, "output format")
      ->check(CLI::IsMember({"onnx"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out,
                  "file to write, e.g. best.onnx; never one of a run folder's own files, nor a "
                  "directory, device or FIFO")
      ->required();
  cmd->callback([o] { run_export(*o); });
}

}  // namespace oppidum::app
