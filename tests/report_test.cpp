// `oppidum report` (trainer/report.h): the page of a run, here of a run resumed once.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/process_util.h"
#include "trainer/report.h"
#include "trainer/run_folder.h"

namespace oppidum::trainer {
namespace {

// Two sessions of five generations each; each session's clock starts at 0 again. A folder of
// each test's own: CTest runs the tests of this binary as parallel processes (one folder for all
// took another test's lock, or lost its files to another's remove_all).
std::filesystem::path make_resumed_run() {
  const auto dir =
      std::filesystem::path(::testing::TempDir()) /
      (std::string("report_test_resumed-") +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  RunFolder folder(dir);
  folder.open_tables(false, "");
  double rating = 0;
  std::int64_t step = 0;
  for (int session = 0; session < 2; ++session)
    for (int k = 1; k <= 5; ++k) {
      const int generation = 5 * session + k;
      const double seconds = 60.0 * k;
      step += 10;
      folder.append_train({seconds, step, generation, 100 * step, 2 * step, 3.0, 1.0, 0.02});
      SelfplayRow s;
      s.seconds = seconds, s.generation = generation, s.positions = 100 * step;
      s.positions_per_second = 50.0 + generation;
      folder.append_selfplay(s);
      GateRow g;
      g.generation = generation, g.step = step, g.opponent_generation = generation - 1;
      g.games = 8, g.wins = 5, g.draws = 0, g.losses = 3;
      g.elo = 40, g.elo_low = -60, g.elo_high = 140, g.llr = 0.3, g.verdict = "cap";
      g.promoted = true, g.seconds = seconds, g.rating = rating += 40;
      g.anchor = "random", g.anchor_games = 4, g.anchor_score = 0.75;
      g.anchor_elo = 10.0 * generation, g.anchor_elo_low = -100, g.anchor_elo_high = 300;
      folder.append_gate(g, 100 * step, 2 * step);
    }
  std::ofstream(RunPaths{dir}.config()) << "run:\n  game: mg\n";
  return dir;
}

// The x coordinates of every curve of the chart titled `title`.
std::vector<std::vector<double>> curves(const std::string& html, const std::string& title) {
  const auto start = html.find(">" + title + "<");
  EXPECT_NE(start, std::string::npos) << title;
  const auto end = html.find("</figure>", start);
  const std::string figure = html.substr(start, end - start);
  std::vector<std::vector<double>> out;
  const std::regex polyline("points='([^']*)'");
  for (auto it = std::sregex_iterator(figure.begin(), figure.end(), polyline);
       it != std::sregex_iterator(); ++it) {
    std::istringstream points((*it)[1].str());
    std::vector<double> xs;
    std::string point;
    while (points >> point) xs.push_back(std::stod(point.substr(0, point.find(','))));
    out.push_back(xs);
  }
  return out;
}

// The rating and speed charts once used "minutes of each session", so a resumed run zigzagged
// back to the left; they are by generation now, one point per generation.
TEST(Report, ARunResumedOnceIsDrawnLeftToRight) {
  const auto dir = make_resumed_run();
  const std::string out = (dir / "report.html").string();
  write_report(dir.string(), out);
  const std::string html = test_util::read_file(out);
  for (const std::string title : {"Elo by generation (three references: see each line)", "Self-play speed"}) {
    const auto lines = curves(html, title);
    EXPECT_FALSE(lines.empty()) << title;
    for (const auto& xs : lines) {
      EXPECT_EQ(xs.size(), 10u) << title;
      for (std::size_t i = 1; i < xs.size(); ++i) EXPECT_GT(xs[i], xs[i - 1]) << title;
    }
  }
  EXPECT_NE(html.find(">generation</text>"), std::string::npos);
}

// A run folder's name is shown as text: a name that is HTML never becomes markup (before: a run
// unpacked from someone's archive as "<img src=x onerror=...>" ran its script in the report).
TEST(Report, TheRunsNameIsTextNotMarkup) {
  const auto source = make_resumed_run();
  const auto dir = std::filesystem::path(::testing::TempDir()) / "<img src=x onerror=alert(1)>";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(source, dir, std::filesystem::copy_options::recursive);
  const std::string out = (source.parent_path() / "report_markup.html").string();
  write_report(dir.string(), out);
  const std::string html = test_util::read_file(out);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("<h1>Run &lt;img src=x onerror=alert(1)&gt;</h1>"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
}

// --recover's last resort for gates whose networks are all lost: their rows move beside the table,
// kept whole, and the table goes on from the generation before them.
TEST(RunFolderTables, GatesSetAsideAreKeptBesideTheTable) {
  const auto dir = make_resumed_run();
  const std::string arena = test_util::read_file(RunPaths{dir}.arena());
  RunFolder folder(dir);
  folder.open_tables(false, "");
  EXPECT_EQ(folder.set_aside_gates_after(10), "");
  const std::string line = folder.set_aside_gates_after(7);
  EXPECT_NE(line.find("moved the 3 gate row(s) after generation 7 to"), std::string::npos) << line;
  ASSERT_EQ(folder.gates().size(), 7u);
  EXPECT_EQ(folder.gates().back().generation, 7);
  const std::string kept = test_util::read_file(RunPaths{dir}.arena().string() + ".damaged");
  ASSERT_LT(kept.size(), arena.size());
  EXPECT_EQ(test_util::read_file(RunPaths{dir}.arena()), arena.substr(0, arena.size() - kept.size()));
  EXPECT_EQ(arena.substr(arena.size() - kept.size()), kept);
}

// Losses at the ends of the double range (a damaged table) once made every coordinate NaN; the
// chart now spans them, and a point that is not finite is left out.
TEST(Report, ExtremeLossesStillDrawAChart) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "report_test_extreme";
  std::filesystem::remove_all(dir);
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    folder.append_train({1.0, 1, 0, 100, 2, 1e308, 0.0, 0.02});
    folder.append_train({2.0, 2, 0, 200, 4, 1e-300, 1e308, 0.02});
    // A loss below 0 is no loss (cross-entropy and squared error are not): a damaged row.
    folder.append_train({2.5, 2, 0, 250, 5, -1e308, 1.0, 0.02});
    folder.append_train({3.0, 3, 0, 300, 6, 2.0, std::nan(""), 0.02});
  }
  std::ofstream(RunPaths{dir}.config()) << "run:\n  game: mg\n";
  const std::string out = (dir / "report.html").string();
  write_report(dir.string(), out);
  const std::string html = test_util::read_file(out);
  const auto lines = curves(html, "Training loss");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), 3u);  // policy: three finite points
  EXPECT_EQ(lines[1].size(), 2u);  // value: the NaN left out
  for (const auto& xs : lines)
    for (const double x : xs) EXPECT_TRUE(std::isfinite(x));
  const auto start = html.find(">Training loss<");
  const std::string figure = html.substr(start, html.find("</figure>", start) - start);
  EXPECT_EQ(figure.find("nan"), std::string::npos);
  // Its ticks are finite and say their size: the top one read "inf", and 2.5e307 was printed as
  // a 31-digit number (cut from %.0f's 308 digits).
  EXPECT_EQ(figure.find("inf"), std::string::npos) << figure;
  EXPECT_NE(figure.find(">1e+308<"), std::string::npos) << figure;
  EXPECT_NE(figure.find(">5e+307<"), std::string::npos) << figure;
}

// Past 300 points a chart's point is the mean of consecutive rows, and its legend says so: 301
// gates alternating +100 and -100 Elo drew a flat line at 0 with nothing to tell it from a run
// of even gates. A chart of fewer rows says nothing of means.
TEST(Report, AChartOfMeansSaysSo) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "report_test_means";
  std::filesystem::remove_all(dir);
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    for (int generation = 1; generation <= 301; ++generation) {
      GateRow g;
      g.generation = generation, g.step = 10 * generation, g.opponent_generation = generation - 1;
      g.games = 8, g.wins = 4, g.draws = 0, g.losses = 4;
      g.elo = generation % 2 == 0 ? 100 : -100, g.elo_low = -300, g.elo_high = 300, g.llr = 0;
      g.verdict = "cap", g.promoted = false, g.seconds = generation, g.rating = 0;
      folder.append_gate(g, 100 * generation, 2 * generation);
    }
  }
  std::ofstream(RunPaths{dir}.config()) << "run:\n  game: mg\n";
  const std::string out = (dir / "report.html").string();
  write_report(dir.string(), out);
  const std::string html = test_util::read_file(out);
  EXPECT_NE(html.find("each candidate against the best network (gate Elo) (each point the mean of "
                      "about 2 consecutive gates)"),
            std::string::npos);
  const auto few = make_resumed_run();
  write_report(few.string(), (few / "report.html").string());
  EXPECT_EQ(test_util::read_file((few / "report.html").string()).find("each point the mean"),
            std::string::npos);
}

}  // namespace
}  // namespace oppidum::trainer
