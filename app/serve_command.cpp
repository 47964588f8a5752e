// `oppidum serve`: the web page (web/server.h) for watching runs, replaying their games, playing
// and analysing. Read-only on the run folders, so it runs beside `train`.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "app/commands.h"
#include "app/stop_signal.h"
#include "arena/alphabeta.h"
#include "arena/player.h"
#include "web/server.h"

namespace oppidum::app {

void register_serve_command(CLI::App& app) {
  auto o = std::make_shared<web::ServerOptions>();
  const web::ConnectionLimits& c = o->connections;
  auto* cmd = app.add_subcommand(
      "serve",
      "Serve the web page: live dashboards of runs, their self-play games, a board to play any "
      "player spec, analysis of a position. Reads the run folders only (safe beside `train`). "
      "Binds 127.0.0.1 unless --host says otherwise; any other host needs a token (--token, or one "
      "generated and printed). Bounded for a hostile network (docs/WEB.md, \"Security\"): " +
          std::to_string(web::kMaxBodyBytes / 1024) + " KiB bodies, " +
          std::to_string(c.max_per_client) + " connections per client and " +
          std::to_string(c.max_connections) + " in all, " +
          std::to_string(c.request_timeout.count() / 1000) + " s to send a request and " +
          std::to_string(c.write_timeout.count() / 1000) + " s to take an answer; every search "
          "stops at --search-ms, when its client leaves, and on Ctrl-C or SIGTERM.");
  cmd->add_option("--run", o->runs, "run folder to serve (runs/<name>); repeat for several")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--arena-games", o->arena_files,
                  "a record file of `oppidum arena --record FILE` to list and replay; repeat for "
                  "several")
      ->check(CLI::ExistingFile);
  cmd->add_option("--host", o->host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", o->port, "port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--token", o->token,
                  "secret every request must carry: at least " +
                      std::to_string(web::kMinTokenLength) + " characters of " +
                      web::kTokenCharacters +
                      " (generated, " + std::to_string(web::kGeneratedTokenLength) +
                      " characters, when --host is not loopback and none is given)");
  cmd->add_option("--max-searches", o->limits.max_searches,
                  "searches (moves, analyses, matches) running at once; more are refused as busy")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--search-ms", o->limits.search_ms,
                  "wall-time limit of one search, alpha-beta included, from its request's "
                  "start (ms)")
      ->check(CLI::Range(1, 600000))
      ->capture_default_str();
  cmd->add_option("--max-sims", o->limits.max_simulations,
                  "most simulations a uct or net player may ask for")
      ->check(CLI::Range(std::int64_t{1}, arena::kMaxSimulations))
      ->capture_default_str();
  cmd->add_option("--max-depth", o->limits.max_alphabeta_depth,
                  "deepest alphabeta:depth=N allowed")
      ->check(CLI::Range(1, arena::kMaxAlphaBetaDepth))
      ->capture_default_str();
  cmd->callback([o] {
#if defined(__GLIBC__)
    // A thread per connection, and glibc gives each its own malloc arena (up to 8 a core), which
    // keeps what its requests freed (a classic engine's 16 MB table, search trees): 162 MB grew
    // to 345 MB over 28,000 mixed requests on 2 cores, and more with more cores. Two arenas:
    // docs/PERFORMANCE.md, "Memory and disk over a long run".
    mallopt(M_ARENA_MAX, 2);
#endif
    web::WebServer server(*o);
    server.bind();  // the URL below is printed only once the port is ours
    for (const std::string& warning : server.warnings())
      std::cerr << "oppidum serve: warning: " << warning << '\n';
    const std::atomic<bool>& stop = install_stop_signals();
    std::thread serving([&server] { server.serve(); });
    std::cout << "oppidum serve: " << o->runs.size() << " run(s), " << o->arena_files.size()
              << " arena record file(s); open " << server.url()
              << "\n(Ctrl-C stops)" << std::endl;
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    server.stop();
    serving.join();
  });
}

}  // namespace oppidum::app
