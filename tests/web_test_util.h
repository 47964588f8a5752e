// For the web tests: a tiny run folder made without training (config.yaml, metrics.csv and
// arena.csv rows of three generations, chunks of random self-play games of networks of generations
// 0, 1 and 2, and random-weight checkpoints, in the layout of trainer/run_folder.h), and raw HTTP
// over a socket, for requests no client library sends (slow, malformed, oversized, from another
// loopback address).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "model/checkpoint.h"
#include "model/net_config.h"
#include "selfplay/game_record.h"
#include "tests/record_test_util.h"

namespace oppidum::test_util {

// A folder of its own under the test temp directory for this process: CTest runs each test of a
// suite as its own process, in parallel, so a shared path would be rebuilt under another's feet.
inline std::filesystem::path process_temp_dir(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) /
         (name + "-" + std::to_string(static_cast<long>(::getpid())));
}

struct TinyRun {
  std::filesystem::path dir;
  int games = 0;
  int train_rows = 0;
  int gates = 0;
  std::vector<selfplay::GameRecord> records;  // in the order of the chunks
};

// `games` random games in chunks of 4; steps_per_generation 10, 30 steps, gates at 10, 20, 30
// (generations 1 and 3 promoted).
inline TinyRun make_tiny_run(const std::filesystem::path& dir, const std::string& game,
                             int games) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir / "games");
  fs::create_directories(dir / "checkpoints");
  TinyRun run;
  run.dir = dir;
  std::ofstream(dir / "config.yaml") << "run:\n  game: " << game
                                     << "\n  seed: 3\nnet:\n  blocks: 1\n  filters: 8\n"
                                        "training:\n  steps_per_generation: 10\n";
  std::ofstream metrics(dir / "metrics.csv");
  metrics << "kind,seconds,step,generation,positions,games,policy_loss,value_loss,learning_rate,"
             "gate_elo,promoted,best_elo,gate_games,anchor_score,anchor_elo,node,"
             "games_per_second,nodes,stream_lag,stream_evicted\n";
  std::ofstream arena(dir / "arena.csv");
  arena << "generation,step,opponent_generation,games,wins,draws,losses,elo,elo_low,elo_high,llr,"
           "verdict,promoted,seconds,rating,anchor,anchor_games,anchor_score,anchor_elo,"
           "anchor_elo_low,anchor_elo_high\n";
  double rating = 0;
  int best = 0;
  for (int step = 1; step <= 30; ++step) {
    const double seconds = 25.0 * step, positions = 400.0 * step;
    metrics << "train," << seconds << "," << step << "," << step / 10 << "," << positions << ","
            << 5 * step << "," << 3.0 - step * 0.05 << "," << 1.0 - step * 0.01
            << ",0.02,,,,,,,,,,,\n";
    ++run.train_rows;
    if (step % 10 == 0) {
      const int generation = step / 10;
      const bool promoted = generation != 2;
      const double elo = promoted ? 60.0 : -20.0;
      const int opponent = best;
      if (promoted) rating += elo, best = generation;
      metrics << "gate," << seconds << "," << step << "," << generation << "," << positions << ","
              << 5 * step << ",,,," << elo << "," << promoted << "," << rating << ",8,,,,,,,\n";
      arena << generation << "," << step << "," << opponent << ",8,"
            << (promoted ? 6 : 2) << ",0," << (promoted ? 2 : 6) << "," << elo << ","
            << elo - 100 << "," << elo + 100 << ",0.5,cap," << promoted << "," << seconds << ","
            << rating << ",,,,,,\n";
      ++run.gates;
    }
  }
  std::vector<selfplay::GameRecord> chunk;
  int number = 0;
  for (int i = 0; i < games; ++i) {
    selfplay::GameRecord r = random_record(game, 1000 + static_cast<std::uint64_t>(i));
    r.network_step = 10 * (i % 3);
    chunk.push_back(r);
    run.records.push_back(r);
    if (chunk.size() == 4 || i + 1 == games) {
      char name[32];
      std::snprintf(name, sizeof name, "chunk-%08d.bin", number++);
      selfplay::write_game_file((dir / "games" / name).string(), chunk);
      chunk.clear();
    }
  }
  run.games = games;
  const Game& g = game_by_name(game);
  const model::NetConfig net = model::NetConfig::sized(1, 8);
  for (const char* name : {"gen-0000", "gen-0001", "gen-0002", "gen-0003", "best"})
    model::save_checkpoint(model::random_checkpoint(g, net, name[4] == '0' ? 7 : 8),
                           (dir / "checkpoints" / (std::string(name) + ".ckpt")).string());
  return run;
}

// A TCP connection to 127.0.0.1:port from the loopback address `from` (any of 127.0.0.0/8, so
// that one test can be several clients); closed when destroyed.
class RawConnection {
 public:
  RawConnection(int port, const std::string& from = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in source{};
    source.sin_family = AF_INET;
    ::inet_pton(AF_INET, from.c_str(), &source.sin_addr);
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&server), sizeof server) != 0)
      close();
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Sends all of `data`; false when the connection refuses it (closed or reset by the server).
  bool send(const std::string& data) {
    for (std::size_t sent = 0; sent < data.size();) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  // What the server sends until it closes the connection, the answer is complete (by its
  // Content-Length), or `timeout` passes; `closed` tells whether the server closed (or reset).
  std::string receive(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string in;
    if (closed != nullptr) *closed = false;
    for (;;) {
      if (complete(in)) return in;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return in;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[65536];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        if (closed != nullptr) *closed = true;
        return in;
      }
      in.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  static bool complete(const std::string& in) {
    const std::size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    const std::size_t at = in.find("Content-Length: ");
    if (at == std::string::npos || at > end) return false;
    return in.size() - end - 4 >= std::strtoull(in.c_str() + at + 16, nullptr, 10);
  }

  int fd_ = -1;
};

// The status of a raw answer ("HTTP/1.1 413 ..." -> 413); 0 when there is none.
inline int status_of(const std::string& answer) {
  if (answer.rfind("HTTP/1.1 ", 0) != 0 || answer.size() < 12) return 0;
  return std::atoi(answer.c_str() + 9);
}

// The body of a raw answer.
inline std::string body_of(const std::string& answer) {
  const std::size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

// One request over a new connection from `from`, and its answer.
inline std::string raw_request(int port, const std::string& request,
                               const std::string& from = "127.0.0.1",
                               std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  RawConnection c(port, from);
  if (!c.connected() || !c.send(request)) return "";
  return c.receive(timeout);
}

}  // namespace oppidum::test_util
