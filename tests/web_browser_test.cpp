// The page of `oppidum serve` in a real browser: starts the server on two tiny runs (Murus
// Gallicus and DVONN) on a free loopback port and runs tests/web/browser_test.mjs, which drives
// the system's headless Chromium with playwright-core: the page's games taken from /api/games, the
// dashboard's numbers (each from the run folder's one source) and curve points, with round ticks,
// axis labels and legends off the curves (and a new training step appended to metrics.csv showing
// up live), the ratings tab, a game replayed to its end with a network's view, two networks
// compared, its moves as text and download, a flipped board and the position opened in Analyse
// and Play, an arena game, a full game of each game against `random` by clicks on the boards drawn
// from the server's layouts and views (the second side's board turned, DVONN's coordinates over
// the pieces), the play board refusing clicks while the server answers, the analysis, and errors
// shown for bad input. Screenshots go to OPPIDUM_SCREENSHOT_DIR.
//
// The test says which Node ran it (in its output, in the test's `node` property, and in a skip
// reason). Skipped, saying why, only when Node.js, Chromium or playwright-core is missing, or the
// Node is older than playwright-core needs; scripts/setup.sh installs all three (Debian 12's own
// Node 18 is enough) and fails when it cannot, so after it this test runs.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/process_util.h"
#include "tests/web_test_util.h"
#include "web/server.h"

namespace oppidum::web {
namespace {
namespace fs = std::filesystem;

const std::string kScript = OPPIDUM_BROWSER_SCRIPT;
const std::string kScreenshots = OPPIDUM_SCREENSHOT_DIR;

std::string chromium_path() {
  const char* env = std::getenv("OPPIDUM_CHROMIUM");
  return env && *env ? env : "/usr/bin/chromium";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The Node that `node` runs here, e.g. "node v18.20.4 (/usr/bin/node)"; "" when there is none.
std::string node_in_use() {
  const auto version = test_util::run_shell("node --version 2>/dev/null");
  if (version.status != 0 || version.out.empty()) return "";
  const auto path = test_util::run_shell("command -v node");
  return "node " + first_line(version.out) + " (" + first_line(path.out) + ")";
}

// The major version of "node vMAJOR...", or -1.
int node_major(const std::string& node) {
  const auto v = node.find(" v");
  return v == std::string::npos ? -1 : std::atoi(node.c_str() + v + 2);
}

// What is missing to run the browser, or "" when nothing is.
std::string missing_tools(const std::string& node) {
  if (node.empty())
    return "node is not installed (scripts/setup.sh installs Debian's nodejs)";
  if (!fs::exists(chromium_path()))
    return chromium_path() + " does not exist (scripts/setup.sh installs Debian's chromium); " +
           node;
  const fs::path module = fs::path(kScript).parent_path() / "node_modules" / "playwright-core";
  if (!fs::exists(module / "package.json"))
    return module.string() + " is missing (scripts/setup.sh installs it: npm ci --ignore-scripts)" +
           "; " + node;
  // The driver's own floor, e.g. ">=18": an older Node cannot load it.
  const auto driver = nlohmann::json::parse(test_util::read_file(module / "package.json"), nullptr,
                                            /*allow_exceptions=*/false);
  const std::string needs = driver.is_object() && driver.contains("engines") &&
                                    driver["engines"].contains("node")
                                ? driver["engines"]["node"].get<std::string>()
                                : "";
  if (needs.rfind(">=", 0) == 0 && node_major(node) < std::atoi(needs.c_str() + 2))
    return "playwright-core " + driver.value("version", std::string("?")) + " needs node " +
           needs + ", and this is " + node;
  return "";
}

TEST(WebBrowserTest, PagesWorkInHeadlessChromium) {
  const std::string node = node_in_use();
  const std::string missing = missing_tools(node);
  if (!missing.empty()) GTEST_SKIP() << "no browser to test the page in: " << missing;
  std::cout << "the browser test runs under " << node << "\n";
  RecordProperty("node", node);

  fs::remove_all(kScreenshots);  // no stale screenshots of an earlier run's failures
  const fs::path root = test_util::process_temp_dir("web_browser_test");
  const test_util::TinyRun mg = test_util::make_tiny_run(root / "tiny-mg", "mg", 12);
  test_util::make_tiny_run(root / "tiny-dvonn", "dvonn", 4);
  // An arena record file (`oppidum arena --record`) with the tiny run's first three games.
  const fs::path arena_file = root / "arena-games.txt";
  {
    std::ofstream arena(arena_file);
    for (std::size_t g = 0; g < 3; ++g) {
      arena << "alphabeta:depth=2 random " << (mg.records[g].result > 0 ? "1-0" : "0-1");
      auto state = game_by_name("mg").initial_state();
      for (const auto& m : mg.records[g].moves) {
        arena << ' ' << state->action_to_string(m.action);
        state->apply(m.action);
      }
      arena << '\n';
    }
  }
  ServerOptions options;
  options.runs = {mg.dir.string(), (root / "tiny-dvonn").string()};
  options.arena_files = {arena_file.string()};
  options.port = 0;
  options.limits.max_searches = 4;
  WebServer server(options);
  const int port = server.start();

  std::int64_t mg_positions = 0;
  for (const auto& r : mg.records) mg_positions += static_cast<std::int64_t>(r.moves.size());
  const nlohmann::json expect = {{"mg_run", "tiny-mg"},
                                 {"mg_dir", mg.dir.string()},
                                 {"dvonn_run", "tiny-dvonn"},
                                 {"train_rows", mg.train_rows},
                                 {"gates", mg.gates},
                                 {"mg_games", mg.games},
                                 {"mg_positions", mg_positions},
                                 {"mg_speed", "130.0"},       // generation 3's self-play row
                                 {"mg_minutes", "12.5 min"},  // the one session's 750 s
                                 {"arena_file", "arena-games.txt"},
                                 {"arena_games", 3}};
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  // A generous bound: the script ends in well under a minute here.
  const auto result = test_util::run_shell(
      "OPPIDUM_CHROMIUM='" + chromium_path() + "' timeout 300 node '" + kScript + "' '" + url +
      "' '" + kScreenshots + "' '" + expect.dump() + "' 2>&1");
  std::cout << result.out;
  EXPECT_EQ(result.status, 0) << "browser checks failed under " << node
                              << " (screenshots of failures in " << kScreenshots << "):\n"
                              << result.out;
  for (const char* shot :
       {"runs", "ratings", "games", "game", "play", "play-mg", "play-busy", "analyse", "error"})
    EXPECT_TRUE(fs::exists(fs::path(kScreenshots) / (std::string(shot) + ".png"))) << shot;
  server.stop();
  fs::remove_all(root);
}

}  // namespace
}  // namespace oppidum::web
