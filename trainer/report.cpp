#include "trainer/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include "selfplay/replay_store.h"
#include "trainer/run_folder.h"
#include "util/curve.h"
#include "util/file_io.h"

namespace oppidum::trainer {
namespace fs = std::filesystem;
namespace {

struct Series {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;
};

std::string fmt(double v) {
  char buf[32];
  // Past 10^15 in exponent form: "%.0f" of 1e300 does not fit the buffer, and was cut to a
  // number 10^270 times smaller.
  if (std::fabs(v) >= 1e15) std::snprintf(buf, sizeof buf, "%.3g", v);
  else if (std::fabs(v) >= 1000 || v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// `text` as HTML text or attribute value: & < > " ' escaped.
std::string html_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// A curve's points for a chart: at most kChartPoints.
constexpr std::size_t kChartPoints = 300;
std::vector<std::pair<double, double>> drawn(const util::BoundedCurve<1>& curve) {
  std::vector<std::pair<double, double>> out;
  for (const auto& p : curve.points(kChartPoints)) out.emplace_back(p.x, p.y[0]);
  return out;
}

// The series' points from its curve; past kChartPoints a point is the mean of consecutive rows,
// and its name says so (a chart of 301 gates alternating +100 and -100 drew a flat line at 0,
// saying nothing of it).
void draw(Series& series, const util::BoundedCurve<1>& curve, const std::string& rows) {
  series.points = drawn(curve);
  if (curve.size() <= series.points.size()) return;
  const std::size_t each = (curve.size() + series.points.size() - 1) / series.points.size();
  series.name += " (each point the mean of about " + std::to_string(each) + " consecutive " +
                 rows + ")";
}

// One line chart as inline SVG.
std::string chart(const std::string& title, const std::string& x_label,
                  const std::vector<Series>& series) {
  const double w = 640, h = 300, left = 60, right = 20, top = 30, bottom = 40;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  // Points that are not finite (a damaged table) are left out of the chart.
  const auto finite = [](double x, double y) { return std::isfinite(x) && std::isfinite(y); };
  for (const auto& s : series)
    for (const auto& [x, y] : s.points) {
      if (!finite(x, y)) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  std::ostringstream svg;
  svg << "<figure><svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h
      << "' font-family='sans-serif' font-size='11'>"
      << "<text x='" << w / 2 << "' y='16' text-anchor='middle' font-size='13'>" << title
      << "</text>";
  if (!std::isfinite(x0)) {
    svg << "<text x='" << w / 2 << "' y='" << h / 2 << "' text-anchor='middle'>no data yet</text></svg></figure>";
    return svg.str();
  }
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1, y0 -= 1;
  // Halves, so that the spans of values near the largest double (1e308 and -1e308) stay finite.
  auto px = [&](double x) { return left + (x / 2 - x0 / 2) / (x1 / 2 - x0 / 2) * (w - left - right); };
  auto py = [&](double y) {
    return h - bottom - (y / 2 - y0 / 2) / (y1 / 2 - y0 / 2) * (h - top - bottom);
  };
  svg << "<rect x='" << left << "' y='" << top << "' width='" << w - left - right << "' height='"
      << h - top - bottom << "' fill='none' stroke='#999'/>";
  for (int i = 0; i <= 4; ++i) {
    // Weighted means of the ends, which stay finite near the largest double (the span times 4
    // did not: the top tick read "inf").
    const double t = i / 4.0;
    const double y = y0 * (1 - t) + y1 * t, x = x0 * (1 - t) + x1 * t;
    svg << "<text x='" << left - 4 << "' y='" << py(y) + 4 << "' text-anchor='end'>" << fmt(y)
        << "</text><line x1='" << left << "' x2='" << w - right << "' y1='" << py(y) << "' y2='"
        << py(y) << "' stroke='#eee'/>"
        << "<text x='" << px(x) << "' y='" << h - bottom + 14 << "' text-anchor='middle'>"
        << fmt(x) << "</text>";
  }
  svg << "<text x='" << (left + w - right) / 2 << "' y='" << h - 6 << "' text-anchor='middle'>"
      << x_label << "</text>";
  int legend = 0;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    svg << "<polyline fill='none' stroke='" << s.color << "' stroke-width='1.5' points='";
    for (const auto& [x, y] : s.points)
      if (finite(x, y)) svg << px(x) << ',' << py(y) << ' ';
    svg << "'/>";
    if (s.points.size() < 60)
      for (const auto& [x, y] : s.points)
        if (finite(x, y))
          svg << "<circle cx='" << px(x) << "' cy='" << py(y) << "' r='2.5' fill='" << s.color << "'/>";
    svg << "<text x='" << left + 8 << "' y='" << top + 14 + 14 * legend++ << "' fill='" << s.color
        << "'>" << s.name << "</text>";
  }
  svg << "</svg></figure>";
  return svg.str();
}

}  // namespace

std::string write_report(const std::string& run_dir, const std::string& out_path) {
  const fs::path dir(run_dir);
  const RunPaths paths{dir};
  if (!fs::exists(paths.config()))
    throw std::runtime_error(run_dir + ": not a run folder (no config.yaml)");
  int bad_rows = 0;
  Series policy{"policy loss", "#1f77b4", {}}, value{"value loss", "#d62728", {}};
  Series best{"best network: chained gate Elo from the initial network (biased upwards)",
              "#2ca02c", {}},
      gate{"each candidate against the best network (gate Elo)", "#ff7f0e", {}},
      anchor{"new best against the fixed anchor (Elo)", "#17becf", {}};
  Series speed{"self-play positions per second", "#9467bd", {}};
  // Ratings and speed against the generation: it only grows, across the sessions of a resumed run
  // (each session's clock starts at 0). Each number from the one row that holds it.
  std::int64_t gates = 0;
  util::BoundedCurve<1> best_curve, gate_curve, anchor_curve;
  for_each_gate(paths.arena(), &bad_rows, true, [&](const GateRow& g) {
    ++gates;
    best_curve.add(g.generation, {g.rating});
    gate_curve.add(g.generation, {g.elo});
    if (!g.anchor.empty()) anchor_curve.add(g.generation, {g.anchor_elo});
  });
  std::int64_t metric_rows = 0;
  // A train row holds the mean losses of its `loss_steps` steps (one in older tables).
  util::BoundedCurve<1> policy_curve, value_curve, speed_curve;
  for_each_metrics_row(paths.metrics(), &bad_rows, true, [&](const MetricsRow& row) {
    ++metric_rows;
    if (const double steps = loss_weight(row); steps > 0) {
      policy_curve.add(row.step, {row.policy_loss}, steps);
      value_curve.add(row.step, {row.value_loss}, steps);
    }
    if (row.kind == "selfplay")
      speed_curve.add(row.generation, {row.selfplay_positions_per_second});
  });
  draw(policy, policy_curve, "train rows (weighed by their steps)");
  draw(value, value_curve, "train rows (weighed by their steps)");
  draw(best, best_curve, "gates");
  draw(gate, gate_curve, "gates");
  draw(anchor, anchor_curve, "gates");
  draw(speed, speed_curve, "generations' rates");

  Series length{"mean game length (plies)", "#8c564b", {}};
  util::BoundedCurve<1> length_curve;  // each chunk's mean length, weighed by its games
  int problems = 0;
  std::int64_t games = 0;
  if (fs::exists(paths.games())) {
    const selfplay::FolderReplayStore store(paths.games().string(),
                                            selfplay::FolderReplayStore::Mode::kReadOnly);
    int index = 0;
    const auto chunks = store.chunks();
    problems += static_cast<int>(store.problems().size());
    for (const auto& chunk : chunks) {
      double plies = 0;
      std::int64_t records = 0;
      const auto read =
          selfplay::for_each_game(chunk, [&](selfplay::GameRecord&& r, const selfplay::RecordPlace&) {
            plies += static_cast<double>(r.moves.size());
            ++records;
            return true;
          });
      problems += static_cast<int>(read.problems.size());
      if (records == 0) continue;
      games += records;
      length_curve.add(index++, {plies / static_cast<double>(records)},
                       static_cast<double>(records));
    }
  }
  draw(length, length_curve, "chunks (weighed by their games)");

  // The folder's name is anybody's text (a run unpacked from someone's archive): escaped, and the
  // page runs no script at all.
  const std::string name = html_text(paths.name());
  std::ostringstream html;
  html << "<!DOCTYPE html><html><head><meta charset='utf-8'><meta http-equiv='Content-Security-"
       << "Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>oppidum run "
       << name << "</title><style>body{font-family:sans-serif;max-width:700px;"
       << "margin:2em auto}figure{margin:1em 0}</style></head><body><h1>Run "
       << name << "</h1><p>" << games << " self-play games, "
       << metric_rows << " metric rows, " << gates << " gates"
       << (bad_rows ? ", " + std::to_string(bad_rows) + " damaged rows skipped" : "")
       << (problems ? ", " + std::to_string(problems) + " damaged game records skipped" : "")
       << ".</p>"
       << chart("Training loss", "optimiser step", {policy, value})
       << chart("Elo by generation (three references: see each line)", "generation",
                {best, gate, anchor})
       << chart("Self-play speed", "generation", {speed})
       << chart("Game length", "replay chunk (oldest first)", {length}) << "</body></html>\n";
  util::write_file_atomically(out_path, html.str());
  return out_path + ": " + std::to_string(games) + " games, " + std::to_string(gates) +
         " gates";
}

}  // namespace oppidum::trainer
