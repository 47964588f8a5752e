// `oppidum bench rules`: perft speed (leaves per second, with and without counting the last ply in
// bulk) and random playouts per second for every game, single-threaded. Work is fixed and seeded,
// so the printed counts are a signature that only a change of behaviour moves. Perft also prints
// the thread's CPU time and the rate per CPU second, which stays meaningful on a shared machine
// where the wall-clock rate only says how much of a core this process got.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "games/perft.h"
#include "games/playout.h"

namespace oppidum::app {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds this thread has run (POSIX).
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class P>
void bench_perft(const char* label, const P& pos, int depth) {
  for (bool bulk : {true, false}) {
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_seconds();
    const std::uint64_t leaves = perft(pos, depth, bulk);
    const double s = seconds_since(start);
    const double cpu = thread_cpu_seconds() - cpu_start;
    std::printf("%-34s perft(%d) %-5s %12llu leaves %8.3f s %9.2f M leaves/s (cpu %.3f s, %.2f M/cpu-s)\n",
                label, depth, bulk ? "bulk" : "full", static_cast<unsigned long long>(leaves), s,
                leaves / s / 1e6, cpu, leaves / cpu / 1e6);
  }
}

template <class P>
void bench_playouts(const char* label, const P& start_pos, int games, int max_plies) {
  std::mt19937_64 rng(20261202);
  long long plies = 0;
  const auto start = Clock::now();
  for (int g = 0; g < games; ++g) {
    P pos = start_pos;
    plies += random_playout(pos, rng, max_plies);
  }
  const double s = seconds_since(start);
  std::printf("%-34s %d random games %8.3f s %10.0f games/s (wall) %6.1f plies/game\n", label,
              games, s, games / s, static_cast<double>(plies) / games);
}

struct BenchRulesOptions {
  int max_depth = 0;  // > 0: caps every perft depth
  int games = 20000;
};

// For each registered game: perft from its benchmark positions (Game::perft_benchmarks) and random
// playouts from its start, on the concrete position type.
void run_bench_rules(const BenchRulesOptions& o) {
  std::printf("oppidum bench rules (one thread)\n");
  for (const Game* game : all_games())
    with_position_type(*game, [&](auto tag) {
      using P = typename decltype(tag)::Position;
      for (const Game::PerftBenchmark& b : game->perft_benchmarks()) {
        const P pos = b.position.empty() ? P::initial() : P::parse(b.position);
        if (!b.position.empty())
          std::printf("%s position: %s\n", b.label.c_str(), pos.to_string().c_str());
        const int depth = o.max_depth > 0 ? std::min(b.depth, o.max_depth) : b.depth;
        bench_perft(b.label.c_str(), pos, depth);
      }
    });
  for (const Game* game : all_games())
    with_position_type(*game, [&](auto tag) {
      using P = typename decltype(tag)::Position;
      bench_playouts((game->name() + " playouts from start").c_str(), P::initial(), o.games, 1000);
    });
}

}  // namespace

void register_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Speed benchmarks; see docs/PERFORMANCE.md.");
  bench->require_subcommand(1);
  auto o = std::make_shared<BenchRulesOptions>();
  auto* rules = bench->add_subcommand(
      "rules",
      "Perft leaves per second (bulk and full) and random playouts per second, every game.");
  rules->add_option("--max-depth", o->max_depth,
                    "cap every perft depth (0: each game's benchmark depths, the signature)")
      ->check(CLI::Range(0, 20));
  rules->add_option("--games", o->games, "random games per game")->check(CLI::Range(1, 10000000));
  rules->callback([o] { run_bench_rules(*o); });
  register_bench_model(*bench);
  register_bench_store(*bench);
  register_bench_search(*bench);
  register_bench_web(*bench);
  register_bench_train(*bench);
  register_bench_selfplay(*bench);
}

}  // namespace oppidum::app
