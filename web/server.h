// `oppidum serve`: the web page and its JSON API over HTTP (cpp-httplib), for watching runs,
// replaying their games and playing and analysing positions (web/run_reader.h,
// web/game_service.h). The page's files are compiled in (web/assets.h).
//
// The API (JSON in and out; errors are {"error": "..."} with the statuses of docs/WEB.md, "API":
// 400 bad input, 401 no or wrong token, 403 wrong Host, 404 unknown run, game or checkpoint, 422 a
// network whose outputs are not finite, 503 busy, 500 anything else, and the transport's own):
//   GET  /api/info                         runs served, the arena record files, limits
//   GET  /api/games                        every registered game: names, sides, board layout
//   GET  /api/runs/RUN/summary             the dashboard (metrics, gates, progress, config)
//   GET  /api/runs/RUN/games?page=&per_page=&generation=&result=1-0|0-1|draw&min_plies=&max_plies=
//   GET  /api/runs/RUN/games/CHUNK/INDEX   one self-play game, replayed
//   GET  /api/runs/RUN/checkpoints         ["best", "gen-0003", ...]
//   GET  /api/arena/FILE/games?page=&per_page=&player=&result=   games of an arena record file
//   GET  /api/arena/FILE/games/INDEX       one of them, replayed
//   POST /api/position {game, start?, moves?}                  board, legal moves, result
//   POST /api/move     {game, start?, moves?, player, seed?}   a player's move
//   POST /api/analyse  {game, start?, moves?, player, seed?}   search statistics
//   POST /api/evaluate {game, start?, moves?, checkpoint}      a network's value and priors
//   POST /api/match    {game, a, b, games?, seed?}             a paired match, at most 20 games
//
// Security (docs/WEB.md, "Security"). It binds 127.0.0.1 unless told otherwise; any other host
// needs a token of at least 16 characters (given, or generated at start), which every request must
// carry: `Authorization: Bearer T`, the cookie the server sets, or `?token=T` on the first page
// load. Without a token (loopback only) a request must name a loopback Host (an IP address in
// 127.0.0.0/8, [::1], localhost, or the host it was started with), which keeps other web sites
// from reaching the server through DNS rebinding; a request with two Host lines is refused. POST
// bodies must be application/json (so a foreign page cannot post without a CORS preflight, which
// is never granted), carry a Content-Length (a chunked body is refused unread) of at most 64 KiB;
// other requests carry no body, and a body holds only the fields its call reads. Every connection
// is bounded (web/guarded_server.h): connections per client and in all, the time to send a request
// and to take an answer; every search is bounded in time and stops when its client leaves or the
// server stops. Runs, games and checkpoints are looked up by name among those found in the folders
// served; no request text becomes a path.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "web/game_service.h"

namespace oppidum::web {

// What the connections may take (web/guarded_server.h); the defaults are `oppidum serve`'s.
struct ConnectionLimits {
  int max_connections = 64;  // open at once, all clients together
  int max_per_client = 8;    // open at once from one address
  std::chrono::milliseconds request_timeout{10000};    // to send a whole request, body included
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between two requests
  std::chrono::milliseconds write_timeout{10000};      // to take a whole answer
  std::size_t max_request_bytes = 128 * 1024;  // a request as sent: line, headers, body, framing
};

struct ServerOptions {
  std::vector<std::string> runs;  // run folders, each served under its folder name
  std::vector<std::string> arena_files;  // `oppidum arena --record` files, under their file names
  std::string host = "127.0.0.1";
  int port = 8080;                // 0: a free port (tests)
  std::string token;              // required by every request when not empty
  Limits limits;
  ConnectionLimits connections;
};

// The largest request body (sent with a Content-Length; chunked bodies are refused).
inline constexpr std::size_t kMaxBodyBytes = 64 * 1024;

// The shortest token accepted; tokens are made of kTokenCharacters.
inline constexpr std::size_t kMinTokenLength = 16;
inline constexpr std::size_t kGeneratedTokenLength = 32;
inline constexpr const char* kTokenCharacters = "A-Z a-z 0-9 . _ ~ -";

class WebServer {
 public:
  // Opens the runs (throws std::runtime_error naming a folder that does not exist or holds no
  // run). Off loopback without a token, generates one (token() tells it); a token given must be
  // kMinTokenLength characters or more of kTokenCharacters (std::invalid_argument otherwise).
  explicit WebServer(ServerOptions options);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds the socket; returns the port. Throws std::runtime_error when it cannot.
  int bind();
  // Serves until stop() (from another thread or a signal handler's thread).
  void serve();
  // bind() and serve() in a thread of its own; returns the port.
  int start();
  // Stops serving: searches in progress are stopped, connections closed, and serve() returns
  // (within a fraction of a second). Once stopped, a server stays stopped.
  void stop();

  const std::string& token() const;
  // The URL to open, with the token when there is one.
  std::string url() const;
  // What a user should know before opening the page: each --arena-games file that yields no game.
  std::vector<std::string> warnings();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace oppidum::web
