#include "trainer/resume.h"

#include <filesystem>
#include <optional>

#include "model/checkpoint.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

bool intact(const std::string& path, const Game& game) {
  try {
    model::load_checkpoint(path, game);
    return true;
  } catch (const model::CheckpointError&) {
    return false;
  }
}

std::string recover_hint(const std::string& what) {
  return what + "; restore it, or run the same command with --recover to rebuild the run from "
                "its newest intact checkpoints (docs/FORMATS.md, \"Run folder\")";
}

int newest_candidate(const RunPaths& paths) {
  int newest = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(paths.checkpoints(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() == 13 && name.rfind("gen-", 0) == 0 && name.compare(8, 5, ".ckpt") == 0 &&
        name.substr(4, 4).find_first_not_of("0123456789") == std::string::npos)
      newest = std::max(newest, std::stoi(name.substr(4, 4)));
  }
  return newest;
}

class Resumer {
 public:
  Resumer(RunFolder& folder, Trainer& trainer, const Game& game, int spg, bool recover,
          const ResumeLog& log)
      : folder_(folder), paths_(folder.paths()), trainer_(trainer), game_(game), spg_(spg),
        recover_(recover), log_(log) {}

  Resumed run() {
    load_trainer();
    for (const auto& line : folder_.drop_rows_after(trainer_.steps(), spg_))
      log_.warn("repaired " + line);
    Resumed r;
    r.best_step = load_best();
    const int trained = static_cast<int>(trainer_.steps() / spg_);
    const int gated = folder_.gates().empty() ? 0 : folder_.gates().back().generation;
    if (trainer_.steps() % spg_ == 0 && trained > gated) {
      if (!intact(paths_.candidate(trained).string(), game_)) {
        model::save_checkpoint(trainer_.checkpoint(candidate_metadata(paths_, trained)),
                               paths_.candidate(trained).string());
        log_.info("rewrote " + paths_.candidate(trained).string() + " from the trainer's state");
      }
      r.pending_gate = trained;
      log_.info("generation " + std::to_string(trained) + " was not gated yet: its gate comes first");
    }
    return r;
  }

 private:
  void load_trainer() {
    Trainer::LoadResult loaded;
    try {
      loaded = trainer_.load_state(paths_.trainer_prefix());
    } catch (const model::CheckpointError& e) {
      if (!recover_) throw RunFolderError(recover_hint(e.what()));
      recover_trainer(e.what());
      return;
    }
    if (!loaded.warning.empty()) log_.warn("trainer: " + loaded.warning);
    if (loaded.found) {
      if (trainer_.steps() > 0)
        log_.info("trainer resumes at step " + std::to_string(trainer_.steps()) + " (generation " +
                  std::to_string(trainer_.steps() / spg_) + ")");
      return;
    }
    // No trainer state: right for a run that never finished its first generation.
    if (fs::exists(paths_.candidate(1)) || !folder_.gates().empty()) {
      const std::string what = paths_.trainer_weights().string() +
                               " is missing, but the run has trained generations";
      if (!recover_) throw RunFolderError(recover_hint(what));
      recover_trainer(what);
      return;
    }
    const std::string initial =
        fs::exists(paths_.candidate(0)) ? paths_.candidate(0).string() : paths_.best().string();
    trainer_.load_weights(model::load_checkpoint(initial, game_));
  }

  // --recover: the trainer from the newest intact gen-*.ckpt, with fresh optimiser state.
  void recover_trainer(const std::string& why) {
    for (int gen = newest_candidate(paths_); gen >= 0; --gen) {
      const std::string path = paths_.candidate(gen).string();
      if (!intact(path, game_)) continue;
      const model::Checkpoint c = model::load_checkpoint(path, game_);
      trainer_.load_weights(c);
      trainer_.set_steps(c.step);
      trainer_.save_state(paths_.trainer_prefix());
      log_.warn("recovered: " + why + "; the trainer restarts from " + path + " (step " +
                std::to_string(c.step) + ") with fresh optimiser state");
      return;
    }
    throw RunFolderError(why + ", and no intact checkpoints/gen-*.ckpt is left to recover from");
  }

  // Returns best.ckpt's step once it is the last promoted generation.
  std::int64_t load_best() {
    const auto promoted = folder_.last_promoted();
    const int best_gen = promoted ? promoted->generation : 0;
    const std::int64_t best_step = promoted ? promoted->step : 0;
    const std::string source = paths_.candidate(best_gen).string();
    std::string problem;
    try {
      const model::Checkpoint best = model::load_checkpoint(paths_.best().string(), game_);
      if (best.step == best_step) return best_step;
      problem = "it holds step " + std::to_string(best.step) + ", not generation " +
                std::to_string(best_gen) + " (step " + std::to_string(best_step) +
                "), the last promoted in arena.csv";
    } catch (const model::CheckpointError& e) {
      if (!recover_ && fs::exists(paths_.best())) throw RunFolderError(recover_hint(e.what()));
      if (!recover_) throw RunFolderError(recover_hint(paths_.best().string() + " is missing"));
      problem = e.what();
    }
    // A run from before gen-0000 existed, whose best is still its initial network: keep it.
    if (!fs::exists(source) && !promoted) return 0;
    const model::Checkpoint copy = model::load_checkpoint(source, game_);
    model::save_checkpoint(copy, paths_.best().string());
    log_.warn(paths_.best().string() + ": " + problem + "; copied " + source + " to it");
    return copy.step;
  }

  RunFolder& folder_;
  const RunPaths& paths_;
  Trainer& trainer_;
  const Game& game_;
  int spg_;
  bool recover_;
  const ResumeLog& log_;
};

}  // namespace

std::string candidate_metadata(const RunPaths& paths, int generation) {
  return paths.dir.filename().string() + " generation " + std::to_string(generation);
}

Resumed resume_run(RunFolder& folder, Trainer& trainer, const Game& game, int steps_per_generation,
                   bool recover, const ResumeLog& log) {
  return Resumer(folder, trainer, game, steps_per_generation, recover, log).run();
}

}  // namespace oppidum::trainer
