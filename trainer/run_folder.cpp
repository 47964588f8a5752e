#include "trainer/run_folder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

#include "arena/elo.h"
#include "games/quote.h"
#include "trainer/config.h"
#include "util/file_io.h"
#include "util/text.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
using util::fixed;
namespace {

// log.txt is read a line at a time, whatever its size (a run appends to it for as long as it runs).
constexpr std::uint64_t kMaxLogBytes = std::uint64_t{1} << 40;
constexpr std::size_t kMaxLogLineBytes = std::size_t{64} << 10;
// state.yaml holds four short values and the config's identity record, with its check.
constexpr std::size_t kMaxStateBytes = std::size_t{1} << 20;
const std::set<std::string> kStateKeys = {"sessions", "stream_cursor", "stream_read", "run_id",
                                          "config_crc32", "config"};
// Keys of states written before 2026-12-03 (the gates live in arena.csv now): read past.
const std::set<std::string> kOldStateKeys = {"best_elo", "last_gate"};

// state.yaml's check of the identity record: its CRC-32 in 8 hexadecimal digits.
std::string identity_check(const std::string& identity) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", util::crc32(identity.data(), identity.size()));
  return hex;
}

const util::CsvTable::Row kArenaHeader = {
    "generation", "step",     "opponent_generation", "games",        "wins",
    "draws",      "losses",   "elo",                 "elo_low",      "elo_high",
    "llr",        "verdict",  "promoted",            "seconds",      "rating",
    "anchor",     "anchor_games", "anchor_score",    "anchor_elo",   "anchor_elo_low",
    "anchor_elo_high", "pairs", "anchor_pairs"};

const util::CsvTable::Row kMetricsHeader = {
    "kind",       "seconds",       "step",     "generation", "positions",
    "games",      "policy_loss",   "value_loss", "learning_rate", "gate_elo",
    "promoted",   "best_elo",      "gate_games", "anchor_score", "anchor_elo",
    "node",       "games_per_second", "nodes",  "stream_lag",   "stream_evicted",
    "selfplay_positions_per_second", "evals_per_position", "forward_busy", "forward_rate",
    "mean_batch", "selfplay_bound", "resigned", "resign_checks", "resign_false_rate",
    "loss_steps"};

// A number of a table as its owner writes them: decimal (util::parse_decimal) and finite;
// anything else reads as absent, as an empty field does, so that no reader draws, rates or sums
// it ("nan", "inf", "1e400" or hex from a hand or a damaged disk were read by strtod, and drawn
// as "-nan" in `report`).
double number(const std::string& text) {
  double v = 0.0;
  bool out_of_range = false;
  return util::parse_decimal(text, v, out_of_range) && std::isfinite(v) ? v : std::nan("");
}

// A table's columns by name, for reading its rows: the owner's table, or a file's own header.
struct TableView {
  const util::CsvTable::Row& header;
  const std::string& path;
  // The row's field of `column`; empty when the table has no such column.
  const std::string& at(const util::CsvTable::Row& row, const std::string& column) const {
    static const std::string none;
    for (std::size_t i = 0; i < header.size() && i < row.size(); ++i)
      if (header[i] == column) return row[i];
    return none;
  }
};

// A whole number field of a row, from `lo` to `hi`; throws RunFolderError naming the file, the
// row and the column (a value out of range is refused, not wrapped or cut to an int).
std::int64_t whole(const TableView& table, const util::CsvTable::Row& row,
                   const std::string& column, std::size_t index, std::int64_t lo = 0,
                   std::int64_t hi = std::numeric_limits<int>::max()) {
  const std::string& text = table.at(row, column);
  std::int64_t v = 0;
  bool out_of_range = false;
  if (!util::parse_decimal(text, v, out_of_range) || v < lo || v > hi)
    throw RunFolderError(table.path + ": row " + std::to_string(index + 2) + ": " + column +
                         " is not a whole number from " + std::to_string(lo) + " to " +
                         std::to_string(hi) + " (\"" + quote_input(text, 40) + "\")");
  return v;
}

// The same for a count of games that a row rebuilt by --recover may not know: empty is -1; more
// than a match of the config plays is damage.
int count(const TableView& table, const util::CsvTable::Row& row, const std::string& column,
          std::size_t index) {
  return table.at(row, column).empty()
             ? -1
             : static_cast<int>(whole(table, row, column, index, 0, config::kMaxGateGames));
}

// A number for a table: empty when it is not known (NaN).
std::string field(double v, int digits) { return std::isnan(v) ? "" : fixed(v, digits); }
std::string field(std::int64_t v) { return v < 0 ? "" : std::to_string(v); }

}  // namespace

namespace {

GateRow gate_from_row(const TableView& t, const util::CsvTable::Row& r, std::size_t index,
                      double previous_rating) {
  GateRow g;
  g.generation = static_cast<int>(whole(t, r, "generation", index, 1));
  g.step = whole(t, r, "step", index, 0, std::numeric_limits<std::int64_t>::max());
  g.opponent_generation = static_cast<int>(whole(t, r, "opponent_generation", index));
  g.games = count(t, r, "games", index);
  g.wins = count(t, r, "wins", index);
  g.draws = count(t, r, "draws", index);
  g.losses = count(t, r, "losses", index);
  g.elo = number(t.at(r, "elo"));
  g.elo_low = number(t.at(r, "elo_low"));
  g.elo_high = number(t.at(r, "elo_high"));
  g.llr = number(t.at(r, "llr"));
  g.verdict = t.at(r, "verdict");
  g.promoted = whole(t, r, "promoted", index, 0, 1) != 0;
  g.seconds = number(t.at(r, "seconds"));
  // The chain as written, where it is known: rows of runs from before the rating column have
  // none, and older versions wrote 0 for promotions without a measured Elo.
  const double rating = number(t.at(r, "rating"));
  const double chained = chained_rating(previous_rating, g.promoted, g.elo);
  g.rating = std::isfinite(rating) && std::isfinite(chained) ? rating : chained;
  // Five counts "a/b/c/d/e"; anything else is not known (the row is still usable without it).
  const auto pairs = [&](const char* column) {
    return arena::parse_pair_counts(t.at(r, column)) ? t.at(r, column) : std::string();
  };
  g.pairs = pairs("pairs");
  g.anchor = t.at(r, "anchor");
  if (!g.anchor.empty()) {
    g.anchor_games = count(t, r, "anchor_games", index);
    g.anchor_score = number(t.at(r, "anchor_score"));
    g.anchor_elo = number(t.at(r, "anchor_elo"));
    g.anchor_elo_low = number(t.at(r, "anchor_elo_low"));
    g.anchor_elo_high = number(t.at(r, "anchor_elo_high"));
    g.anchor_pairs = pairs("anchor_pairs");
  }
  // What no gate writes: a score outside 0..1, an Elo outside its own interval (one of no width,
  // 0 to 0 as older versions wrote, is no interval).
  const auto damaged = [&](const std::string& what) {
    throw RunFolderError(t.path + ": row " + std::to_string(index + 2) + ": " + what);
  };
  if (!std::isnan(g.anchor_score) && !(g.anchor_score >= 0 && g.anchor_score <= 1))
    damaged("anchor_score is not a share from 0 to 1 (\"" +
            quote_input(t.at(r, "anchor_score"), 40) + "\")");
  const auto inside = [](double v, double low, double high) {
    return !std::isfinite(v) || !std::isfinite(low) || !std::isfinite(high) || !(low < high) ||
           (low <= v && v <= high);
  };
  // No match of at most config::kMaxGateGames games measures an Elo past +-100,000 (with the
  // prior of one virtual game, 100,000 straight wins are some 2,100), nor does a chain of
  // kMaxGates gates reach a rating past 10^12: such a number is no measurement.
  constexpr double kMaxElo = 1e5, kMaxRating = 1e12;
  for (const auto& [column, v] : {std::pair<const char*, double>{"elo", g.elo},
                                  {"elo_low", g.elo_low}, {"elo_high", g.elo_high},
                                  {"anchor_elo", g.anchor_elo},
                                  {"anchor_elo_low", g.anchor_elo_low},
                                  {"anchor_elo_high", g.anchor_elo_high}})
    if (std::isfinite(v) && std::fabs(v) > kMaxElo)
      damaged(std::string(column) + " is past +-100000, more than any gate measures (\"" +
              quote_input(t.at(r, column), 40) + "\")");
  if (std::isfinite(g.rating) && std::fabs(g.rating) > kMaxRating)
    damaged("rating is past +-10^12, more than any chain of gates reaches (\"" +
            quote_input(t.at(r, "rating"), 40) + "\")");
  if (!inside(g.elo, g.elo_low, g.elo_high))
    damaged("elo is outside its interval elo_low..elo_high");
  if (!inside(g.anchor_elo, g.anchor_elo_low, g.anchor_elo_high))
    damaged("anchor_elo is outside its interval anchor_elo_low..anchor_elo_high");
  return g;
}

// The metrics.csv row of a gate.
util::CsvTable::Row gate_metrics_row(const GateRow& g, const std::string& positions,
                                     const std::string& games) {
  const bool anchored = !g.anchor.empty();
  util::CsvTable::Row row = {
      "gate", field(g.seconds, 1), std::to_string(g.step), std::to_string(g.generation),
      positions, games, "", "", "", field(g.elo, 1), g.promoted ? "1" : "0",
      field(g.rating, 1), field(std::int64_t{g.games}), anchored ? field(g.anchor_score, 4) : "",
      anchored ? field(g.anchor_elo, 1) : ""};
  row.resize(kMetricsHeader.size());
  return row;
}

// The arena.csv row of a gate.
util::CsvTable::Row gate_arena_row(const GateRow& g) {
  const bool anchored = !g.anchor.empty();
  return {std::to_string(g.generation), std::to_string(g.step),
          std::to_string(g.opponent_generation), field(std::int64_t{g.games}),
          field(std::int64_t{g.wins}), field(std::int64_t{g.draws}),
          field(std::int64_t{g.losses}), field(g.elo, 1), field(g.elo_low, 1),
          field(g.elo_high, 1), field(g.llr, 3), g.verdict, g.promoted ? "1" : "0",
          field(g.seconds, 1), field(g.rating, 1), g.anchor,
          anchored ? field(std::int64_t{g.anchor_games}) : "",
          anchored ? field(g.anchor_score, 4) : "", anchored ? field(g.anchor_elo, 1) : "",
          anchored ? field(g.anchor_elo_low, 1) : "", anchored ? field(g.anchor_elo_high, 1) : "",
          g.pairs, anchored ? g.anchor_pairs : ""};
}

// Writes arena.csv whole and atomically: the header, the `kept` rows, then the rows of `added`. A
// --recover stopped while rebuilding gates leaves the table as it was or complete, never cut short
// (a table missing one gate would read as a gate to play again).
void write_arena(const std::string& path, const std::vector<util::CsvTable::Row>& kept,
                 const std::vector<GateRow>& added) {
  std::string text = util::CsvTable::format(kArenaHeader) + "\n";
  for (const auto& row : kept) text += util::CsvTable::format(row) + "\n";
  for (const GateRow& g : added) text += util::CsvTable::format(gate_arena_row(g)) + "\n";
  util::write_file_atomically(path, text);
}

// What metrics.csv's gate rows keep of the gates, in generation order (the newest row of a
// generation counts), for --recover when arena.csv is lost; what they do not keep is unknown.
std::vector<GateRow> gates_from_metrics(const util::CsvTable& metrics, const std::string& anchor) {
  std::map<int, GateRow> by_generation;
  const std::size_t kind = metrics.column("kind");
  const TableView view{metrics.header(), metrics.path()};
  std::size_t i = 0;
  metrics.for_each_row([&](const util::CsvTable::Row& row) {
    const std::size_t index = i++;
    if (row[kind] != "gate") return;
    const auto at = [&](const char* column) { return row[metrics.column(column)]; };
    GateRow g;
    g.generation = static_cast<int>(whole(view, row, "generation", index, 1));
    g.step = whole(view, row, "step", index, 0, std::numeric_limits<std::int64_t>::max());
    g.games = count(view, row, "gate_games", index);
    g.wins = g.draws = g.losses = -1;
    g.elo = number(at("gate_elo"));
    g.elo_low = g.elo_high = g.llr = std::nan("");
    g.verdict = "rebuilt by --recover from metrics.csv";
    g.promoted = at("promoted") == "1";
    g.seconds = number(at("seconds"));
    g.rating = number(at("best_elo"));
    if (!at("anchor_score").empty()) {
      g.anchor = anchor;
      g.anchor_games = -1;
      g.anchor_score = number(at("anchor_score"));
      g.anchor_elo = number(at("anchor_elo"));
      g.anchor_elo_low = g.anchor_elo_high = std::nan("");
    }
    by_generation[g.generation] = g;
  });
  std::vector<GateRow> gates;
  int best = 0;
  double rating = 0;
  for (auto& [generation, g] : by_generation) {
    g.opponent_generation = best;
    const double chained = chained_rating(rating, g.promoted, g.elo);
    if (!std::isfinite(g.rating) || !std::isfinite(chained)) g.rating = chained;
    rating = g.rating;
    if (g.promoted) best = generation;
    gates.push_back(g);
  }
  return gates;
}

// What log.txt says: the highest "(session N", 0 when there is none, and the run id that the
// last session line names ("starting run ... (session N): ...; run id X"). Read a line at a time
// (a long run's log grows without end); a log that is there but cannot be read is an error, not a
// run without sessions.
RunState state_from_log(const fs::path& log) {
  RunState s;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(log, ec))) return s;
  // Only what such a line holds in full: a session number of digits closed by ')', a run id of
  // exactly 32 hexadecimal digits (a line cut short by a kill gives nothing, never a value that
  // load_state would refuse at the next start).
  const std::string session = "(session ", run_id = "; run id ";
  constexpr std::size_t kIdDigits = 32;
  // Only a session line ("[date time] starting run ..." or "resuming run ..."), its last
  // "(session N)" and a run id only at its end: the run folder's name comes before them and may
  // hold such text itself, and other lines name paths in the folder after their own text ("runs/r
  // (session 99)" made 99 sessions of one).
  const auto visit = [&](const util::FileLine& l) {
    const std::string_view line = l.text;
    const auto stamp_end = line.find("] ");
    if (stamp_end == std::string_view::npos) return;
    const std::string_view text = line.substr(stamp_end + 2);
    if (text.rfind("starting run ", 0) != 0 && text.rfind("resuming run ", 0) != 0) return;
    const auto at = text.rfind(session);
    if (at == std::string_view::npos) return;
    const std::size_t from = at + session.size();
    const std::size_t digits_end = text.find_first_not_of("0123456789", from);
    if (digits_end == std::string_view::npos || text[digits_end] != ')' || digits_end == from ||
        digits_end - from > 15)
      return;
    s.sessions = std::max<std::uint64_t>(
        s.sessions, std::stoull(std::string(text.substr(from, digits_end - from))));
    const auto id = text.rfind(run_id);
    if (id == std::string_view::npos || id < digits_end) return;
    const std::size_t id_from = id + run_id.size();
    if (text.size() - id_from == kIdDigits &&
        text.find_first_not_of("0123456789abcdef", id_from) == std::string_view::npos)
      s.run_id = std::string(text.substr(id_from, kIdDigits));
  };
  try {
    util::for_each_line(log.string(), kMaxLogBytes, kMaxLogLineBytes, 0, visit);
  } catch (const util::FileError& e) {
    throw RunFolderError(std::string(e.what()) + " (the run's sessions and id are read from it)");
  }
  return s;
}

// The folder, created if needed (the lock file goes inside it).
std::string created(const fs::path& dir) {
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace

const util::CsvTable::Row& arena_header() { return kArenaHeader; }
const util::CsvTable::Row& metrics_header() { return kMetricsHeader; }

util::CsvTable::Row metrics_row(const TrainRow& r) {
  util::CsvTable::Row row = {"train", fixed(r.seconds, 1), std::to_string(r.step),
                             std::to_string(r.generation), std::to_string(r.positions),
                             std::to_string(r.games), fixed(r.policy_loss, 5),
                             fixed(r.value_loss, 5), fixed(r.learning_rate, 6)};
  row.resize(kMetricsHeader.size());
  row[util::CsvTable::column_of(kMetricsHeader, "loss_steps")] = std::to_string(r.loss_steps);
  return row;
}

namespace {

// A metrics row of `kind` with `fields` (column name, text) set and every other column empty.
util::CsvTable::Row sparse_metrics_row(
    const char* kind, std::initializer_list<std::pair<const char*, std::string>> fields) {
  util::CsvTable::Row row(kMetricsHeader.size());
  row[0] = kind;
  for (const auto& [column, text] : fields)
    row[util::CsvTable::column_of(kMetricsHeader, column)] = text;
  return row;
}

}  // namespace

util::CsvTable::Row metrics_row(const SelfplayRow& r) {
  util::CsvTable::Row row = sparse_metrics_row(
      "selfplay", {{"seconds", fixed(r.seconds, 1)},
                   {"generation", std::to_string(r.generation)},
                   {"positions", std::to_string(r.positions)},
                   {"games", std::to_string(r.games)},
                   {"selfplay_positions_per_second", fixed(r.positions_per_second, 2)},
                   {"evals_per_position", fixed(r.evals_per_position, 2)},
                   {"forward_busy", fixed(r.forward_busy, 4)},
                   {"forward_rate", fixed(r.forward_rate, 1)},
                   {"mean_batch", fixed(r.mean_batch, 2)},
                   {"selfplay_bound", fixed(r.bound, 2)}});
  if (r.resign_checks >= 0) {
    row[util::CsvTable::column_of(kMetricsHeader, "resigned")] = std::to_string(r.resigned);
    row[util::CsvTable::column_of(kMetricsHeader, "resign_checks")] =
        std::to_string(r.resign_checks);
    row[util::CsvTable::column_of(kMetricsHeader, "resign_false_rate")] =
        fixed(r.resign_false_rate, 4);
  }
  return row;
}

util::CsvTable::Row metrics_row(const NodeRow& r) {
  return sparse_metrics_row("node", {{"seconds", fixed(r.seconds, 1)},
                                     {"games", std::to_string(r.games)},
                                     {"node", r.node},
                                     {"games_per_second", fixed(r.games_per_second, 2)}});
}

util::CsvTable::Row metrics_row(const SessionRow& r) {
  return sparse_metrics_row(r.start ? "start" : "stop",
                            {{"seconds", fixed(r.seconds, 1)},
                             {"step", std::to_string(r.step)},
                             {"generation", std::to_string(r.generation)},
                             {"positions", std::to_string(r.positions)},
                             {"games", std::to_string(r.games)}});
}

util::CsvTable::Row metrics_row(const StreamRow& r) {
  return sparse_metrics_row("stream", {{"seconds", fixed(r.seconds, 1)},
                                       {"positions", std::to_string(r.positions)},
                                       {"games", std::to_string(r.games)},
                                       {"nodes", std::to_string(r.nodes)},
                                       {"stream_lag", std::to_string(r.lag)},
                                       {"stream_evicted", std::to_string(r.evicted)}});
}

util::CsvTable::Row metrics_row(const GateRow& row, std::int64_t positions, std::int64_t games) {
  return gate_metrics_row(row, field(positions), field(games));
}

util::CsvTable::Row arena_row(const GateRow& row) { return gate_arena_row(row); }

MetricsRowReader::MetricsRowReader(const util::CsvTable::Row& header)
    : at_(kMetricsHeader.size(), -1) {
  for (std::size_t c = 0; c < kMetricsHeader.size(); ++c)
    for (std::size_t f = 0; f < header.size(); ++f)
      if (header[f] == kMetricsHeader[c]) at_[c] = static_cast<int>(f);
}

MetricsRow MetricsRowReader::operator()(const util::CsvTable::Row& row) const {
  const auto text = [&](const char* column) -> std::string {
    const int f = at_[util::CsvTable::column_of(kMetricsHeader, column)];
    return f >= 0 && static_cast<std::size_t>(f) < row.size() ? row[static_cast<std::size_t>(f)]
                                                             : std::string();
  };
  const auto value = [&](const char* column) { return number(text(column)); };
  MetricsRow m;
  m.kind = text("kind");
  m.node = text("node");
#define OPPIDUM_READ_METRIC(name) m.name = value(#name);
  OPPIDUM_READ_METRIC(seconds) OPPIDUM_READ_METRIC(step) OPPIDUM_READ_METRIC(generation)
  OPPIDUM_READ_METRIC(positions) OPPIDUM_READ_METRIC(games) OPPIDUM_READ_METRIC(policy_loss)
  OPPIDUM_READ_METRIC(value_loss) OPPIDUM_READ_METRIC(learning_rate)
  OPPIDUM_READ_METRIC(gate_elo) OPPIDUM_READ_METRIC(promoted) OPPIDUM_READ_METRIC(best_elo)
  OPPIDUM_READ_METRIC(gate_games) OPPIDUM_READ_METRIC(anchor_score)
  OPPIDUM_READ_METRIC(anchor_elo) OPPIDUM_READ_METRIC(games_per_second)
  OPPIDUM_READ_METRIC(nodes) OPPIDUM_READ_METRIC(stream_lag)
  OPPIDUM_READ_METRIC(stream_evicted) OPPIDUM_READ_METRIC(selfplay_positions_per_second)
  OPPIDUM_READ_METRIC(evals_per_position) OPPIDUM_READ_METRIC(forward_busy)
  OPPIDUM_READ_METRIC(forward_rate) OPPIDUM_READ_METRIC(mean_batch)
  OPPIDUM_READ_METRIC(selfplay_bound) OPPIDUM_READ_METRIC(resigned)
  OPPIDUM_READ_METRIC(resign_checks) OPPIDUM_READ_METRIC(resign_false_rate)
  OPPIDUM_READ_METRIC(loss_steps)
#undef OPPIDUM_READ_METRIC
  // What no run writes is damage, not a number to draw (a generation of 1e22 hung the page's
  // chart): counts are whole and at least 0 (a generation at most kMaxGates), rates, times and
  // losses at least 0, shares from 0 to 1. An empty field (NaN) is a value not known.
  const auto check = [&](const char* column, double v, double lo, double hi, bool whole) {
    if (std::isnan(v) || (v >= lo && v <= hi && (!whole || std::floor(v) == v))) return;
    const std::string range = hi == std::numeric_limits<double>::max()
                                  ? " of " + fixed(lo, 0) + " or more"
                                  : " from " + fixed(lo, 0) + " to " +
                                        (hi > 1e15 ? std::string("2^53") : fixed(hi, 0));
    throw RunFolderError(std::string(column) + " is not " +
                         (whole ? "a whole number" : "a number") + range + " (\"" +
                         quote_input(text(column), 40) + "\")");
  };
  // A node's rate over a worker restarted under its name (its count of games began again) was
  // written negative by versions before the restart was seen: not known, not damage.
  if (m.games_per_second < 0) m.games_per_second = std::nan("");
  constexpr double kExact = 9007199254740992.0;  // 2^53: whole numbers a double holds exactly
  constexpr double kMax = std::numeric_limits<double>::max();
#define OPPIDUM_CHECK_METRIC(name, lo, hi, whole) check(#name, m.name, lo, hi, whole);
  OPPIDUM_CHECK_METRIC(step, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(generation, 0, static_cast<double>(kMaxGates), true)
  OPPIDUM_CHECK_METRIC(positions, 0, kExact, true) OPPIDUM_CHECK_METRIC(games, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(gate_games, 0, kExact, true) OPPIDUM_CHECK_METRIC(nodes, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(promoted, 0, 1, true) OPPIDUM_CHECK_METRIC(stream_lag, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(stream_evicted, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(resigned, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(resign_checks, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(loss_steps, 0, kExact, true)
  OPPIDUM_CHECK_METRIC(seconds, 0, kMax, false) OPPIDUM_CHECK_METRIC(policy_loss, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(value_loss, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(learning_rate, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(games_per_second, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(selfplay_positions_per_second, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(evals_per_position, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(forward_rate, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(mean_batch, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(selfplay_bound, 0, kMax, false)
  OPPIDUM_CHECK_METRIC(forward_busy, 0, 1, false) OPPIDUM_CHECK_METRIC(anchor_score, 0, 1, false)
  OPPIDUM_CHECK_METRIC(resign_false_rate, 0, 1, false)
#undef OPPIDUM_CHECK_METRIC
  return m;
}

double loss_weight(const MetricsRow& row) {
  if (row.kind != "train" || !std::isfinite(row.step)) return 0.0;
  if (std::isnan(row.loss_steps)) return 1.0;  // a table from before the column
  return std::isfinite(row.loss_steps) && row.loss_steps >= 1 ? row.loss_steps : 0.0;
}

void for_each_metrics_row(const fs::path& path, int* skipped, bool check_header,
                          const std::function<void(const MetricsRow&)>& visit) {
  util::CsvTable::Position at;
  bool restarted = false;  // from its start: a first read always is
  std::optional<MetricsRowReader> reader;
  util::CsvTable::read_new(
      path.string(), at, &restarted, skipped,
      [&](const util::CsvTable::Row& row) {
        if (!reader) reader.emplace(at.header);
        MetricsRow m;
        try {
          m = (*reader)(row);
        } catch (const RunFolderError&) {
          if (skipped) ++*skipped;
          return;
        }
        visit(m);
      },
      check_header ? &kMetricsHeader : nullptr);
}

std::string more_gates_than_any_run(const std::string& path) {
  return path + ": more than " + std::to_string(kMaxGates) +
         " gates (a row a generation), more than any run holds; it is not a table of a run";
}

GateRowReader::GateRowReader(util::CsvTable::Row header, std::string path)
    : header_(std::move(header)), path_(std::move(path)) {}

GateRow GateRowReader::operator()(const util::CsvTable::Row& row) {
  const std::size_t i = index_++;
  GateRow g = gate_from_row(TableView{header_, path_}, row, i, rating_);
  rating_ = g.rating;
  return g;
}

void for_each_gate(const fs::path& path, int* skipped, bool check_header,
                   const std::function<void(const GateRow&)>& visit) {
  util::CsvTable::Position at;
  bool restarted = false;  // from its start: a first read always is
  std::optional<GateRowReader> reader;
  util::CsvTable::read_new(
      path.string(), at, &restarted, skipped,
      [&](const util::CsvTable::Row& row) {
        if (!reader) reader.emplace(at.header, path.string());
        GateRow g;
        try {
          g = (*reader)(row);
        } catch (const std::exception&) {
          if (skipped) ++*skipped;
          return;
        }
        visit(g);
      },
      check_header ? &kArenaHeader : nullptr);
}

std::vector<GateRow> read_gates(const fs::path& path, int* skipped, bool check_header) {
  std::vector<GateRow> gates;
  for_each_gate(path, skipped, check_header, [&](const GateRow& g) {
    if (gates.size() >= kMaxGates) throw util::FileError(more_gates_than_any_run(path.string()));
    gates.push_back(g);
  });
  return gates;
}

std::string RunPaths::name() const {
  fs::path path = fs::absolute(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "runs/run1/", "."
  return path.filename().string();
}

fs::path RunPaths::candidate(int generation) const {
  char name[32];
  std::snprintf(name, sizeof name, "gen-%04d.ckpt", generation);
  return checkpoints() / name;
}

bool RunPaths::is_checkpoint_name(const std::string& stem) {
  if (stem == "best") return true;
  if (stem.size() < 8 || stem.size() > 12 || stem.compare(0, 4, "gen-") != 0) return false;
  return stem.find_first_not_of("0123456789", 4) == std::string::npos;
}

std::vector<int> RunPaths::candidate_generations() const {
  std::vector<int> found;
  std::error_code ec;
  for (fs::directory_iterator it(checkpoints(), ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string stem = path.stem().string();
    if (path.extension() != ".ckpt" || stem == "best" || !is_checkpoint_name(stem)) continue;
    const int gen = std::stoi(stem.substr(4));  // at most 8 digits
    if (candidate(gen).filename() == path.filename()) found.push_back(gen);
  }
  std::sort(found.rbegin(), found.rend());
  return found;
}

std::vector<std::string> progress_files(const RunPaths& paths) {
  std::vector<std::string> found;
  for (const fs::path& p : {paths.trainer_weights(), paths.arena()})
    if (fs::exists(p)) found.push_back(p.filename().string());
  std::error_code ec;
  const std::vector<int> candidates = paths.candidate_generations();  // newest first
  if (!candidates.empty() && candidates.front() > 0)
    found.push_back("checkpoints/" + paths.candidate(candidates.front()).filename().string());
  if (fs::is_directory(paths.games(), ec))
    for (const auto& entry : fs::directory_iterator(paths.games(), ec))
      if (entry.path().extension() == ".bin") {
        found.push_back("games/");
        break;
      }
  return found;
}

RunFolder::RunFolder(const fs::path& dir)
    : paths_{dir}, lock_(created(dir), "oppidum train") {
  fs::create_directories(paths_.checkpoints());
  // The owner's interrupted whole-file writes (util::write_file_atomically) leave `<file>.tmp`
  // beside their file; only the owner writes them, and it holds the lock now. The replay store
  // removes its own (games/). A link there is removed too (never followed); anything else at such
  // a name (a directory) would fail the write a generation later, at every start: named now.
  const std::set<fs::path> run_files = {paths_.config(),          paths_.state(),
                                        paths_.trainer_weights(), paths_.trainer_optimiser(),
                                        paths_.arena(),           paths_.metrics()};
  std::error_code ec;
  for (const fs::path& folder : {paths_.dir, paths_.checkpoints()})
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const fs::path& p = entry.path();
      if (p.extension() != ".tmp") continue;
      const fs::path file = p.parent_path() / p.stem();  // the file it was to become
      const bool ours = folder == paths_.dir
                            ? run_files.count(file) > 0
                            : file.extension() == ".ckpt" &&
                                  RunPaths::is_checkpoint_name(file.stem().string());
      if (!ours) continue;
      const fs::file_status status = entry.symlink_status(ec);
      if (fs::is_regular_file(status) || fs::is_symlink(status)) {
        fs::remove(p, ec);
        continue;
      }
      throw RunFolderError(util::temporary_in_the_way(p.string()) +
                           " (nothing of the run was changed)");
    }
}

bool RunFolder::exists() const { return fs::exists(paths_.config()); }

void RunFolder::check_writable(
    const std::vector<std::pair<std::string, util::WriteUse>>& more) const {
  using util::WriteUse;
  std::vector<std::pair<std::string, WriteUse>> places = {
      {paths_.dir.string(), WriteUse::kFolder},
      {paths_.checkpoints().string(), WriteUse::kFolder},
      {paths_.games().string(), WriteUse::kFolder},
      {paths_.log().string(), WriteUse::kAppend},
      {paths_.metrics().string(), WriteUse::kAppend},
      {paths_.arena().string(), WriteUse::kAppend},
      {paths_.state().string(), WriteUse::kReplace},
      {paths_.trainer_weights().string(), WriteUse::kReplace},
      {paths_.trainer_optimiser().string(), WriteUse::kReplace},
      {paths_.best().string(), WriteUse::kReplace}};
  places.insert(places.end(), more.begin(), more.end());
  for (const auto& [path, use] : places) {
    const std::string why = util::cannot_write(path, use);
    if (why.empty()) continue;
    const char* what = use == WriteUse::kFolder   ? "makes and replaces files in it"
                       : use == WriteUse::kAppend ? "appends to it"
                                                  : "replaces it";
    throw RunFolderError("cannot write " + path + " (" + why + "): the run " + what +
                         " as it goes on; make it writable and run the same command again "
                         "(nothing of the run was changed)");
  }
}

RunState RunFolder::load_state(bool recover, std::string* rebuilt) const {
  const std::string path = paths_.state().string();
  std::string problem;
  RunState s;
  if (!fs::exists(paths_.state())) {
    problem = path + " is missing";
  } else {
    try {
      // One document (a second one would be ignored), of the keys save_state writes.
      const std::string text = util::read_regular_file(path, kMaxStateBytes);
      if (config::count_yaml_documents(text, "") > 1)
        throw std::runtime_error("it holds a second YAML document; the trainer writes one");
      const YAML::Node n = YAML::Load(text);
      if (!n.IsMap() || !n["sessions"]) throw std::runtime_error("no sessions counter");
      std::set<std::string> keys;  // a key given twice would be read with its first value
      for (const auto& entry : n) {
        if (!entry.first.IsScalar() || (!kStateKeys.count(entry.first.Scalar()) &&
                                         !kOldStateKeys.count(entry.first.Scalar())))
          throw std::runtime_error("unknown key " + quote_input(entry.first.Scalar(), 60) +
                                   "; the trainer writes only " + util::join(kStateKeys, ", "));
        if (!keys.insert(entry.first.Scalar()).second)
          throw std::runtime_error("the key " + quote_input(entry.first.Scalar(), 60) +
                                   " is given twice");
      }
      s.sessions = n["sessions"].as<std::uint64_t>();
      if (n["stream_cursor"]) s.stream_cursor = n["stream_cursor"].as<std::string>();
      if (n["stream_read"]) s.stream_read = n["stream_read"].as<std::int64_t>();
      if (n["run_id"]) s.run_id = n["run_id"].as<std::string>();
      if (n["config"]) s.identity = n["config"].as<std::string>();
      // The identity is the record that refuses a changed config.yaml: a line lost from it, or
      // the file cut off in it, would let a change through and be written over. Its check
      // comes first in the file; a state without a check is from before checks (accepted).
      if (n["config_crc32"]) {
        const std::string check = n["config_crc32"].as<std::string>();
        if (!n["config"]) throw std::runtime_error("config_crc32 without the config it checks");
        if (check != identity_check(s.identity))
          throw std::runtime_error("its config record does not match its check, config_crc32 " +
                                   quote_input(check, 20) + ": a line of it was lost or changed");
      }
      // Each value as the trainer writes it, so that a damaged one is named here and not by
      // Redis (an invalid stream id) halfway through a session.
      static const std::regex kCursor("[0-9]{1,20}-[0-9]{1,20}"), kRunId("([0-9a-f]{32})?");
      // Both numbers of an id are 64-bit (Redis refuses 99999999999999999999-0 mid-session).
      const auto fits_64_bits = [](const std::string& id) {
        const std::size_t dash = id.find('-');
        std::uint64_t part = 0;
        bool out_of_range = false;
        return util::parse_decimal(std::string_view(id).substr(0, dash), part, out_of_range) &&
               util::parse_decimal(std::string_view(id).substr(dash + 1), part, out_of_range);
      };
      if (!std::regex_match(s.stream_cursor, kCursor) || !fits_64_bits(s.stream_cursor))
        throw std::runtime_error("stream_cursor \"" + quote_input(s.stream_cursor, 60) +
                                 "\" is not a stream entry id (like 1700000000000-0: two "
                                 "numbers below 2^64)");
      if (s.stream_read < 0)
        throw std::runtime_error("stream_read " + std::to_string(s.stream_read) +
                                 " is below 0");
      if (!std::regex_match(s.run_id, kRunId))
        throw std::runtime_error("run_id \"" + quote_input(s.run_id, 60) +
                                 "\" is not 32 hexadecimal digits");
      if (s.sessions > (std::uint64_t{1} << 62))
        throw std::runtime_error("sessions " + std::to_string(s.sessions) +
                                 " is more than any run counts");
      // No run id is a run from before run ids (it gets one now); but once a session has written
      // one to the log, a state without it lost a line, and a new id would disown the run's keys
      // on its Redis store.
      if (s.run_id.empty()) {
        const std::string logged = state_from_log(paths_.log()).run_id;
        if (!logged.empty())
          throw std::runtime_error("no run_id, but " + paths_.log().string() +
                                   " says the run's id is " + logged);
      }
      return s;
    } catch (const RunFolderError&) {
      throw;  // log.txt's, not state.yaml's: a rebuild from it could not help
    } catch (const util::FileAccessError& e) {
      // Not damaged: a rebuild would replace an intact file that could not be read just now.
      throw RunFolderError(std::string(e.what()) + ": the run's state cannot be read; make it "
                           "readable and run the same command again (nothing of the run was "
                           "changed)");
    } catch (const std::exception& e) {
      problem = path + " is damaged (" + std::string(e.what()).substr(0, 200) + ")";
    }
  }
  if (!recover)
    throw RunFolderError(problem +
                         "; restore it from a backup, or run the same command with --recover to "
                         "rebuild it from log.txt");
  const RunState from_log = state_from_log(paths_.log());
  if (rebuilt)
    *rebuilt = problem + "; rebuilt it from " + paths_.log().string() + " (" +
               std::to_string(from_log.sessions) + " session(s) so far)";
  return from_log;
}

void RunFolder::save_state(const RunState& s) const {
  const auto emit = [&](YAML::EMITTER_MANIP record_style) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "sessions" << YAML::Value << s.sessions;
    out << YAML::Key << "stream_cursor" << YAML::Value << YAML::DoubleQuoted << s.stream_cursor;
    out << YAML::Key << "stream_read" << YAML::Value << s.stream_read;
    out << YAML::Key << "run_id" << YAML::Value << YAML::DoubleQuoted << s.run_id;
    if (!s.identity.empty()) {
      out << YAML::Key << "config_crc32" << YAML::Value << YAML::DoubleQuoted
          << identity_check(s.identity);
      out << YAML::Key << "config" << YAML::Value << record_style << s.identity;
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
  };
  std::string text = emit(YAML::Literal);
  // A literal block reads back the record as this program writes it (lines, one newline at the
  // end); any other text (a record read from elsewhere) is written quoted, so that it reads back
  // as it is and matches its check.
  if (!s.identity.empty() && YAML::Load(text)["config"].as<std::string>() != s.identity)
    text = emit(YAML::DoubleQuoted);
  util::write_file_atomically(paths_.state().string(), text);
}

std::vector<std::string> RunFolder::open_tables(bool recover, const std::string& anchor) {
  anchor_ = anchor;
  std::vector<std::string> repairs;
  // An empty table (cut to nothing) has lost all it held, as a missing one.
  const auto missing = [](const fs::path& table) {
    std::error_code ec;
    return !fs::exists(table, ec) ||
           (fs::is_regular_file(table, ec) && fs::file_size(table, ec) == 0);
  };
  const bool arena_missing = missing(paths_.arena());
  const bool metrics_missing = missing(paths_.metrics());
  // A run with progress has both tables (they are made when its first session starts).
  const bool lost = (arena_missing || metrics_missing) && !progress_files(paths_).empty();
  if (lost && !recover)
    throw RunFolderError(
        (arena_missing ? paths_.arena() : paths_.metrics()).string() +
        " is missing or empty, but the run has training progress; restore it from a backup, or "
        "run the same command with --recover to rebuild it from what is intact (arena.csv from "
        "metrics.csv's gate rows and best.ckpt, metrics.csv from arena.csv)");
  metrics_ = std::make_unique<util::CsvTable>(paths_.metrics().string(), kMetricsHeader, false);
  std::vector<GateRow> rebuilt;
  if (lost && arena_missing && !metrics_missing) {
    rebuilt = gates_from_metrics(*metrics_, anchor);
    write_arena(paths_.arena().string(), {}, rebuilt);
  }
  arena_ = std::make_unique<util::CsvTable>(paths_.arena().string(), kArenaHeader, true);
  if (lost && arena_missing && metrics_missing) {
    repairs.push_back(arena_->path() + ": was missing or empty, and metrics.csv too; started anew "
                      "(a newer best.ckpt is recorded as promoted)");
  } else if (lost && arena_missing) {
    repairs.push_back(arena_->path() + ": was missing or empty; rebuilt " +
                      std::to_string(rebuilt.size()) +
                      " gate row(s) from metrics.csv (which does not keep the wins, draws, "
                      "losses and intervals)");
  }
  if (lost && metrics_missing)
    repairs.push_back(metrics_->path() + ": was missing or empty; started anew (its training rows "
                      "are lost; its gate rows come back from arena.csv)");
  for (const auto* table : {arena_.get(), metrics_.get()})
    if (table->dropped_on_open() > 0)
      repairs.push_back(table->path() + ": set aside " +
                        std::to_string(table->dropped_on_open()) +
                        " cut-off or malformed row(s) in " + table->set_aside_path());
  read_gates();
  // A gate is committed to metrics.csv first and then to arena.csv (append_gate), so metrics.csv
  // may record one gate more than arena.csv, of the next generation: a kill between the two, and
  // that gate is played again. More than that means arena.csv lost rows, which the resume would
  // otherwise take for ungated generations and drop from metrics.csv too.
  if (!lost) {
    const int gated = last_gated();
    std::vector<GateRow> beyond;
    for (const GateRow& g : gates_from_metrics(*metrics_, anchor))
      if (g.generation > gated) beyond.push_back(g);
    if (beyond.size() > 1 || (beyond.size() == 1 && beyond.front().generation != gated + 1)) {
      const std::string what =
          arena_->path() + " lacks the gates of generations " +
          std::to_string(beyond.front().generation) + ".." +
          std::to_string(beyond.back().generation) + " that " + metrics_->path() + " records";
      if (!recover)
        throw RunFolderError(what + "; restore arena.csv, or run the same command with --recover "
                                    "to rebuild those rows from metrics.csv");
      const std::vector<util::CsvTable::Row> kept = arena_->rows();  // a row a gate
      arena_.reset();
      write_arena(paths_.arena().string(), kept, beyond);
      arena_ = std::make_unique<util::CsvTable>(paths_.arena().string(), kArenaHeader, true);
      repairs.push_back(what + "; rebuilt " + std::to_string(beyond.size()) +
                        " row(s) from metrics.csv (which does not keep the wins, draws, losses "
                        "and intervals)");
      read_gates();
    }
  }
  return repairs;
}

void RunFolder::read_gates() {
  gates_.clear();
  double rating = 0;
  const TableView table{arena_->header(), arena_->path()};
  arena_->for_each_row([&](const util::CsvTable::Row& row) {
    const std::size_t i = gates_.size();
    if (i >= kMaxGates) throw RunFolderError(more_gates_than_any_run(arena_->path()));
    gates_.push_back(gate_from_row(table, row, i, rating));
    rating = gates_.back().rating;
    if (i > 0 && gates_[i].generation <= gates_[i - 1].generation)
      throw RunFolderError(arena_->path() + ": row " + std::to_string(i + 2) + " gates generation " +
                           std::to_string(gates_[i].generation) + " after generation " +
                           std::to_string(gates_[i - 1].generation) +
                           "; the table is out of order (edited by hand?)");
  });
}

bool RunFolder::restore_gate_from_metrics(int generation, std::int64_t step) {
  std::optional<GateRow> found;
  for (GateRow& g : gates_from_metrics(*metrics_, anchor_))
    if (g.generation == generation && g.step == step && g.promoted) found = std::move(g);
  if (!found || generation <= last_gated()) return false;
  const auto promoted = last_promoted();
  found->opponent_generation = promoted ? promoted->generation : 0;
  const double chained = chained_rating(rating(), true, found->elo);
  if (!std::isfinite(found->rating) || !std::isfinite(chained)) found->rating = chained;
  arena_->append(arena_row(*found));
  gates_.push_back(*found);
  return true;
}

std::string RunFolder::set_aside_gates_after(int generation) {
  const std::size_t column = arena_->column("generation");
  const int moved = arena_->set_aside([&](const util::CsvTable::Row& row) {
    return std::atoll(row[column].c_str()) > generation;
  });
  if (moved == 0) return "";
  read_gates();
  return arena_->path() + ": moved the " + std::to_string(moved) +
         " gate row(s) after generation " + std::to_string(generation) + " to " +
         arena_->set_aside_path();
}

std::vector<std::string> RunFolder::drop_rows_after(std::int64_t trainer_step,
                                                    int steps_per_generation) {
  std::vector<std::string> repairs;
  const int trained = static_cast<int>(trainer_step / steps_per_generation);
  const int gated = last_gated();
  if (gated > trained)  // the resume refuses such a trainer state before it gets here
    throw std::logic_error("drop_rows_after: arena.csv has gated generation " +
                           std::to_string(gated) + " after the trainer's step " +
                           std::to_string(trainer_step));
  std::set<int> gate_rows_seen, selfplay_rows_seen;
  const std::size_t kind = metrics_->column("kind"), step = metrics_->column("step"),
                    generation = metrics_->column("generation");
  // A gate row of an ungated generation is the one record of a gate whose arena.csv row is lost
  // (or that is played again): kept beside the table, never only dropped; and so is a train row
  // whose step is no step (edited by hand: "abc" once read as step 0 and stayed).
  const auto no_step = [](const std::string& text) {
    return text.empty() || text.size() > 18 ||
           text.find_first_not_of("0123456789") != std::string::npos;
  };
  // The same pass sees whether the train rows it keeps have steps that only grow (they do, but
  // where a session wrote a step again): then no row is older than another of its step.
  std::uint64_t trains = 0;
  bool growing = true;
  std::int64_t last_step = std::numeric_limits<std::int64_t>::min();
  const int aside = metrics_->set_aside([&](const util::CsvTable::Row& row) {
    if ((row[kind] == "gate" && std::atoi(row[generation].c_str()) > gated) ||
        (row[kind] == "train" && no_step(row[step])))
      return true;
    if (row[kind] == "train") {
      const std::int64_t s = std::atoll(row[step].c_str());
      growing = growing && s > last_step;
      last_step = s;
      ++trains;
    }
    return false;
  });
  if (aside > 0)
    repairs.push_back(metrics_->path() + ": moved " + std::to_string(aside) +
                      " gate row(s) of generations after " + std::to_string(gated) +
                      " (the last in arena.csv), or train row(s) without a step, to " +
                      metrics_->set_aside_path());
  // The newest train row of a step counts. When a step was written again, a pass finds the older
  // rows by (step, place) pairs (16 bytes a train row; the table itself is never held), before
  // the pass that drops them.
  std::vector<bool> superseded(growing ? 0 : trains);
  if (!growing) {
    std::vector<std::pair<std::int64_t, std::uint64_t>> train_rows;
    std::uint64_t place = 0;
    metrics_->for_each_row([&](const util::CsvTable::Row& row) {
      if (row[kind] == "train") train_rows.emplace_back(std::atoll(row[step].c_str()), place++);
    });
    std::sort(train_rows.begin(), train_rows.end());
    for (std::size_t i = 0; i + 1 < train_rows.size(); ++i)
      if (train_rows[i].first == train_rows[i + 1].first) superseded[train_rows[i].second] = true;
  }
  std::uint64_t train = 0;
  // The last session's clock (a session opens with a start row), in all its rows and in those
  // kept: a session killed without a stop row keeps its time in a stop row made now, since its
  // rows of steps lost are dropped and the page counts a session's time to its last row.
  const std::size_t seconds = metrics_->column("seconds");
  bool open_session = false;
  double session_clock = 0, kept_clock = 0;
  const auto keep = [&](const util::CsvTable::Row& row) {
    if (row[kind] == "train") {
      const bool older = !growing && superseded[train++];
      return std::atoll(row[step].c_str()) <= trainer_step && !older;
    }
    if (row[kind] == "gate") {
      const int g = std::atoi(row[generation].c_str());
      return g <= gated && gate_rows_seen.insert(g).second;
    }
    if (row[kind] == "selfplay") {  // a generation trained again gets its row again
      const int g = std::atoi(row[generation].c_str());
      return g <= trained && selfplay_rows_seen.insert(g).second;
    }
    return true;  // node, stream, start and stop rows: a record of what was seen, not keyed
  };
  const int gone_metrics = metrics_->retain([&](const util::CsvTable::Row& row) {
    const bool kept = keep(row);
    if (row[kind] == "start") open_session = true, session_clock = kept_clock = 0;
    if (row[kind] == "stop") open_session = false;
    if (const double t = number(row[seconds]); std::isfinite(t)) {
      session_clock = std::max(session_clock, t);
      if (kept) kept_clock = std::max(kept_clock, t);
    }
    return kept;
  });
  if (gone_metrics > 0)
    repairs.push_back(metrics_->path() + ": dropped " + std::to_string(gone_metrics) +
                      " row(s) of steps after " + std::to_string(trainer_step) +
                      ", of ungated generations, or repeated");
  if (open_session && session_clock > kept_clock) {
    // Only what is known of its end: its clock, and the step and generation it resumes at (its
    // positions and games then are not known: a clean stop row's totals).
    metrics_->append(sparse_metrics_row("stop", {{"seconds", fixed(session_clock, 1)},
                                                 {"step", std::to_string(trainer_step)},
                                                 {"generation", std::to_string(trained)}}));
    repairs.push_back(metrics_->path() + ": the last session, stopped without a stop row, ends "
                      "with one at its last clock (" + fixed(session_clock, 1) + " s), so that "
                      "its time still counts without its rows of steps lost");
  }
  // A gate's metrics row lost after its commit (a hand-cut file) is rebuilt from arena.csv.
  int rebuilt = 0;
  for (const GateRow& g : gates_) {
    if (gate_rows_seen.count(g.generation)) continue;
    metrics_->append(gate_metrics_row(g, "", ""));
    ++rebuilt;
  }
  if (rebuilt > 0)
    repairs.push_back(metrics_->path() + ": rebuilt " + std::to_string(rebuilt) +
                      " gate row(s) from arena.csv");
  return repairs;
}

std::optional<GateRow> RunFolder::last_promoted() const {
  for (auto it = gates_.rbegin(); it != gates_.rend(); ++it)
    if (it->promoted) return *it;
  return std::nullopt;
}

void RunFolder::append_metrics(const util::CsvTable::Row& row) {
  metrics_->append(row);
  last_metrics_row_ = std::chrono::steady_clock::now();
}

void RunFolder::append_train(const TrainRow& r) { append_metrics(metrics_row(r)); }

void RunFolder::append_selfplay(const SelfplayRow& r) { append_metrics(metrics_row(r)); }

void RunFolder::append_node(const NodeRow& r) { append_metrics(metrics_row(r)); }

void RunFolder::append_stream(const StreamRow& r) { append_metrics(metrics_row(r)); }

void RunFolder::append_session(const SessionRow& r) { append_metrics(metrics_row(r)); }

void RunFolder::append_clock_if_quiet(double seconds, std::chrono::steady_clock::time_point now,
                                      std::chrono::steady_clock::duration quiet) {
  if (now - last_metrics_row_ < quiet) return;
  append_metrics(sparse_metrics_row("clock", {{"seconds", fixed(seconds, 1)}}));
  last_metrics_row_ = now;
}

void RunFolder::append_gate(const GateRow& g, std::int64_t positions, std::int64_t games) {
  append_metrics(metrics_row(g, positions, games));
  arena_->append(arena_row(g));
  gates_.push_back(g);
}

}  // namespace oppidum::trainer
