// `oppidum serve` under abuse, as a hostile network would treat it (issue #25): clients that send a
// byte a second, a chunked body of 200 MiB, searches past their time limit or left by their client,
// and SIGTERM during a search. Each case starts its own server process on a free loopback port and
// checks what docs/WEB.md ("Security") promises. Label `fault`.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/process_util.h"
#include "tests/raw_http.h"

namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;
using oppidum::test_util::BackgroundProcess;
using oppidum::test_util::body_of;
using oppidum::test_util::RawConnection;
using oppidum::test_util::hold_the_search_place;
using oppidum::test_util::raw_request;
using oppidum::test_util::read_file;
using oppidum::test_util::status_of;
using oppidum::test_util::wait_until;

// OPPIDUM_TEST_BINARY runs the cases against another build (e.g. an older one, to see them fail).
const std::string kBinary =
    std::getenv("OPPIDUM_TEST_BINARY") ? std::getenv("OPPIDUM_TEST_BINARY") : OPPIDUM_BINARY;

// An `oppidum serve` of its own on a free loopback port, killed (if still running) at the end.
class Server {
 public:
  Server(const std::string& name, const std::string& options)
      : log_(fs::path(::testing::TempDir()) /
             ("fault_web_" + name + "-" + std::to_string(::getpid()) + ".log")),
        process_(kBinary + " serve --port 0 " + options + " >" + log_.string() + " 2>&1") {
    static const std::regex kUrl(R"(open http://127\.0\.0\.1:([0-9]+)/)");
    std::smatch match;
    wait_until(
        [&] {
          const std::string log = read_file(log_.string());
          if (std::regex_search(log, match, kUrl)) port_ = std::stoi(match[1]);
          return port_ > 0 || process_.wait_for(0ms).has_value();
        },
        60s);
  }
  ~Server() { fs::remove(log_); }

  int port() const { return port_; }
  BackgroundProcess& process() { return process_; }
  std::string log() const { return read_file(log_.string()); }
  // Resident memory of the server process in KiB (0 when it cannot be read).
  long rss_kib() const {
    std::ifstream status("/proc/" + std::to_string(process_.pid()) + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    return 0;
  }
  std::string get(const std::string& path, const std::string& from = "127.0.0.1") const {
    return raw_request(port_, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", from, 60s);
  }

 private:
  fs::path log_;
  BackgroundProcess process_;
  int port_ = -1;
};

std::string post_request(const std::string& path, const json& body) {
  const std::string text = body.dump();
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
}

// Ten clients from one address send a request a byte a second (before: they stalled every other
// request for as long as they kept sending). Now at most 8 of them hold a connection, each for
// at most 10 s, and other clients are answered all the while.
TEST(FaultWebTest, SlowClientsDoNotStallOthers) {
  Server server("slow", "");
  ASSERT_GT(server.port(), 0) << server.log();
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server.port(), "127.0.0.2"));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send("G"));
  }
  std::atomic<bool> trickling{true};
  std::thread trickle([&] {  // a byte a second each, for at most 40 s
    for (int second = 0; second < 40 && trickling.load(); ++second) {
      for (auto& c : slow) c->send("E");
      for (int i = 0; i < 10 && trickling.load(); ++i) std::this_thread::sleep_for(100ms);
    }
  });
  // Other clients are answered while the slow ones trickle.
  for (int i = 0; i < 3; ++i) {
    const std::string answer = raw_request(server.port(),
                                           "GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                                           "127.0.0.1", 30s);
    EXPECT_EQ(status_of(answer), 200) << "request " << i << " stalled: \"" << answer << "\"";
  }
  // Two of them were refused at once; the others are cut by the request deadline.
  std::vector<std::string> answers;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (auto& c : slow) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    answers.push_back(c->receive(std::max(left, std::chrono::milliseconds(1))));
  }
  trickling.store(false);
  trickle.join();
  const auto count = [&](int status) {
    return std::count_if(answers.begin(), answers.end(),
                         [&](const std::string& a) { return status_of(a) == status; });
  };
  EXPECT_EQ(count(503), 2);
  EXPECT_EQ(count(408), 8);
  for (const std::string& a : answers) {
    if (status_of(a) == 503) {
      EXPECT_NE(body_of(a).find("too many connections from 127.0.0.2 (at most 8"),
                std::string::npos) << a;
    } else {
      EXPECT_NE(body_of(a).find("the request was not sent whole within 10000 ms"),
                std::string::npos) << a;
    }
  }
  EXPECT_EQ(server.process().wait_for(0ms), std::nullopt) << server.log();
}

// One client that opens connection after connection, keeping each open without a word: every one
// past its 8 is refused, and a refusal used to hold a thread for 100 ms, so a fast enough flood
// took all the server's threads and everyone else got "the server is out of threads". A refusal
// now holds its thread for no time: other clients are answered all through the flood.
TEST(FaultWebTest, OneClientsFloodOfRefusedConnectionsTakesNoThreadFromOthers) {
  Server server("flood", "");
  ASSERT_GT(server.port(), 0) << server.log();
  std::atomic<bool> flooding{true};
  std::atomic<int> opened{0};
  std::thread flood([&] {
    std::vector<std::unique_ptr<RawConnection>> held;
    while (flooding.load() && held.size() < 4000) {
      held.push_back(std::make_unique<RawConnection>(server.port(), "127.0.0.2"));
      if (held.size() % 1000 == 0) held.erase(held.begin(), held.begin() + 500);
      ++opened;
    }
    while (flooding.load()) std::this_thread::sleep_for(10ms);
  });
  ASSERT_TRUE(wait_until([&] { return opened.load() > 50; }, 30s));
  // At least 20 requests, and on until 100 more connections flooded in meanwhile (a loaded
  // machine may starve the flood for a while).
  const int opened_before = opened.load();
  int asked = 0, answered = 0;
  std::string refused;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while ((asked < 20 || opened.load() - opened_before < 100) &&
         std::chrono::steady_clock::now() < deadline) {
    const std::string answer = server.get("/api/info");
    ++asked;
    if (status_of(answer) == 200) ++answered;
    else refused = answer;
  }
  const int during = opened.load() - opened_before;
  flooding.store(false);
  flood.join();
  EXPECT_EQ(answered, asked) << "answered while " << during << " connections flooded in: "
                             << refused;
  EXPECT_GE(during, 100) << "the flood was too slow to tell";
  EXPECT_EQ(server.process().wait_for(0ms), std::nullopt) << server.log();
}

// A chunked body is refused unread (before: 200 MiB were accepted, +450 MB of memory; then read up
// to 64 KiB by httplib's lax chunk reader): the server answers 411 and closes the connection; its
// memory does not grow with the body.
TEST(FaultWebTest, AChunkedBodyIsRefusedUnread) {
  Server server("chunked", "");
  ASSERT_GT(server.port(), 0) << server.log();
  ASSERT_EQ(status_of(server.get("/api/info")), 200);
  const long rss_before = server.rss_kib();
  ASSERT_GT(rss_before, 0);
  RawConnection c(server.port());
  ASSERT_TRUE(c.send("POST /api/position HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "100000\r\n" + std::string(1 << 20, ' ') + "\r\n";  // 1 MiB
  std::string answer;
  int sent_mib = 0;
  for (; sent_mib < 200 && answer.empty(); ++sent_mib) {
    if (!c.send(chunk)) break;              // the server closed the connection
    answer = c.receive(std::chrono::milliseconds(1));  // or has answered already
  }
  if (answer.empty()) answer = c.receive(5s);  // (may be lost when the close reset it)
  if (!answer.empty()) {
    EXPECT_EQ(status_of(answer), 411) << answer;
  }
  EXPECT_LT(sent_mib, 32) << "the server kept reading the body";
  const long rss_after = server.rss_kib();
  EXPECT_LT(rss_after - rss_before, 32 * 1024)
      << "resident memory grew from " << rss_before << " to " << rss_after << " KiB";
  EXPECT_EQ(status_of(server.get("/api/info")), 200);
}

// Alpha-beta is bounded by --search-ms (before: depth 12 gave no answer in 120 s); a move of
// alpha-beta too.
TEST(FaultWebTest, ASearchPastItsLimitAnswersWithWhatItHas) {
  Server server("limit", "--search-ms 500 --max-depth 12");
  ASSERT_GT(server.port(), 0) << server.log();
  std::string answer = raw_request(
      server.port(),
      post_request("/api/analyse", {{"game", "mg"}, {"player", "alphabeta:depth=12"}}),
      "127.0.0.1", 120s);
  ASSERT_EQ(status_of(answer), 200) << answer;
  json a = json::parse(body_of(answer));
  EXPECT_TRUE(a.value("out_of_time", false)) << a;
  EXPECT_LT(a["depth"].get<int>(), 12) << a;
  EXPECT_LT(a["ms"].get<double>(), 60000.0) << a;  // 500 and a little: the search's own clock
  answer = raw_request(
      server.port(),
      post_request("/api/move", {{"game", "dvonn"}, {"player", "alphabeta:depth=12"}}),
      "127.0.0.1", 120s);
  ASSERT_EQ(status_of(answer), 200) << answer;
  a = json::parse(body_of(answer));
  EXPECT_TRUE(a.value("out_of_time", false)) << a;
  EXPECT_EQ(a["after"]["ply"], 1) << a;
}

// A search whose client leaves stops (before: it ran on, holding its place, so that every later
// search was refused as busy).
TEST(FaultWebTest, ASearchStopsWhenItsClientLeaves) {
  Server server("leave", "--search-ms 600000 --max-depth 12 --max-searches 1");
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string quick =
      post_request("/api/move", {{"game", "mg"}, {"player", "alphabeta:depth=1"}});
  const auto probe = [&] { return status_of(raw_request(server.port(), quick)); };
  ASSERT_NE(hold_the_search_place(
                server.port(),
                post_request("/api/analyse", {{"game", "mg"}, {"player", "alphabeta:depth=12"}}),
                probe),
            nullptr)
      << "the search never held its place";  // and leaves at once
  EXPECT_TRUE(wait_until([&] { return status_of(raw_request(server.port(), quick)) == 200; }, 30s))
      << "the search went on after its client left";
}

// SIGTERM during a search stops `serve` (before: the search kept it running for as long as it
// took, here hours); the client is told.
TEST(FaultWebTest, SigtermDuringASearchStopsServe) {
  Server server("sigterm", "--search-ms 600000 --max-depth 12 --max-searches 1");
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string quick =
      post_request("/api/move", {{"game", "mg"}, {"player", "alphabeta:depth=1"}});
  // The search is running once it holds the one place.
  const std::unique_ptr<RawConnection> searching = hold_the_search_place(
      server.port(),
      post_request("/api/analyse", {{"game", "mg"}, {"player", "alphabeta:depth=12"}}),
      [&] { return status_of(raw_request(server.port(), quick)); });
  ASSERT_NE(searching, nullptr) << "the search never held its place";
  server.process().signal(SIGTERM);
  // Within a second here (docs/WEB.md); the bound is generous for a loaded machine (the search
  // would run for hours).
  const std::optional<int> status = server.process().wait_for(30s);
  ASSERT_TRUE(status.has_value()) << "serve still runs 30 s after SIGTERM";
  EXPECT_EQ(*status, 0) << server.log();
  const std::string answer = searching->receive(10s);
  EXPECT_EQ(status_of(answer), 503) << answer;
  EXPECT_NE(body_of(answer).find("the server is stopping"), std::string::npos) << answer;
}

}  // namespace
