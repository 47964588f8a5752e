// The page of `oppidum serve` in a real browser: starts the server on two tiny runs (Murus
// Gallicus and DVONN) on a free loopback port and runs tests/web/browser_test.mjs, which drives
// the system's headless Chromium with playwright-core: the dashboard's curve points (and a new
// training step appended to metrics.csv showing up live), a game
// replayed to its end with a network's view, an arena game, a full game of each game against `random` by clicks,
// the analysis, and errors shown for bad input. Screenshots go to OPPIDUM_SCREENSHOT_DIR.
//
// Skipped, saying why, only when Node.js, Chromium or playwright-core is missing; scripts/setup.sh
// installs all three, so CI runs it.
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

// What is missing to run the browser, or "" when nothing is.
std::string missing_tools() {
  if (test_util::run_shell("node --version > /dev/null 2>&1").status != 0)
    return "node is not installed (scripts/setup.sh installs it)";
  if (!fs::exists(chromium_path()))
    return chromium_path() + " does not exist (scripts/setup.sh installs Debian's chromium)";
  const fs::path module = fs::path(kScript).parent_path() / "node_modules" / "playwright-core";
  if (!fs::exists(module / "package.json"))
    return module.string() + " is missing (scripts/setup.sh installs it: npm ci --ignore-scripts)";
  return "";
}

TEST(WebBrowserTest, PagesWorkInHeadlessChromium) {
  const std::string missing = missing_tools();
  if (!missing.empty()) GTEST_SKIP() << "no browser to test the page in: " << missing;

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

  const nlohmann::json expect = {{"mg_run", "tiny-mg"},
                                 {"mg_dir", mg.dir.string()},
                                 {"dvonn_run", "tiny-dvonn"},
                                 {"train_rows", mg.train_rows},
                                 {"gates", mg.gates},
                                 {"mg_games", mg.games},
                                 {"arena_file", "arena-games.txt"},
                                 {"arena_games", 3}};
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  // A generous bound: the script ends in well under a minute here.
  const auto result = test_util::run_shell(
      "OPPIDUM_CHROMIUM='" + chromium_path() + "' timeout 300 node '" + kScript + "' '" + url +
      "' '" + kScreenshots + "' '" + expect.dump() + "' 2>&1");
  std::cout << result.out;
  EXPECT_EQ(result.status, 0) << "browser checks failed (screenshots of failures in "
                              << kScreenshots << "):\n" << result.out;
  for (const char* shot : {"runs", "games", "game", "play", "play-mg", "analyse", "error"})
    EXPECT_TRUE(fs::exists(fs::path(kScreenshots) / (std::string(shot) + ".png"))) << shot;
  server.stop();
  fs::remove_all(root);
}

}  // namespace
}  // namespace oppidum::web
