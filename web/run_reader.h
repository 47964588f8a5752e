// What the web page shows of one run folder, read without disturbing a running `train`: the
// dashboard summary (metrics.csv, arena.csv, config.yaml), the list of self-play games and one game
// replayed, and the checkpoints. It opens the replay store read-only
// (FolderReplayStore::Mode::kReadOnly) and reads the tables with util::CsvTable::read, so it never
// creates, writes, renames, locks or deletes anything in the folder.
//
// The game list is an index kept in memory: one small entry per game, built from the chunks the
// first time and then extended with the chunks that appeared since (chunks are written whole and
// renamed into place, so a chunk seen once never changes; one that vanished or changed size is read
// again). A listing request then filters and pages the index without reading any chunk.
//
// Every id a request names (a chunk number, a game index, a checkpoint name) is looked up among the
// files found in the folder; no path is ever built from request text.
//
// Thread-safe: the server calls it from many threads.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/run_folder.h"
#include "util/csv_table.h"
#include "util/curve.h"
#include "web/errors.h"
#include "web/ladder.h"

namespace oppidum::web {

// Filters and page of a game listing; the defaults list everything, newest first.
// A listing's page of games: this many unless asked otherwise, at most kMaxGamesPerPage (runs'
// games and arena record files alike).
inline constexpr int kGamesPerPage = 50;
inline constexpr int kMaxGamesPerPage = 200;

struct GameFilter {
  std::optional<int> generation;  // of the network that played
  std::optional<int> result;      // for the first player: +1, 0 (draws, adjudicated included), -1
  int min_plies = 0;
  int max_plies = 1 << 30;
  int page = 0;
  int per_page = kGamesPerPage;
};

class RunReader {
 public:
  // `name` is the run's name in the API (unique among the runs served). The folder must exist and
  // hold a run: config.yaml, or the lock file of a run being created (config.yaml is written
  // last); std::runtime_error names the folder and what it lacks otherwise.
  RunReader(std::string name, std::filesystem::path dir);

  const std::string& name() const { return name_; }
  // The registered name of the run's game, or "" while config.yaml is missing or unreadable or
  // names no registered game.
  std::string game();

  // The dashboard: config, progress, curves (at most 400 points each), the newest
  // gates; "version" changes whenever the files behind it do. Each number has one source: games
  // and positions are the store's ("stored"), the training step and losses the "train" rows',
  // the self-play speed the "selfplay" rows' ("speed": [generation, positions/s], "speed_now":
  // the newest), the gates and ratings arena.csv's ("gates": the newest, "gate_count",
  // "ratings": the best network's chained rating, each gate's Elo, the anchor's Elo by
  // generation), the time every session's clock added up ("time": sessions, seconds,
  // session_seconds), and with self-play nodes their games per second, the newest round of
  // "node" rows ("cluster": seconds, nodes, games_per_second; null without nodes).
  nlohmann::json summary();
  // A page of the game list: {"total": games matching, "games": [...], "page", "pages", ...}.
  nlohmann::json list_games(const GameFilter& filter);
  // One game, replayed and checked against the rules: every position and its board view, every
  // move with its cells, its side, search value and most visited moves. Throws NotFound for an unknown chunk or index, BadRequest for a record
  // that does not replay (saying why).
  nlohmann::json game_record(std::uint64_t chunk, int index);
  // The checkpoint files: "best", "gen-0003", ... (newest generation first after best).
  std::vector<std::string> checkpoints() const;
  // The path of checkpoint `name` ("best", "gen-0003", with or without ".ckpt") if the folder
  // holds it as a regular file; throws NotFound otherwise.
  std::filesystem::path checkpoint_path(const std::string& name) const;

  // The run's results for the ratings tab (arena.csv): each gate as `RUN/gen-N` against the
  // network it challenged, and each anchor match of a promoted network against the anchor's spec
  // (its score as points; a gate rebuilt by --recover without its counts is left out).
  SourceResults results();

  // The games indexed so far (refreshes the index first).
  std::int64_t indexed_games();

 private:
  struct GameEntry {
    std::int64_t network_step = -1;
    std::uint16_t plies = 0;       // (its index in its chunk is its place in Chunk::games)
    std::int8_t result = 0;
    bool adjudicated = false;
    bool resigned = false;
    std::int16_t score[2] = {0, 0};
    std::uint32_t offset = 0;      // where its record lies (a game file is at most 1 GiB)
  };
  struct Chunk {
    std::string path;
    std::uint64_t number = 0;
    std::uintmax_t size = 0;
    std::int64_t mtime = 0;
    std::uint32_t version = 0;     // the file's format version
    std::vector<GameEntry> games;
    int problems = 0;
    std::string first_problem;     // said without the server's path
  };
  struct ConfigInfo {
    std::string game;
    int steps_per_generation = 0;
    // The self-play root: a Gumbel root's records hold its improved policy (scaled), not visits.
    bool gumbel = false;
    std::string error;
    nlohmann::json fields;  // the few config values the dashboard shows
  };

  void refresh_index_locked();
  ConfigInfo config_locked();
  // The generation of a network step; -1 when not known (no step, or the config unreadable),
  // which the API gives as null.
  int generation_of(std::int64_t network_step, int steps_per_generation) const;

  std::string name_;
  std::filesystem::path dir_;
  std::mutex mutex_;  // guards everything below
  std::vector<Chunk> chunks_;  // oldest first
  int folder_problems_ = 0;
  std::int64_t config_mtime_ = -1;
  ConfigInfo config_;
  // The last summary and the state of the files it came from (its "version"): the page asks every
  // 2 s, and reading a long run's metrics.csv takes a while, so it is read again only when a
  // file changed.
  std::string summary_version_;
  nlohmann::json summary_;
  // What the summary takes from metrics.csv, folded over its rows as they come: the page follows
  // a live run's table by its new rows only (util::CsvTable::read_new), where reading it whole at
  // every change took a second and more for a long run.
  // Curves are held in bounded memory (util::BoundedCurve), whatever the length of the run.
  struct MetricsFold {
    // (step; policy, value) weighed by the steps the row's losses are the means of (1 in old rows)
    util::BoundedCurve<2> losses;
    util::BoundedCurve<1> speed;  // (generation; positions per second)
    nlohmann::json last = nlohmann::json::object(), last_speed, cluster;
    int sessions = 0;
    bool start_rows = false;  // seen: from then on only they open a session
    double before = 0, session_seconds = 0;
    std::size_t rows = 0;
    int skipped = 0;
    void add(const trainer::MetricsRow& row);
  };
  util::CsvTable::Position metrics_at_;
  MetricsFold metrics_;
  // A gate's match for the ladders: generation against `opponent` (a generation), or against
  // anchors[anchor] when `anchor` is not -1.
  struct GateMatch {
    int generation, opponent, anchor, wins, draws, losses;
    std::optional<std::array<int, 5>> pairs;  // the row's pair counts, when they are its games'
  };
  // arena.csv folded the same way: the gates' count, the best and last generation, the newest
  // gates and the rating curves by generation.
  struct GateFold {
    std::optional<trainer::GateRowReader> reader;  // the chained rating goes on across reads
    std::int64_t gates = 0;
    int best = 0, last_generation = 0, skipped = 0;
    std::deque<trainer::GateRow> recent;  // the newest gates, oldest first
    util::BoundedCurve<1> rating, elo, anchor_elo;
    std::vector<GateMatch> matches;   // for the rating ladders (results())
    std::vector<std::string> anchors;  // the anchors named, in order
    void add(const trainer::GateRow& g);
  };
  util::CsvTable::Position arena_at_;
  GateFold gates_;
  std::string metrics_error_, arena_error_;  // why a table cannot be read
  // Fold up to `max_bytes` of a table's new rows in; true when there may be more.
  bool follow_metrics_locked(std::uint64_t max_bytes);
  bool follow_arena_locked(std::uint64_t max_bytes);
  void add_results(const trainer::GateRow& g);
};

}  // namespace oppidum::web
