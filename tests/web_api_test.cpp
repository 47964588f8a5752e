// The JSON API of `oppidum serve` (web/server.h), through an HTTP client against the server on a
// free loopback port: the dashboard, game listings and replays of a tiny run, positions, moves,
// analyses and network evaluations; bad input refused with a message; the token and Host checks;
// requests that try to leave the run folders; and a run folder left exactly as it was.
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/web_test_util.h"
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
}

TEST_F(WebApiTest, InfoListsTheRunsAndLimits) {
  const json info = get("/api/info", 200);
  ASSERT_EQ(info["runs"].size(), 1u);
  EXPECT_EQ(info["runs"][0]["name"], "tiny");
  EXPECT_EQ(info["runs"][0]["game"], "mg");
  EXPECT_EQ(info["limits"]["max_simulations"], 2000);
}

TEST_F(WebApiTest, SummaryHoldsTheCurvesGatesAndProgress) {
  const json s = get("/api/runs/tiny/summary", 200);
  EXPECT_EQ(s["game"], "mg");
  EXPECT_EQ(s["losses"].size(), static_cast<std::size_t>(run_->train_rows));
  EXPECT_DOUBLE_EQ(s["losses"][0][0].get<double>(), 1.0);   // step
  EXPECT_NEAR(s["losses"][0][1].get<double>(), 2.95, 1e-9);  // policy loss
  EXPECT_EQ(s["gates"].size(), static_cast<std::size_t>(run_->gates));
  EXPECT_EQ(s["generation"], 3);
  EXPECT_EQ(s["best"], 3);  // generation 2 was not promoted, 3 was
  EXPECT_EQ(s["stored"]["games"], run_->games);
  EXPECT_EQ(s["progress"]["step"], 30);
  EXPECT_FALSE(s["speed"].empty());
  EXPECT_FALSE(s["version"].get<std::string>().empty());
  EXPECT_EQ(s["config"]["steps_per_generation"], 10);
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
}

TEST_F(WebApiTest, ReplaysOneGame) {
  const json g = get("/api/runs/tiny/games/0/1", 200);
  const selfplay::GameRecord& r = run_->records[1];
  ASSERT_EQ(g["moves"].size(), r.moves.size());
  ASSERT_EQ(g["positions"].size(), r.moves.size() + 1);
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
  EXPECT_TRUE(game_by_name("mg").parse_state(g["positions"].back().get<std::string>())->is_terminal());
  expect_error(get("/api/arena/arena-games.txt/games/2", 404), "has no game 2");
  expect_error(get("/api/arena/other.txt/games", 404), "no arena record file");
  expect_error(get("/api/arena/arena-games.txt/games?result=win", 400), "result must be");
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

TEST_F(WebApiTest, BadPositionsAndMovesAreRefusedWithWhere) {
  expect_error(post("/api/position", {{"game", "chess"}}, 400), "game");
  expect_error(post("/api/position", json::object(), 400), "\"game\" is missing");
  expect_error(post("/api/position", {{"game", "mg"}, {"start", "xyz"}}, 400), "start position");
  expect_error(post("/api/position", {{"game", "mg"}, {"moves", {"d1-d3", "d1-d3"}}}, 400),
               "move 2 (\"d1-d3\")");
  expect_error(post("/api/position", {{"game", "mg"}, {"moves", "d1-d3"}}, 400), "array");
  expect_error(post("/api/position", {{"game", "mg"}, {"moves", {1}}}, 400), "move 1 must be");
  auto res = client().Post("/api/position", "{\"game\": ", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("bad JSON"), std::string::npos);
  res = client().Post("/api/position", "{\"game\": \"mg\"}", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("Content-Type: application/json"), std::string::npos);
  res = client().Post("/api/position", std::string(100 * 1024, ' '), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

TEST_F(WebApiTest, PlayersAnswerLegalMoves) {
  for (const char* player : {"random", "uct:sims=50", "alphabeta:depth=2",
                             "net:checkpoint=tiny/best,sims=20", "net:checkpoint=tiny/gen-0001,sims=5"}) {
    const json m = post("/api/move", {{"game", "mg"}, {"moves", {"d1-d3"}}, {"player", player}}, 200);
    const json p = post("/api/position", {{"game", "mg"}, {"moves", {"d1-d3"}}}, 200);
    const auto& legal = p["legal"];
    EXPECT_NE(std::find(legal.begin(), legal.end(), m["move"]), legal.end()) << player;
    EXPECT_EQ(m["after"]["ply"], 2) << player;
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

TEST_F(WebApiTest, AnalysesAndEvaluates) {
  const json a = post("/api/analyse", {{"game", "mg"}, {"player", "uct:sims=200"}}, 200);
  EXPECT_EQ(a["kind"], "search");
  EXPECT_EQ(a["simulations"], 200);
  int visits = 0;
  for (const auto& t : a["top"]) visits += t["visits"].get<int>();
  EXPECT_LE(visits, 200);
  EXPECT_GT(visits, 100);  // the top 10 of 20 moves hold most visits
  EXPECT_EQ(a["top"][0]["move"], a["best"]);
  EXPECT_FALSE(a["pv"].empty());
  const json ab = post("/api/analyse", {{"game", "dvonn"}, {"player", "alphabeta:depth=2"}}, 200);
  EXPECT_EQ(ab["kind"], "alphabeta");
  EXPECT_EQ(ab["depth"], 2);
  expect_error(post("/api/analyse", {{"game", "mg"}, {"player", "random"}}, 400), "does not search");

  const json e = post("/api/evaluate", {{"game", "mg"}, {"checkpoint", "tiny/best"}}, 200);
  EXPECT_GE(e["value"].get<double>(), -1.0);
  EXPECT_LE(e["value"].get<double>(), 1.0);
  EXPECT_EQ(e["top"].size(), 10u);
  double priors = 0;
  for (const auto& t : e["top"]) priors += t["prior"].get<double>();
  EXPECT_GT(priors, 0.0);
  EXPECT_LE(priors, 1.0 + 1e-5);
}

TEST_F(WebApiTest, RequestsForOtherHostsAreRefused) {
  httplib::Client c("127.0.0.1", port_);
  auto res = c.Get("/api/info", {{"Host", "evil.example:80"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
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
  options.token = "s3cret-token";
  WebServer server(options);
  const int port = server.start();
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/api/info");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(c.Get("/")->status, 401);
  EXPECT_EQ(c.Get("/api/info", {{"Authorization", "Bearer wrong"}})->status, 401);
  EXPECT_EQ(c.Get("/api/info", {{"Authorization", "Bearer s3cret-token"}})->status, 200);
  EXPECT_EQ(c.Get("/api/info?token=nope")->status, 401);
  res = c.Get("/?token=s3cret-token");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const std::string cookie = res->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("oppidum_token=s3cret-token"), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_EQ(c.Get("/app.js", {{"Cookie", "a=b; oppidum_token=s3cret-token"}})->status, 200);
  EXPECT_EQ(c.Post("/api/position", {{"Cookie", "oppidum_token=x"}}, "{\"game\":\"mg\"}",
                   "application/json")->status,
            401);
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
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("192.168.1.2"));
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
  ServerOptions options;
  options.port = 0;
  options.limits.max_searches = 1;
  options.limits.search_ms = 1500;
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
  long_search.join();
  EXPECT_EQ(busy, 1);
  ASSERT_FALSE(first.is_null());
  EXPECT_TRUE(first["out_of_time"]);
  EXPECT_LT(first["simulations"].get<int>(), 10000000);
  EXPECT_GE(first["ms"].get<double>(), 1500.0);
  // Positions need no search place.
  auto res = c.Post("/api/position", json{{"game", "mg"}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  server.stop();
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

}  // namespace
}  // namespace oppidum::web
