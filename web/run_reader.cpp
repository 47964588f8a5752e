#include "web/run_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include <yaml-cpp/yaml.h>

#include "arena/ratings.h"
#include "games/game.h"
#include "games/quote.h"
#include "mcts/search.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "trainer/config.h"
#include "trainer/run_folder.h"
#include "util/file_io.h"
#include "web/board_json.h"

namespace oppidum::web {
namespace fs = std::filesystem;
using nlohmann::json;
using trainer::RunPaths;
namespace {

constexpr std::size_t kMaxCurvePoints = 400;
constexpr int kTopVisits = 5;
constexpr std::size_t kRecentGates = 12;  // the page's table of gates
// The anchors of one run's gates (it has one: arena.anchor is fixed) and the longest spec of one.
constexpr std::size_t kMaxAnchors = 16;
constexpr std::size_t kMaxAnchorBytes = 4096;
// The most of each table a summary reads: about a second's work here (a long run's table is read
// whole over a few polls).
constexpr std::uint64_t kReadBudget = std::uint64_t{32} << 20;

std::int64_t mtime_of(const fs::path& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  if (ec) return -1;
  return static_cast<std::int64_t>(t.time_since_epoch().count());
}

std::uintmax_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto s = fs::file_size(path, ec);
  return ec ? 0 : s;
}

// What tells a table's every change: its inode (a file renamed over it), size, and the times
// of its last change of content and of its inode (which no writer can set back); "-" for none.
std::string file_version(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_ino) + "." + std::to_string(st.st_size) + "." +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "." +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

// A number of a row, or null when the row does not know it (NaN, or a count of -1).
json known(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json known_count(std::int64_t v) { return v >= 0 ? json(v) : json(nullptr); }

// An interval's ends, or nulls when the row holds no interval: an end unknown or infinite, or
// both ends equal (rows written before the statistics gave finite intervals to perfect and
// zero-variance scores hold such ends, which are no interval).
std::pair<json, json> interval(double low, double high) {
  if (std::isfinite(low) && std::isfinite(high) && low < high) return {low, high};
  return {nullptr, nullptr};
}

json gate_json(const trainer::GateRow& g) {
  const auto [low, high] = interval(g.elo_low, g.elo_high);
  json out = {{"generation", g.generation},
              {"step", g.step},
              {"opponent_generation", g.opponent_generation},
              {"games", known_count(g.games)},
              {"wins", known_count(g.wins)},
              {"draws", known_count(g.draws)},
              {"losses", known_count(g.losses)},
              {"elo", known(g.elo)},
              {"elo_low", low},
              {"elo_high", high},
              {"llr", known(g.llr)},
              {"verdict", g.verdict},
              {"promoted", g.promoted ? 1 : 0},
              {"seconds", known(g.seconds)},
              {"rating", known(g.rating)},
              {"anchor", g.anchor}};
  if (!g.anchor.empty()) {
    out["anchor_games"] = known_count(g.anchor_games);
    out["anchor_score"] = known(g.anchor_score);
    out["anchor_elo"] = known(g.anchor_elo);
    const auto [anchor_low, anchor_high] = interval(g.anchor_elo_low, g.anchor_elo_high);
    out["anchor_elo_low"] = anchor_low;
    out["anchor_elo_high"] = anchor_high;
  }
  return out;
}

// A curve's points as [x, y...] (util::BoundedCurve: each the weighted mean of a run of
// consecutive rows, at most kMaxCurvePoints).
template <std::size_t N>
json curve_json(const util::BoundedCurve<N>& curve) {
  json out = json::array();
  for (const auto& p : curve.points(kMaxCurvePoints)) {
    json point = json::array({p.x});
    for (const double y : p.y) point.push_back(y);
    out.push_back(std::move(point));
  }
  return out;
}

// The mean weight behind a point of a curve (for the losses, the steps), rounded.
template <std::size_t N>
std::int64_t weight_per_point(const util::BoundedCurve<N>& curve) {
  const std::size_t points = curve.points(kMaxCurvePoints).size();
  if (points == 0) return 1;
  return std::llround(std::min(1e15, curve.weight() / static_cast<double>(points)));
}

json or_null(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

// A problem with a file as a client may read it: without the server's path to the file.
std::string without_path(const std::string& problem, const std::string& path) {
  return problem.rfind(path, 0) == 0 ? "the file" + problem.substr(path.size()) : problem;
}

// The registered name of a game ("murus-gallicus" is "mg"), or "" for no registered game.
std::string registered_name(const std::string& game) {
  try {
    return game_by_name(game).name();
  } catch (const GameError&) {
    return "";
  }
}

const char* result_text(int result, bool adjudicated, bool resigned) {
  if (adjudicated) return "draw (ply limit)";
  if (resigned) return result > 0 ? "1-0 (resigned)" : "0-1 (resigned)";
  return result > 0 ? "1-0" : result < 0 ? "0-1" : "draw";
}

}  // namespace

RunReader::RunReader(std::string name, fs::path dir) : name_(std::move(name)), dir_(std::move(dir)) {
  if (!fs::is_directory(dir_))
    throw std::runtime_error(dir_.string() + ": no such folder (give a run folder, runs/<name>)");
  // A run folder holds config.yaml, or, while `train` creates it, at least its lock file
  // (config.yaml is written last).
  std::error_code ec;
  if (!fs::exists(RunPaths{dir_}.config(), ec) && !fs::exists(RunPaths{dir_}.lock(), ec))
    throw std::runtime_error(dir_.string() + " is not a run folder: it has no config.yaml (nor "
                             "the lock file of a run being created); give a folder that "
                             "`oppidum train` made, runs/<name>");
}

RunReader::ConfigInfo RunReader::config_locked() {
  const fs::path path = RunPaths{dir_}.config();
  const std::int64_t mtime = mtime_of(path);
  if (mtime == config_mtime_ && mtime != -1) return config_;
  ConfigInfo info;
  if (mtime == -1) {
    info.error = "no config.yaml yet (the run has not been created)";
  } else {
    // Read as a file of its own, never through a link (`train` writes a regular file there): the
    // config reader's errors quote what they read, so any client could read the first line of
    // whatever a link points to.
    std::string text;
    try {
      text = util::read_regular_file(path.string(), config::kMaxConfigBytes, false);
    } catch (const util::FileError& e) {
      info.error = e.what();
    }
    if (info.error.empty()) {
      try {
        const config::RunConfig c = config::parse_config(text, path.string());
        info.game = registered_name(c.run.game);
        info.steps_per_generation = c.training.steps_per_generation;
        info.gumbel = mcts::root_policy_from_string(c.selfplay.root) == mcts::RootPolicy::kGumbel;
        info.fields = {{"game", c.run.game},
                       {"net", std::to_string(c.net.blocks) + "x" + std::to_string(c.net.filters)},
                       {"selfplay_simulations", c.selfplay.simulations},
                       {"steps_per_generation", c.training.steps_per_generation},
                       {"batch_size", c.training.batch_size},
                       {"gate_games", c.arena.max_games},
                       {"anchor", c.arena.anchor}};
      } catch (const std::exception& e) {
        // A config of another version of oppidum (a key this one does not know): still show the
        // run, with the two values the page needs read leniently.
        info.error = e.what();
        try {
          const YAML::Node root = YAML::Load(text);
          if (root["run"] && root["run"]["game"])
            info.game = registered_name(root["run"]["game"].as<std::string>());
          if (root["training"] && root["training"]["steps_per_generation"])
            info.steps_per_generation = root["training"]["steps_per_generation"].as<int>();
          if (!info.game.empty())
            info.error += " (shown anyway: game and steps per generation read leniently)";
        } catch (const std::exception&) {
          info.game.clear();  // unreadable YAML: the error above says why
        }
      }
    }
  }
  config_mtime_ = mtime;
  config_ = info;
  return info;
}

std::string RunReader::game() {
  std::lock_guard<std::mutex> lock(mutex_);
  return config_locked().game;
}

int RunReader::generation_of(std::int64_t network_step, int steps_per_generation) const {
  if (network_step < 0 || steps_per_generation <= 0) return -1;
  return static_cast<int>(network_step / steps_per_generation);
}

void RunReader::refresh_index_locked() {
  const fs::path folder = RunPaths{dir_}.games();
  if (!fs::is_directory(folder)) {
    chunks_.clear();
    return;
  }
  const selfplay::FolderReplayStore store(folder.string(),
                                          selfplay::FolderReplayStore::Mode::kReadOnly);
  const std::vector<std::string> paths = store.chunks();
  folder_problems_ = static_cast<int>(store.problems().size());
  std::map<std::string, Chunk> known;
  for (Chunk& c : chunks_) known.emplace(c.path, std::move(c));
  chunks_.clear();
  for (const std::string& path : paths) {
    const std::uintmax_t size = size_of(path);
    const std::int64_t mtime = mtime_of(path);
    auto it = known.find(path);
    if (it != known.end() && it->second.size == size && it->second.mtime == mtime) {
      chunks_.push_back(std::move(it->second));
      continue;
    }
    Chunk chunk;
    chunk.path = path;
    chunk.size = size;
    chunk.mtime = mtime;
    chunk.number = selfplay::FolderReplayStore::number_of(path).value_or(0);  // listed: a chunk
    // One record at a time; where each lies is kept, so a game asked for is read alone.
    const selfplay::ReadResult read = selfplay::for_each_game(
        path, [&](selfplay::GameRecord&& r, const selfplay::RecordPlace& place) {
          GameEntry e;
          e.network_step = r.network_step;
          e.plies = static_cast<std::uint16_t>(std::min<std::size_t>(r.moves.size(), 65535));
          e.result = r.result;
          e.adjudicated = r.adjudicated;
          e.resigned = r.resigned;
          e.score[0] = r.score[0];
          e.score[1] = r.score[1];
          e.offset = static_cast<std::uint32_t>(place.offset);
          chunk.version = place.version;
          chunk.games.push_back(e);
          return true;
        });
    chunk.problems = static_cast<int>(read.problems.size());
    if (!read.problems.empty()) chunk.first_problem = without_path(read.problems.front(), path);
    chunks_.push_back(std::move(chunk));
  }
}

std::int64_t RunReader::indexed_games() {
  std::lock_guard<std::mutex> lock(mutex_);
  refresh_index_locked();
  std::int64_t n = 0;
  for (const Chunk& c : chunks_) n += static_cast<std::int64_t>(c.games.size());
  return n;
}

// metrics.csv, each number from the one kind of row that holds it: losses and the training step
// from "train" rows, self-play speed from "selfplay" rows (the pipeline's own rate over each
// generation, never a difference of two rows), time from every row's session clock. The games and
// positions are the store's (summary): the rows only copy them at the moment they were written,
// so a finished run's last row lags its games. With self-play nodes, their games per second are
// the newest round of "node" rows'.
void RunReader::MetricsFold::add(const trainer::MetricsRow& row) {
  const auto value = [](double v) -> std::optional<double> {
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  };
  ++rows;
  const std::string& k = row.kind;
  // Sessions: each opens with a "start" row (seconds 0) and its clock runs on in every row; in runs
  // from before start rows, a row earlier than the one before opens one (once a start row was seen,
  // an earlier clock is a row written again at a resume: a gate's rebuilt row). A session's time
  // is its latest row's (its "stop" row at a clean stop).
  if (const auto t = value(row.seconds)) {
    start_rows = start_rows || k == "start";
    if (sessions == 0 || k == "start" || (!start_rows && *t < session_seconds)) {
      before += session_seconds;
      session_seconds = 0;
      ++sessions;
      cluster = nullptr;  // the nodes of an earlier session
    }
    session_seconds = std::max(session_seconds, *t);
  }
  // The trainer's step: a train row's, or a session's at its start and clean stop (the steps after
  // the last train row of a session are in the next train row only).
  if (k == "train" || k == "start" || k == "stop") {
    if (const auto s = value(row.step)) last["step"] = *s;
  }
  if (k == "train") {
    const double steps = trainer::loss_weight(row);
    if (steps > 0 && std::isfinite(row.policy_loss) && std::isfinite(row.value_loss))
      losses.add(row.step, {row.policy_loss, row.value_loss}, steps);
    last["learning_rate"] = or_null(value(row.learning_rate));
    last["generation"] = or_null(value(row.generation));
  }
  if (k == "stop") cluster = nullptr;  // a stopped trainer counts no node
  if (k == "selfplay") {
    const auto g = value(row.generation), r = value(row.selfplay_positions_per_second);
    if (g && r) {
      speed.add(*g, {*r});
      last_speed = {{"generation", *g},
                    {"positions_per_second", *r},
                    {"bound", or_null(value(row.selfplay_bound))}};
    }
  }
  // A run with self-play nodes (a Redis store): every 30 s one "node" row per active node, all at
  // one time, with its games per second; the newest such round gives the cluster's rate.
  // Each round ends with a "stream" row of the same time: a round without node rows (every node
  // stopped) is a cluster of none.
  if (k == "node") {
    const auto t = value(row.seconds), r = value(row.games_per_second);
    if (t && r) {
      if (cluster.is_null() || cluster["seconds"] != *t)
        cluster = {{"seconds", *t}, {"nodes", 0}, {"games_per_second", 0.0}};
      cluster["nodes"] = cluster["nodes"].get<int>() + 1;
      cluster["games_per_second"] = cluster["games_per_second"].get<double>() + *r;
    }
  }
  if (k == "stream") {
    const auto t = value(row.seconds);
    if (t && (cluster.is_null() || cluster["seconds"] != *t))
      cluster = {{"seconds", *t}, {"nodes", 0}, {"games_per_second", 0.0}};
  }
}

namespace {

// Folds up to `max_bytes` of a table's new rows into `fold` with `add`: a fold made anew when the
// table was rewritten, or when it cannot be read or its header is not `expected` nor an older
// layout of it (`error` then says why: a table of other columns drew nothing, without a word).
// True when the table may hold more.
template <class Fold, class Add>
bool follow_table(const std::string& path, const util::CsvTable::Row& expected,
                  util::CsvTable::Position& at, Fold& fold, std::string& error,
                  std::uint64_t max_bytes, const Add& add) {
  try {
    bool restarted = false;
    int skipped = 0;
    const bool more = util::CsvTable::read_new(
        path, at, &restarted, &skipped,
        [&](const util::CsvTable::Row& row) {
          if (restarted) fold = Fold{}, restarted = false;
          add(row);
        },
        &expected, max_bytes);
    if (restarted) fold = Fold{};  // a table with no row now
    fold.skipped += skipped;
    error.clear();
    return more;
  } catch (const std::exception& e) {
    error = e.what();
    at = {};
    fold = Fold{};
    return false;
  }
}

}  // namespace

bool RunReader::follow_metrics_locked(std::uint64_t max_bytes) {
  std::optional<trainer::MetricsRowReader> reader;  // by the file's own header
  return follow_table(RunPaths{dir_}.metrics().string(), trainer::metrics_header(), metrics_at_,
                      metrics_, metrics_error_,
                      max_bytes, [&](const util::CsvTable::Row& row) {
                        if (!reader) reader.emplace(metrics_at_.header);
                        trainer::MetricsRow m;
                        try {
                          m = (*reader)(row);
                        } catch (const trainer::RunFolderError&) {
                          ++metrics_.skipped;
                          return;
                        }
                        metrics_.add(m);
                      });
}

bool RunReader::follow_arena_locked(std::uint64_t max_bytes) {
  const std::string path = RunPaths{dir_}.arena().string();
  return follow_table(path, trainer::arena_header(), arena_at_, gates_, arena_error_, max_bytes,
                      [&](const util::CsvTable::Row& row) {
                        if (!gates_.reader) gates_.reader.emplace(arena_at_.header, path);
                        trainer::GateRow g;
                        try {
                          g = (*gates_.reader)(row);
                        } catch (const trainer::RunFolderError&) {
                          ++gates_.skipped;
                          return;
                        }
                        if (gates_.gates >= static_cast<std::int64_t>(trainer::kMaxGates))
                          throw util::FileError(trainer::more_gates_than_any_run(path));
                        gates_.add(g);
                        add_results(g);
                      });
}

// A gate's matches for the rating ladders: the candidate against the best network it challenged,
// and a new best against the anchor. Kept as numbers (a few bytes a gate), made into results
// lines only when asked (results()). A run has one anchor (arena.anchor is fixed); rows of more
// than a few are damage, as is an anchor longer than any spec, and left out.
void RunReader::add_results(const trainer::GateRow& g) {
  const int games = g.wins >= 0 && g.draws >= 0 && g.losses >= 0 ? g.wins + g.draws + g.losses : 0;
  // A row's pair counts, when they are its games and points (a row from before them has none).
  const auto pairs_of = [](const std::optional<std::array<std::int64_t, 5>>& n, int wins,
                           int draws, int losses) -> std::optional<std::array<int, 5>> {
    if (!n || !arena::pair_counts_fit(*n, wins, draws, losses)) return std::nullopt;
    std::array<int, 5> out{};
    for (int k = 0; k < 5; ++k) {
      if ((*n)[k] > config::kMaxGateGames) return std::nullopt;
      out[k] = static_cast<int>((*n)[k]);
    }
    return out;
  };
  if (games > 0 && games <= config::kMaxGateGames)
    gates_.matches.push_back({g.generation, g.opponent_generation, -1, g.wins, g.draws, g.losses,
                              pairs_of(arena::parse_pair_counts(g.pairs), g.wins, g.draws,
                                       g.losses)});
  // (An anchor score outside 0..1 made the row damaged: trainer::GateRowReader.)
  if (g.anchor.empty() || g.anchor_games <= 0 || !std::isfinite(g.anchor_score) ||
      g.anchor.size() > kMaxAnchorBytes)
    return;
  auto anchor = std::find(gates_.anchors.begin(), gates_.anchors.end(), g.anchor);
  if (anchor == gates_.anchors.end()) {
    if (gates_.anchors.size() >= kMaxAnchors) return;
    anchor = gates_.anchors.insert(anchor, g.anchor);
  }
  // The points as wins and at most one draw: under the model (a draw is half a win and half a
  // loss) only the points count, so this is the match's likelihood. In half points: exact from
  // the pair counts (n0/n0.5/n1/n1.5/n2, two games a pair) when the row has them for its games,
  // else from the score (4 decimals: exact up to 5,000 games).
  int halves = static_cast<int>(std::lround(2.0 * g.anchor_score * g.anchor_games));
  const auto n = arena::parse_pair_counts(g.anchor_pairs);
  if (n && 2 * ((*n)[0] + (*n)[1] + (*n)[2] + (*n)[3] + (*n)[4]) == g.anchor_games)
    halves = static_cast<int>((*n)[1] + 2 * (*n)[2] + 3 * (*n)[3] + 4 * (*n)[4]);
  const int wins = halves / 2, draws = halves % 2, losses = g.anchor_games - wins - draws;
  gates_.matches.push_back({g.generation, -1, static_cast<int>(anchor - gates_.anchors.begin()),
                            wins, draws, losses, pairs_of(n, wins, draws, losses)});
}

void RunReader::GateFold::add(const trainer::GateRow& g) {
  ++gates;
  last_generation = std::max(last_generation, g.generation);
  if (g.promoted) best = g.generation;
  recent.push_back(g);
  if (recent.size() > kRecentGates) recent.pop_front();
  rating.add(g.generation, {g.rating});
  elo.add(g.generation, {g.elo});
  if (!g.anchor.empty()) anchor_elo.add(g.generation, {g.anchor_elo});
}

json RunReader::summary() {
  std::lock_guard<std::mutex> lock(mutex_);
  const ConfigInfo config = config_locked();
  refresh_index_locked();
  json out;
  out["name"] = name_;
  out["folder"] = dir_.string();
  out["game"] = config.game;
  out["config"] = config.fields.is_null() ? json::object() : config.fields;
  if (!config.error.empty()) out["config_error"] = config.error;

  // Self-play games found in the folder.
  std::int64_t games = 0, positions = 0, problems = folder_problems_;
  for (const Chunk& c : chunks_) {
    games += static_cast<std::int64_t>(c.games.size());
    problems += c.problems;
    for (const GameEntry& e : c.games) positions += e.plies;
  }
  out["stored"] = {{"chunks", chunks_.size()}, {"games", games}, {"positions", positions},
                   {"damaged", problems}};
  // The files behind the summary: the page redraws only when this changes, and the tables are
  // read again only then.
  const RunPaths paths{dir_};
  const std::string version =
      file_version(paths.metrics()) + "-" + file_version(paths.arena()) + "-" +
      std::to_string(games) + "-" + std::to_string(positions) + "-" +
      std::to_string(problems) + "-" + std::to_string(chunks_.size()) + "-" +
      std::to_string(config_mtime_);
  if (version == summary_version_) return summary_;

  // The tables' rows since the last summary, folded in (MetricsFold::add, GateFold::add), at most
  // kReadBudget bytes of each at a time: a long run's tables, read whole the first time, never
  // hold the run (and the server's stop) for long; the page has them all after a few polls.
  const bool more = follow_metrics_locked(kReadBudget) | follow_arena_locked(kReadBudget);
  const MetricsFold& metrics = metrics_;
  // "averaged": a curve's points are means of consecutive generations (more than
  // kMaxCurvePoints of them).
  const auto averaged = [](const util::BoundedCurve<1>& c) {
    return c.points(kMaxCurvePoints).size() < c.size();
  };
  out["losses"] = curve_json(metrics.losses);
  out["steps_per_loss_point"] = weight_per_point(metrics.losses);
  out["speed"] = curve_json(metrics.speed);
  out["speed_averaged"] = averaged(metrics.speed);
  out["speed_now"] = metrics.last_speed;
  out["cluster"] = metrics.cluster;
  out["progress"] = metrics.last;
  out["time"] = {{"sessions", metrics.sessions},
                 {"seconds", metrics.before + metrics.session_seconds},
                 {"session_seconds", metrics.session_seconds}};
  out["metrics_rows"] = metrics.rows;

  out["gates"] = json::array();
  for (const trainer::GateRow& g : gates_.recent) out["gates"].push_back(gate_json(g));
  out["gate_count"] = gates_.gates;
  out["ratings"] = {{"best", curve_json(gates_.rating)},
                    {"gate", curve_json(gates_.elo)},
                    {"anchor", curve_json(gates_.anchor_elo)},
                    {"averaged", averaged(gates_.rating) || averaged(gates_.elo) ||
                                     averaged(gates_.anchor_elo)}};
  out["generation"] = gates_.gates == 0 ? json(nullptr) : json(gates_.last_generation);
  out["best"] = gates_.best;
  out["skipped_rows"] = metrics.skipped + gates_.skipped;
  std::string table_errors = metrics_error_ +
                             (metrics_error_.empty() || arena_error_.empty() ? "" : "; ") +
                             arena_error_;
  if (!table_errors.empty()) out["table_error"] = table_errors;
  // Tables not read to their end yet: the next summary reads on.
  if (more) out["reading"] = true;

  out["version"] = version;
  summary_version_ = more ? "" : version;
  summary_ = out;
  return out;
}

json RunReader::list_games(const GameFilter& f) {
  if (f.page < 0) throw BadRequest("page must be 0 or more, got " + std::to_string(f.page));
  if (f.per_page < 1 || f.per_page > kMaxGamesPerPage)
    throw BadRequest("per_page must be 1.." + std::to_string(kMaxGamesPerPage) + ", got " +
                     std::to_string(f.per_page));
  std::lock_guard<std::mutex> lock(mutex_);
  const ConfigInfo config = config_locked();
  refresh_index_locked();
  const std::int64_t first = static_cast<std::int64_t>(f.page) * f.per_page;
  std::int64_t total = 0, all = 0;
  json games = json::array();
  // Newest first: walk the chunks and their games backwards.
  for (auto c = chunks_.rbegin(); c != chunks_.rend(); ++c) {
    all += static_cast<std::int64_t>(c->games.size());
    for (auto e = c->games.rbegin(); e != c->games.rend(); ++e) {
      const int generation = generation_of(e->network_step, config.steps_per_generation);
      if (f.generation && generation != *f.generation) continue;
      if (f.result && (e->adjudicated ? 0 : e->result) != *f.result) continue;
      if (e->plies < f.min_plies || e->plies > f.max_plies) continue;
      if (total >= first && total < first + f.per_page) {
        games.push_back({{"chunk", c->number},
                         {"index", c->games.rend() - e - 1},
                         {"plies", e->plies},
                         {"result", result_text(e->result, e->adjudicated, e->resigned)},
                         {"scores", {e->score[0], e->score[1]}},
                         {"network_step", e->network_step},
                         {"generation", generation < 0 ? json() : json(generation)}});
      }
      ++total;
    }
  }
  return {{"total", total},
          {"all", all},
          {"page", f.page},
          {"per_page", f.per_page},
          {"pages", (total + f.per_page - 1) / f.per_page},
          {"games", games}};
}

json RunReader::game_record(std::uint64_t chunk_number, int index) {
  std::string path;
  selfplay::RecordPlace place;
  int steps_per_generation = 0;
  bool gumbel = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const ConfigInfo config = config_locked();
    steps_per_generation = config.steps_per_generation;
    gumbel = config.gumbel;
    refresh_index_locked();
    const Chunk* chunk = nullptr;
    for (const Chunk& c : chunks_)
      if (c.number == chunk_number) chunk = &c;
    if (!chunk)
      throw NotFound("run " + name_ + " has no game chunk " + std::to_string(chunk_number));
    if (index < 0 || static_cast<std::size_t>(index) >= chunk->games.size())
      throw NotFound(
          "chunk " + std::to_string(chunk_number) + " of run " + name_ + " has no game " +
          std::to_string(index) + " (" + std::to_string(chunk->games.size()) + " intact games" +
          (chunk->first_problem.empty()
               ? std::string()
               : "; " + std::to_string(chunk->problems) +
                     " problem(s), the first: " + quote_input(chunk->first_problem, 200)) +
          ")");
    path = chunk->path;
    place = {chunk->games[static_cast<std::size_t>(index)].offset, chunk->version};
  }
  selfplay::GameRecord r;
  std::vector<std::unique_ptr<GameState>> states;
  try {
    r = selfplay::read_game_at(path, place);
  } catch (const std::exception& e) {
    // Replaced or damaged since it was indexed (the next request indexes it again); said without
    // the server's path.
    throw NotFound("game " + std::to_string(chunk_number) + "/" + std::to_string(index) +
                   " cannot be read: " + quote_input(without_path(e.what(), path), 200));
  }
  try {
    states = selfplay::replay(r);
  } catch (const std::exception& e) {
    throw BadRequest(std::string("game ") + std::to_string(chunk_number) + "/" +
                     std::to_string(index) + " does not replay: " + e.what());
  }
  json moves = json::array(), positions = json::array(), boards = json::array();
  for (const auto& s : states) {
    positions.push_back(s->to_string());
    boards.push_back(board_json(*s));
  }
  for (std::size_t i = 0; i < r.moves.size(); ++i) {
    const selfplay::MoveRecord& m = r.moves[i];
    std::vector<selfplay::VisitCount> visits = m.visits;
    std::uint64_t total = 0;
    for (const auto& v : visits) total += v.visits;
    std::sort(visits.begin(), visits.end(),
              [](const auto& a, const auto& b) { return a.visits > b.visits; });
    // Each move's share of the policy target; the weights are visit counts only with a PUCT root
    // (a Gumbel root stores its improved policy, scaled: selfplay/game_record.h).
    json top = json::array();
    for (std::size_t k = 0; k < visits.size() && k < kTopVisits; ++k) {
      json entry = {{"move", states[i]->action_to_string(visits[k].action)},
                    {"share", total > 0 ? static_cast<double>(visits[k].visits) / total : 0.0}};
      if (!gumbel) entry["visits"] = visits[k].visits;
      top.push_back(std::move(entry));
    }
    json move = move_json(*states[i], m.action);
    move.update({{"side", states[i]->current_player()},
                 {"value", m.root_value},
                 {"visits", gumbel ? json(nullptr) : json(total)},
                 {"full_search", m.policy_target},
                 {"top", top}});
    moves.push_back(std::move(move));
  }
  const int generation = generation_of(r.network_step, steps_per_generation);
  return {{"run", name_},
          {"chunk", chunk_number},
          {"index", index},
          {"game", r.game},
          {"start", r.start},
          {"seed", std::to_string(r.seed)},
          {"network_step", r.network_step},
          {"generation", generation < 0 ? json() : json(generation)},
          {"node", r.node},
          {"policy_target", gumbel ? "improved policy (Gumbel root)" : "visits"},
          {"result", result_text(r.result, r.adjudicated, r.resigned)},
          {"scores", {r.score[0], r.score[1]}},
          {"moves", moves},
          {"positions", positions},
          {"boards", boards}};
}

SourceResults RunReader::results() {
  SourceResults out;
  out.game = game();
  out.source = name_;
  std::lock_guard<std::mutex> lock(mutex_);
  follow_arena_locked(UINT64_MAX);
  // A table that cannot be read gives no results (the run's summary says why).
  const RunPaths paths{dir_};
  const auto network = [&](int generation) {
    return name_ + "/" + paths.candidate(generation).stem().string();
  };
  out.matches.reserve(gates_.matches.size());
  for (const GateMatch& m : gates_.matches)
    out.matches.push_back({network(m.generation),
                           m.anchor < 0 ? network(m.opponent) : gates_.anchors[m.anchor], m.wins,
                           m.draws, m.losses, m.pairs});
  out.baselines = gates_.anchors;
  return out;
}

std::vector<std::string> RunReader::checkpoints() const {
  const RunPaths paths{dir_};
  std::vector<std::string> names;
  std::error_code ec;
  if (fs::is_regular_file(paths.best(), ec)) names.push_back("best");
  for (const int gen : paths.candidate_generations())  // newest first, by number
    if (fs::is_regular_file(paths.candidate(gen), ec))
      names.push_back(paths.candidate(gen).stem().string());
  return names;
}

fs::path RunReader::checkpoint_path(const std::string& name) const {
  std::string stem = name;
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".ckpt") == 0)
    stem.resize(stem.size() - 5);
  for (const std::string& known : checkpoints())
    if (known == stem) return RunPaths{dir_}.checkpoints() / (known + ".ckpt");
  throw NotFound("run " + name_ + " has no checkpoint \"" + quote_input(name) +
                 "\" (give best or gen-NNNN, one of the files in its checkpoints/ folder)");
}

}  // namespace oppidum::web
