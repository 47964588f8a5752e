// Resuming a run: the trainer and best.ckpt brought back to the one consistent state that
// trainer/run_folder.h describes, after a stop of any kind.
//
// - The trainer's saved state decides where the run is (step S). A missing trainer.ckpt is right
//   only for a run that never finished its first generation (the trainer starts from gen-0000);
//   otherwise it, like a damaged one, is an error saying how to recover, and with `recover` the
//   trainer restarts with fresh optimiser state from the newest intact network: a gen-*.ckpt, or
//   best.ckpt when it is newer (then its generation's damaged file is rewritten from it).
// - S must be the newest state of the run: a gate or an intact gen-N.ckpt of a later generation
//   means trainer.ckpt is older than the run (a stale copy), an error, or with `recover` the
//   trainer restarts as for a damaged one; arena.csv is never trimmed. S more than one generation
//   past the newest gate or candidate is another run's trainer (or an edited step): the same.
// - A network is intact when it loads, is of the run's game and architecture, and (gen-N.ckpt)
//   holds generation N's step. With `recover` every candidate is read, and a damaged one is
//   rewritten from best.ckpt when that holds its network, else named in the log. Each gate row must hold its
//   generation's step (else the config's steps_per_generation is not the run's: an error).
// - metrics.csv is trimmed to S (RunFolder::drop_rows_after).
// - best.ckpt must be the last generation promoted in arena.csv (gen-0000 before any): one that
//   is older (a kill between a gate's commit and the copy) is copied again; a missing or damaged
//   one is an error, or with `recover` copied again. An intact one that is newer is never
//   overwritten: arena.csv lost its gate, which is an error, or with `recover` a rebuilt row.
// - A generation saved but not gated (a kill or a stop during its gate) is gated first; a missing
//   gen-N.ckpt is rewritten from the trainer, which holds the same network.
//
// Config identity (resolve_config): a run keeps the config it was started with, config.yaml; only
// the keys of config::resumable_keys (stop conditions, devices, threads, batching) may change when
// it continues, and they then hold for that session only. state.yaml keeps the other keys as the
// run was created with them (check_identity), so that config.yaml edited by hand is refused too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "games/game.h"
#include "trainer/config.h"
#include "trainer/run_folder.h"
#include "trainer/trainer.h"
#include "util/log.h"

namespace oppidum::trainer {

struct ResumeLog {
  util::LogLine info, warn;
};

struct Resumed {
  std::int64_t best_step = 0;  // the step of best.ckpt
  int pending_gate = 0;        // a generation to gate before training on; 0: none
};

// `trainer` is freshly made (the initial network). Throws RunFolderError for what needs the user.
Resumed resume_run(RunFolder& folder, Trainer& trainer, const Game& game, int steps_per_generation,
                   bool recover, const ResumeLog& log);

// The config of a session of the run in `paths`. A new run takes `config_path` with `overrides`
// (--set; ConfigError when no config is given). A folder that holds training progress but no
// config.yaml lost its config: RunFolderError, never a fresh start; so is a new run in a folder
// that holds anything no run writes. A run that exists takes its
// config.yaml with the overrides, or `config_path` with them when given; either may differ from
// config.yaml only in resumable keys, else ConfigError naming each differing key with both values
// and listing the keys that may change.
config::RunConfig resolve_config(const RunPaths& paths, const std::string& config_path,
                                 const std::vector<std::string>& overrides);

// Refuses (config::ConfigError naming each key, its value and the run's) a config whose fixed keys
// differ from those `state` recorded; a state without them (from before, or rebuilt by --recover)
// records `config`'s now, for the session to save.
void check_identity(RunState& state, const config::RunConfig& config, const RunPaths& paths);

// The metadata of generation `generation`'s checkpoint in the run folder `dir`.
std::string candidate_metadata(const RunPaths& paths, int generation);

}  // namespace oppidum::trainer
