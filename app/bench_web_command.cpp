// `oppidum bench web`: how fast the web page's API answers on a big run. It synthesises a run
// folder (random games of the chosen game as self-play records, in chunks; metrics.csv with one row
// per step and a gate every 500 steps), or reads an existing one with --run, serves it on
// a free loopback port and times, through an HTTP client: the first game listing (which builds the
// in-memory index from every chunk), then paginated listings (first page, random pages, filtered
// by generation, result and length) and the dashboard summary. Prints the median, 95th percentile
// and worst latency of each kind. docs/PERFORMANCE.md ("Web page") has the figures.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "games/game.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "trainer/run_folder.h"
#include "util/file_io.h"
#include "util/progress.h"
#include "web/server.h"

namespace oppidum::app {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct BenchWebOptions {
  std::string game = "mg";
  int games = 100000;
  int games_per_chunk = 100;
  int steps_per_gate = 500;
  int requests = 200;
  std::string run;  // an existing run folder instead of a synthesised one
  std::string dir;  // where to synthesise (default: a folder under the temp directory)
  bool keep = false;
};

// A random game as a record: the visit count of the move played only (the reader's cost does not
// depend on the others).
selfplay::GameRecord random_game(const Game& game, std::uint64_t seed, std::int64_t step) {
  std::mt19937_64 rng(seed);
  auto state = game.initial_state();
  selfplay::GameRecord r;
  r.game = game.name();
  r.start = state->to_string();
  r.seed = seed;
  r.network_step = step;
  ActionList legal;
  for (state->legal_actions(legal); !legal.empty(); state->legal_actions(legal)) {
    selfplay::MoveRecord m;
    m.action = legal[static_cast<int>(rng() % static_cast<std::uint64_t>(legal.size()))];
    m.visits.push_back({static_cast<std::uint16_t>(m.action), 100});
    r.moves.push_back(m);
    state->apply(m.action);
  }
  r.result = static_cast<std::int8_t>(state->result(0));
  r.score[0] = static_cast<std::int16_t>(state->score(0));
  r.score[1] = static_cast<std::int16_t>(state->score(1));
  return r;
}

// The file by which the benchmark knows a run it made: "synthesising" while it writes, then the
// settings of the finished run, which alone is reused (a half-written run, or one of other
// settings, was reused as it was, and timed as if it were what was asked for).
const char kMarker[] = "bench-web.txt";
std::string marker_text(const BenchWebOptions& o) {
  return "oppidum bench web: " + o.game + ", " + std::to_string(o.games) + " games, " +
         std::to_string(o.games_per_chunk) + " a chunk, a gate every " +
         std::to_string(o.steps_per_gate) + " steps\n";
}

void synthesise(const BenchWebOptions& o, const fs::path& dir) {
  const Game& game = game_by_name(o.game);
  const int steps = o.games / 10;  // about ten games per optimiser step, as in mg-small
  fs::create_directories(dir);
  util::write_file_atomically((dir / kMarker).string(), "oppidum bench web: synthesising\n");
  util::write_file_atomically((dir / "config.yaml").string(),
                              "run:\n  game: " + o.game + "\ntraining:\n  steps_per_generation: " +
                                  std::to_string(o.steps_per_gate) + "\n");
  {  // the tables through the run folder's own writer (trainer/run_folder.h)
    trainer::RunFolder folder(dir);
    folder.open_tables(false, "");
    double rating = 0;
    for (int step = 1; step <= steps; ++step) {
      folder.append_train({step * 0.5, step, step / o.steps_per_gate, step * 600LL, step * 10LL,
                           3.0 / (1 + step * 1e-3), 1.0 / (1 + step * 1e-3), 0.02});
      if (step % o.steps_per_gate == 0) {
        trainer::GateRow g;
        g.generation = step / o.steps_per_gate;
        g.step = step;
        g.opponent_generation = g.generation - 1;
        g.games = 40, g.wins = 22, g.draws = 0, g.losses = 18;
        g.elo = 35.0, g.elo_low = -70.0, g.elo_high = 140.0, g.llr = 0.4;
        g.verdict = "cap";
        g.promoted = true;
        g.seconds = step * 0.5;
        g.rating = rating += 35.0;
        folder.append_gate(g, step * 600LL, step * 10LL);
      }
    }
  }
  // The chunks through the replay store's own writer (chunk files and games/index.csv).
  selfplay::FolderReplayStore store(trainer::RunPaths{dir}.games().string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  std::vector<selfplay::GameRecord> chunk;
  int number = 0;
  const auto start = Clock::now();
  util::ProgressLine progress;
  for (int i = 0; i < o.games; ++i) {
    if (progress.terminal())
      progress.update("[bench web] synthesising game " + std::to_string(i + 1) + " of " +
                      std::to_string(o.games));
    const std::int64_t step =
        static_cast<std::int64_t>(i) * steps / o.games / o.steps_per_gate * o.steps_per_gate;
    chunk.push_back(random_game(game, 7919u * static_cast<std::uint64_t>(i) + 1, step));
    if (static_cast<int>(chunk.size()) == o.games_per_chunk || i + 1 == o.games) {
      store.append(chunk);
      ++number;
      chunk.clear();
    }
  }
  progress.done();
  util::write_file_atomically((dir / kMarker).string(), marker_text(o));
  std::printf("synthesised %s: %d %s games in %d chunks, %d metric rows, in %.1f s\n",
              dir.string().c_str(), o.games, o.game.c_str(), number, steps,
              std::chrono::duration<double>(Clock::now() - start).count());
}

struct Timing {
  std::vector<double> ms;
  void print(const char* what) {
    std::sort(ms.begin(), ms.end());
    // Nearest rank: the smallest time at least a share q of the requests took no longer than.
    const auto at = [&](double q) {
      const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(ms.size())));
      return ms[std::min(ms.size(), std::max<std::size_t>(rank, 1)) - 1];
    };
    std::printf("%-44s %5zu requests  median %7.2f ms  p95 %7.2f ms  max %7.2f ms\n", what,
                ms.size(), at(0.5), at(0.95), ms.back());
  }
};

double timed_get(httplib::Client& client, const std::string& path, std::string* body = nullptr) {
  const auto start = Clock::now();
  auto res = client.Get(path.c_str());
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!res || res->status != 200)
    throw std::runtime_error("bench web: GET " + path + " failed" +
                             (res ? ": " + std::to_string(res->status) + " " + res->body : ""));
  if (body) *body = res->body;
  return ms;
}

void run_bench(const BenchWebOptions& o) {
  fs::path dir = o.run;
  const bool synthesised = o.run.empty();
  if (synthesised) {
    dir = o.dir.empty() ? fs::temp_directory_path() / ("oppidum-bench-web-" + o.game) : fs::path(o.dir);
    std::error_code ec;
    std::string marker;
    if (fs::is_regular_file(dir / kMarker, ec))
      marker = util::read_regular_file((dir / kMarker).string(), 4096, false);
    const bool ours = marker.rfind("oppidum bench web: ", 0) == 0;
    if (marker == marker_text(o)) {
      std::printf("reusing %s\n", dir.string().c_str());
    } else if (ours && fs::is_directory(fs::symlink_status(dir, ec))) {
      // The benchmark's own folder (its marker says so), left incomplete (an interrupted run) or
      // made with other settings.
      std::printf("synthesising %s again (it holds a run of other settings or a half-made one)\n",
                  dir.string().c_str());
      fs::remove_all(dir);
      synthesise(o, dir);
    } else if (fs::exists(fs::symlink_status(dir, ec)) &&
               !(fs::is_directory(fs::symlink_status(dir, ec)) && fs::is_empty(dir, ec))) {
      // Never write a run into somebody's folder (its config.yaml was overwritten), nor remove
      // what the benchmark did not make: the temporary folder's name too can be anybody's.
      throw std::invalid_argument(
          "bench web: " + (o.dir.empty() ? dir.string() + " (its folder in the temporary folder)"
                                         : "--dir " + dir.string()) +
          " holds files but no run this benchmark made (no " + kMarker +
          "); give a new or empty folder with --dir, or move it away");
    } else {
      synthesise(o, dir);
    }
  }
  web::ServerOptions options;
  options.runs = {dir.string()};
  options.port = 0;
  web::WebServer server(options);
  const int port = server.start();
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(600, 0);
  const std::string run = "/api/runs/" + trainer::RunPaths{dir}.name();

  std::string body;
  const double first = timed_get(client, run + "/games?page=0&per_page=50", &body);
  const auto pages = nlohmann::json::parse(body);
  std::printf("first listing (builds the index of %lld games): %.1f ms\n",
              static_cast<long long>(pages["all"].get<std::int64_t>()), first);
  const int page_count = std::max<int>(1, pages["pages"].get<int>());

  std::mt19937 rng(1);
  Timing first_page, random_page, by_generation, by_result, by_length, summary;
  for (int i = 0; i < o.requests; ++i) {
    first_page.ms.push_back(timed_get(client, run + "/games?page=0&per_page=50"));
    random_page.ms.push_back(timed_get(
        client, run + "/games?per_page=50&page=" + std::to_string(rng() % static_cast<unsigned>(page_count))));
    by_generation.ms.push_back(timed_get(
        client, run + "/games?per_page=50&page=3&generation=" + std::to_string(rng() % 10)));
    by_result.ms.push_back(timed_get(client, run + "/games?per_page=50&page=10&result=0-1"));
    by_length.ms.push_back(timed_get(client, run + "/games?per_page=50&min_plies=40&max_plies=60"));
    if (i % 4 == 0) summary.ms.push_back(timed_get(client, run + "/summary"));
  }
  first_page.print("listing, first page (50 games)");
  random_page.print("listing, a random page");
  by_generation.print("listing, filtered by generation");
  by_result.print("listing, filtered by result");
  by_length.print("listing, filtered by length");
  summary.print("dashboard summary");
  server.stop();
  if (synthesised && !o.keep && o.dir.empty()) fs::remove_all(dir);
}

}  // namespace

void register_bench_web(CLI::App& bench) {
  auto o = std::make_shared<BenchWebOptions>();
  auto* cmd = bench.add_subcommand(
      "web",
      "Latency of the web page's API (oppidum serve) on a big run: synthesises a run folder of "
      "--games random games (or reads --run DIR) and times paginated, filtered game listings and "
      "the dashboard summary through HTTP on a loopback port.");
  add_game_option(*cmd, o->game)->capture_default_str();
  cmd->add_option("--games", o->games, "games in the synthesised run")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--games-per-chunk", o->games_per_chunk, "games per chunk file")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--requests", o->requests, "requests of each kind")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--run", o->run, "an existing run folder instead")->check(CLI::ExistingDirectory);
  cmd->add_option("--dir", o->dir, "synthesise here (kept, and reused when it holds a finished run of the same settings)");
  cmd->add_flag("--keep", o->keep,
                "keep the synthesised run in the temp folder (reused next time, as --dir's)");
  cmd->callback([o] { run_bench(*o); });
}

}  // namespace oppidum::app
