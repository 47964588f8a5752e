// The JSON API of `oppidum serve` (web/server.h), through an HTTP client against the server on a
// free loopback port: the games and their boards, the dashboard, game listings and replays of a
// tiny run, positions (with their board views and moves' cells), moves, analyses and network
// evaluations; bad input refused with a message; the token and Host checks;
// requests that try to leave the run folders; a run folder left exactly as it was; and the server
// under abuse (docs/WEB.md, "Security"): bodies too large however they are sent, malformed
// framing, slow and too many clients, searches past their time, clients that leave, and stop()
// during a search.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/process_util.h"
#include "tests/raw_http.h"
#include "tests/web_test_util.h"
#include "trainer/config.h"
#include "web/arena_reader.h"
#include "web/game_service.h"
#include "web/guarded_server.h"
#include "web/run_reader.h"
#include "web/server.h"

namespace oppidum::web {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// Every file under `dir` with its size and modification time.
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> snapshot(const fs::path& dir) {
  std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    files[e.path().string()] = {e.is_regular_file() ? e.file_size() : 0, e.last_write_time()};
  return files;
}

class WebApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path root = test_util::process_temp_dir("web_api_test");
    run_ = new test_util::TinyRun(test_util::make_tiny_run(root / "tiny", "mg", 10));
    // An arena record file (arena/game_record.h): two games of the tiny run and a broken line.
    {
      std::ofstream arena(run_->dir / "arena-games.txt");
      for (std::size_t g = 0; g < 2; ++g) {
        const auto& r = run_->records[g];
        arena << "random alphabeta:depth=1 " << (r.result > 0 ? "1-0" : "0-1");
        auto state = game_by_name("mg").initial_state();
        for (const auto& m : r.moves) {
          arena << ' ' << state->action_to_string(m.action);
          state->apply(m.action);
        }
        // The second as if its last move had been a forfeit's (the reason ends the line).
        if (g == 1) arena << " # forfeit: timeout: no move within 10 ms after a7-a5 (ply 9)";
        arena << '\n';
      }
      arena << "random random 1-0 a1-a1\n";
    }
    before_ = new auto(snapshot(run_->dir));
    ServerOptions options;
    options.runs = {run_->dir.string()};
    options.arena_files = {(run_->dir / "arena-games.txt").string()};
    options.port = 0;
    options.limits.search_ms = 5000;
    options.limits.max_simulations = 2000;
    options.limits.max_alphabeta_depth = 3;
    server_ = new WebServer(options);
    port_ = server_->start();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(run_->dir.parent_path());
    delete before_;
    delete run_;
  }

  static httplib::Client client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  static json get(const std::string& path, int expected_status) {
    auto res = client().Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, expected_status) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(res->body);
  }
  static json post(const std::string& path, const json& body, int expected_status) {
    auto res = client().Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, expected_status) << path << " " << body.dump() << ": " << res->body;
    return json::parse(res->body);
  }
  // A Murus Gallicus move ("c1-c3", "d5xe6") is clicked on its two squares.
  static void expect_cells_of(const json& move, const json& cells) {
    const std::string text = move.get<std::string>();
    ASSERT_EQ(text.size(), 5u) << text;
    EXPECT_EQ(cells, json({text.substr(0, 2), text.substr(3, 2)})) << text;
  }
  // A replayed Murus Gallicus game: a board view for each position, each move with its cells and
  // the side that played it.
  static void expect_boards_and_cells(const json& g) {
    ASSERT_EQ(g["boards"].size(), g["positions"].size());
    for (std::size_t i = 0; i < g["boards"].size(); ++i) {
      const auto state = game_by_name("mg").parse_state(g["positions"][i].get<std::string>());
      EXPECT_EQ(g["boards"][i].size(), 56u);
      int stones = 0;
      for (const auto& cell : g["boards"][i])
        if (cell.contains("pieces")) stones += static_cast<int>(cell["pieces"].size());
      EXPECT_EQ(stones, stones_in(*state)) << g["positions"][i];
    }
    for (std::size_t i = 0; i < g["moves"].size(); ++i) {
      expect_cells_of(g["moves"][i]["move"], g["moves"][i]["cells"]);
      EXPECT_EQ(g["moves"][i]["side"], i % 2) << "Murus Gallicus sides alternate";
    }
  }
  // The stones on a Murus Gallicus board, from its notation (T/t towers, W/w walls).
  static int stones_in(const GameState& state) {
    const std::string text = state.to_string();
    int stones = 0;
    for (const char c : text.substr(0, text.find(' ')))
      stones += c == 'T' || c == 't' ? 2 : c == 'W' || c == 'w' ? 1 : 0;
    return stones;
  }
  // A 4xx answer whose message holds `text`.
  static void expect_error(const json& answer, const std::string& text) {
    ASSERT_TRUE(answer.contains("error")) << answer.dump();
    EXPECT_NE(answer["error"].get<std::string>().find(text), std::string::npos)
        << answer["error"] << " should mention " << text;
  }

  static test_util::TinyRun* run_;
  static std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>>* before_;
  static WebServer* server_;
  static int port_;
};
test_util::TinyRun* WebApiTest::run_ = nullptr;
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>>* WebApiTest::before_ = nullptr;
WebServer* WebApiTest::server_ = nullptr;
int WebApiTest::port_ = 0;

TEST_F(WebApiTest, ServesThePageFromTheBinary) {
  auto res = client().Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_NE(res->body.find("app.js"), std::string::npos);
  res = client().Get("/app.js");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("javascript"), std::string::npos);
  EXPECT_GT(res->body.size(), 1000u);
  // No other site frames the page; no answer sends the address (?token=) elsewhere; the JSON
  // answers, which echo text from files and requests, are never taken for a page.
  res = client().Get("/");
  EXPECT_NE(res->get_header_value("Content-Security-Policy").find("frame-ancestors 'none'"),
            std::string::npos);
  EXPECT_EQ(res->get_header_value("X-Frame-Options"), "DENY");
  EXPECT_EQ(res->get_header_value("Referrer-Policy"), "no-referrer");
  for (const char* path : {"/api/info", "/api/no-such-call?<script>"}) {
    res = client().Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(res->get_header_value("Content-Security-Policy"),
              "default-src 'none'; frame-ancestors 'none'") << path;
    EXPECT_EQ(res->get_header_value("Referrer-Policy"), "no-referrer") << path;
  }
}

TEST_F(WebApiTest, InfoListsTheRunsAndLimits) {
  const json info = get("/api/info", 200);
  ASSERT_EQ(info["runs"].size(), 1u);
  EXPECT_EQ(info["runs"][0]["name"], "tiny");
  EXPECT_EQ(info["runs"][0]["game"], "mg");
  EXPECT_EQ(info["limits"]["max_simulations"], 2000);
}

// The page lists no game of its own: every registered game, its sides and its board come from here.
TEST_F(WebApiTest, GamesListsEveryRegisteredGameWithItsBoard) {
  const json list = get("/api/games", 200);
  ASSERT_EQ(list.size(), all_games().size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Game& game = *all_games()[i];
    const json& g = list[i];
    EXPECT_EQ(g["name"], game.name());
    EXPECT_EQ(g["display_name"], game.display_name());
    EXPECT_EQ(g["sides"], json({game.side_name(0), game.side_name(1)}));
    EXPECT_EQ(g["has_score"], game.has_score());
    EXPECT_EQ(g["opening_plies"], game.default_opening_plies());
    const BoardLayout& layout = game.board_layout();
    ASSERT_EQ(g["board"]["cells"].size(), layout.cells.size()) << game.name();
    for (std::size_t c = 0; c < layout.cells.size(); ++c) {
      EXPECT_EQ(g["board"]["cells"][c]["name"], layout.cells[c].name);
      EXPECT_DOUBLE_EQ(g["board"]["cells"][c]["x"].get<double>(), layout.cells[c].x);
      EXPECT_DOUBLE_EQ(g["board"]["cells"][c]["y"].get<double>(), layout.cells[c].y);
    }
    EXPECT_EQ(g["board"]["labels"].size(), layout.labels.size());
  }
  // The two games this server was built with, as the page draws them.
  const auto by_name = [&](const std::string& name) {
    for (const json& g : list)
      if (g["name"] == name) return g;
    ADD_FAILURE() << "/api/games lacks " << name;
    return json();
  };
  const json mg = by_name("mg"), dvonn = by_name("dvonn");
  EXPECT_EQ(mg["display_name"], "Murus Gallicus");
  EXPECT_EQ(mg["sides"], json({"Light", "Dark"}));
  EXPECT_EQ(mg["has_score"], false);
  EXPECT_EQ(mg["board"]["shape"], "square");
  EXPECT_EQ(mg["board"]["cells"].size(), 56u);
  EXPECT_EQ(mg["board"]["cells"][0], json({{"name", "a1"}, {"x", 0.0}, {"y", 6.0}}));
  EXPECT_EQ(dvonn["sides"], json({"White", "Black"}));
  EXPECT_EQ(dvonn["has_score"], true);
  EXPECT_EQ(dvonn["board"]["shape"], "hexagon");
  EXPECT_EQ(dvonn["board"]["cells"].size(), 49u);
  EXPECT_EQ(dvonn["board"]["cells"][0]["name"], "A1");
}

TEST_F(WebApiTest, SummaryHoldsTheCurvesGatesAndProgress) {
  const json s = get("/api/runs/tiny/summary", 200);
  EXPECT_EQ(s["game"], "mg");
  EXPECT_EQ(s["losses"].size(), static_cast<std::size_t>(run_->train_rows));
  EXPECT_DOUBLE_EQ(s["losses"][0][0].get<double>(), 1.0);   // step
  EXPECT_NEAR(s["losses"][0][1].get<double>(), 2.95, 1e-9);  // policy loss
  EXPECT_EQ(s["steps_per_loss_point"], 1) << "30 steps: one point each";
  EXPECT_EQ(s["gates"].size(), static_cast<std::size_t>(run_->gates));
  EXPECT_EQ(s["generation"], 3);
  EXPECT_EQ(s["best"], 3);  // generation 2 was not promoted, 3 was
  EXPECT_EQ(s["stored"]["games"], run_->games);
  EXPECT_EQ(s["progress"]["step"], 30);
  EXPECT_FALSE(s["speed"].empty());
  EXPECT_FALSE(s["version"].get<std::string>().empty());
  EXPECT_EQ(s["config"]["steps_per_generation"], 10);
}

// The numbers of the dashboard's cards and speed curve, for a finished run and for the same run
// resumed and still being written: each comes from the one place that holds it (games and
// positions from the store, speed from the "selfplay" rows, time from every session's clock),
// never from the last row's copy or from differences of rows.
TEST(WebSummaryTest, NumbersComeFromTheStoreAndTheSelfplayRows) {
  const fs::path root = test_util::process_temp_dir("web_summary_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 10);
  const auto expect_store = [&](const json& s) {
    std::int64_t positions = 0;
    for (const auto& r : run.records) positions += static_cast<std::int64_t>(r.moves.size());
    EXPECT_EQ(s["stored"]["games"], run.games);
    EXPECT_EQ(s["stored"]["positions"], positions);
    ASSERT_EQ(s["speed"].size(), run.selfplay.size());
    for (std::size_t i = 0; i < run.selfplay.size(); ++i) {
      EXPECT_EQ(s["speed"][i][0], run.selfplay[i].generation) << i;
      EXPECT_DOUBLE_EQ(s["speed"][i][1].get<double>(), run.selfplay[i].positions_per_second) << i;
    }
    EXPECT_EQ(s["speed_now"]["generation"], run.selfplay.back().generation);
    EXPECT_DOUBLE_EQ(s["speed_now"]["positions_per_second"].get<double>(),
                     run.selfplay.back().positions_per_second);
    EXPECT_EQ(s["progress"]["step"], run.train_rows);
  };

  RunReader reader("run", run.dir);
  // Finished: one session of 750 s whose last rows say 12,000 positions and 150 games, while the
  // store holds the games actually played.
  json s = reader.summary();
  expect_store(s);
  EXPECT_EQ(s["time"]["sessions"], 1);
  EXPECT_DOUBLE_EQ(s["time"]["seconds"].get<double>(), 750.0);
  EXPECT_EQ(s["progress"].count("positions"), 0u) << "a row's copy of the store's count";

  // Resumed: a second session (its clock from 0) with more games, read by the same reader as the
  // files grow, as the page polls a live run.
  test_util::resume_tiny_run(run, 6);
  s = reader.summary();
  expect_store(s);
  EXPECT_EQ(s["time"]["sessions"], 2);
  EXPECT_DOUBLE_EQ(s["time"]["seconds"].get<double>(), 750.0 + 50.0);
  EXPECT_DOUBLE_EQ(s["time"]["session_seconds"].get<double>(), 50.0);
  EXPECT_EQ(s["generation"], 4);
  EXPECT_EQ(s["best"], 3);
  EXPECT_TRUE(s["cluster"].is_null()) << "no self-play nodes";

  // Self-play nodes: their rate is the newest round of node rows (a node gone is in no later one).
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_node({60, "a", 100, 2.0});
    folder.append_node({60, "b", 80, 1.0});
    folder.append_stream({60, 17000, 300, 2, 0, 0});
    folder.append_node({90, "a", 160, 2.5});
    folder.append_stream({90, 18000, 400, 1, 0, 0});
  }
  s = reader.summary();
  ASSERT_TRUE(s["cluster"].is_object());
  EXPECT_EQ(s["cluster"]["nodes"], 1);
  EXPECT_DOUBLE_EQ(s["cluster"]["games_per_second"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(s["time"]["seconds"].get<double>(), 750.0 + 90.0);
  // A third session without nodes: theirs is no current rate.
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_train({2, 41, 4, 400LL * 41, 5LL * 41, 1.5, 0.6, 0.02});
  }
  s = reader.summary();
  EXPECT_TRUE(s["cluster"].is_null()) << s["cluster"].dump();
  EXPECT_EQ(s["time"]["sessions"], 3);
  EXPECT_DOUBLE_EQ(s["time"]["seconds"].get<double>(), 750.0 + 90.0 + 2.0);
  // Sessions open at their start rows: one killed before it wrote anything else still counts,
  // and one whose clock passed the last row of the session before is not merged into it (both
  // were lost when a session was only seen as a clock going back); a clean stop's row times it.
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_session({true, 0, 41, 4, 17000, 400});
    folder.append_session({true, 0, 41, 4, 17000, 400});
    folder.append_train({5, 42, 4, 17100, 410, 1.5, 0.6, 0.02});
    folder.append_session({false, 7.5, 42, 4, 17100, 410});
  }
  s = reader.summary();
  EXPECT_EQ(s["time"]["sessions"], 5);
  EXPECT_DOUBLE_EQ(s["time"]["seconds"].get<double>(), 750.0 + 90.0 + 2.0 + 7.5);
  EXPECT_DOUBLE_EQ(s["time"]["session_seconds"].get<double>(), 7.5);
  // Once sessions have start rows, a row with an earlier clock is one written again at a resume
  // (a gate's rebuilt row), not a session: it once made 3 sessions of 2. The trainer's step is a
  // stop row's too (the steps after the last train row): the card once lagged it.
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_session({true, 0, 42, 4, 17100, 410});
    folder.append_train({3, 48, 4, 17200, 420, 1.5, 0.6, 0.02});
    folder.append_session({false, 4, 50, 4, 17300, 430});
    trainer::SelfplayRow rebuilt;
    rebuilt.seconds = 1.0;
    rebuilt.generation = 4;
    folder.append_selfplay(rebuilt);
  }
  s = reader.summary();
  EXPECT_EQ(s["time"]["sessions"], 6);
  EXPECT_DOUBLE_EQ(s["time"]["seconds"].get<double>(), 750.0 + 90.0 + 2.0 + 7.5 + 4.0);
  EXPECT_EQ(s["progress"]["step"], 50);
  // Nodes that stop: a round of rows without them (its stream row alone) is a cluster of none, and
  // a stopped trainer has no cluster rate, not its last round's.
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_session({true, 0, 50, 4, 17300, 430});
    folder.append_node({30, "a", 200, 3.5});
    folder.append_stream({30, 17400, 440, 1, 0, 0});
  }
  s = reader.summary();
  EXPECT_EQ(s["cluster"]["nodes"], 1) << s["cluster"].dump();
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_stream({60, 17400, 440, 0, 0, 0});
  }
  s = reader.summary();
  EXPECT_EQ(s["cluster"]["nodes"], 0) << s["cluster"].dump();
  EXPECT_DOUBLE_EQ(s["cluster"]["games_per_second"].get<double>(), 0.0);
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    folder.append_node({90, "a", 300, 3.0});
    folder.append_stream({90, 17500, 450, 1, 0, 0});
    folder.append_session({false, 91, 50, 4, 17500, 450});
  }
  s = reader.summary();
  EXPECT_TRUE(s["cluster"].is_null()) << s["cluster"].dump();
  fs::remove_all(root);
}

// A game's policy target: visits with a PUCT root, and with a Gumbel root its improved policy,
// scaled to 65536, which the page once showed as "65536 visits"; every top move gets its share.
TEST(WebSummaryTest, AGameShowsItsPolicyTargetAsWhatItIs) {
  const fs::path root = test_util::process_temp_dir("web_policy_target_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  const auto check_shares = [](const json& move) {
    double previous = 1.0;
    for (const json& t : move["top"]) {
      const double share = t["share"].get<double>();
      EXPECT_GT(share, 0.0);
      EXPECT_LE(share, previous) << "largest first";
      previous = share;
    }
  };
  {
    RunReader reader("run", run.dir);
    const json g = reader.game_record(0, 0);
    EXPECT_EQ(g["policy_target"], "visits");
    for (const json& m : g["moves"]) {
      EXPECT_TRUE(m["visits"].is_number()) << m.dump();
      for (const json& t : m["top"]) EXPECT_TRUE(t["visits"].is_number()) << t.dump();
      check_shares(m);
    }
    std::int64_t total = 0;
    for (const auto& v : run.records[0].moves[0].visits) total += v.visits;
    EXPECT_EQ(g["moves"][0]["visits"].get<std::int64_t>(), total);
  }
  std::ofstream(trainer::RunPaths{run.dir}.config(), std::ios::app) << "selfplay:\n  root: gumbel\n";
  RunReader reader("run", run.dir);
  const json g = reader.game_record(0, 0);
  EXPECT_EQ(g["policy_target"], "improved policy (Gumbel root)");
  for (const json& m : g["moves"]) {
    EXPECT_TRUE(m["visits"].is_null()) << m.dump();
    for (const json& t : m["top"]) EXPECT_EQ(t.count("visits"), 0u) << t.dump();
    check_shares(m);
  }
  fs::remove_all(root);
}

// A long run's loss curve is averaged in groups of steps, and the summary says how many (the page
// names it in the legend); the speed curve is averaged the same way.
TEST(WebSummaryTest, ALongLossCurveSaysHowManyStepsEachPointAverages) {
  const fs::path root = test_util::process_temp_dir("web_loss_points_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    for (int step = 31; step <= 1030; ++step)
      folder.append_train({25.0 * step, step, step / 10, 400LL * step, 5LL * step, 1.0, 0.5, 0.02});
    for (int generation = 4; generation <= 1003; ++generation) {  // the speed curve is bounded too
      trainer::SelfplayRow sp;
      sp.generation = generation, sp.positions_per_second = 2.0 * generation;
      folder.append_selfplay(sp);
    }
  }
  RunReader reader("run", run.dir);
  const json s = reader.summary();
  EXPECT_TRUE(s["speed_averaged"].get<bool>());  // the page's legend says so
  ASSERT_EQ(s["speed"].size(), 335u);  // 1,003 rows, 3 a point
  EXPECT_DOUBLE_EQ(s["speed"][333][0].get<double>(), 1001);  // generations 1000 to 1002
  EXPECT_DOUBLE_EQ(s["speed"][333][1].get<double>(), 2002);
  EXPECT_DOUBLE_EQ(s["speed"][334][0].get<double>(), 1003);  // the last row alone
  EXPECT_EQ(s["speed_now"]["generation"], 1003);
  EXPECT_EQ(s["steps_per_loss_point"], 3);  // 1,030 steps in at most 400 points
  ASSERT_EQ(s["losses"].size(), 344u);
  EXPECT_DOUBLE_EQ(s["losses"][0][0].get<double>(), 2.0);  // steps 1, 2 and 3
  EXPECT_NEAR(s["losses"][0][1].get<double>(), 2.9, 1e-9);
  fs::remove_all(root);
}

// A short run's curves hold a point per generation: nothing to say about averaging.
TEST(WebSummaryTest, AShortSpeedCurveIsNotAveraged) {
  const fs::path root = test_util::process_temp_dir("web_speed_points_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  RunReader reader("run", run.dir);
  const json s = reader.summary();
  EXPECT_EQ(s["speed"].size(), run.selfplay.size());
  EXPECT_FALSE(s["speed_averaged"].get<bool>());
  fs::remove_all(root);
}

// Checkpoints are listed newest generation first by number: gen-10000 (five digits, past %04d)
// comes before gen-9999, which a listing by text would put first.
TEST(WebRunReaderTest, CheckpointsAreListedNewestFirstPastGeneration9999) {
  const fs::path root = test_util::process_temp_dir("web_checkpoint_order_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  const fs::path checkpoints = run.dir / "checkpoints";
  fs::copy_file(checkpoints / "gen-0003.ckpt", checkpoints / "gen-9999.ckpt");
  fs::copy_file(checkpoints / "gen-0003.ckpt", checkpoints / "gen-10000.ckpt");
  fs::create_directory(checkpoints / "gen-0004.ckpt");  // not a file: not a checkpoint
  RunReader reader("run", run.dir);
  EXPECT_EQ(reader.checkpoints(),
            (std::vector<std::string>{"best", "gen-10000", "gen-9999", "gen-0003", "gen-0002",
                                      "gen-0001", "gen-0000"}));
  fs::remove_all(root);
}

// A train row holds the mean losses of the steps since the row before (loss_steps of them): a
// curve point weighs each row by its steps, and the summary counts steps, not rows.
TEST(WebSummaryTest, RowsOfSeveralStepsWeighByTheirSteps) {
  const fs::path root = test_util::process_temp_dir("web_loss_steps_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    for (int row = 1; row <= 1000; ++row)  // rows of 1 and 9 steps, in turn
      folder.append_train({1.0 * row, 5 * row, 0, 100LL * row, 2LL * row,
                           row % 2 ? 1.0 : 2.0, 0.5, 0.02, row % 2 ? 1 : 9});
  }
  RunReader reader("run", run.dir);
  const json s = reader.summary();
  const json& losses = s["losses"];
  ASSERT_FALSE(losses.empty());
  // Past the tiny run's own rows, the points' policy losses average (1 x 1.0 + 9 x 2.0) / 10 =
  // 1.9 by the steps (rows alike would make it 1.5).
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = losses.size() / 4; i < losses.size(); ++i, ++count)
    sum += losses[i][1].get<double>();
  EXPECT_NEAR(sum / static_cast<double>(count), 1.9, 0.02) << losses.dump();
  EXPECT_GE(s["steps_per_loss_point"].get<int>(), 10);
  fs::remove_all(root);
}

// A chunk may hold more games than 65,535 (games_per_chunk goes to 100,000): all are counted and
// listed (the index once stopped at 65,535 without a word).
TEST(WebSummaryTest, AChunkOfMoreThan65535GamesIsCountedWhole) {
  const fs::path root = test_util::process_temp_dir("web_big_chunk_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "ttt", 1);
  {
    selfplay::FolderReplayStore store(trainer::RunPaths{run.dir}.games().string(),
                                      selfplay::FolderReplayStore::Mode::kOwner);
    store.append(std::vector<selfplay::GameRecord>(70000, run.records[0]));
  }
  RunReader reader("run", run.dir);
  EXPECT_EQ(reader.indexed_games(), 70001);
  GameFilter all;
  all.per_page = 1;
  const json list = reader.list_games(all);
  EXPECT_EQ(list["total"], 70001);
  EXPECT_EQ(list["games"][0]["index"], 69999) << "newest first: the big chunk's last game";
  EXPECT_EQ(reader.game_record(list["games"][0]["chunk"].get<std::uint64_t>(), 69999)["moves"]
                .size(),
            run.records[0].moves.size());
  fs::remove_all(root);
}

// A run that has gated nothing yet shows no last gated generation (it once showed 0).
TEST(WebSummaryTest, NoGateYetIsNoGeneration) {
  const fs::path root = test_util::process_temp_dir("web_no_gate_test");
  const fs::path dir = root / "run";
  {
    trainer::RunFolder folder(dir);
    folder.open_tables(false, "");
    folder.append_session({true, 0, 0, 0, 0, 0});
  }
  std::ofstream(trainer::RunPaths{dir}.config()) << "run:\n  game: mg\n";
  RunReader reader("run", dir);
  const json s = reader.summary();
  EXPECT_TRUE(s["generation"].is_null()) << s.dump();
  EXPECT_EQ(s["time"]["sessions"], 1);
  fs::remove_all(root);
}

// The ratings tab: the run's gates, the arena file's games and the baselines' matches
// (docs/baselines/, compiled in) as Bradley-Terry ladders, one per game and group of players
// joined by games, with finite intervals.
TEST_F(WebApiTest, RatingsLadderTheGatesTheArenaGamesAndTheBaselines) {
  const json r = get("/api/ratings", 200);
  const auto ladder_of = [&](const std::string& game, const std::string& anchor) -> json {
    for (const json& l : r["ladders"])
      if (l["game"] == game && l["anchor"] == anchor) return l;
    ADD_FAILURE() << "no " << game << " ladder anchored on " << anchor << ": " << r.dump();
    return json::object();
  };
  const json run = ladder_of("mg", "tiny/gen-0000");
  EXPECT_EQ(run["matches"], 3);  // the three gates
  std::set<std::string> players;
  for (const json& p : run["players"]) {
    players.insert(p["player"].get<std::string>());
    // gen-1 met gen-0, then gen-2 and gen-3 (gen-2 was not promoted): 3 gates of 8 games.
    EXPECT_EQ(p["games"], p["player"] == "tiny/gen-0001" ? 24 : 8) << p.dump();
    if (p["player"] == "tiny/gen-0000") {
      EXPECT_TRUE(p["low"].is_null()) << "the anchor is a fixed point, not an estimate";
      EXPECT_EQ(p["elo"], 0.0);
      continue;
    }
    ASSERT_TRUE(p["low"].is_number() && p["high"].is_number()) << p.dump();
    EXPECT_LT(p["low"].get<double>(), p["elo"].get<double>()) << p.dump();
    EXPECT_GT(p["high"].get<double>(), p["elo"].get<double>()) << p.dump();
    EXPECT_LT(p["high"].get<double>(), 2000.0) << p.dump();
  }
  EXPECT_EQ(players, (std::set<std::string>{"tiny/gen-0000", "tiny/gen-0001", "tiny/gen-0002",
                                            "tiny/gen-0003"}));
  // gen-1 beat gen-0 6-2 and gen-3 beat gen-1 6-2: the ladder orders them so.
  EXPECT_EQ(run["players"][0]["player"], "tiny/gen-0003");
  // The arena file's players (random, alphabeta:depth=1) are baselines: one ladder with them,
  // random = 0 as in docs/BASELINES.md; DVONN's baselines make a ladder of their own.
  const json mg = ladder_of("mg", "random");
  EXPECT_EQ(mg["sources"], json::array({"arena-games.txt", "docs/baselines/classic-mg-results.txt",
                                        "docs/baselines/mg-results.txt"}));
  // The classical engine's matches (classic-GAME-results.txt) are there too.
  EXPECT_TRUE(std::any_of(mg["players"].begin(), mg["players"].end(), [](const json& p) {
    return p["player"].get<std::string>().rfind("classic:", 0) == 0;
  })) << mg.dump();
  EXPECT_GE(mg["players"].size(), 12u);
  for (const json& p : mg["players"]) {
    EXPECT_TRUE(std::isfinite(p["elo"].get<double>())) << p.dump();
    if (p["player"] != "random") {
      EXPECT_GT(p["high"].get<double>(), p["low"].get<double>()) << p.dump();
    }
  }
  EXPECT_EQ(ladder_of("dvonn", "random")["sources"],
            json::array({"docs/baselines/dvonn-results.txt"}));
  // DVONN's classical engine met none of those players: a ladder of its own, anchored on its
  // one opponent.
  EXPECT_EQ(ladder_of("dvonn", "alphabeta:depth=7")["sources"],
            json::array({"docs/baselines/classic-dvonn-results.txt"}));
}

// Separate groups of players make separate ladders, each with its own matches, sources and
// anchor (each group's players and matches are found once: every group looked at every match,
// and 60,000 separate pairs took 49 s); a stop asked for (the client left, the server stops)
// ends the fit with Cancelled.
TEST(WebRatingsTest, SeparateGroupsMakeSeparateLaddersAndAFitCanBeStopped) {
  SourceResults a{"mg", "a.txt", {}, {}}, b{"mg", "b.txt", {}, {"y0"}};
  for (int i = 0; i < 300; ++i)
    a.matches.push_back({"p" + std::to_string(i), "q" + std::to_string(i), 3, 1, 2});
  b.matches.push_back({"y0", "random", 2, 0, 2});
  b.matches.push_back({"y1", "y0", 1, 0, 3});
  const json r = rating_ladders({a, b});
  ASSERT_EQ(r["ladders"].size(), 301u);
  int pairs = 0;
  for (const json& l : r["ladders"]) {
    if (l["sources"] == json::array({"b.txt"})) {
      EXPECT_EQ(l["anchor"], "random") << "random first, then the source's baselines";
      EXPECT_EQ(l["matches"], 2);
      EXPECT_EQ(l["players"].size(), 3u);
      continue;
    }
    ++pairs;
    EXPECT_EQ(l["sources"], json::array({"a.txt"}));
    EXPECT_EQ(l["matches"], 1);
    ASSERT_EQ(l["players"].size(), 2u) << l.dump();
    const std::string p = l["players"][0]["player"], q = l["players"][1]["player"];
    EXPECT_EQ(p.substr(1), q.substr(1)) << "a pair's two players, nobody else's";
  }
  EXPECT_EQ(pairs, 300);
  int asked = 0;
  EXPECT_THROW(rating_ladders({a, b}, [&asked] { return ++asked > 10; }), Cancelled);
  EXPECT_GT(asked, 10);
}

// The anchor matches of promoted networks join the run's ladder to the anchor's spec, which then
// is the fixed point; a score of 3.5 in 4 games reads as 3 wins, 1 draw (the same likelihood).
TEST(WebRatingsTest, AnchorMatchesJoinTheRunToItsAnchor) {
  const fs::path root = test_util::process_temp_dir("web_ratings_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "alphabeta:depth=1");
    trainer::GateRow g;
    g.generation = 4, g.step = 40, g.opponent_generation = 3, g.promoted = true;
    g.games = 8, g.wins = 8, g.draws = 0, g.losses = 0;  // a perfect gate
    g.elo = 300, g.elo_low = 100, g.elo_high = 500, g.verdict = "H1", g.seconds = 800;
    g.anchor = "alphabeta:depth=1", g.anchor_games = 4, g.anchor_score = 0.875;
    folder.append_gate(g, 16000, 200);
  }
  RunReader reader("run", run.dir);
  const SourceResults results = reader.results();
  ASSERT_EQ(results.matches.size(), 5u);
  const arena::MatchLine& anchor = results.matches.back();
  EXPECT_EQ(anchor.a, "run/gen-0004");
  EXPECT_EQ(anchor.b, "alphabeta:depth=1");
  EXPECT_EQ(std::vector<int>({anchor.wins, anchor.draws, anchor.losses}),
            std::vector<int>({3, 1, 0}));
  EXPECT_EQ(results.baselines, std::vector<std::string>{"alphabeta:depth=1"});
  const json ladders = rating_ladders({results});
  ASSERT_EQ(ladders["ladders"].size(), 1u);
  const json& ladder = ladders["ladders"][0];
  EXPECT_EQ(ladder["anchor"], "alphabeta:depth=1");
  ASSERT_EQ(ladder["players"].size(), 6u);
  for (const json& p : ladder["players"]) {
    EXPECT_TRUE(std::isfinite(p["elo"].get<double>())) << p.dump();
    if (p["player"] != "alphabeta:depth=1") {
      EXPECT_GT(p["high"].get<double>() - p["low"].get<double>(), 1.0) << p.dump();
    }
  }
  EXPECT_EQ(ladder["players"][0]["player"], "run/gen-0004");

  // With the baselines' matches, the run is rated on their scale (random = 0), and the baselines
  // stay where their own matches put them.
  std::vector<SourceResults> baselines = baseline_results();
  ASSERT_FALSE(baselines.empty()) << "docs/baselines/ compiled in";
  const auto rating = [](const json& fitted, const std::string& player) {
    for (const json& l : fitted["ladders"])
      for (const json& p : l.value("players", json::array()))
        if (p["player"] == player && l["game"] == "mg") return p;
    return json();
  };
  const json alone = rating(rating_ladders(baselines), "alphabeta:depth=1");
  baselines.push_back(results);
  const json both = rating_ladders(baselines);
  ASSERT_TRUE(rating(both, "run/gen-0004").is_object()) << both.dump();
  ASSERT_TRUE(alone.is_object());
  EXPECT_NEAR(rating(both, "alphabeta:depth=1")["elo"].get<double>(), alone["elo"].get<double>(),
              30.0);

  // The server keeps the last ladders while their results are unchanged, and fits again as soon
  // as any count, player or source differs.
  RatingLadders kept;
  EXPECT_EQ(kept(baselines), both);
  EXPECT_EQ(kept(baselines), both);
  std::vector<SourceResults> changed = baselines;
  changed.back().matches.back().wins += 1;
  EXPECT_EQ(kept(changed), rating_ladders(changed));
  EXPECT_NE(kept(changed), both);
  EXPECT_EQ(kept(baselines), both);
  changed = baselines;
  changed.back().source = "other";
  EXPECT_EQ(kept(changed), rating_ladders(changed));
  const std::vector<SourceResults> fewer(baselines.begin(), baselines.end() - 1);
  EXPECT_EQ(kept(fewer), rating_ladders(fewer));
  fs::remove_all(root);
}

// A long anchor match's points come from its pair counts, exactly (its score, written to 4
// decimals, is a half point out at 20,000 games); a row whose counts do not add up to its games
// falls back to the score.
TEST(WebRatingsTest, AnAnchorMatchCountsItsPointsFromItsPairs) {
  const fs::path root = test_util::process_temp_dir("web_anchor_pairs_test");
  test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 5);
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "random");
    for (int generation : {4, 5}) {
      trainer::GateRow g;
      g.generation = generation, g.step = 10 * generation;
      g.opponent_generation = generation - 1, g.promoted = true;
      g.games = 8, g.wins = 8, g.draws = 0, g.losses = 0;
      g.elo = 300, g.elo_low = 100, g.elo_high = 500, g.verdict = "H1", g.seconds = 800;
      // 19,617 half points in 20,000 games: a score of 0.490425
      g.anchor = "random", g.anchor_games = 20000, g.anchor_score = 19617.0 / 40000;
      g.anchor_pairs = generation == 4 ? "1234/2345/3456/1500/1465" : "1/2/3/4/5";
      folder.append_gate(g, 16000, 200);
    }
  }
  RunReader reader("run", run.dir);
  const SourceResults results = reader.results();
  std::vector<std::vector<int>> anchors;
  for (const arena::MatchLine& m : results.matches)
    if (m.b == "random") anchors.push_back({m.wins, m.draws, m.losses});
  const std::vector<std::vector<int>> expected = {{9808, 1, 10191}, {9808, 0, 10192}};
  EXPECT_EQ(anchors, expected);
  // The counts go with the match where they are its games (the ladder takes its games as
  // pairs), and not where they are not.
  std::vector<std::optional<std::array<int, 5>>> pairs;
  for (const arena::MatchLine& m : results.matches)
    if (m.b == "random") pairs.push_back(m.pairs);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], (std::array<int, 5>{1234, 2345, 3456, 1500, 1465}));
  EXPECT_FALSE(pairs[1].has_value());
  fs::remove_all(root);
}

// Gate rows whose interval is none (written before intervals were finite for perfect and
// zero-variance scores: [0, 0] for +4 =0 -4, +inf for 4-0) are shown without one, never as an
// interval of zero width or with an infinite end.
TEST(WebSummaryTest, GatesWithoutAnIntervalShowNone) {
  const fs::path root = test_util::process_temp_dir("web_gate_interval_test");
  const test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    trainer::GateRow g;
    g.generation = 4, g.step = 40, g.opponent_generation = 3, g.verdict = "cap";
    g.games = 8, g.wins = 4, g.draws = 0, g.losses = 4;
    g.elo = 0, g.elo_low = 0, g.elo_high = 0;  // +4 =0 -4 as once written
    folder.append_gate(g, -1, -1);
    g.generation = 5, g.step = 50, g.wins = 8, g.losses = 0, g.promoted = true;
    g.elo = std::numeric_limits<double>::infinity(), g.elo_low = g.elo, g.elo_high = g.elo;
    folder.append_gate(g, -1, -1);
  }
  const json s = RunReader("run", run.dir).summary();
  ASSERT_EQ(s["gates"].size(), 5u);
  EXPECT_EQ(s["gates"][0]["elo_low"], 0.0 - 100 + 60);  // a real interval is kept
  for (std::size_t i : {std::size_t{3}, std::size_t{4}}) {
    EXPECT_TRUE(s["gates"][i]["elo_low"].is_null()) << s["gates"][i].dump();
    EXPECT_TRUE(s["gates"][i]["elo_high"].is_null()) << s["gates"][i].dump();
  }
  EXPECT_EQ(s.dump().find("inf"), std::string::npos) << s.dump();
  fs::remove_all(root);
}

// A long run's gates: the summary holds the newest gates and curves of at most 400 points (means
// of consecutive gates), not a row per gate (a run of 100,000 gates once sent them all, every
// time a file changed). arena.csv is followed by its new rows: the chained rating goes on from
// the rows read before.
TEST(WebSummaryTest, ALongRunsGatesAreFollowedInBoundedCurves) {
  const fs::path root = test_util::process_temp_dir("web_long_gates_test");
  const test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  const auto append_gates = [&](int first, int last) {
    trainer::RunFolder folder(run.dir);
    folder.open_tables(false, "");
    for (int generation = first; generation <= last; ++generation) {
      trainer::GateRow g;
      g.generation = generation, g.step = 10 * generation, g.opponent_generation = generation - 1;
      g.games = 8, g.wins = 5, g.draws = 0, g.losses = 3, g.verdict = "cap", g.promoted = true;
      g.elo = 10, g.elo_low = -50, g.elo_high = 70;
      g.rating = std::numeric_limits<double>::quiet_NaN();  // the reader chains it: +10 a gate
      if (generation % 2 == 0) g.anchor = "random", g.anchor_games = 4, g.anchor_elo = generation;
      folder.append_gate(g, -1, -1);
    }
  };
  append_gates(4, 1000);  // after the tiny run's three (chained rating 120 at generation 3)
  RunReader reader("run", run.dir);
  json s = reader.summary();
  EXPECT_EQ(s["gate_count"], 1000);
  EXPECT_EQ(s["generation"], 1000);
  EXPECT_EQ(s["best"], 1000);
  ASSERT_EQ(s["gates"].size(), 12u);
  EXPECT_EQ(s["gates"][0]["generation"], 989);
  EXPECT_EQ(s["gates"][11]["generation"], 1000);
  EXPECT_DOUBLE_EQ(s["gates"][11]["rating"].get<double>(), 120 + 10 * 997);
  EXPECT_TRUE(s["ratings"]["averaged"].get<bool>());
  for (const char* curve : {"best", "gate", "anchor"}) {
    const json& points = s["ratings"][curve];
    EXPECT_LE(points.size(), 400u) << curve;
    EXPECT_GE(points.size(), 200u) << curve;
    for (std::size_t i = 1; i < points.size(); ++i)
      EXPECT_GT(points[i][0].get<double>(), points[i - 1][0].get<double>()) << curve;
  }
  // Past the tiny run's gates each point is the mean of consecutive gates: its rating 120 + 10
  // (generation - 3) at its mean generation, its anchor Elo the generation itself.
  const json& best = s["ratings"]["best"];
  const json& mid = best[best.size() / 2];
  EXPECT_NEAR(mid[1].get<double>(), 120 + 10 * (mid[0].get<double>() - 3), 1e-6) << mid.dump();
  const json& anchor = s["ratings"]["anchor"][10];
  EXPECT_NEAR(anchor[1].get<double>(), anchor[0].get<double>(), 1e-6) << anchor.dump();

  append_gates(1001, 1005);
  s = reader.summary();
  EXPECT_EQ(s["gate_count"], 1005);
  EXPECT_EQ(s["gates"][11]["generation"], 1005);
  EXPECT_DOUBLE_EQ(s["gates"][11]["rating"].get<double>(), 120 + 10 * 1002)
      << "the chain goes on across reads";
  EXPECT_DOUBLE_EQ(s["gates"][11]["rating"].get<double>(),
                   trainer::read_gates(run.dir / "arena.csv", nullptr).back().rating)
      << "as a whole read chains it";
  EXPECT_LT(s.dump().size(), 200'000u);
  fs::remove_all(root);
}

// Rows holding what no run writes are damaged rows, counted and not drawn: a self-play row's
// generation of 1e22 hung the page's speed chart (its ticks never ended), a negative speed and an
// anchor score of 5 (500%) were shown as they were.
TEST(WebSummaryTest, RowsOutOfEveryRunsRangeAreCountedNotDrawn) {
  const fs::path root = test_util::process_temp_dir("web_range_rows_test");
  const test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  RunReader reader("run", run.dir);
  const json before = reader.summary();
  const int skipped = before["skipped_rows"].get<int>();
  const std::size_t speeds = before["speed"].size();
  {
    std::ofstream out(run.dir / "metrics.csv", std::ios::app);
    for (const auto& [generation, speed] : std::vector<std::pair<double, double>>{
             {1e22, 100}, {1e300, 100}, {2.5, 100}, {-1, 100}, {5, -5000}}) {
      trainer::SelfplayRow r;
      r.seconds = 10, r.positions_per_second = speed;
      util::CsvTable::Row row = trainer::metrics_row(r);
      std::ostringstream text;
      text << generation;
      row[util::CsvTable::column_of(trainer::metrics_header(), "generation")] = text.str();
      out << util::CsvTable::format(row) << '\n';
    }
    trainer::SelfplayRow fine;
    fine.seconds = 11, fine.generation = 6, fine.positions_per_second = 250;
    out << util::CsvTable::format(trainer::metrics_row(fine)) << '\n';
    // A node's rate written negative by an older version (a worker restarted under its name) is
    // a rate not known, not a damaged row.
    trainer::NodeRow node;
    node.seconds = 12, node.games = 3, node.node = "w1", node.games_per_second = -0.36;
    out << util::CsvTable::format(trainer::metrics_row(node)) << '\n';
  }
  {
    std::ofstream out(run.dir / "arena.csv", std::ios::app);
    trainer::GateRow g;
    g.generation = 4, g.step = 40, g.opponent_generation = 3, g.games = 4, g.wins = 2, g.draws = 0;
    g.losses = 2, g.verdict = "cap", g.elo = 0, g.elo_low = -100, g.elo_high = 100;
    g.anchor = "alphabeta:depth=2", g.anchor_games = 4, g.anchor_score = 5;
    out << util::CsvTable::format(trainer::arena_row(g)) << '\n';
    g.generation = 5, g.anchor_score = 0.5, g.elo = 500, g.elo_low = -10, g.elo_high = 10;
    out << util::CsvTable::format(trainer::arena_row(g)) << '\n';
    // Past what any gate measures (the report's axis once read "inf").
    g.generation = 6, g.elo = 1e300, g.elo_low = -1e300, g.elo_high = 1e301;
    out << util::CsvTable::format(trainer::arena_row(g)) << '\n';
  }
  const json s = reader.summary();
  EXPECT_EQ(s["skipped_rows"].get<int>(), skipped + 5 + 3) << s["skipped_rows"];
  ASSERT_EQ(s["speed"].size(), speeds + 1) << s["speed"].dump();
  EXPECT_EQ(s["speed"].back()[0], 6);
  EXPECT_DOUBLE_EQ(s["speed"].back()[1].get<double>(), 250);
  for (const json& g : s["gates"]) EXPECT_LT(g["generation"].get<int>(), 4) << g.dump();
  // The HTML report reads them as damaged too.
  int bad = 0;
  int speed_rows = 0;
  trainer::for_each_metrics_row(run.dir / "metrics.csv", &bad, true,
                                [&](const trainer::MetricsRow& row) {
                                  speed_rows += row.kind == "selfplay";
                                });
  EXPECT_EQ(bad, 5);
  EXPECT_EQ(speed_rows, static_cast<int>(speeds) + 1);
  int bad_gates = 0;
  EXPECT_EQ(trainer::read_gates(run.dir / "arena.csv", &bad_gates).size(), 3u);
  EXPECT_EQ(bad_gates, 3);
  // A table of other columns (no header `train` writes) says so; it drew empty curves silently.
  std::ofstream(run.dir / "metrics.csv", std::ios::trunc) << "foo,bar,baz\n1,2,3\n4,5,6\n";
  const json other = reader.summary();
  ASSERT_TRUE(other.contains("table_error")) << other.dump();
  EXPECT_NE(other["table_error"].get<std::string>().find("not the header this program writes"),
            std::string::npos)
      << other["table_error"];
  EXPECT_EQ(other["speed"].size(), 0u);
  fs::remove_all(root);
}

// Hostile gate rows cost the ladder little: a run has one anchor, so rows naming thousands of
// others keep the first few (each once, not once a row: 200,000 of them once took 27 s and
// gigabytes), and a count beyond what a gate plays is a damaged row. A table replaced by a file of
// the same size and time is read again (the summary once kept its cache).
TEST(WebSummaryTest, HostileGateRowsAndSameSizeReplacementsAreBounded) {
  const fs::path root = test_util::process_temp_dir("web_hostile_gates_test");
  const test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  {
    std::ofstream out(run.dir / "arena.csv", std::ios::app);
    for (int generation = 4; generation < 20'004; ++generation) {
      trainer::GateRow g;
      g.generation = generation, g.step = 10 * generation, g.opponent_generation = 3;
      g.games = 2, g.wins = 1, g.draws = 0, g.losses = 1, g.verdict = "cap", g.promoted = true;
      g.elo = 0, g.rating = 120;
      g.anchor = "anchor" + std::to_string(generation), g.anchor_games = 2, g.anchor_score = 0.5;
      if (generation == 5) g.wins = config::kMaxGateGames + 1;  // more than any gate plays
      out << util::CsvTable::format(trainer::arena_row(g)) << '\n';
    }
  }
  RunReader reader("run", run.dir);
  const auto start = std::chrono::steady_clock::now();
  const json s = reader.summary();
  EXPECT_EQ(s["gate_count"], 3 + 20'000 - 1);
  EXPECT_EQ(s["skipped_rows"], 1);
  const SourceResults results = reader.results();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(results.baselines.size(), 16u);
  std::size_t anchored = 0;
  for (const auto& m : results.matches) anchored += m.b.rfind("anchor", 0) == 0;
  EXPECT_EQ(anchored, 16u);

  // metrics.csv replaced by rename with a file of the same size, its time set back.
  const fs::path metrics = run.dir / "metrics.csv";
  std::string text = util::read_regular_file(metrics.string(), 1 << 20);
  const auto before = fs::last_write_time(metrics);
  const double first = reader.summary()["losses"][0][1].get<double>();
  const auto at = text.find("2.95000");
  ASSERT_NE(at, std::string::npos) << text.substr(0, 600);
  text.replace(at, 7, "1.25000");
  util::write_file_atomically((run.dir / "metrics.new").string(), text);
  fs::last_write_time(run.dir / "metrics.new", before);
  fs::rename(run.dir / "metrics.new", metrics);
  EXPECT_EQ(fs::last_write_time(metrics), before);
  EXPECT_NE(reader.summary()["losses"][0][1].get<double>(), first);
  fs::remove_all(root);
}

// A summary reads at most 32 MiB of each table at a time, so that a long run's tables, read whole
// the first time, never hold the run (and the server's stop) for long: it says it is still
// reading, the next reads go on from there, and the curve is then the whole table's.
TEST(WebSummaryTest, ALongTableIsReadOverSeveralSummaries) {
  const fs::path root = test_util::process_temp_dir("web_read_budget_test");
  const test_util::TinyRun run = test_util::make_tiny_run(root / "run", "mg", 4);
  const int rows = 500'000;  // about 50 MB after the tiny run's rows
  {
    std::ofstream out(run.dir / "metrics.csv", std::ios::app);
    for (int step = 31; step < 31 + rows; ++step) {
      trainer::TrainRow row{1.0 * step, step, step / 10, 400LL * step, 5LL * step, 1.0, 0.5, 0.02};
      out << util::CsvTable::format(trainer::metrics_row(row)) << '\n';
    }
  }
  ASSERT_GT(fs::file_size(run.dir / "metrics.csv"), std::uintmax_t{33} << 20);
  RunReader reader("run", run.dir);
  json s = reader.summary();
  EXPECT_EQ(s.value("reading", false), true) << "not all of it at once";
  EXPECT_LT(s["progress"]["step"].get<double>(), 30.0 + rows);
  const std::string version = s["version"];
  int summaries = 1;
  while (s.value("reading", false) && summaries < 10) s = reader.summary(), ++summaries;
  EXPECT_EQ(summaries, 2);
  EXPECT_EQ(s["version"], version) << "the files did not change";
  EXPECT_EQ(s["progress"]["step"], 30 + rows);
  EXPECT_EQ(s["metrics_rows"], 36 + rows);  // the tiny run's 30 train, 3 gate, 3 selfplay rows
  const auto points = s["losses"].size();
  EXPECT_LE(points, 400u);
  EXPECT_GT(points, 300u);
  EXPECT_EQ(s["steps_per_loss_point"], std::llround((30.0 + rows) / static_cast<double>(points)));
  fs::remove_all(root);
}

// A capped match on the server (the page's comparison of two checkpoints): paired games, the
// result from a's view with an interval, the cap on games refused beyond kMaxMatchGames.
TEST_F(WebApiTest, PlaysACappedMatch) {
  const json m = post("/api/match",
                      {{"game", "mg"},
                       {"a", "net:checkpoint=tiny/best,sims=8"},
                       {"b", "net:checkpoint=tiny/gen-0000,sims=8"},
                       {"games", 4}},
                      200);
  EXPECT_EQ(m["games_cap"], 4);
  EXPECT_EQ(m["wins"].get<int>() + m["draws"].get<int>() + m["losses"].get<int>(),
            m["games"].get<int>());
  if (!m["out_of_time"].get<bool>()) {
    EXPECT_EQ(m["games"], 4) << m.dump();
  }
  EXPECT_TRUE(m["elo_low"].is_null() || m["elo_low"].get<double>() < m["elo_high"].get<double>())
      << m.dump();
  // The pair counts the interval comes from: as many pairs as half the games, and the points.
  if (m["games"].get<int>() > 0) {
    const auto counts = arena::parse_pair_counts(m["pairs"].get<std::string>());
    ASSERT_TRUE(counts) << m.dump();
    EXPECT_TRUE(arena::pair_counts_fit(*counts, m["wins"], m["draws"], m["losses"])) << m.dump();
  }
  // What arena prints under its Elo comes too: the prior's virtual game moves every score but an
  // even one, and the caveat says so (and of which score the Elo is).
  ASSERT_TRUE(m["caveats"].is_array()) << m.dump();
  bool prior_said = false;
  for (const json& c : m["caveats"])
    prior_said = prior_said || c.get<std::string>().find("one virtual game") != std::string::npos;
  if (m["games"].get<int>() > 0) {
    EXPECT_EQ(prior_said, m["score"].get<double>() != 0.5) << m.dump();
  }
  const json r = post("/api/match", {{"game", "mg"}, {"a", "random"}, {"b", "random"},
                                     {"games", kMaxMatchGames + 2}},
                      400);
  EXPECT_NE(r["error"].get<std::string>().find("games"), std::string::npos) << r.dump();
  // An odd count is refused, not played as the next even one.
  const json odd = post("/api/match", {{"game", "mg"}, {"a", "random"}, {"b", "random"},
                                       {"games", 3}},
                        400);
  EXPECT_NE(odd["error"].get<std::string>().find("an even number 2..20"), std::string::npos)
      << odd.dump();
  post("/api/match", {{"game", "mg"}, {"a", "human"}, {"b", "random"}}, 400);
  // A match that counts no game before its time is up has no result (before: 50%, Elo 0 +-606,
  // the prior alone).
  const json none = post("/api/match",
                         {{"game", "dvonn"}, {"a", "alphabeta:depth=3"}, {"b", "classic:depth=40"},
                          {"games", 2}},
                         200);
  if (none["games"] == 0) {
    EXPECT_TRUE(none["score"].is_null()) << none.dump();
    EXPECT_TRUE(none["elo"].is_null()) << none.dump();
    EXPECT_TRUE(none["elo_low"].is_null()) << none.dump();
  }
  // A match longer than the time limit (5 s here; these 20 games need minutes) answers at the
  // limit with the games counted so far.
  const json late = post("/api/match",
                         {{"game", "mg"}, {"a", "uct:sims=2000"}, {"b", "uct:sims=2000"},
                          {"games", kMaxMatchGames}},
                         200);
  EXPECT_TRUE(late["out_of_time"].get<bool>()) << late.dump();
  EXPECT_LT(late["games"].get<int>(), kMaxMatchGames) << late.dump();
}

TEST_F(WebApiTest, ListsGamesNewestFirstPaginatedAndFiltered) {
  json page = get("/api/runs/tiny/games?per_page=4", 200);
  EXPECT_EQ(page["total"], run_->games);
  EXPECT_EQ(page["pages"], 3);
  ASSERT_EQ(page["games"].size(), 4u);
  // Newest first: the last game written (chunk 2, index 1) leads.
  EXPECT_EQ(page["games"][0]["chunk"], 2);
  EXPECT_EQ(page["games"][0]["index"], 1);
  EXPECT_EQ(page["games"][0]["plies"], run_->records.back().moves.size());
  page = get("/api/runs/tiny/games?per_page=4&page=2", 200);
  EXPECT_EQ(page["games"].size(), 2u);
  page = get("/api/runs/tiny/games?per_page=4&page=9", 200);
  EXPECT_TRUE(page["games"].empty());

  page = get("/api/runs/tiny/games?generation=1", 200);
  int expected = 0;
  for (const auto& r : run_->records) expected += r.network_step == 10;
  EXPECT_EQ(page["total"], expected);
  for (const auto& g : page["games"]) EXPECT_EQ(g["generation"], 1);

  page = get("/api/runs/tiny/games?result=1-0", 200);
  expected = 0;
  for (const auto& r : run_->records) expected += r.result > 0;
  EXPECT_EQ(page["total"], expected);

  std::size_t shortest = 100000;
  for (const auto& r : run_->records) shortest = std::min(shortest, r.moves.size());
  page = get("/api/runs/tiny/games?max_plies=" + std::to_string(shortest), 200);
  EXPECT_GE(page["total"].get<int>(), 1);
  for (const auto& g : page["games"]) EXPECT_EQ(g["plies"], shortest);
}

TEST_F(WebApiTest, RefusesBadListingParameters) {
  expect_error(get("/api/runs/tiny/games?page=-1", 400), "page");
  expect_error(get("/api/runs/tiny/games?page=abc", 400), "page must be a whole number");
  expect_error(get("/api/runs/tiny/games?per_page=100000", 400), "per_page");
  expect_error(get("/api/runs/tiny/games?result=win", 400), "result must be 1-0, 0-1 or draw");
  expect_error(get("/api/runs/tiny/games?generation=x", 400), "generation");
  // Digits only, each key once (before: "+1", " 1" and "1\0..." read as page 1, and a second page
  // was ignored).
  expect_error(get("/api/runs/tiny/games?page=%2B1", 400), "page must be a whole number");
  expect_error(get("/api/runs/tiny/games?page=%201", 400), "page must be a whole number");
  expect_error(get("/api/runs/tiny/games?page=1%00", 400), "page must be a whole number");
  expect_error(get("/api/runs/tiny/games?page=1&page=2", 400), "page is given 2 times");
  expect_error(get("/api/runs/tiny/games?result=1-0&result=0-1", 400), "result is given 2 times");
}

TEST_F(WebApiTest, ReplaysOneGame) {
  const json g = get("/api/runs/tiny/games/0/1", 200);
  const selfplay::GameRecord& r = run_->records[1];
  ASSERT_EQ(g["moves"].size(), r.moves.size());
  ASSERT_EQ(g["positions"].size(), r.moves.size() + 1);
  expect_boards_and_cells(g);
  EXPECT_EQ(g["positions"][0], game_by_name("mg").initial_state()->to_string());
  // The last position is the end of the game, with the recorded result.
  const auto last = game_by_name("mg").parse_state(g["positions"].back().get<std::string>());
  EXPECT_TRUE(last->is_terminal());
  EXPECT_EQ(g["result"], r.result > 0 ? "1-0" : "0-1");
  EXPECT_LE(g["moves"][0]["top"].size(), 5u);
  expect_error(get("/api/runs/tiny/games/7/0", 404), "no game chunk 7");
  expect_error(get("/api/runs/tiny/games/0/9", 404), "has no game 9");
}

TEST_F(WebApiTest, ListsAndReplaysArenaRecordFiles) {
  const json info = get("/api/info", 200);
  ASSERT_EQ(info["arena"].size(), 1u);
  EXPECT_EQ(info["arena"][0]["name"], "arena-games.txt");
  EXPECT_EQ(info["arena"][0]["game"], "mg");
  EXPECT_EQ(info["arena"][0]["games"], 2);
  EXPECT_EQ(info["arena"][0]["skipped"], 1);  // the illegal move a1-a1
  json page = get("/api/arena/arena-games.txt/games", 200);
  ASSERT_EQ(page["games"].size(), 2u);
  EXPECT_EQ(page["games"][0]["index"], 1);  // newest first
  EXPECT_EQ(page["games"][0]["first"], "random");
  EXPECT_EQ(page["games"][0]["plies"], run_->records[1].moves.size());
  page = get("/api/arena/arena-games.txt/games?player=alphabeta&result=" +
                 std::string(run_->records[0].result > 0 ? "1-0" : "0-1"),
             200);
  EXPECT_GE(page["total"].get<int>(), 1);
  const json g = get("/api/arena/arena-games.txt/games/0", 200);
  EXPECT_EQ(g["positions"].size(), run_->records[0].moves.size() + 1);
  EXPECT_EQ(g["game"], "mg");
  expect_boards_and_cells(g);
  EXPECT_TRUE(game_by_name("mg").parse_state(g["positions"].back().get<std::string>())->is_terminal());
  EXPECT_EQ(g["forfeit"], "");
  const json forfeited = get("/api/arena/arena-games.txt/games/1", 200);
  EXPECT_EQ(forfeited["forfeit"], "timeout: no move within 10 ms after a7-a5 (ply 9)");
  EXPECT_EQ(forfeited["positions"].size(), run_->records[1].moves.size() + 1);
  expect_error(get("/api/arena/arena-games.txt/games/2", 404), "has no game 2");
  expect_error(get("/api/arena/other.txt/games", 404), "no arena record file");
  expect_error(get("/api/arena/arena-games.txt/games?result=win", 400), "result must be");
  // Both listings take both spellings of a draw.
  EXPECT_EQ(get("/api/arena/arena-games.txt/games?result=draw", 200)["total"],
            get("/api/arena/arena-games.txt/games?result=1/2-1/2", 200)["total"]);
  EXPECT_EQ(get("/api/runs/tiny/games?result=draw", 200)["total"],
            get("/api/runs/tiny/games?result=1/2-1/2", 200)["total"]);
}

TEST_F(WebApiTest, UnknownRunsAndPathsAreRefused) {
  expect_error(get("/api/runs/nope/summary", 404), "no run named");
  // %2F decodes to '/': no route matches, and nothing outside the runs is read.
  expect_error(get("/api/runs/..%2F..%2Fetc/summary", 404), "no such page");
  expect_error(get("/api/runs/../summary", 404), "");
  expect_error(get("/api/nothing", 404), "no such page");
  auto res = client().Get("/../../../../etc/passwd");
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 200);
  EXPECT_EQ(res->body.find("root:"), std::string::npos);
  // Checkpoints are names in a run's checkpoints/ folder, never paths.
  const json body = {{"game", "mg"}, {"checkpoint", "tiny/../../../etc/passwd"}};
  expect_error(post("/api/evaluate", body, 400), "give RUN/NAME");
  expect_error(post("/api/evaluate", {{"game", "mg"}, {"checkpoint", "tiny/..%2Fconfig"}}, 404),
               "has no checkpoint");
  expect_error(post("/api/evaluate", {{"game", "mg"}, {"checkpoint", "/etc/passwd"}}, 400),
               "give RUN/NAME");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "net:checkpoint=/etc/passwd,sims=5"}},
                    400),
               "give RUN/NAME");
  const json list = get("/api/runs/tiny/checkpoints", 200);
  EXPECT_EQ(list, json({"best", "gen-0003", "gen-0002", "gen-0001", "gen-0000"}));
}

TEST_F(WebApiTest, PositionsGiveLegalMovesAndResults) {
  json p = post("/api/position", {{"game", "mg"}}, 200);
  EXPECT_EQ(p["legal"].size(), 20u);
  EXPECT_EQ(p["to_move"], 0);
  EXPECT_FALSE(p["terminal"]);
  p = post("/api/position", {{"game", "mg"}, {"moves", {"d1-d3", "e7-e5"}}}, 200);
  EXPECT_EQ(p["legal"].size(), 17u);  // docs/RULES.md's worked example
  // A won position: Light has reached Dark's home row, Dark to move has lost.
  p = post("/api/position",
           {{"game", "mg"}, {"start", "tttttttW/......../......../......../......../......../TTTTTTT. D"}},
           200);
  EXPECT_TRUE(p["terminal"]);
  EXPECT_EQ(p["result"], 1);
  p = post("/api/position", {{"game", "dvonn"}, {"moves", {"C3", "F3", "I3"}}}, 200);
  EXPECT_EQ(p["legal"].size(), 46u);
  EXPECT_EQ(p["ply"], 3);
}

// What the page draws and clicks: the board view (one entry per cell, the pieces bottom to top and
// a label) and each legal move with its cells in click order.
TEST_F(WebApiTest, PositionsCarryTheBoardAndEachMovesCells) {
  json p = post("/api/position", {{"game", "mg"}, {"moves", {"d1-d3"}}}, 200);
  ASSERT_EQ(p["board"].size(), 56u);
  EXPECT_EQ(p["board"][0], json({{"pieces", {0, 0}}}));  // a1: a Light tower
  EXPECT_EQ(p["board"][3], json::object());               // d1: left by the tower
  EXPECT_EQ(p["board"][11], json({{"pieces", {0}}}));     // d2: a Light wall
  EXPECT_EQ(p["board"][55], json({{"pieces", {1, 1}}}));  // h7: a Dark tower
  ASSERT_EQ(p["legal"].size(), 20u);
  for (const json& m : p["legal"]) expect_cells_of(m["move"], m["cells"]);
  EXPECT_EQ(p["legal"][0]["move"], "a7-a5");  // sorted by move

  p = post("/api/position", {{"game", "dvonn"}, {"moves", {"C3", "F3", "I3", "A1"}}}, 200);
  ASSERT_EQ(p["board"].size(), 49u);
  EXPECT_EQ(p["board"][0], json({{"pieces", {1}}, {"label", "1"}}));  // A1: Black's first piece
  EXPECT_EQ(p["board"][21], json({{"pieces", {2}}, {"label", "1"}}));  // C3: a DVONN piece
  EXPECT_EQ(p["board"][1], json::object());
  ASSERT_EQ(p["legal"].size(), 45u);
  for (const json& m : p["legal"]) EXPECT_EQ(m["cells"], json({m["move"]})) << m;
  // Stacks: a white stack of 5 holding a DVONN piece shows a DVONN piece under a white one; with
  // it White cannot move, so PASS, on no cell, is the only move.
  const std::string row = ".,.,.,.,.,.,.,.,.";
  const std::string start = "B1,W5*,B1,.,.,.,.,.,./" + row + ",./" + row + ",.,./" + row + ",./" +
                            row + " W 51";
  p = post("/api/position", {{"game", "dvonn"}, {"start", start}}, 200);
  EXPECT_EQ(p["board"][1], json({{"pieces", {2, 0}}, {"label", "5"}}));
  EXPECT_EQ(p["legal"], json({{{"move", "PASS"}, {"cells", json::array()}}}));
  const json m = post("/api/move", {{"game", "dvonn"}, {"start", start}, {"player", "random"}}, 200);
  EXPECT_EQ(m["move"], "PASS");
  EXPECT_EQ(m["cells"], json::array());
  // Black's moves from A1 or C1 by one space: the stack, then where it lands.
  for (const json& move : m["after"]["legal"]) {
    const std::string text = move["move"].get<std::string>();
    ASSERT_EQ(text.size(), 4u) << text;
    EXPECT_EQ(move["cells"], json({text.substr(0, 2), text.substr(2, 2)})) << text;
  }
  EXPECT_FALSE(m["after"]["legal"].empty());
}

TEST_F(WebApiTest, BadPositionsAndMovesAreRefusedWithWhere) {
  expect_error(post("/api/position", {{"game", "chess"}}, 400), "game");
  expect_error(post("/api/position", json::object(), 400), "\"game\" is missing");
  expect_error(post("/api/position", {{"game", "mg"}, {"start", "xyz"}}, 400), "start position");
  // More moves than the engines play is the server's limit, not a rule of the game (Murus Gallicus
  // has no limit on a game's length).
  expect_error(post("/api/position",
                    {{"game", "mg"}, {"moves", json::array_t(513, json("a1-a3"))}}, 400),
               "at most 512 of mg (the engines' ply limit");
  expect_error(post("/api/position", {{"game", "mg"}, {"moves", {"d1-d3", "d1-d3"}}}, 400),
               "move 2 (\"d1-d3\")");
  expect_error(post("/api/position", {{"game", "mg"}, {"moves", "d1-d3"}}, 400), "array");
  expect_error(post("/api/position", {{"game", "mg"}, {"moves", {1}}}, 400), "move 1 must be");
  // A field no call reads is named, never ignored (a misspelt start would silently be the
  // initial position).
  expect_error(post("/api/position", {{"game", "mg"}, {"strat", "xyz"}}, 400),
               "unknown field \"strat\"; this call reads game, start, moves");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "random"}, {"checkpoint", "x"}}, 400),
               "unknown field \"checkpoint\"");
  expect_error(post("/api/evaluate", {{"game", "mg"}, {"checkpoint", "tiny/best"}, {"seed", 1}},
                    400),
               "unknown field \"seed\"");
  expect_error(post("/api/match", {{"game", "mg"}, {"a", "random"}, {"b", "random"},
                                   {"moves", json::array()}},
                    400),
               "unknown field \"moves\"");
  EXPECT_EQ(post("/api/analyse", {{"game", "mg"}, {"player", "uct:sims=20"}, {"seed", 3}}, 200)
                ["kind"],
            "search");
  auto res = client().Post("/api/position", "{\"game\": ", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("bad JSON"), std::string::npos);
  // A key named twice in one object is refused (the reader took the last value silently); the
  // same key in two objects is two keys.
  res = client().Post("/api/position",
                      "{\"game\": \"mg\", \"moves\": [\"d1-d3\"], \"moves\": []}",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("names the key \\\"moves\\\" twice in one object"), std::string::npos)
      << res->body;
  res = client().Post("/api/analyse",
                      "{\"game\": \"mg\", \"player\": \"uct:sims=2\", \"x\": {\"game\": 1}}",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("unknown field \\\"x\\\""), std::string::npos) << res->body;
  res = client().Post("/api/position", "{\"game\": \"mg\"}", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("Content-Type: application/json"), std::string::npos);
  // The media type is compared whole, in any case, before its parameters (RFC 9110, 8.3.1).
  for (const auto& [type, status] : std::vector<std::pair<std::string, int>>{
           {"APPLICATION/JSON", 200}, {"application/json; charset=utf-8", 200},
           {"application/jsonx", 400}, {"application/json-seq", 400}}) {
    res = client().Post("/api/position", "{\"game\": \"mg\"}", type);
    ASSERT_TRUE(res) << type;
    EXPECT_EQ(res->status, status) << type << ": " << res->body;
  }
  res = client().Post("/api/position", std::string(100 * 1024, ' '), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  // Methods the server does not serve are named as such, with the ones it does.
  for (const char* method : {"PUT", "DELETE", "PATCH", "OPTIONS"}) {
    const std::string answer = test_util::raw_request(
        port_, std::string(method) + " /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    EXPECT_EQ(test_util::status_of(answer), 405) << method << ": " << answer;
    EXPECT_NE(answer.find("Allow: GET, HEAD, POST"), std::string::npos) << answer;
  }
}

TEST_F(WebApiTest, AMethodAPathDoesNotServeIs405WithTheOnesItDoes) {
  // A POST route asked with GET or HEAD, a GET route asked with POST: the path is there, its
  // method is not (RFC 9110, 15.5.6), and Allow names the ones it serves.
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"GET", "/api/analyse", "Allow: POST"},
      {"HEAD", "/api/move", "Allow: POST"},
      {"POST", "/api/info", "Allow: GET, HEAD"},
      {"POST", "/api/runs/tiny/summary", "Allow: GET, HEAD"},
      {"POST", "/", "Allow: GET, HEAD"}};
  for (const auto& [method, path, allow] : cases) {
    const std::string body = method == "POST" ? "{}" : "";
    const std::string answer = test_util::raw_request(
        port_, method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                   (method == "POST" ? "Content-Type: application/json\r\nContent-Length: 2\r\n"
                                     : "") +
                   "\r\n" + body);
    EXPECT_EQ(test_util::status_of(answer), 405) << method << " " << path << ": " << answer;
    EXPECT_NE(answer.find(allow + "\r\n"), std::string::npos) << method << " " << path << answer;
  }
  // Unknown paths stay 404 whatever the method.
  EXPECT_EQ(test_util::status_of(test_util::raw_request(
                port_, "GET /api/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")),
            404);
}

TEST_F(WebApiTest, AnswersAreGzipOrPlainNeverBrotli) {
  // Brotli at httplib's quality cost 40-100 ms of CPU an answer, gzip about 1 ms.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gzip, deflate, br, zstd", "gzip"}, {"br", ""}, {"BR;q=1, GZip;q=0.5", "gzip"},
      {"gzip;q=0, br", ""}, {"x-gzip", "gzip"}, {"identity", ""}};
  for (const auto& [accept, coding] : cases) {
    const std::string answer = test_util::raw_request(
        port_, "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: " + accept +
                   "\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(test_util::status_of(answer), 200) << accept << ": " << answer.substr(0, 300);
    const std::string head = answer.substr(0, answer.find("\r\n\r\n"));
    EXPECT_EQ(head.find("Content-Encoding: br"), std::string::npos) << accept << ": " << head;
    EXPECT_EQ(head.find("Content-Encoding: gzip") != std::string::npos, coding == "gzip")
        << accept << ": " << head;
  }
}

TEST_F(WebApiTest, AConnectionHeaderNamingCloseAmongOthersClosesTheConnection) {
  // RFC 9110, 7.6.1: Connection holds a list of options in any case; "close" among them closes
  // the connection after the answer (httplib closed only on a whole value "close").
  for (const std::string value : {"close", "keep-alive, close", "Close", " upgrade ,CLOSE "}) {
    test_util::RawConnection c(port_);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: " + value +
                       "\r\n\r\n"));
    bool closed = false;
    std::string answer = c.receive(std::chrono::seconds(60), &closed);
    EXPECT_EQ(test_util::status_of(answer), 200) << value << ": " << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << value << ": " << answer;
    if (!closed) answer += c.receive(std::chrono::seconds(60), &closed);
    EXPECT_TRUE(closed) << value;
  }
  // Options that do not name close keep it open for the next request.
  test_util::RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive, "
                     "closed\r\n\r\n"));
  bool closed = false;
  const std::string answer = c.receive(std::chrono::seconds(60), &closed);
  EXPECT_EQ(test_util::status_of(answer), 200) << answer;
  EXPECT_EQ(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_FALSE(closed);
  ASSERT_TRUE(c.send("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(test_util::status_of(c.receive(std::chrono::seconds(60), &closed)), 200);
}

TEST_F(WebApiTest, PlayersAnswerLegalMoves) {
  for (const char* player : {"random", "uct:sims=50", "alphabeta:depth=2", "classic:depth=4",
                             "classic:nodes=2000", "net:checkpoint=tiny/best,sims=20",
                             "net:checkpoint=tiny/gen-0001,sims=5"}) {
    const json m = post("/api/move", {{"game", "mg"}, {"moves", {"d1-d3"}}, {"player", player}}, 200);
    const json p = post("/api/position", {{"game", "mg"}, {"moves", {"d1-d3"}}}, 200);
    const json played = {{"move", m["move"]}, {"cells", m["cells"]}};
    const auto& legal = p["legal"];
    EXPECT_NE(std::find(legal.begin(), legal.end(), played), legal.end()) << player << played;
    EXPECT_EQ(m["after"]["ply"], 2) << player;
    EXPECT_EQ(m["after"]["board"].size(), 56u) << player;
  }
  const json dvonn = post("/api/move", {{"game", "dvonn"}, {"player", "uct:sims=30"}}, 200);
  EXPECT_EQ(dvonn["after"]["ply"], 1);
  // The page plays only these players, within the limits.
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "external:cmd=\"sh\""}}, 400),
               "the page plays random");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "human"}}, 400), "the page plays");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "uct:sims=5000"}}, 400),
               "at most 2000 simulations");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "alphabeta:depth=4"}}, 400),
               "depth at most 3");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "uct:sims=0"}}, 400), "sims");
  // A leaf's rollouts are not cut short by the time limit: 1000 of them ran one leaf 115 ms past.
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "uct:sims=10,rollouts=21"}}, 400),
               "at most 20 rollouts a leaf");
  post("/api/move", {{"game", "mg"}, {"player", "uct:sims=10,rollouts=20"}}, 200);
  // A time key would outlast the server's own search limit.
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "uct:ms=3600000"}}, 400),
               "no ms= here");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "alphabeta:clock=60"}}, 400),
               "no clock= here");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "classic:ms=60000"}}, 400),
               "no ms= here");
  expect_error(post("/api/move", {{"game", "mg"}, {"player", "net:checkpoint=tiny/gen-0009,sims=5"}},
                    404),
               "has no checkpoint \"gen-0009\"");
  expect_error(post("/api/move", {{"game", "dvonn"}, {"player", "net:checkpoint=tiny/best,sims=5"}},
                    400),
               "checkpoint");  // an mg network for a dvonn position
  expect_error(post("/api/move",
                    {{"game", "mg"},
                     {"start", "tttttttW/......../......../......../......../......../TTTTTTT. D"},
                     {"player", "random"}},
                    400),
               "the game is over");
}

// The classical engine analyses like alpha-beta (a score, a depth, nodes), and a deep one stops at
// the server's --search-ms.
TEST_F(WebApiTest, TheClassicalEngineAnalysesWithinTheServersTime) {
  const json a = post("/api/analyse", {{"game", "dvonn"}, {"player", "classic:depth=3"}}, 200);
  EXPECT_EQ(a["kind"], "alphabeta");
  EXPECT_EQ(a["depth"], 3);
  EXPECT_FALSE(a["out_of_time"].get<bool>());
  EXPECT_FALSE(a["best"].get<std::string>().empty());
  const json deep = post("/api/analyse", {{"game", "mg"}, {"player", "classic:depth=60"}}, 200);
  EXPECT_TRUE(deep["out_of_time"].get<bool>()) << deep.dump();
  EXPECT_LT(deep["depth"].get<int>(), 60);
}

TEST_F(WebApiTest, AnalysesAndEvaluates) {
  const json a = post("/api/analyse", {{"game", "mg"}, {"player", "uct:sims=200"}}, 200);
  EXPECT_EQ(a["kind"], "search");
  EXPECT_EQ(a["simulations"], 200);
  int visits = 0;
  for (const auto& t : a["top"]) visits += t["visits"].get<int>();
  EXPECT_LE(visits, 200);
  EXPECT_GT(visits, 100);  // the top 10 of 20 moves hold most visits
  EXPECT_EQ(a["top"][0]["move"], a["best"]);
  EXPECT_EQ(a["top"][0]["cells"], a["best_cells"]);
  for (const auto& t : a["top"]) expect_cells_of(t["move"], t["cells"]);
  EXPECT_FALSE(a["pv"].empty());
  // A move the search never visited has no value (it once showed Q 0.000, a draw).
  const json few = post("/api/analyse", {{"game", "mg"}, {"player", "uct:sims=3"}}, 200);
  int unvisited = 0;
  for (const auto& t : few["top"]) {
    EXPECT_EQ(t["q"].is_null(), t["visits"] == 0) << t.dump();
    unvisited += t["visits"] == 0;
  }
  EXPECT_GT(unvisited, 0) << few.dump();
  const json ab = post("/api/analyse", {{"game", "dvonn"}, {"player", "alphabeta:depth=2"}}, 200);
  EXPECT_EQ(ab["kind"], "alphabeta");
  EXPECT_EQ(ab["depth"], 2);
  EXPECT_EQ(ab["best_cells"], json({ab["best"]}));  // a placement: one cell, named as the move
  expect_error(post("/api/analyse", {{"game", "mg"}, {"player", "random"}}, 400), "does not search");

  const json e = post("/api/evaluate", {{"game", "mg"}, {"checkpoint", "tiny/best"}}, 200);
  EXPECT_GE(e["value"].get<double>(), -1.0);
  EXPECT_LE(e["value"].get<double>(), 1.0);
  EXPECT_EQ(e["top"].size(), 10u);
  double priors = 0;
  for (const auto& t : e["top"]) {
    priors += t["prior"].get<double>();
    expect_cells_of(t["move"], t["cells"]);
  }
  EXPECT_GT(priors, 0.0);
  EXPECT_LE(priors, 1.0 + 1e-5);
}

// The head as the client sent it, not as httplib decoded it: httplib percent-decodes header
// values ("Content-Length: %31%33" read as 13, "Host: localhost%00.evil" as localhost) and took a
// "Host : evil" line, a line without a colon and a folded line for what they were not; a proxy in
// front could frame or route such a request otherwise than the server reads it.
TEST_F(WebApiTest, HeadsAreJudgedAsSent) {
  const std::string body = "{\"game\":\"mg\"}";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: b\r\n c\r\n\r\n", "folded"},
      {"GET /api/info HTTP/1.1\r\nHost : evil.example\r\n\r\n", "no header name has"},
      {"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nJunkLine\r\n\r\n", "without a name"},
      {"POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\nX: a\n\nContent-Length: %31%34\r\n"
       "Content-Type: application/json\r\n\r\n" + body, "bare LF"},
      {"GET /api/info HTTP/1.1\r\n\r\n", "needs a Host"},
      {"GET /api/info HTTP/1.1\r\nHost: localhost%00.evil.example\r\n\r\n", "percent"},
      {"POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
       "Content-Length: %31%34\r\n\r\n" + body, "percent"},
      {"POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
       "Transfer-Encoding: %63hunked\r\n\r\n", "percent"},
      // A head of CRLF lines ended by a bare LF's empty line: at once, not a 408 after 10 s.
      {"POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
       "Content-Length: 13\n\n" + body, "bare LF"},
      // Empty framing headers, which httplib drops: one beside the other frames for a proxy.
      {"POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
       "Content-Length: 13\r\nTransfer-Encoding:  \r\n\r\n" + body,
       "the Transfer-Encoding header is empty"},
      {"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length:\r\n\r\n",
       "the Content-Length header is empty"}};
  for (const auto& [request, why] : refused) {
    const std::string answer = test_util::raw_request(port_, request);
    EXPECT_EQ(test_util::status_of(answer), 400) << request << "\n" << answer;
    EXPECT_NE(test_util::body_of(answer).find(why), std::string::npos) << request << answer;
  }
  // What a browser or curl sends is answered as before: HTTP/1.0 needs no Host.
  EXPECT_EQ(test_util::status_of(test_util::raw_request(port_, "GET /api/info HTTP/1.0\r\n\r\n")),
            200);
  const std::string post = test_util::raw_request(
      port_, "POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
             "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(test_util::status_of(post), 200) << post;
}

TEST_F(WebApiTest, RequestsForOtherHostsAreRefused) {
  // A Host with a control character (a NUL before ".evil.com") is no host at all.
  {
    const std::string answer = test_util::raw_request(
        port_, std::string("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1") + '\x01' +
                   ".evil.com\r\n\r\n");
    EXPECT_EQ(test_util::status_of(answer), 400) << answer;
    EXPECT_NE(answer.find("control character"), std::string::npos) << answer;
  }
  // DNS rebinding: a name that only starts like a loopback address is another host.
  for (const char* host : {"evil.example:80", "127.evil.example.com", "127.0.0.1.evil.example.com",
                           "127.0.0.1.evil.example.com:80", "localhost.evil.example.com",
                           "[::1].evil.example.com", "[::1", "127.0.0.1:80:80", "0.0.0.0"}) {
    auto res = client().Get("/api/info", {{"Host", host}});
    ASSERT_TRUE(res) << host;
    EXPECT_EQ(res->status, 403) << host;
  }
  // An empty Host names no host (an HTTP/1.0 request may have none at all).
  for (const char* empty : {"Host:", "Host: ", "Host: \t"}) {
    const std::string answer = test_util::raw_request(
        port_, std::string("GET /api/info HTTP/1.1\r\n") + empty + "\r\n\r\n");
    EXPECT_EQ(test_util::status_of(answer), 400) << answer;
    EXPECT_NE(answer.find("the Host header is empty"), std::string::npos) << answer;
  }
  {
    const std::string answer = test_util::raw_request(port_, "GET /api/info HTTP/1.0\r\n\r\n");
    EXPECT_EQ(test_util::status_of(answer), 200) << answer;
  }
  for (const char* host : {"127.0.0.1", "127.0.0.1:8080", "127.1.2.3:80", "localhost",
                           "LOCALHOST:8080", "[::1]", "[::1]:8080"}) {
    auto res = client().Get("/api/info", {{"Host", host}});
    ASSERT_TRUE(res) << host;
    EXPECT_EQ(res->status, 200) << host;
  }
  // Two Host lines, a loopback one first: a bad request (RFC 9112), whichever comes first.
  for (const auto& [first, second] : std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1", "evil.example"}, {"evil.example", "127.0.0.1"}}) {
    auto res = client().Get("/api/info", {{"Host", first}, {"Host", second}});
    ASSERT_TRUE(res) << first << ", " << second;
    EXPECT_EQ(res->status, 400) << first << ", " << second;
    EXPECT_NE(res->body.find("more than one Host"), std::string::npos) << res->body;
  }
}

// Bodies are limited however they arrive, and a request whose framing is wrong is answered at
// once, without waiting for a body, and its connection closed.
TEST_F(WebApiTest, BodiesAreLimitedHoweverTheyAreSent) {
  const std::string head = "POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Content-Type: application/json\r\n";
  // A chunked body is refused unread, however well or badly it is chunked (httplib's reader takes
  // sizes a proxy in front would read otherwise: "0x0d", " 2", "+2", a chunk without its CRLF),
  // and the connection closed: what follows is never read as another request.
  for (const std::string body :
       {"5\r\n{\"gam\r\n9\r\ne\": \"mg\"}\r\n0\r\n\r\n", "0x0d\r\n{\"game\": \"mg\"}\r\n0\r\n\r\n",
        "+2\r\n{}\r\n0\r\n\r\n",
        "2\r\n{}XX0\r\n\r\nGET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"}) {
    test_util::RawConnection c(port_);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send(head + "Transfer-Encoding: chunked\r\n\r\n" + body));
    bool closed = false;
    std::string answer = c.receive(std::chrono::seconds(60), &closed);
    EXPECT_EQ(test_util::status_of(answer), 411) << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
    EXPECT_NE(test_util::body_of(answer).find("needs a Content-Length"), std::string::npos)
        << answer;
    answer += c.receive(std::chrono::seconds(60), &closed);
    EXPECT_TRUE(closed);
    EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << "a second answer: " << answer;
  }
  std::string answer;
  // Content-Length is a number of bytes, at most 64 KiB; no request waits for a body it cannot
  // have (before, "-5" and 20 digits waited for the read timeout, then said "too large").
  const std::vector<std::pair<std::string, std::pair<int, std::string>>> lengths = {
      {"-5", {400, "Content-Length must be a whole number of bytes, got \"-5\""}},
      {"12345678901234567890", {400, "Content-Length must be a whole number"}},
      {"abc", {400, "Content-Length must be a whole number"}},
      {"65537", {413, "the request body is 65537 bytes; at most 65536"}},
      {"999999999999999999", {413, "at most 65536"}}};
  for (const auto& [length, expected] : lengths) {
    answer = test_util::raw_request(port_, head + "Content-Length: " + length + "\r\n\r\n");
    EXPECT_EQ(test_util::status_of(answer), expected.first) << length << ": " << answer;
    const json error = json::parse(test_util::body_of(answer), nullptr, false);
    EXPECT_NE(error.value("error", "").find(expected.second), std::string::npos)
        << length << ": " << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  }
  const std::vector<std::pair<std::string, int>> framings = {
      {head + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 400},
      {head + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {head + "Transfer-Encoding: gzip, chunked\r\n\r\n", 411},
      {head + "Content-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}", 415},
      {head + "\r\n{}", 411},
      {"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello", 400},
      {"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400}};
  for (const auto& [request, status] : framings) {
    answer = test_util::raw_request(port_, request);
    EXPECT_EQ(test_util::status_of(answer), status) << request << ": " << answer;
    EXPECT_NE(test_util::body_of(answer).find("\"error\""), std::string::npos) << answer;
  }
  // A URL or a header line over 8 KiB is refused in words with the limit (the URL's once with an
  // empty 414).
  const std::string long_text(9000, 'a');
  answer = test_util::raw_request(port_, "GET /api/info?x=" + long_text + " HTTP/1.1\r\nHost: "
                                         "127.0.0.1\r\n\r\n");
  EXPECT_EQ(test_util::status_of(answer), 414) << answer.substr(0, 300);
  EXPECT_NE(test_util::body_of(answer).find("URL is too long (at most 8192 bytes)"),
            std::string::npos)
      << answer.substr(0, 300);
  answer = test_util::raw_request(port_, "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                                             long_text + "\r\n\r\n");
  EXPECT_EQ(test_util::status_of(answer), 400) << answer.substr(0, 300);
  EXPECT_NE(test_util::body_of(answer).find("a header line over 8192 bytes"), std::string::npos)
      << answer.substr(0, 300);
  // Two Transfer-Encoding lines (only one would be read), and NUL bytes (the JSON reader would
  // stop at the first and ignore the rest).
  answer = test_util::raw_request(port_, head + "Transfer-Encoding: chunked\r\n"
                                                "Transfer-Encoding: gzip\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(test_util::status_of(answer), 400) << answer;
  EXPECT_NE(answer.find("more than one Transfer-Encoding"), std::string::npos) << answer;
  const std::string nul = std::string("{\"game\":\"mg\"}") + '\0' + "not json";
  answer = test_util::raw_request(
      port_, head + "Content-Length: " + std::to_string(nul.size()) + "\r\n\r\n" + nul);
  EXPECT_EQ(test_util::status_of(answer), 400) << answer;
  EXPECT_NE(answer.find("NUL byte at offset 13"), std::string::npos) << answer;
  // A client that waits for "100 Continue" hears the refusal instead, and sends no body; one whose
  // request is fine hears "100 Continue" and then the answer.
  {
    test_util::RawConnection c(port_);
    ASSERT_TRUE(c.send(head + "Content-Length: 100000\r\nExpect: 100-continue\r\n\r\n"));
    answer = c.receive(std::chrono::seconds(60));
    EXPECT_EQ(test_util::status_of(answer), 413) << answer;
    EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  }
  {
    test_util::RawConnection c(port_);
    const std::string body = "{\"game\":\"mg\"}";
    ASSERT_TRUE(c.send(head + "Content-Length: " + std::to_string(body.size()) +
                       "\r\nExpect: 100-continue\r\n\r\n"));
    answer.clear();
    bool closed = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (answer.find("\r\n\r\n") == std::string::npos && !closed &&
           std::chrono::steady_clock::now() < until) {
      answer += c.receive_some(4096, &closed);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(answer, "HTTP/1.1 100 Continue\r\n\r\n");
    ASSERT_TRUE(c.send(body));
    answer = c.receive(std::chrono::seconds(60));
    EXPECT_NE(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
  }
  // A request line httplib cannot read is a 400 that closes the connection: what follows it is
  // not a request (before, the next line, here a whole request, was answered too).
  {
    test_util::RawConnection c(port_);
    ASSERT_TRUE(c.send("get /x HTTP/1.1\r\nGET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    bool closed = false;
    answer = c.receive(std::chrono::seconds(60), &closed);
    EXPECT_EQ(test_util::status_of(answer), 400) << answer;
    answer += c.receive(std::chrono::seconds(60), &closed);
    EXPECT_TRUE(closed);
    EXPECT_EQ(answer.find("\"runs\""), std::string::npos) << answer;
  }
  // Answers are whole: thousands of ranges (each a copy of the page's script, built in memory)
  // get the script once; a malformed Range is a 416 that says so.
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 2000; ++i) ranges += ",0-";
  const std::string script = test_util::raw_request(
      port_, "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: " + ranges + "\r\n\r\n");
  EXPECT_EQ(test_util::status_of(script), 200) << script.substr(0, 300);
  auto whole = client().Get("/app.js");
  ASSERT_TRUE(whole);
  EXPECT_EQ(test_util::body_of(script), whole->body);
  answer = test_util::raw_request(
      port_, "GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=garbage\r\n\r\n");
  EXPECT_EQ(test_util::status_of(answer), 416) << answer;
  EXPECT_NE(answer.find("Range"), std::string::npos) << answer;
  // Headers count too: a request is at most 128 KiB as sent.
  std::string padded = "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 200; ++i)
    padded += "X-Pad-" + std::to_string(i) + ": " + std::string(1000, 'a') + "\r\n";
  answer = test_util::raw_request(port_, padded + "\r\n");
  EXPECT_EQ(test_util::status_of(answer), 413) << answer;
  EXPECT_NE(test_util::body_of(answer).find("the request is over 131072 bytes"), std::string::npos)
      << answer;
}

TEST_F(WebApiTest, InvalidUtf8IsABadRequestWithAMessage) {
  // Before: the error message quoted the bad bytes and could not be written: 500, empty body.
  const std::string body = "{\"game\": \"\xff\xfe\"}";
  auto res = client().Post("/api/position", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  ASSERT_FALSE(res->body.empty());
  const json answer = json::parse(res->body);
  EXPECT_NE(answer["error"].get<std::string>().find("bad JSON"), std::string::npos) << res->body;
  res = client().Post("/api/move", "{\"game\": \"mg\", \"player\": \"uct:sims=\xff\"}",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NO_THROW(json::parse(res->body)) << res->body;
}

// Last in the file: after every request above, the run folder is as it was.
TEST_F(WebApiTest, LeavesTheRunFolderUntouched) {
  get("/api/runs/tiny/summary", 200);
  get("/api/runs/tiny/games/1/0", 200);
  EXPECT_EQ(snapshot(run_->dir), *before_);
}

TEST(WebServerTest, TokenIsRequiredOnEveryRequest) {
  const fs::path root = test_util::process_temp_dir("web_token_test");
  test_util::make_tiny_run(root / "r", "dvonn", 2);
  ServerOptions options;
  options.runs = {(root / "r").string()};
  options.port = 0;
  options.token = "s3cret-token-0123";
  WebServer server(options);
  const int port = server.start();
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/api/info");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(c.Get("/")->status, 401);
  EXPECT_EQ(c.Get("/api/info", {{"Authorization", "Bearer wrong"}})->status, 401);
  EXPECT_EQ(c.Get("/api/info", {{"Authorization", "Bearer s3cret-token-0123"}})->status, 200);
  // The scheme's name in any case (RFC 9110).
  EXPECT_EQ(c.Get("/api/info", {{"Authorization", "bearer s3cret-token-0123"}})->status, 200);
  EXPECT_EQ(c.Get("/api/info?token=nope")->status, 401);
  res = c.Get("/?token=s3cret-token-0123");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const std::string cookie = res->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("oppidum_token=s3cret-token-0123"), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_EQ(c.Get("/app.js", {{"Cookie", "a=b; oppidum_token=s3cret-token-0123"}})->status, 200);
  EXPECT_EQ(c.Post("/api/position", {{"Cookie", "oppidum_token=x"}}, "{\"game\":\"mg\"}",
                   "application/json")->status,
            401);
  // A cookie of the same name planted by another site comes first (a longer path): the token
  // still counts, in the same line or in another Cookie line (before: only the first was read).
  EXPECT_EQ(c.Get("/api/info", {{"Cookie", "oppidum_token=x; oppidum_token=s3cret-token-0123"}})
                ->status,
            200);
  EXPECT_EQ(c.Get("/api/info", {{"Cookie", "oppidum_token=x"},
                                {"Cookie", "oppidum_token=s3cret-token-0123"}})
                ->status,
            200);
  EXPECT_EQ(c.Get("/api/info", {{"Cookie", "oppidum_token=x; oppidum_token=y"}})->status, 401);
  server.stop();
  fs::remove_all(root);
}

// A run is named after its folder however the folder was written: "runs/r/" (a shell completes
// a folder's name with its slash) and "." were both named "run" before.
TEST(WebServerTest, ARunIsNamedAfterItsFolderHoweverItIsWritten) {
  EXPECT_EQ(trainer::RunPaths{"runs/r/"}.name(), "r");
  EXPECT_EQ(trainer::RunPaths{"runs/r//"}.name(), "r");
  EXPECT_EQ(trainer::RunPaths{"runs/r/."}.name(), "r");
  EXPECT_EQ(trainer::RunPaths{"."}.name(), fs::current_path().filename().string());
  EXPECT_EQ(trainer::RunPaths{"/"}.name(), "");
  const fs::path root = test_util::process_temp_dir("web_run_name_test");
  test_util::make_tiny_run(root / "r1", "mg", 1);
  ServerOptions options;
  options.runs = {(root / "r1").string() + "/"};
  options.port = 0;
  WebServer server(options);
  const int port = server.start();
  httplib::Client c("127.0.0.1", port);
  const auto res = c.Get("/api/info");
  ASSERT_TRUE(res);
  const json info = json::parse(res->body);
  ASSERT_EQ(info["runs"].size(), 1u) << info;
  EXPECT_EQ(info["runs"][0]["name"], "r1");
  server.stop();
  fs::remove_all(root);
}

TEST(WebServerTest, OtherHostsGetAGeneratedToken) {
  ServerOptions options;
  options.host = "0.0.0.0";
  options.port = 0;
  WebServer server(options);
  EXPECT_EQ(server.token().size(), 32u);
  server.bind();
  EXPECT_NE(server.url().find("?token=" + server.token()), std::string::npos);
  ServerOptions loopback;
  loopback.port = 0;
  EXPECT_TRUE(WebServer(loopback).token().empty());
  ServerOptions v6 = loopback;
  v6.host = "[::1]";
  EXPECT_TRUE(WebServer(v6).token().empty()) << "util::is_loopback_host (util_test) decides";
}

TEST(WebServerTest, TokensMustResistGuessing) {
  for (const char* token : {"a", "fifteen-chars-x", "has space 0123456", "semi;colon-0123456"}) {
    ServerOptions options;
    options.port = 0;
    options.token = token;
    try {
      WebServer server(options);
      ADD_FAILURE() << "the token \"" << token << "\" was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--token must be at least 16 characters"),
                std::string::npos)
          << e.what();
    }
  }
  ServerOptions options;
  options.port = 0;
  options.token = "sixteen-chars.~_";
  EXPECT_NO_THROW(WebServer server(options));
}

TEST(WebServerTest, FoldersWithoutARunAreRefused) {
  const fs::path dir = test_util::process_temp_dir("web_not_a_run");
  fs::create_directories(dir);
  ServerOptions options;
  options.runs = {dir.string()};
  try {
    WebServer server(options);
    ADD_FAILURE() << "a folder without a run was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.string() + " is not a run folder: it has no "
                                         "config.yaml"),
              std::string::npos)
        << e.what();
  }
  // A run being created has its lock file before its config.yaml: it is served (and shows that).
  std::ofstream(dir / "lock").put('\n');
  options.port = 0;
  EXPECT_NO_THROW(WebServer server(options));
  fs::remove_all(dir);
}

TEST(WebServerTest, MissingRunFolderIsNamed) {
  ServerOptions options;
  options.runs = {"/nonexistent/run"};
  try {
    WebServer server(options);
    FAIL() << "a missing folder was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/run"), std::string::npos);
  }
}

TEST(WebServerTest, SearchesStopAtTheTimeLimitAndExtraOnesAreBusy) {
  const fs::path root = test_util::process_temp_dir("web_busy_test");
  test_util::make_tiny_run(root / "r", "mg", 1);
  ServerOptions options;
  options.runs = {(root / "r").string()};
  options.port = 0;
  options.limits.max_searches = 1;
  options.limits.search_ms = 3000;
  options.limits.max_simulations = 10000000;
  WebServer server(options);
  const int port = server.start();
  // One request first, so that the client library's own lazily built statics exist before two
  // threads use it (it is not built with ThreadSanitizer, which would see them built unguarded).
  httplib::Client c("127.0.0.1", port);
  ASSERT_EQ(c.Post("/api/position", json{{"game", "mg"}}.dump(), "application/json")->status, 200);
  json first;
  std::thread long_search([&] {
    httplib::Client searcher("127.0.0.1", port);
    searcher.set_read_timeout(60, 0);
    // A probe below may hold the one place for a moment: then this is refused too, and tries again.
    for (int attempt = 0; attempt < 100; ++attempt) {
      auto res = searcher.Post("/api/analyse",
                               json{{"game", "dvonn"}, {"player", "uct:sims=10000000"}}.dump(),
                               "application/json");
      if (!res || res->status != 503) {
        if (res && res->status == 200) first = json::parse(res->body);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  // While it runs, a second search is refused as busy (poll until the first holds its place).
  int busy = 0;
  for (int i = 0; i < 300 && busy == 0; ++i) {
    auto res = c.Post("/api/move", json{{"game", "mg"}, {"player", "random"}}.dump(),
                      "application/json");
    if (!res) {
      ADD_FAILURE() << "no answer";
      break;
    }
    if (res->status == 503) {
      ++busy;
      EXPECT_NE(res->body.find("busy"), std::string::npos);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // A network's opinion takes no search place (the page asks for two networks at each ply), its
  // network loaded or not: loads are one at a time of their own.
  auto evaluated = c.Post("/api/evaluate", json{{"game", "mg"}, {"checkpoint", "r/best"}}.dump(),
                          "application/json");
  ASSERT_TRUE(evaluated);
  EXPECT_EQ(evaluated->status, 200) << evaluated->body;
  long_search.join();
  EXPECT_EQ(busy, 1);
  ASSERT_FALSE(first.is_null());
  EXPECT_TRUE(first["out_of_time"]);
  EXPECT_LT(first["simulations"].get<int>(), 10000000);
  EXPECT_GE(first["ms"].get<double>(), 3000.0);
  evaluated = c.Post("/api/evaluate", json{{"game", "mg"}, {"checkpoint", "r/best"}}.dump(),
                     "application/json");
  ASSERT_TRUE(evaluated);
  EXPECT_EQ(evaluated->status, 200) << evaluated->body;
  // Positions need no search place.
  auto res = c.Post("/api/position", json{{"game", "mg"}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  server.stop();
  fs::remove_all(root);
}

// An analysis request over a raw connection (so that the test can leave in the middle).
std::string analyse_request(const std::string& player) {
  const std::string body = json{{"game", "mg"}, {"player", player}}.dump();
  return "POST /api/analyse HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Alpha-beta is bounded by --search-ms like every search (before: depth 10 took 4.5 s against a
// 500 ms limit, depth 12 gave no answer in 120 s), answering with its deepest completed depth.
TEST(WebServerTest, AlphaBetaStopsAtTheTimeLimit) {
  ServerOptions options;
  options.port = 0;
  options.limits.search_ms = 300;
  options.limits.max_alphabeta_depth = 12;
  WebServer server(options);
  const int port = server.start();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(120, 0);
  auto res = c.Post("/api/analyse", json{{"game", "mg"}, {"player", "alphabeta:depth=12"}}.dump(),
                    "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json a = json::parse(res->body);
  EXPECT_TRUE(a["out_of_time"]);
  EXPECT_GE(a["depth"].get<int>(), 1);
  EXPECT_LT(a["depth"].get<int>(), 12);
  EXPECT_GE(a["ms"].get<double>(), 300.0);
  res = c.Post("/api/move", json{{"game", "dvonn"}, {"player", "alphabeta:depth=12"}}.dump(),
               "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  a = json::parse(res->body);
  EXPECT_TRUE(a["out_of_time"]);
  EXPECT_EQ(a["after"]["ply"], 1);
  // A search that ends in time says so.
  res = c.Post("/api/analyse", json{{"game", "mg"}, {"player", "alphabeta:depth=1"}}.dump(),
               "application/json");
  ASSERT_TRUE(res);
  EXPECT_FALSE(json::parse(res->body)["out_of_time"]);
  // In a match too, a move on a depth budget stops at the limit (before: a move of
  // classic:depth=64 or alphabeta:depth=12 ran on past it, its place held, for minutes).
  for (const char* player : {"classic:depth=64", "alphabeta:depth=12"}) {
    const auto start = std::chrono::steady_clock::now();
    res = c.Post("/api/match",
                 json{{"game", "dvonn"}, {"a", player}, {"b", "random"}, {"games", 2}}.dump(),
                 "application/json");
    ASSERT_TRUE(res) << player;
    ASSERT_EQ(res->status, 200) << player << ": " << res->body;
    EXPECT_TRUE(json::parse(res->body)["out_of_time"]) << player << ": " << res->body;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30)) << player;
  }
  // The classical engine's table is capped at its default size (before: hash=4096 allocated
  // 4 GiB for each request, busy or not).
  res = c.Post("/api/move", json{{"game", "mg"}, {"player", "classic:depth=1,hash=17"}}.dump(),
               "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("at most 16 MB here (hash=)"), std::string::npos) << res->body;
  res = c.Post("/api/move", json{{"game", "mg"}, {"player", "classic:depth=1,hash=16"}}.dump(),
               "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  server.stop();
}

// A search whose client has left stops and frees its place (before: it ran to its end, here
// practically forever, and every later search was refused as busy).
TEST(WebServerTest, ASearchStopsWhenItsClientLeaves) {
  ServerOptions options;
  options.port = 0;
  options.limits.max_searches = 1;
  options.limits.search_ms = 600000;
  options.limits.max_alphabeta_depth = 12;
  options.limits.max_simulations = 10000000;
  WebServer server(options);
  const int port = server.start();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  const auto probe = [&] {
    return c.Post("/api/analyse", json{{"game", "mg"}, {"player", "uct:sims=5"}}.dump(),
                  "application/json");
  };
  for (const char* player : {"alphabeta:depth=12", "uct:sims=10000000"}) {
    // The search holds the one place until its client leaves (at once); then it is free again.
    const auto status = [&] {
      auto res = probe();
      return res ? res->status : 0;
    };
    ASSERT_NE(test_util::hold_the_search_place(port, analyse_request(player), status), nullptr)
        << player;
    EXPECT_TRUE(test_util::wait_until(
        [&] {
          auto res = probe();
          return res && res->status == 200;
        },
        std::chrono::seconds(30)))
        << player << ": the search went on after its client left";
  }
  server.stop();
}

// stop() during a search stops the search, answers its client 503 and returns (before: it waited
// for the search to end).
TEST(WebServerTest, StopEndsASearchInProgress) {
  ServerOptions options;
  options.port = 0;
  options.limits.max_searches = 1;
  options.limits.search_ms = 600000;
  options.limits.max_alphabeta_depth = 12;
  WebServer server(options);
  const int port = server.start();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  // Once the search (it would run for hours) holds the one place, the server stops.
  const std::unique_ptr<test_util::RawConnection> searching =
      test_util::hold_the_search_place(port, analyse_request("alphabeta:depth=12"), [&] {
        const json quick = {{"game", "mg"}, {"player", "alphabeta:depth=1"}};
        auto res = c.Post("/api/move", quick.dump(), "application/json");
        return res ? res->status : 0;
      });
  ASSERT_NE(searching, nullptr) << "the search never held its place";
  const auto start = std::chrono::steady_clock::now();
  server.stop();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30.0);  // a fraction of a second here; hours before
  const std::string answer = searching->receive(std::chrono::seconds(30));
  EXPECT_EQ(test_util::status_of(answer), 503) << answer;
  EXPECT_NE(test_util::body_of(answer).find("the server is stopping"), std::string::npos)
      << answer;
}

ServerOptions small_connection_limits() {
  ServerOptions options;
  options.port = 0;
  options.connections.max_connections = 4;
  options.connections.max_per_client = 2;
  options.connections.request_timeout = std::chrono::milliseconds(1500);
  options.connections.keep_alive_timeout = std::chrono::milliseconds(1500);
  return options;
}

// Connections that each sent "G" and then trickle a byte every 100 ms until every one of them
// has been answered and closed by the server; their answers, in their order.
std::vector<std::string> trickle_until_closed(
    std::vector<std::unique_ptr<test_util::RawConnection>>& connections) {
  std::atomic<bool> trickling{true};
  std::thread trickle([&] {
    while (trickling.load()) {
      for (auto& c : connections) c->send("E");  // refused once the server has closed it
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::vector<std::string> answers;
  for (auto& c : connections) {
    bool closed = false;
    answers.push_back(c->receive(std::chrono::seconds(60), &closed));
    if (closed) c->receive(std::chrono::seconds(60), &closed);  // the rest, if any
  }
  trickling.store(false);
  trickle.join();
  return answers;
}

int count_status(const std::vector<std::string>& answers, int status) {
  return static_cast<int>(std::count_if(answers.begin(), answers.end(), [&](const auto& a) {
    return test_util::status_of(a) == status;
  }));
}

// A body not sent whole in time is a 408 that says so, as a request line is (it was a 400 "could
// not be read"); one whose headers and body pass the request's size is a 413.
TEST(WebServerTest, ABodyNotSentInTimeIs408AndOneTooLargeIs413) {
  WebServer server(small_connection_limits());
  const int port = server.start();
  const std::string head =
      "POST /api/moves HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  test_util::RawConnection late(port);
  ASSERT_TRUE(late.send(head + "Content-Length: 13\r\n\r\n{\"ga"));
  const std::string timed_out = late.receive(std::chrono::seconds(30));
  EXPECT_EQ(test_util::status_of(timed_out), 408) << timed_out;
  EXPECT_NE(test_util::body_of(timed_out).find("the request was not sent whole within 1500 ms"),
            std::string::npos)
      << timed_out;
  std::string headers;  // 100 KiB in headers of 5 KiB each
  for (int i = 0; i < 20; ++i)
    headers += "X-Pad-" + std::to_string(i) + ": " + std::string(5 * 1024, 'a') + "\r\n";
  const std::string body = "{\"game\":\"mg\",\"x\":\"" + std::string(40 * 1024, 'b') + "\"}";
  const std::string answer = test_util::raw_request(
      port, head + headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                body);
  EXPECT_EQ(test_util::status_of(answer), 413) << answer.substr(0, 300);
  server.stop();
}

// Clients that send a request a byte at a time hold at most max_per_client connections each, and
// each only for request_timeout, while other clients are answered (before: ten of them stalled
// every request, for as long as they kept sending).
TEST(WebServerTest, SlowClientsAreCappedAndCutWhileOthersAreAnswered) {
  WebServer server(small_connection_limits());
  const int port = server.start();
  std::vector<std::unique_ptr<test_util::RawConnection>> slow;
  for (int i = 0; i < 3; ++i) {  // one more than max_per_client from 127.0.0.2
    slow.push_back(std::make_unique<test_util::RawConnection>(port, "127.0.0.2"));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send("G"));
  }
  // While they trickle, another client is answered, on one kept-alive connection: a client that
  // opened one per request would also count, until the server's thread released them, the ones
  // it had just closed (on a loaded machine two of them filled the 4 places, or its 2).
  std::vector<std::string> answers;
  std::thread slow_clients([&] { answers = trickle_until_closed(slow); });
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_read_timeout(60, 0);
  for (int i = 0; i < 3; ++i) {
    auto res = c.Get("/api/info");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
  }
  slow_clients.join();
  // One was refused at once; the two others were cut once their request_timeout passed, however
  // they kept sending.
  EXPECT_EQ(count_status(answers, 503), 1);
  EXPECT_EQ(count_status(answers, 408), 2);
  for (const std::string& a : answers) {
    if (test_util::status_of(a) == 503) {
      EXPECT_NE(test_util::body_of(a).find("too many connections from 127.0.0.2 (at most 2"),
                std::string::npos) << a;
    } else {
      EXPECT_NE(test_util::body_of(a).find("the request was not sent whole within 1500 ms"),
                std::string::npos) << a;
    }
  }
  slow.clear();  // they leave: their places are free again
  EXPECT_TRUE(test_util::wait_until(
      [&] {
        const std::string a = test_util::raw_request(
            port, "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "127.0.0.2");
        return test_util::status_of(a) == 200;
      },
      std::chrono::seconds(30)));
  server.stop();
}

// Past max_connections in all, a new connection is refused at once instead of waiting.
TEST(WebServerTest, TheTotalConnectionCapRefusesAtOnce) {
  WebServer server(small_connection_limits());
  const int port = server.start();
  std::vector<std::unique_ptr<test_util::RawConnection>> slow;
  for (int i = 0; i < 5; ++i) {  // five clients, one connection each: one over the cap
    slow.push_back(std::make_unique<test_util::RawConnection>(
        port, "127.0.1." + std::to_string(i + 1)));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send("G"));
  }
  const std::vector<std::string> answers = trickle_until_closed(slow);
  EXPECT_EQ(count_status(answers, 503), 1);
  EXPECT_EQ(count_status(answers, 408), 4);
  for (const std::string& a : answers) {
    if (test_util::status_of(a) == 503) {
      EXPECT_NE(test_util::body_of(a).find("connections open, its limit"), std::string::npos)
          << a;
    }
  }
  slow.clear();  // they leave: their places are free again
  EXPECT_TRUE(test_util::wait_until(
      [&] {
        const std::string a = test_util::raw_request(
            port, "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        return test_util::status_of(a) == 200;
      },
      std::chrono::seconds(30)));
  server.stop();
}

// A connection left idle after its answer is closed once keep_alive_timeout has passed.
TEST(WebServerTest, IdleConnectionsAreClosed) {
  WebServer server(small_connection_limits());
  const int port = server.start();
  test_util::RawConnection idle(port);
  ASSERT_TRUE(idle.send("GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  bool closed = false;
  EXPECT_EQ(test_util::status_of(idle.receive(std::chrono::seconds(30), &closed)), 200);
  EXPECT_EQ(idle.receive(std::chrono::seconds(30), &closed), "");  // nothing more, then the close
  EXPECT_TRUE(closed);
  server.stop();
}

// An answer must be taken whole within write_timeout: a client that takes it a little at a time
// (each write making progress, but the whole far too slowly) is cut.
TEST(WebServerTest, AnAnswerMustBeTakenWithinTheWriteTimeout) {
  ConnectionLimits limits;
  limits.write_timeout = std::chrono::milliseconds(2000);
  GuardedServer http(limits);
  const std::string big(64 << 20, 'x');
  http.Get("/big", [&big](const httplib::Request&, httplib::Response& res) {
    res.set_content(big, "text/plain");
  });
  const int port = http.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&http] { http.listen_after_bind(); });
  ASSERT_TRUE(test_util::wait_until([&] { return http.is_running(); }, std::chrono::seconds(30)));
  test_util::RawConnection reader(port);
  ASSERT_TRUE(reader.send("GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  // 4 s of 1 MiB every 200 ms: every write goes on, but the whole answer would take 13 s...
  std::string taken;
  bool closed = false;
  for (int i = 0; i < 20 && !closed; ++i) {
    taken += reader.receive_some(1 << 20, &closed);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // ... so the server has given up: reading all there is finds the answer cut, the connection
  // closed.
  while (!closed) {
    const std::string more = reader.receive(std::chrono::seconds(30), &closed);
    if (more.empty()) break;
    taken += more;
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(taken.size(), big.size()) << "the server wrote the whole answer to a slow reader";
  http.begin_stop();
  http.stop();
  serving.join();
}

}  // namespace
}  // namespace oppidum::web

namespace oppidum::web {
namespace {

TEST(RunReaderTest, ConfigOfAnotherVersionIsReadLeniently) {
  const fs::path dir = test_util::process_temp_dir("web_lenient_config");
  test_util::make_tiny_run(dir, "dvonn", 3);
  std::ofstream(dir / "config.yaml") << "run:\n  game: dvonn\nselfplay:\n  future_key: 3\n"
                                        "training:\n  steps_per_generation: 10\n";
  RunReader reader("r", dir);
  const json s = reader.summary();
  EXPECT_EQ(s["game"], "dvonn");
  EXPECT_NE(s["config_error"].get<std::string>().find("future_key"), std::string::npos);
  const json page = reader.list_games(GameFilter{});
  ASSERT_EQ(page["games"].size(), 3u);
  EXPECT_EQ(page["games"][0]["generation"], 2);  // network step 20, 10 steps per generation
  fs::remove_all(dir);
}

// A checkpoint that cannot be loaded is said once by its name (it was "checkpoint r/x: checkpoint
// r/x: ..."), and remembered while the file stays as it is: a damaged file announcing 2 GiB was
// read again, 8 s each time, for every request that named it. A file replaced is loaded anew.
TEST(GameServiceTest, ACheckpointThatFailedIsRememberedUntilItsFileChanges) {
  const fs::path dir = test_util::process_temp_dir("web_failed_checkpoint");
  test_util::TinyRun run = test_util::make_tiny_run(dir / "run", "mg", 2);
  const fs::path good = trainer::RunPaths{run.dir}.best();
  const fs::path bad = dir / "bad.ckpt";
  std::ofstream(bad) << "not a checkpoint";
  GameService service([&](const std::string&) { return bad; }, Limits{});
  const json request = {{"game", "mg"}, {"checkpoint", "r/x"}};
  std::string first;
  try {
    service.evaluate(request);
    ADD_FAILURE() << "a damaged checkpoint evaluated";
  } catch (const BadRequest& e) {
    first = e.what();
  }
  EXPECT_EQ(first.rfind("checkpoint r/x: ", 0), 0u) << first;
  EXPECT_EQ(first.find("checkpoint r/x: checkpoint"), std::string::npos) << first;
  EXPECT_EQ(first.find(bad.string()), std::string::npos) << "the server's path: " << first;
  try {
    service.evaluate(request);
  } catch (const BadRequest& e) {
    EXPECT_EQ(std::string(e.what()), first);
  }
  fs::remove(bad);
  fs::copy_file(good, bad);  // the file replaced: loaded anew
  EXPECT_NO_THROW(service.evaluate(request));
  fs::remove_all(dir);
}

// A config.yaml that is a link is not read: the config reader's errors quote what they read, and
// a link to another file (/etc/shadow, when the server runs as root) showed its first line to
// every client.
TEST(RunReaderTest, AConfigThatIsALinkIsNotRead) {
  const fs::path dir = test_util::process_temp_dir("web_config_link");
  test_util::make_tiny_run(dir, "mg", 2);
  std::ofstream(dir / "secret.txt") << "the secret: 42\n";
  fs::remove(dir / "config.yaml");
  fs::create_symlink(dir / "secret.txt", dir / "config.yaml");
  RunReader reader("r", dir);
  const json s = reader.summary();
  EXPECT_EQ(s.dump().find("secret"), std::string::npos) << s.dump();
  EXPECT_NE(s["config_error"].get<std::string>().find("config.yaml: not a regular file (a symbolic link)"),
            std::string::npos)
      << s.dump();
  fs::remove_all(dir);
}

// The game of a config read leniently is looked up in the registry (games/registry.h): another
// spelling of a registered game is that game, an unknown name is no game.
TEST(RunReaderTest, ALenientlyReadGameIsARegisteredGameOrNone) {
  const fs::path dir = test_util::process_temp_dir("web_lenient_game");
  test_util::make_tiny_run(dir, "mg", 2);
  std::ofstream(dir / "config.yaml") << "run:\n  game: murus-gallicus\nfuture_key: 1\n";
  RunReader reader("r", dir);
  EXPECT_EQ(reader.summary()["game"], "mg");
  std::ofstream(dir / "config.yaml") << "run:\n  game: chess\nfuture_key: 2\n";
  fs::last_write_time(dir / "config.yaml",
                      fs::last_write_time(dir / "config.yaml") + std::chrono::seconds(5));
  const json s = reader.summary();
  EXPECT_EQ(s["game"], "");
  EXPECT_NE(s["config_error"].get<std::string>().find("future_key"), std::string::npos);
  fs::remove_all(dir);
}

// A game asked for in a damaged chunk is said to be missing because the file is damaged, and how
// (it read "has no game 0 (0 games)"), without the server's path.
TEST(RunReaderTest, AGameOfADamagedChunkSaysWhatIsWrong) {
  const fs::path dir = test_util::process_temp_dir("web_damaged_chunk");
  test_util::make_tiny_run(dir, "mg", 4);
  fs::path chunk;
  for (const auto& entry : fs::directory_iterator(dir / "games"))
    if (entry.path().extension() == ".bin") chunk = entry.path();
  ASSERT_FALSE(chunk.empty());
  fs::resize_file(chunk, fs::file_size(chunk) - 5);  // the last record cut short
  RunReader reader("r", dir);
  try {
    reader.game_record(0, 3);
    ADD_FAILURE() << "a cut record was read";
  } catch (const NotFound& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("(3 intact games; 1 problem(s), the first: the file: record 3 at byte"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find(dir.string()), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(RunReaderTest, NewChunksAreIndexedAndVanishedOnesDropped) {
  const fs::path dir = test_util::process_temp_dir("web_growing_run");
  test_util::make_tiny_run(dir, "mg", 4);  // one chunk
  RunReader reader("r", dir);
  EXPECT_EQ(reader.indexed_games(), 4);
  selfplay::write_game_file((dir / "games" / "chunk-00000001.bin").string(),
                            {test_util::random_record("mg", 5), test_util::random_record("mg", 6)});
  EXPECT_EQ(reader.indexed_games(), 6);
  EXPECT_EQ(reader.list_games(GameFilter{})["games"][0]["chunk"], 1);
  fs::remove(dir / "games" / "chunk-00000000.bin");
  EXPECT_EQ(reader.indexed_games(), 2);
  EXPECT_THROW(reader.game_record(0, 0), NotFound);
  fs::remove_all(dir);
}

// Record lines name their game (arena/game_record.h): a tic-tac-toe game, whose moves are also
// legal DVONN placements, is tic-tac-toe; a line of the older format (no game) is still read.
TEST(ArenaReaderTest, RecordLinesNameTheirGame) {
  const fs::path dir = test_util::process_temp_dir("web_arena_named_game");
  fs::create_directories(dir);
  std::ofstream(dir / "ttt.txt") << "ttt random random 1-0 a1 a2 b1 b2 c1\n";
  ArenaReader ttt("ttt.txt", dir / "ttt.txt");
  EXPECT_EQ(ttt.info()["game"], "ttt") << ttt.info().dump();
  EXPECT_EQ(ttt.info()["games"], 1);
  EXPECT_EQ(ttt.info()["skipped"], 0);
  std::ofstream(dir / "old.txt") << "random random 1-0 a1 a2 b1 b2 c1\n";
  ArenaReader old("old.txt", dir / "old.txt");
  EXPECT_EQ(old.info()["games"], 1);
  EXPECT_NE(old.info()["game"], "") << old.info().dump();
  fs::remove_all(dir);
}

// A record file is read a line at a time and kept as an index of where each game's line starts: a
// file that grows (a match still recording) is read on from its last whole line, a last line
// without its newline is counted and read again once it is whole, a rewritten file is read again
// from its start, a line longer than any game is skipped, and a game asked for is read from its
// line alone.
TEST(ArenaReaderTest, AGrowingFileIsReadOnAndEachGameFromItsLine) {
  const fs::path dir = test_util::process_temp_dir("web_arena_growing");
  fs::create_directories(dir);
  const fs::path file = dir / "m.txt";
  std::ofstream(file) << "ttt a b 1-0 a1 a2 b1 b2 c1\n"
                      << "ttt a b 1-0 " << std::string(arena::kMaxRecordLineBytes, 'x') << "\n"
                      << "ttt b a 0-1 a1 a2 b1 b2 c3 c2";  // no newline yet
  ArenaReader reader("m.txt", file);
  EXPECT_EQ(reader.info()["games"], 2) << reader.info().dump();
  EXPECT_EQ(reader.info()["skipped"], 1) << "the line longer than any game";
  EXPECT_EQ(reader.game_record(1)["moves"].size(), 6u);
  std::ofstream(file, std::ios::app) << "\nttt c a 1/2-1/2 a1 b2 c3 b1 b3 a3 c1 c2 a2\n";
  EXPECT_EQ(reader.info()["games"], 3) << "the last line was counted twice or not again";
  EXPECT_EQ(reader.game_record(1)["second"], "a");
  EXPECT_EQ(reader.game_record(2)["first"], "c");
  EXPECT_EQ(reader.game_record(2)["result"], "1/2-1/2");
  EXPECT_EQ(reader.list_games(0, 10, "c", "")["total"], 1);
  std::ofstream(file, std::ios::trunc) << "ttt d e 0-1 a1 a2 b1 b2 c3 c2\n";  // rewritten, shorter
  EXPECT_EQ(reader.info()["games"], 1);
  EXPECT_EQ(reader.info()["skipped"], 0);
  EXPECT_EQ(reader.game_record(0)["first"], "d");
  EXPECT_THROW(reader.game_record(1), NotFound);
  // Rewritten in place and longer (the same inode, as `cp` over it makes): read again from its
  // start, not read on from where the old content ended.
  std::ofstream(file, std::ios::trunc) << "ttt f g 1-0 a1 a2 b1 b2 c1\n"
                                       << "ttt h i 0-1 a1 a2 b1 b2 c3 c2\n"
                                       << "ttt j k 1-0 a1 a2 b1 b2 c1\n";
  EXPECT_EQ(reader.info()["games"], 3) << reader.info().dump();
  EXPECT_EQ(reader.info()["skipped"], 0);
  EXPECT_EQ(reader.game_record(0)["first"], "f");
  EXPECT_EQ(reader.game_record(2)["first"], "j");
  fs::remove_all(dir);
}

// A match's games come with both colour orders (and two matches of the same players may share a
// file): the ratings count one line per pair of players, from its first player's view.
TEST(ArenaReaderTest, ResultsAreOneLinePerPairOfPlayersWhoeverMovedFirst) {
  const fs::path dir = test_util::process_temp_dir("web_arena_pairs");
  fs::create_directories(dir);
  std::ofstream(dir / "m.txt") << "ttt a b 1-0 a1 a2 b1 b2 c1\n"
                                  "ttt b a 1-0 a1 a2 b1 b2 c1\n"
                                  "ttt b a 0-1 a1 a2 b1 b2 c1\n"
                                  "ttt a b 1/2-1/2 a1 b2 c3 b1 b3 a3 c1 c2 a2\n"
                                  "ttt a c 0-1 a1 a2 b1 b2 c3 c2\n";
  ArenaReader reader("m.txt", dir / "m.txt");
  const std::vector<SourceResults> results = reader.results();
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].matches.size(), 2u);
  const arena::MatchLine& ab = results[0].matches[0];
  EXPECT_EQ(ab.a, "a");
  EXPECT_EQ(ab.b, "b");
  EXPECT_EQ(std::vector<int>({ab.wins, ab.draws, ab.losses}), std::vector<int>({2, 1, 1}));
  const arena::MatchLine& ac = results[0].matches[1];
  EXPECT_EQ(std::vector<int>({ac.wins, ac.draws, ac.losses}), std::vector<int>({0, 0, 1}));
  // The counts are kept between calls, and follow the file as it grows and when it is rewritten.
  std::ofstream(dir / "m.txt", std::ios::app) << "ttt c a 1-0 a1 a2 b1 b2 c1\n";
  std::vector<SourceResults> grown = reader.results();
  ASSERT_EQ(grown.size(), 1u);
  ASSERT_EQ(grown[0].matches.size(), 2u);
  const arena::MatchLine& ac2 = grown[0].matches[1];
  EXPECT_EQ(std::vector<int>({ac2.wins, ac2.draws, ac2.losses}), std::vector<int>({0, 0, 2}));
  std::ofstream(dir / "m.txt", std::ios::trunc) << "ttt d e 0-1 a1 a2 b1 b2 c3 c2\n";
  const std::vector<SourceResults> rewritten = reader.results();
  ASSERT_EQ(rewritten.size(), 1u);
  ASSERT_EQ(rewritten[0].matches.size(), 1u);
  EXPECT_EQ(rewritten[0].matches[0].a, "d");
  EXPECT_EQ(rewritten[0].matches[0].losses, 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oppidum::web
