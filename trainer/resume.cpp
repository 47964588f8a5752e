#include "trainer/resume.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "games/quote.h"
#include "model/checkpoint.h"
#include "util/file_io.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

std::string recover_hint(const std::string& what) {
  return what + "; restore it, or run the same command with --recover to rebuild the run from "
                "its newest intact checkpoints (docs/FORMATS.md, \"Run folder\")";
}

int newest_candidate(const RunPaths& paths) {
  const std::vector<int> found = paths.candidate_generations();
  return found.empty() ? -1 : found.front();
}

class Resumer {
 public:
  Resumer(RunFolder& folder, Trainer& trainer, const Game& game, int spg, bool recover,
          const ResumeLog& log)
      : folder_(folder), paths_(folder.paths()), trainer_(trainer), game_(game),
        net_(trainer.net_config()), spg_(spg), recover_(recover), log_(log) {}

  Resumed run() {
    check_gate_steps();
    load_trainer();
    check_trainer_is_the_runs();  // first: the generation of a step past int is refused here
    check_trainer_is_newest();
    // (Said once the step is known to be the run's: a stale trainer.ckpt's step was said, then
    // the recovery that restarted the trainer from another.)
    if (trainer_.steps() > 0)
      log_.info("trainer resumes at step " + std::to_string(trainer_.steps()) + " (generation " +
                std::to_string(trainer_.steps() / spg_) + ")");
    warn_of_damaged_candidates_ahead();
    // best.ckpt first: a gate that arena.csv lost but metrics.csv keeps (a damaged last row) is
    // restored from metrics.csv, or the resume stops, before metrics.csv's rows past arena.csv
    // are dropped (which would lose it).
    Resumed r;
    r.best_step = load_best();
    for (const auto& line : folder_.drop_rows_after(trainer_.steps(), spg_))
      log_.warn("repaired " + line);
    const int trained = static_cast<int>(trainer_.steps() / spg_);
    const int gated = folder_.last_gated();
    if (trainer_.steps() % spg_ == 0 && trained > gated) {
      if (!candidate_intact(trained)) {
        model::save_checkpoint(trainer_.checkpoint(candidate_metadata(paths_, trained)),
                               paths_.candidate(trained).string());
        log_.warn("rewrote " + paths_.candidate(trained).string() + " from the trainer's state");
      }
      r.pending_gate = trained;
      log_.info("generation " + std::to_string(trained) + " was not gated yet: its gate comes first");
    }
    if (recover_) check_candidates();
    return r;
  }

 private:
  // A checkpoint of this run's game and architecture, undamaged.
  model::Checkpoint load(const std::string& path) const {
    return model::load_checkpoint(path, game_, &net_);
  }

  // Generation `gen`'s checkpoint when it is intact: this run's game and architecture, undamaged,
  // and at that generation's step (a copy of another generation is not it); else nothing, with
  // what is wrong in `why`.
  std::optional<model::Checkpoint> intact_candidate(int gen, std::string* why = nullptr) const {
    const std::string path = paths_.candidate(gen).string();
    try {
      model::Checkpoint c = load(path);
      if (c.step == static_cast<std::int64_t>(gen) * spg_) return c;
      if (why)
        *why = path + " holds step " + std::to_string(c.step) + ", not generation " +
               std::to_string(gen) + "'s step " + std::to_string(std::int64_t{gen} * spg_);
    } catch (const model::CheckpointError& e) {
      if (why) *why = e.what();
    }
    return std::nullopt;
  }

  bool candidate_intact(int gen, std::string* why = nullptr) const {
    return intact_candidate(gen, why).has_value();
  }

  // --recover only (it reads every candidate): a damaged generation older than the trainer's is
  // noticed here, not only by the reader that needs it. One that best.ckpt holds is rewritten from
  // it; any other is named and kept as it is (no copy of its network is left).
  void check_candidates() {
    const int trained = static_cast<int>(trainer_.steps() / spg_);
    std::optional<model::Checkpoint> best;
    try {
      best = load(paths_.best().string());
    } catch (const model::CheckpointError&) {
    }
    for (const int gen : paths_.candidate_generations()) {
      std::string why;
      if (gen > trained || candidate_intact(gen, &why)) continue;
      if (best && best->step == std::int64_t{gen} * spg_) {
        model::save_checkpoint(*best, paths_.candidate(gen).string());
        log_.warn("recovered: " + why + "; rewrote it from best.ckpt, a copy of the same network");
      } else {
        log_.warn(why + "; no copy of that network is left to rebuild it from: the file is kept "
                  "as it is");
      }
    }
  }

  // The trainer saves its state before its generation's candidate, and trains a generation only
  // after the gate of the one before (trainer/run_folder.h): a run's trainer.ckpt is at most one
  // generation past its newest gate or candidate. One further ahead is another run's file, or its
  // step was edited: adopting it would skip generations and gate a foreign network.
  void check_trainer_is_the_runs() {
    const std::int64_t trained = trainer_.steps() / spg_;  // up to 2^53: not an int
    const int known = std::max({0, folder_.last_gated(), newest_candidate(paths_)});
    if (trained <= std::int64_t{known} + 1) return;
    const std::string what = paths_.trainer_weights().string() + " holds step " +
                             std::to_string(trainer_.steps()) + " (generation " +
                             std::to_string(trained) + "), but the run's newest generation is " +
                             std::to_string(known) + " (" + paths_.arena().string() +
                             " and checkpoints/gen-*.ckpt): it is not this run's trainer";
    if (!recover_) throw RunFolderError(recover_hint(what));
    recover_trainer(what);
  }

  // A damaged candidate of a generation after the trainer's (an intact one stops the resume in
  // check_trainer_is_newest) is written over when training reaches its generation: said now, not
  // done without a word.
  void warn_of_damaged_candidates_ahead() const {
    const std::int64_t trained = trainer_.steps() / spg_;
    for (const int gen : paths_.candidate_generations()) {
      if (gen <= trained) break;  // newest first
      std::string why;
      if (!intact_candidate(gen, &why))
        log_.warn(why + "; generation " + std::to_string(gen) + " is after the trainer's " +
                  std::to_string(trained) + ", so this file is written over when training "
                  "reaches it");
    }
  }

  // Every gate row holds its generation's step. One that does not says that the config's
  // steps_per_generation is not the one the run was trained with (a damaged or edited
  // config.yaml): every generation number read from a step would be wrong.
  void check_gate_steps() const {
    for (const GateRow& g : folder_.gates())
      if (g.step != static_cast<std::int64_t>(g.generation) * spg_)
        throw RunFolderError(
            paths_.arena().string() + ": generation " + std::to_string(g.generation) +
            " was gated at step " + std::to_string(g.step) + ", not " +
            std::to_string(g.generation) + " x " + std::to_string(spg_) +
            " (training.steps_per_generation in " + paths_.config().string() +
            "): the config is not the one this run was trained with; restore config.yaml");
  }

  // The trainer's state is saved before its generation's candidate and before any gate of it
  // (trainer/run_folder.h), so a gate or an intact candidate of a later generation means that
  // trainer.ckpt is older than the run (a stale copy, a file put back by hand). Trimming the run
  // to it would delete gates and overwrite newer networks: refused, or with `recover` the
  // trainer restarts from the newest intact network instead.
  void check_trainer_is_newest() {
    const auto beyond = [&]() -> std::string {
      const int trained = static_cast<int>(trainer_.steps() / spg_);
      const int gated = folder_.last_gated();
      if (gated > trained)
        return paths_.arena().string() + " has gated generation " + std::to_string(gated);
      for (const int gen : paths_.candidate_generations())
        if (gen > trained && candidate_intact(gen))
          return paths_.candidate(gen).string() + " is intact";
      return "";
    };
    const std::string why = beyond();
    if (why.empty()) return;
    const std::string what = paths_.trainer_weights().string() + " holds step " +
                             std::to_string(trainer_.steps()) + " (generation " +
                             std::to_string(trainer_.steps() / spg_) + "), older than the run: " +
                             why;
    if (!recover_) throw RunFolderError(recover_hint(what));
    recover_trainer(what);
    // No intact network is left of the gated generations after the one recovered from: their
    // gates are set aside (kept beside the table), so that no generation is gated twice.
    const std::string moved = folder_.set_aside_gates_after(static_cast<int>(trainer_.steps() / spg_));
    if (!moved.empty()) log_.warn("recovered: " + moved + "; no intact network of them is left");
  }

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
    if (loaded.found) return;
    // No trainer state: right for a run that never finished its first generation.
    if (newest_candidate(paths_) > 0 || !folder_.gates().empty()) {
      const std::string what = paths_.trainer_weights().string() +
                               " is missing, but the run has trained generations";
      if (!recover_) throw RunFolderError(recover_hint(what));
      recover_trainer(what);
      return;
    }
    const std::string initial =
        fs::exists(paths_.candidate(0)) ? paths_.candidate(0).string() : paths_.best().string();
    trainer_.load_weights(load(initial), initial);
  }

  // --recover: the trainer from the newest intact network, with fresh optimiser state: the newest
  // intact gen-*.ckpt, or best.ckpt when it is newer (its generation's file was damaged too; it is
  // the same network, so that file comes back from it).
  void recover_trainer(const std::string& why) {
    std::optional<model::Checkpoint> best;
    try {
      best = load(paths_.best().string());
    } catch (const model::CheckpointError&) {
    }
    for (const int gen : paths_.candidate_generations()) {
      const std::optional<model::Checkpoint> c = intact_candidate(gen);
      if (!c) continue;
      if (best && best->step > c->step) break;
      restart_trainer(*c, paths_.candidate(gen).string(), why);
      return;
    }
    if (!best)
      throw RunFolderError(why + ", and no intact checkpoints/gen-*.ckpt or best.ckpt is left to "
                                 "recover from");
    const int gen = static_cast<int>(best->step / spg_);
    if (best->step % spg_ == 0 && !candidate_intact(gen)) {
      model::save_checkpoint(*best, paths_.candidate(gen).string());
      log_.warn("recovered: rewrote " + paths_.candidate(gen).string() +
                " from best.ckpt, a copy of the same network");
    }
    restart_trainer(*best, paths_.best().string(), why);
  }

  // The trainer's files replaced here hold what no other file does (steps since the last
  // candidate, or another run's state): moved aside to `<file>.damaged` first, never lost.
  void restart_trainer(const model::Checkpoint& c, const std::string& path, const std::string& why) {
    trainer_.load_weights(c, path);
    trainer_.set_steps(c.step);
    std::string kept;
    for (const fs::path& file : {paths_.trainer_weights(), paths_.trainer_optimiser()}) {
      std::error_code ec;
      if (!fs::is_regular_file(fs::symlink_status(file, ec))) continue;
      const fs::path aside = file.string() + ".damaged";
      fs::rename(file, aside);  // throws, naming both, where it cannot
      kept += (kept.empty() ? "; kept the old " : " and ") + aside.filename().string();
    }
    trainer_.save_state(paths_.trainer_prefix());
    log_.warn("recovered: " + why + "; the trainer restarts from " + path + " (step " +
              std::to_string(c.step) + ") with fresh optimiser state" + kept);
  }

  // best.ckpt is intact and newer than the last generation promoted in arena.csv, so arena.csv
  // lost that gate: copying an older generation over it would lose the promoted network. With
  // `recover`, its generation is recorded as promoted (a rebuilt arena row) when that fits the
  // table; otherwise the run stops and says what to do. Returns best.ckpt's step.
  std::int64_t keep_newer_best(const model::Checkpoint& best, int arena_generation,
                               std::int64_t arena_step) {
    const int gen = static_cast<int>(best.step / spg_);
    const int last_row = folder_.last_gated();
    const std::string what = paths_.best().string() + " holds step " + std::to_string(best.step) +
                             ", newer than generation " + std::to_string(arena_generation) +
                             " (step " + std::to_string(arena_step) +
                             "), the last promoted in arena.csv";
    const bool fits = best.step % spg_ == 0 && gen > last_row && best.step <= trainer_.steps();
    if (!recover_)
      throw RunFolderError(what + "; restore arena.csv, or run the same command with --recover to "
                                  "keep best.ckpt as generation " + std::to_string(gen) +
                                  ", promoted");
    if (!fits)
      throw RunFolderError(what + ", and it does not fit arena.csv as a promoted generation (the "
                                  "table goes to generation " + std::to_string(last_row) +
                                  ", the trainer to step " + std::to_string(trainer_.steps()) +
                                  "); it is kept: restore arena.csv, or move best.ckpt aside to "
                                  "continue from generation " + std::to_string(arena_generation));
    if (folder_.restore_gate_from_metrics(gen, best.step)) {
      log_.warn("recovered: " + what + "; metrics.csv keeps its gate: recorded generation " +
                std::to_string(gen) + " as promoted in arena.csv from that row (its wins, draws, "
                "losses and intervals are lost)");
      return best.step;
    }
    GateRow row;
    row.generation = gen;
    row.step = best.step;
    row.opponent_generation = arena_generation;
    row.games = row.wins = row.draws = row.losses = -1;
    row.elo = row.elo_low = row.elo_high = row.llr = row.seconds = std::nan("");
    row.verdict = "rebuilt by --recover from best.ckpt";
    row.promoted = true;
    row.rating = folder_.rating();
    folder_.append_gate(row, -1, -1);
    log_.warn("recovered: " + what + "; kept it and recorded generation " + std::to_string(gen) +
              " as promoted in arena.csv (the gate's results are lost)");
    return best.step;
  }

  // Returns best.ckpt's step once it is the last promoted generation.
  std::int64_t load_best() {
    const auto promoted = folder_.last_promoted();
    const int best_gen = promoted ? promoted->generation : 0;
    const std::int64_t best_step = promoted ? promoted->step : 0;
    const std::string source = paths_.candidate(best_gen).string();
    std::string problem;
    try {
      const model::Checkpoint best = load(paths_.best().string());
      if (best.step == best_step) return best_step;
      if (best.step > best_step) return keep_newer_best(best, best_gen, best_step);
      problem = paths_.best().string() + " holds step " + std::to_string(best.step) +
                ", not generation " +
                std::to_string(best_gen) + " (step " + std::to_string(best_step) +
                "), the last promoted in arena.csv";
    } catch (const model::CheckpointError& e) {
      if (!recover_ && fs::exists(paths_.best())) throw RunFolderError(recover_hint(e.what()));
      if (!recover_) throw RunFolderError(recover_hint(paths_.best().string() + " is missing"));
      problem = e.what();
    }
    // A run from before gen-0000 existed, whose best is still its initial network: keep it.
    if (!fs::exists(source) && !promoted) return 0;
    model::Checkpoint copy;
    try {
      copy = load(source);
    } catch (const model::CheckpointError& e) {
      // The promoted generation's own file is damaged too. The trainer holds that network when
      // it stands at that generation's step (a kill between the gate's commit and the copy).
      if (!recover_) throw RunFolderError(recover_hint(e.what()));
      if (trainer_.steps() != best_step)
        throw RunFolderError(std::string(e.what()) + ", and no other copy of generation " +
                             std::to_string(best_gen) + "'s network is left (best.ckpt: " +
                             problem + "); restore one of them");
      copy = trainer_.checkpoint(candidate_metadata(paths_, best_gen));
      model::save_checkpoint(copy, source);
      log_.warn("recovered: " + std::string(e.what()) + "; rewrote it from the trainer's state, "
                "the same network");
    }
    model::save_checkpoint(copy, paths_.best().string());
    log_.warn(problem + "; copied " + source + " to it");  // each problem names best.ckpt
    return copy.step;
  }

  RunFolder& folder_;
  const RunPaths& paths_;
  Trainer& trainer_;
  const Game& game_;
  const model::NetConfig& net_;
  int spg_;
  bool recover_;
  const ResumeLog& log_;
};

// The keys that may change when a run continues, for the messages that refuse any other.
std::string resumable_key_list() {
  std::string keys;
  for (const std::string& k : config::resumable_keys()) keys += (keys.empty() ? "" : ", ") + k;
  return keys;
}

// The "section.key: value" lines of an identity text (config::identity_text), in order.
std::vector<std::pair<std::string, std::string>> identity_values(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos) out.emplace_back(line.substr(0, colon), line.substr(colon + 2));
  }
  return out;
}

// The keys (section.key: value) where two configs differ, those that may change on resume left
// out (they are not in the identity).
std::string differing_keys(const config::RunConfig& a, const config::RunConfig& b) {
  const auto now = identity_values(config::identity_text(a));
  const auto was = identity_values(config::identity_text(b));
  std::string differences;
  for (std::size_t i = 0; i < now.size() && i < was.size(); ++i)
    if (now[i].second != was[i].second)
      differences += "\n  " + now[i].first + ": " + now[i].second + " (the run has " +
                     was[i].second + ")";
  return differences;
}

// A folder that holds training progress but no config.yaml lost its config: never start over.
// A new run's folder holds nothing of a run but what a creation cut short leaves (gen-0000, an
// untrained best.ckpt, state.yaml, log.txt): progress, a metrics.csv (made after config.yaml), or a
// trained best.ckpt (a network someone kept there) means a run lost its config.
void check_not_orphaned(const RunPaths& paths) {
  auto found = progress_files(paths);
  if (fs::exists(paths.metrics())) found.push_back(paths.metrics().filename().string());
  std::error_code ec;
  if (fs::exists(paths.best(), ec)) {
    // An untrained network (step 0) is a creation's, cut short (perhaps by an earlier try with
    // another seed or network): nothing is lost by writing over it. Anything else someone kept.
    bool initial = false;
    try {
      initial = model::load_checkpoint(paths.best().string()).step == 0;
    } catch (const model::CheckpointError&) {
    }
    if (!initial) found.push_back("checkpoints/best.ckpt");
  }
  if (found.empty()) return;
  std::string list;
  for (const auto& f : found) list += (list.empty() ? "" : ", ") + f;
  throw RunFolderError(paths.config().string() + " is missing, but " + paths.dir.string() +
                       " holds a run (" + list +
                       "); restore config.yaml (the run's effective config) to continue it, or "
                       "start the new run in another folder");
}

// A new run is made in a new folder, or in one that holds only what a run's creation cut short
// leaves: among other files it would write its state.yaml, log.txt, metrics.csv and folders over or
// into somebody's (`train --run ~`, `--run /`).
void check_no_other_files(const RunPaths& paths) {
  std::set<std::string> own = {paths.report().filename().string()};
  for (const fs::path& p : paths.own()) own.insert(p.filename().string());
  std::error_code ec;
  std::vector<std::string> other;
  for (const auto& entry : fs::directory_iterator(paths.dir, ec)) {
    const fs::path name = entry.path().filename();
    const bool temporary = name.extension() == ".tmp" && own.count(name.stem().string()) > 0;
    if (!own.count(name.string()) && !temporary) other.push_back(name.string());
  }
  if (other.empty()) return;
  std::sort(other.begin(), other.end());
  throw RunFolderError(
      paths.dir.string() + " holds " + quote_input(other.front(), 60) +
      (other.size() > 1 ? " and " + std::to_string(other.size() - 1) + " more" : std::string()) +
      ", which no run writes: a new run is made in a new folder (or one of its own), never "
      "among other files; give --run another folder");
}

}  // namespace

config::RunConfig resolve_config(const RunPaths& paths, const std::string& config_path,
                                 const std::vector<std::string>& overrides) {
  if (!fs::exists(paths.config())) {
    check_not_orphaned(paths);
    check_no_other_files(paths);
    if (config_path.empty())
      throw config::ConfigError(paths.dir.string() +
                                " is not a run yet: give --config to start it");
    return config::load_config(config_path, overrides);
  }
  const config::RunConfig saved = config::load_config(paths.config().string());
  const config::RunConfig effective = config::load_config(paths.config().string(), overrides);
  const config::RunConfig asked =
      config_path.empty() ? effective : config::load_config(config_path, overrides);
  config::check_forward_threads(asked, (config_path.empty() ? paths.config().string() : config_path) +
                                           (overrides.empty() ? "" : " with --set") + ": ");
  const std::string differences = differing_keys(asked, saved);
  if (!differences.empty()) {
    const std::string keys = resumable_key_list();
    // Name what differs: the config file, or only the --set given with it.
    std::string who = config_path.empty() ? std::string("--set") : config_path;
    if (!config_path.empty() && !overrides.empty())
      who = differing_keys(config::load_config(config_path), saved).empty()
                ? "--set (with " + config_path + ", which matches)"
                : config_path + " with --set";
    throw config::ConfigError(who + " differs from the config " + paths.dir.string() +
                              " was started with:" + differences +
                              "\nonly these keys may change when a run continues; to change "
                              "another, start a new run (--run runs/<another name>): " + keys);
  }
  return asked;
}

void check_identity(RunState& state, const config::RunConfig& config, const RunPaths& paths) {
  const std::string now = config::identity_text(config);
  if (state.identity.empty()) {
    state.identity = now;
    return;
  }
  if (state.identity == now) return;
  const auto values = [](const std::string& text) {
    const auto pairs = identity_values(text);
    return std::map<std::string, std::string>(pairs.begin(), pairs.end());
  };
  auto was = values(state.identity);
  const auto keys_now = values(now);
  // The recorded values as this program writes them (another version may write a number in
  // another form): parsed as a config of the keys both know, and written again.
  {
    std::map<std::string, std::string> sections;
    for (const auto& [key, value] : was)
      if (keys_now.count(key))
        sections[key.substr(0, key.find('.'))] +=
            "  " + key.substr(key.find('.') + 1) + ": " + value + "\n";
    std::string yaml;
    for (const auto& [section, lines] : sections) yaml += section + ":\n" + lines;
    try {
      for (const auto& [key, value] : values(config::identity_text(
               config::parse_config(yaml, paths.state().string()))))
        if (was.count(key)) was[key] = value;
    } catch (const config::ConfigError&) {
      // compared as written
    }
  }
  std::string differences;
  for (const auto& [key, value] : keys_now) {
    const auto it = was.find(key);
    if (it == was.end() || it->second == value) continue;  // a key newer than the run: its default
    differences += "\n  " + key + ": " + value + " (the run was created with " +
                   quote_input(it->second, 80) + ")";
  }
  if (differences.empty()) {  // the recorded text itself was changed: no key to name
    state.identity = now;
    return;
  }
  const std::string keys = resumable_key_list();
  throw config::ConfigError(paths.config().string() + " was changed since the run was created, in "
                            "keys that no later session may change:" + differences +
                            "\nrestore them, or start a new run (--run runs/<another name>); only "
                            "these keys may change, with --set when the run continues: " + keys);
}

std::string candidate_metadata(const RunPaths& paths, int generation) {
  return paths.name() + " generation " + std::to_string(generation);
}

Resumed resume_run(RunFolder& folder, Trainer& trainer, const Game& game, int steps_per_generation,
                   bool recover, const ResumeLog& log) {
  return Resumer(folder, trainer, game, steps_per_generation, recover, log).run();
}

}  // namespace oppidum::trainer
