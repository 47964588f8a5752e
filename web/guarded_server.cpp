#include "web/guarded_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace oppidum::web {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kPollSlice{50};         // how often waits look at the stop flag
constexpr milliseconds kProbeInterval{10};     // Connection::client_gone's socket look
constexpr milliseconds kStopGrace{200};        // an answer's write once the server stops
constexpr milliseconds kLingerAfterAnswer{1000};
constexpr std::size_t kMaxLingerBytes = 1 << 20;

thread_local Connection* t_connection = nullptr;  // the connection this thread is serving
thread_local bool t_refuse = false;  // a connection run on the accept thread: refuse it at once

// Waits until `fd` is ready for `events`: true when it is (or has an error that the next recv or
// send reports); false at the deadline, on a poll error, or once `stopping` is set.
bool wait_ready(int fd, short events, Clock::time_point deadline,
                const std::atomic<bool>* stopping) {
  for (;;) {
    if (stopping != nullptr && stopping->load()) return false;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto slice = std::min<Clock::duration>(deadline - now, kPollSlice);
    const auto ms = std::chrono::ceil<milliseconds>(slice).count();
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(1, ms)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

// The numeric address and port of the socket's peer (or its own end).
void endpoint(int fd, bool peer, std::string& ip, int& port) {
  ip.clear();
  port = -1;
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  auto* a = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, a, &length) : ::getsockname(fd, a, &length)) != 0) return;
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> service{};
  if (::getnameinfo(a, length, host.data(), host.size(), service.data(), service.size(),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host.data();
  port = std::atoi(service.data());
}

// Closes a connection so that its client can still read the answer just written: closing a
// socket with unread bytes in it resets the connection, which can destroy the answer in flight.
// Ends the sending side, then reads and drops what the client has sent and still sends, for at
// most `linger` (0: only what has already come).
void linger_close(int fd, milliseconds linger, const std::atomic<bool>& stopping) {
  ::shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + linger;
  std::array<char, 4096> sink;
  for (std::size_t drained = 0; drained < kMaxLingerBytes;) {
    const ssize_t n = ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n > 0) {
      drained += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && linger.count() > 0 &&
               wait_ready(fd, POLLIN, deadline, &stopping)) {
      continue;
    } else {
      break;
    }
  }
  ::close(fd);
}

const char* reason_phrase(int status) {
  switch (status) {
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 503: return "Service Unavailable";
    default: return "Bad Request";
  }
}

// An error answer of our own ({"error": message}, then the connection closes), written without
// waiting: a socket's buffer takes it whole, and a client that takes nothing gets nothing.
void write_error(int fd, int status, const std::string& message) {
  const std::string body = nlohmann::json{{"error", message}}.dump();
  const std::string answer =
      "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
      "\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
      "X-Content-Type-Options: nosniff\r\n" +
      (status == 503 ? "Retry-After: 1\r\n" : "") + "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// A connection refused at once: 503, then the close, without waiting for anything: what the
// client has already sent is dropped, what it sends later is not waited for (a client may then
// see a reset instead of the 503). A refused connection holds its thread for no time, so one
// client's flood of refused connections cannot take the threads that everyone else's need.
void refuse(int fd, const std::string& why, const std::atomic<bool>& stopping) {
  write_error(fd, 503, why + "; try again in a moment");
  linger_close(fd, milliseconds(0), stopping);
}

// The socket as httplib reads and writes it, within the limits of one request: every read
// waits only until the request's deadline, and all reads together take at most
// max_request_bytes; every write waits only until the answer's deadline. A read that fails (the
// deadline, the size, the client gone) closes the connection after the answer.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int fd, Connection& connection, const ConnectionLimits& limits,
                 const std::atomic<bool>& stopping)
      : fd_(fd), connection_(connection), limits_(limits), stopping_(stopping) {}

  // Waits, at most the keep-alive timeout, for the first byte of the next request.
  bool wait_for_request() const {
    return begin_ < end_ ||
           wait_ready(fd_, POLLIN, Clock::now() + limits_.keep_alive_timeout, &stopping_);
  }
  void begin_request() {
    read_deadline_ = Clock::now() + limits_.request_timeout;
    bytes_read_ = 0;
    writing_ = false;
    connection_.begin_head();
  }
  // Something of the answer to this request has been written.
  bool answered() const { return writing_; }

  bool is_readable() const override {
    return begin_ < end_ || wait_ready(fd_, POLLIN, read_deadline_, &stopping_);
  }
  bool is_writable() const override {
    return wait_ready(fd_, POLLOUT, writing_ ? write_deadline_ : Clock::now() +
                                                  limits_.write_timeout, nullptr);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (bytes_read_ >= limits_.max_request_bytes) return fail(Connection::Failure::kTooLarge);
    size = std::min(size, limits_.max_request_bytes - bytes_read_);
    if (begin_ == end_) {
      if (!wait_ready(fd_, POLLIN, read_deadline_, &stopping_))
        return fail(Connection::Failure::kTimeout);
      ssize_t n = 0;
      do {
        n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) {
        connection_.read_failed(Connection::Failure::kClosed);
        return n;  // 0: the client closed its side
      }
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
    }
    const std::size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    connection_.read_bytes(ptr, n);
    begin_ += n;
    bytes_read_ += n;
    if (connection_.head_ended_by_bare_lf()) return fail(Connection::Failure::kBareLf);
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!writing_) {
      writing_ = true;
      write_deadline_ = Clock::now() + limits_.write_timeout;
    }
    if (stopping_.load() && !stop_seen_) {  // finish this answer soon, or not at all
      stop_seen_ = true;
      write_deadline_ = std::min(write_deadline_, Clock::now() + kStopGrace);
    }
    for (;;) {
      if (!wait_ready(fd_, POLLOUT, write_deadline_, nullptr)) return -1;
      const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    endpoint(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    endpoint(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

 private:
  ssize_t fail(Connection::Failure why) {
    connection_.read_failed(why);
    return -1;
  }

  const int fd_;
  Connection& connection_;
  const ConnectionLimits& limits_;
  const std::atomic<bool>& stopping_;
  std::array<char, 4096> buffer_{};
  std::size_t begin_ = 0, end_ = 0;  // unread bytes of buffer_
  std::size_t bytes_read_ = 0;       // by httplib, in this request
  Clock::time_point read_deadline_ = Clock::now();
  Clock::time_point write_deadline_ = Clock::now();
  bool writing_ = false;  // the answer has begun: write_deadline_ is set
  bool stop_seen_ = false;
};

// One thread per connection, started at accept and joined at shutdown (threads that ended are
// joined at the next accept). Past `max_threads` live threads, or when no thread can be made, the
// connection runs on the accept thread, which refuses it at once (t_refuse).
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(std::size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      reap();
      if (workers_.size() < max_threads_) {
        try {
          workers_.reserve(workers_.size() + 1);
          auto done = std::make_shared<std::atomic<bool>>(false);
          workers_.push_back({std::thread([fn, done] {
                                run_logged(fn);
                                done->store(true);
                              }),
                              done});
          return;
        } catch (const std::exception&) {
          // No thread to be had: refused below.
        }
      }
    }
    t_refuse = true;
    run_logged(fn);
    t_refuse = false;
  }

  void shutdown() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Worker& w : workers_) w.thread.join();
    workers_.clear();
  }

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  static void run_logged(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::cerr << "oppidum serve: a connection failed: " << e.what() << std::endl;
    }
  }

  void reap() {
    auto finished = std::partition(workers_.begin(), workers_.end(),
                                   [](const Worker& w) { return !w.done->load(); });
    for (auto it = finished; it != workers_.end(); ++it) it->thread.join();
    workers_.erase(finished, workers_.end());
  }

  const std::size_t max_threads_;
  std::mutex mutex_;
  std::vector<Worker> workers_;
};

}  // namespace

int Connection::failure_status() const {
  switch (failure_) {
    case Failure::kTimeout: return 408;
    case Failure::kTooLarge: return 413;
    default: return 400;
  }
}

std::string Connection::failure_message() const {
  switch (failure_) {
    case Failure::kTimeout:
      return "the request was not sent whole within " +
             std::to_string(limits_.request_timeout.count()) + " ms";
    case Failure::kTooLarge:
      return "the request is over " + std::to_string(limits_.max_request_bytes) +
             " bytes (line, headers and body)";
    case Failure::kClosed: return "the client closed the connection during its request";
    case Failure::kBareLf: return "a line ended by a bare LF (lines end with CRLF)";
    default: return "a malformed request";
  }
}

void Connection::read_bytes(const char* data, std::size_t size) {
  if (head_done_) return;
  const std::size_t from = head_.size() < 3 ? 0 : head_.size() - 3;
  head_.append(data, size);
  // Only a CRLF line ends the head: httplib passes over lines ended by a bare LF and reads on.
  const std::size_t at = head_.find("\r\n\r\n", from);
  // An empty line after a bare LF ends it for anyone else (a proxy): never a request of ours.
  const std::size_t bare = std::min(head_.find("\n\n", from), head_.find("\n\r\n", from));
  if (bare != std::string::npos && (at == std::string::npos || bare < at) &&
      (bare == 0 || head_[bare - 1] != '\r')) {
    bare_lf_end_ = true;
    head_done_ = true;
  } else if (at != std::string::npos) {
    head_.resize(at);
    head_done_ = true;
  }
}

bool Connection::client_gone() {
  if (gone_) return true;
  const auto now = Clock::now();
  if (now < next_probe_) return false;
  next_probe_ = now + kProbeInterval;
  pollfd p{fd_, POLLRDHUP, 0};
  gone_ = ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  return gone_;
}

GuardedServer::GuardedServer(const ConnectionLimits& limits) : limits_(limits) {
  if (limits_.max_connections < 1 || limits_.max_per_client < 1 ||
      limits_.max_request_bytes < 1024 || limits_.request_timeout.count() < 1 ||
      limits_.keep_alive_timeout.count() < 1 || limits_.write_timeout.count() < 1)
    throw std::invalid_argument("web connection limits: caps and timeouts must be 1 or more, "
                                "the request size 1024 bytes or more");
  // Refusals (which wait for nothing) may use as many threads again as the connections admitted.
  const auto max_threads = static_cast<std::size_t>(2 * limits_.max_connections);
  new_task_queue = [max_threads] { return new ConnectionThreads(max_threads); };
  // An answer after which the connection closes says so, once, and promises no keep-alive.
  set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    const Connection* connection = t_connection;
    if (connection == nullptr || !connection->closing()) return;
    res.headers.erase("Keep-Alive");
    res.headers.erase("Connection");
    res.set_header("Connection", "close");
  });
}

Connection* GuardedServer::current_connection() { return t_connection; }

bool GuardedServer::admit(const std::string& peer, std::string& why) {
  std::lock_guard<std::mutex> lock(admission_mutex_);
  if (open_ >= limits_.max_connections) {
    why = "the server has " + std::to_string(open_) + " connections open, its limit";
    return false;
  }
  int& mine = open_by_peer_[peer];
  if (mine >= limits_.max_per_client) {
    why = "too many connections from " + peer + " (at most " +
          std::to_string(limits_.max_per_client) + " at once)";
    return false;
  }
  ++mine;
  ++open_;
  return true;
}

void GuardedServer::release_client(const std::string& peer) {
  std::lock_guard<std::mutex> lock(admission_mutex_);
  const auto it = open_by_peer_.find(peer);
  if (it != open_by_peer_.end() && --it->second <= 0) open_by_peer_.erase(it);
}

void GuardedServer::release_server() {
  std::lock_guard<std::mutex> lock(admission_mutex_);
  --open_;
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  std::string peer;
  int port = 0;
  endpoint(sock, true, peer, port);
  std::string why;
  if (t_refuse) {
    refuse(sock, "the server is out of threads", stopping_);
    return false;
  }
  if (stopping_.load()) {
    refuse(sock, "the server is stopping", stopping_);
    return false;
  }
  if (!admit(peer, why)) {
    refuse(sock, why, stopping_);
    return false;
  }
  // On every way out (a throw included): no current connection, the socket closed, the places
  // given back. The client's before the socket lingers (at most kLingerAfterAnswer): a client
  // that read its answer, closed and connected again at once was refused while the connection
  // it had closed still lingered; the server's, a thread's time, once the socket is closed.
  struct Admitted {
    GuardedServer& server;
    socket_t sock;
    const std::string& peer;
    ~Admitted() {
      t_connection = nullptr;
      server.release_client(peer);
      linger_close(sock, kLingerAfterAnswer, server.stopping_);
      server.release_server();
    }
  } admitted{*this, sock, peer};
  Connection connection(sock, limits_);
  DeadlineStream stream(sock, connection, limits_, stopping_);
  t_connection = &connection;
  bool ok = true;
  for (std::size_t served = 0; served < keep_alive_max_count_; ++served) {
    if (stopping_.load() || !stream.wait_for_request()) break;
    stream.begin_request();
    bool client_closes = false;
    const bool last = served + 1 == keep_alive_max_count_;
    ok = process_request(stream, last, client_closes, nullptr);
    // A request line that never came whole gets no answer from httplib: say why here.
    if (!ok && !stream.answered() && connection.failure() != Connection::Failure::kClosed &&
        connection.failure() != Connection::Failure::kNone)
      write_error(sock, connection.failure_status(), connection.failure_message());
    if (!ok || client_closes || connection.closing()) break;
  }
  return ok;
}

}  // namespace oppidum::web
