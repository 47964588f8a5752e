// The run folder of `oppidum train`: its files, its one owner, its tables, and how a run stopped
// in any way (Ctrl-C, kill -9, a full disk, a power cut) is checked on resume and brought back to
// one consistent state. docs/FORMATS.md ("Run folder") lists the files and what they guarantee.
//
//   config.yaml               the effective config; written last when a run is created
//   lock                      flock(2)-ed by the one process that owns the folder (util/folder_lock.h)
//   state.yaml                what cannot be derived from the other files: the session counter,
//                             and with a Redis store the stream cursor
//   trainer.optim, .ckpt      the trainer's optimiser state and weights, saved at each generation
//                             and when the run stops cleanly
//   checkpoints/gen-NNNN.ckpt the candidate of generation N; gen-0000 is the initial network
//   checkpoints/best.ckpt     a copy of the best network: the last generation promoted in arena.csv
//   arena.csv                 one row per gated generation; a gate counts once its row is written
//   metrics.csv               a "train" row at most once a second of training (keyed by its
//                             last step; see TrainRow) and one per gate
//                             ("gate", keyed by generation); with a Redis store, "node" and
//                             "stream" rows every 30 s; a "selfplay" row per generation (the
//                             self-play pipeline's rate against its bound, see SelfplayRow)
//   games/chunk-N.bin         self-play games (selfplay/replay_store.h)
//   log.txt                   the log, errors included
//
// The end of generation N writes, in this order (spg = training.steps_per_generation):
//   1. trainer.optim and trainer.ckpt at step N*spg
//   2. checkpoints/gen-N.ckpt, the same weights
//   3. the gate match (writes nothing)
//   4. the metrics.csv gate row
//   5. the arena.csv row, fsynced: the commit of the gate
//   6. best.ckpt, a copy of gen-N, when promoted
// Resume (check_and_repair) rolls a kill between any two steps forward or back to one state: the
// trainer's saved step S decides; train rows after S and gate rows of ungated generations are
// dropped (so the train rows account for every step once, and every gate has exactly one row), a
// missing gen-N.ckpt is rewritten from the trainer (the same network), a gate without its
// arena.csv row is played again (same seed, same candidate), and a best.ckpt that is not the last
// promoted generation is copied from it. No generation is gated twice and every step has one
// network.
//
// Missing or damaged files are errors that say what is missing and how to recover, never a fresh
// start (arena.csv and metrics.csv included, once the run has progress): `oppidum train --recover`
// rebuilds the trainer from the newest intact network (a gen-*.ckpt, or best.ckpt when it is newer),
// best.ckpt from the last promoted generation, arena.csv from metrics.csv's gate rows, metrics.csv
// anew, and state.yaml from the log. Recovery never discards an intact promoted network: a best.ckpt
// newer than anything arena.csv promoted is kept (with --recover its generation gets a rebuilt
// arena row), never overwritten with an older generation.
#pragma once

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/csv_table.h"
#include "util/file_io.h"
#include "util/folder_lock.h"

namespace oppidum::trainer {

// A run folder that cannot be used as it is; the message says what is wrong and what to do.
class RunFolderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunPaths {
  std::filesystem::path dir;
  std::filesystem::path config() const { return dir / "config.yaml"; }
  std::filesystem::path state() const { return dir / "state.yaml"; }
  std::filesystem::path checkpoints() const { return dir / "checkpoints"; }
  std::filesystem::path best() const { return checkpoints() / "best.ckpt"; }
  std::filesystem::path candidate(int generation) const;  // checkpoints/gen-NNNN.ckpt
  std::string trainer_prefix() const { return (dir / "trainer").string(); }
  std::filesystem::path trainer_weights() const { return dir / "trainer.ckpt"; }
  // The trainer's optimiser state: what Trainer::save_state writes beside the prefix.
  std::filesystem::path trainer_optimiser() const { return trainer_prefix() + ".optim"; }
  std::filesystem::path games() const { return dir / "games"; }
  std::filesystem::path arena() const { return dir / "arena.csv"; }
  std::filesystem::path metrics() const { return dir / "metrics.csv"; }
  std::filesystem::path log() const { return dir / "log.txt"; }
  std::filesystem::path lock() const { return dir / "lock"; }  // util::FolderLock's default name
  // `report`'s page, unless its --out says elsewhere: the user's file, not the run's.
  std::filesystem::path report() const { return dir / "report.html"; }
  // The run's own files and folders (those above but the report), which no other writer touches.
  std::vector<std::filesystem::path> own() const {
    return {config(), state(),   lock(),  trainer_weights(), trainer_optimiser(),
            arena(),  metrics(), log(),   checkpoints(),     games()};
  }
  // The folder's own name, however `dir` was written: "run1" for "runs/run1/", the working
  // folder's name for "."; "" only for the root.
  std::string name() const;
  // A checkpoint's name in the folder ("best", "gen-0003") and back: the stem of its file in
  // checkpoints/, or nothing for a name that is neither.
  static bool is_checkpoint_name(const std::string& stem);
  // The generations of the files in checkpoints/ named as candidate() names them (four digits or
  // more), newest first, whatever their content.
  std::vector<int> candidate_generations() const;
};

// What state.yaml keeps.
struct RunState {
  std::uint64_t sessions = 0;  // starts of the run so far (seeds each session's self-play anew)
  // The run's identity: random, made when the run is created (or when a run from before run ids
  // first starts again); a Redis store's keys and every game pushed to them carry it, so that a
  // run never trains on another's games (docs/DISTRIBUTED.md).
  std::string run_id;
  // A run with a Redis store: the id of the last stream entry read (the cursor) and how many
  // entries were read in all (kept or dropped); with the stream's entries-added they give the
  // entries evicted before the trainer read them.
  std::string stream_cursor = "0-0";
  std::int64_t stream_read = 0;
  // The config's keys that no later session may change, as the run was created with them
  // (config::identity_text): a config.yaml edited by hand is refused, naming the keys. Empty in a
  // state from before it, or rebuilt by --recover: the next session records config.yaml's.
  std::string identity;
};

// One gate: a row of arena.csv. A row rebuilt by --recover does not know everything: its unknown
// counts are -1 and its unknown numbers NaN, written as empty fields.
struct GateRow {
  int generation = 0;
  std::int64_t step = 0;
  int opponent_generation = 0;
  int games = 0, wins = 0, draws = 0, losses = 0;
  double elo = 0, elo_low = 0, elo_high = 0, llr = 0;
  std::string verdict;
  bool promoted = false;
  double seconds = 0;     // session time when the gate ended
  double rating = 0;      // chained rating of the best network after this gate (chained_rating)
  // The gate's pairs by A's points in each, "n0/n0.5/n1/n1.5/n2" (arena::format_pair_counts: the
  // counts its interval is computed from, docs/BASELINES.md "Matches"); empty when not known (no
  // match, a rebuilt row, a row from before the column).
  std::string pairs;
  std::string anchor_pairs;  // the same of the anchor match
  std::string anchor;     // the anchor's spec; empty: no anchor match
  int anchor_games = 0;
  double anchor_score = 0, anchor_elo = 0, anchor_elo_low = 0, anchor_elo_high = 0;
};

// The chained rating of the best network after a gate, from the one before (the initial
// network's is 0): a promotion adds its gate Elo. A promotion without a measured Elo (no gate
// match, arena.max_games 0, or a row whose estimate is lost) makes it unknown (NaN) from there on,
// never a measured-looking 0.
inline double chained_rating(double previous, bool promoted, double elo) {
  return promoted ? previous + (std::isfinite(elo) ? elo : std::nan("")) : previous;
}

// The training steps since the row before (at most a second's, and each generation's last step
// ends one): a "train" row of metrics.csv. One row a step made a long run's table too large to
// resume (a day at 20 steps/s was 1.7 million rows).
struct TrainRow {
  double seconds = 0;
  std::int64_t step = 0;
  int generation = 0;
  std::int64_t positions = 0, games = 0;
  double policy_loss = 0, value_loss = 0, learning_rate = 0;  // the losses: the steps' means
  std::int64_t loss_steps = 1;  // the steps whose losses the row holds, the last being `step`
};

// The self-play pipeline over one generation of a session: a "selfplay" row of metrics.csv. The
// bound is what self-play could reach if the forward pass never waited:
// workers x forward_rate / evals_per_position.
struct SelfplayRow {
  double seconds = 0;
  int generation = 0;
  std::int64_t positions = 0, games = 0;  // in the replay store
  double positions_per_second = 0;        // self-play positions (moves of finished games) per s
  double evals_per_position = 0;          // network evaluations per self-play position
  double forward_busy = 0;                // share of the wall time the forward workers were busy
  double forward_rate = 0;                // positions/s of one worker's forward passes alone
  double mean_batch = 0;                  // the batch sizes seen
  double bound = 0;                       // self-play positions/s if the forward were always busy
  // Resignation this session (selfplay/resignation.h); resign_checks -1 when resignation is off.
  std::int64_t resigned = 0, resign_checks = -1;
  double resign_false_rate = 0;           // wrong share of the last 100 checks
};

// A self-play node's games so far and rate: a "node" row of metrics.csv (a run with a Redis
// store).
struct NodeRow {
  double seconds = 0;
  std::string node;
  std::int64_t games = 0;
  double games_per_second = 0;
};

// The stream's state: a "stream" row of metrics.csv (the trainer's lag in entries, entries evicted
// unread).
struct StreamRow {
  double seconds = 0;
  std::int64_t positions = 0, games = 0;
  int nodes = 0;
  std::int64_t lag = 0, evicted = 0;
};

// A session's start ("start" row, seconds 0) or clean stop ("stop" row): where the run stood.
// Sessions are counted by their start rows, and a clean stop's row gives the session's whole time
// (a session killed is timed to its last row).
struct SessionRow {
  bool start = true;
  double seconds = 0;
  std::int64_t step = 0;
  int generation = 0;
  std::int64_t positions = 0, games = 0;
};

// The run's tables, one schema for every writer and reader (the trainer, report, serve, the
// benches and the tests): the columns of arena.csv and metrics.csv, each kind of row as written,
// and the rows as read back.
const util::CsvTable::Row& arena_header();
const util::CsvTable::Row& metrics_header();
util::CsvTable::Row metrics_row(const TrainRow& row);
util::CsvTable::Row metrics_row(const SelfplayRow& row);
util::CsvTable::Row metrics_row(const NodeRow& row);
util::CsvTable::Row metrics_row(const StreamRow& row);
util::CsvTable::Row metrics_row(const SessionRow& row);
// A gate's metrics row; `positions` and `games` (the replay's) are -1 when not known.
util::CsvTable::Row metrics_row(const GateRow& row, std::int64_t positions, std::int64_t games);
util::CsvTable::Row arena_row(const GateRow& row);

// A row of metrics.csv as read back: its kind ("train", "gate", "selfplay", "node", "stream",
// "start", "stop") and
// every column, by name, NaN where the row leaves it empty, it is not a number, or the file (of an
// older version) has no such column.
struct MetricsRow {
  std::string kind, node;
  double seconds, step, generation, positions, games, policy_loss, value_loss, learning_rate,
      gate_elo, promoted, best_elo, gate_games, anchor_score, anchor_elo, games_per_second, nodes,
      stream_lag, stream_evicted, selfplay_positions_per_second, evals_per_position,
      forward_busy, forward_rate, mean_batch, selfplay_bound, resigned, resign_checks,
      resign_false_rate, loss_steps;  // loss_steps: NaN in rows from before it (one step each)
};

// The train steps whose mean losses a row holds, what its points on the loss curves weigh: its
// loss_steps, one in a table from before that column; 0 for a row that is no train row, has no
// step, or a count under one or infinite. (A loss that is not a number is left out by its curve.)
double loss_weight(const MetricsRow& row);

// metrics.csv's rows as MetricsRow, by the columns of a file's own header (an older layout has
// fewer): for a reader that follows the table as it grows (util::CsvTable::read_new). Throws
// RunFolderError naming the column for a value no run writes (a count not whole or below 0, a
// generation over kMaxGates, a rate, time or loss below 0, a share outside 0..1): a damaged row.
class MetricsRowReader {
 public:
  explicit MetricsRowReader(const util::CsvTable::Row& header);
  MetricsRow operator()(const util::CsvTable::Row& row) const;

 private:
  std::vector<int> at_;  // our column -> the file's, -1 where it has none
};

// arena.csv's rows as GateRow, in order, by the columns of a file's own header: each gate's
// chained rating goes on from the row before. Throws RunFolderError naming the file, the row and
// the column when a number does not parse (the row counts all the same).
class GateRowReader {
 public:
  GateRowReader(util::CsvTable::Row header, std::string path);
  GateRow operator()(const util::CsvTable::Row& row);

 private:
  util::CsvTable::Row header_;
  std::string path_;
  std::size_t index_ = 0;  // the rows read
  double rating_ = 0;      // the chain's last rating
};

// The rows of a run's metrics.csv or arena.csv, read without taking the folder (readers never
// write), a line at a time and handed over a row at a time, none kept: damaged lines and, in
// arena.csv, rows whose numbers do not parse are left out and counted in `skipped`. Throw
// util::FileError when the file cannot be read, or, with `check_header`, when its header is not
// one `train` accepts (util::CsvTable::read). read_gates keeps at most kMaxGates gates (an
// arena.csv of more throws util::FileError).
inline constexpr std::size_t kMaxGates = 1'000'000;  // a row a generation: more than any run
// What an arena.csv of more gates than that is (util::FileError's text), for every reader.
std::string more_gates_than_any_run(const std::string& path);
void for_each_metrics_row(const std::filesystem::path& path, int* skipped, bool check_header,
                          const std::function<void(const MetricsRow&)>& visit);
void for_each_gate(const std::filesystem::path& path, int* skipped, bool check_header,
                   const std::function<void(const GateRow&)>& visit);
std::vector<GateRow> read_gates(const std::filesystem::path& path, int* skipped,
                                bool check_header = false);

// The names of a run's files that hold training progress (trainer state, candidates after
// gen-0000, gates, games); empty for a folder that holds no run or only a run being created.
std::vector<std::string> progress_files(const RunPaths& paths);

class RunFolder {
 public:
  // Creates the folder if needed and takes its lock for the lifetime of this object. Throws
  // util::FolderLockedError naming the process that holds it.
  explicit RunFolder(const std::filesystem::path& dir);

  const RunPaths& paths() const { return paths_; }
  bool exists() const;  // config.yaml is there: the run was created

  // Throws RunFolderError, naming the path and why, when the run could not write one of its
  // folders or files as it goes on (util::cannot_write): a checkpoints/ that is not writable, an
  // immutable trainer.ckpt, would otherwise stop the run at the end of its first generation, its
  // steps lost. Called before anything of a session is written; `more` are the places of the
  // run's other parts (its games' index).
  void check_writable(const std::vector<std::pair<std::string, util::WriteUse>>& more = {}) const;

  // state.yaml. load_state throws RunFolderError when it is missing or damaged (with `recover`,
  // rebuilds it from log.txt instead, and says what it rebuilt and why in `rebuilt`), and when it
  // is there but cannot be read now (util::FileAccessError: never rebuilt).
  RunState load_state(bool recover, std::string* rebuilt = nullptr) const;
  void save_state(const RunState& state) const;

  // Opens arena.csv and metrics.csv (repairing torn lines; see util/csv_table.h). Returns one line
  // per repair made, for the log. A table missing from a folder with progress (progress_files) is
  // a RunFolderError saying how to recover, with nothing written; with `recover`, arena.csv is
  // rebuilt from metrics.csv's gate rows (rows of the anchor `anchor`, the run's arena.anchor)
  // and metrics.csv starts anew.
  std::vector<std::string> open_tables(bool recover, const std::string& anchor);
  // Drops the metrics rows that lie beyond the trainer's saved step: train rows after
  // `trainer_step`, gate rows of generations without an arena row, and duplicate keys; and
  // rebuilds the metrics row of a committed gate that lost it. Returns one line per repair made.
  // arena.csv is never trimmed: it must gate no generation after `trainer_step` (the resume
  // checks; std::logic_error otherwise).
  std::vector<std::string> drop_rows_after(std::int64_t trainer_step, int steps_per_generation);
  // --recover only, when no intact network of the gated generations after `generation` is left:
  // moves their arena.csv rows to arena.csv.damaged (kept, never deleted), so that the run goes on
  // from `generation` without gating a generation twice. Returns the line for the log ("" when
  // there were none).
  std::string set_aside_gates_after(int generation);
  // --recover only, when best.ckpt holds a generation that arena.csv lost (its last row damaged):
  // that gate as metrics.csv's gate row keeps it (docs/FORMATS.md), appended to arena.csv alone,
  // against the last promoted generation before it. False when metrics.csv has no gate row of
  // `generation` at `step`, or none that says it was promoted.
  bool restore_gate_from_metrics(int generation, std::int64_t step);

  const std::vector<GateRow>& gates() const { return gates_; }
  // The generation of the last gate in arena.csv (0 before any).
  int last_gated() const { return gates_.empty() ? 0 : gates_.back().generation; }
  // The last promoted gate, or nothing (the best network is then gen-0000).
  std::optional<GateRow> last_promoted() const;
  double rating() const { return gates_.empty() ? 0.0 : gates_.back().rating; }

  void append_train(const TrainRow& row);  // flushed, not fsynced (a kill is repaired on resume)
  void append_selfplay(const SelfplayRow& row);  // flushed; a record of what was seen, not keyed
  // A run with a Redis store: a self-play node's games so far and rate ("node" rows), and the
  // stream's state ("stream" rows: the trainer's lag in entries, entries evicted unread).
  void append_node(const NodeRow& row);
  void append_stream(const StreamRow& row);
  void append_session(const SessionRow& row);  // flushed; a record, not keyed
  // A "clock" row (the session's seconds only) when no metrics row was appended in the last
  // `quiet` (from `now`): the page's time of a live session goes on through self-play before
  // training starts (a GPU config's 50,000 positions) and long gates, where it stood still.
  void append_clock_if_quiet(double seconds, std::chrono::steady_clock::time_point now,
                             std::chrono::steady_clock::duration quiet);
  // The metrics row of a gate, then the arena row (fsynced: the commit). `positions` and `games`
  // (the replay's, for the metrics row) are -1 when not known.
  void append_gate(const GateRow& row, std::int64_t positions, std::int64_t games);

 private:
  void read_gates();  // gates_ from arena.csv
  void append_metrics(const util::CsvTable::Row& row);  // and notes when (last_metrics_row_)

  RunPaths paths_;
  util::FolderLock lock_;
  std::unique_ptr<util::CsvTable> arena_, metrics_;
  // When this process last appended a metrics row (append_clock_if_quiet).
  std::chrono::steady_clock::time_point last_metrics_row_ = std::chrono::steady_clock::now();
  std::vector<GateRow> gates_;
  std::string anchor_;  // the run's arena.anchor (open_tables)
};

}  // namespace oppidum::trainer
