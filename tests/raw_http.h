// Raw HTTP over a socket for the web server's tests (tests/web_api_test.cpp,
// tests/fault_web_test.cpp): requests no client library sends (slow, malformed, oversized, left
// in the middle) from any loopback address (127.0.0.0/8), so that one test can be many clients.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

namespace oppidum::test_util {

// A TCP connection to 127.0.0.1:port from the loopback address `from`, with a receive buffer of
// `receive_buffer` bytes when not 0 (a client slow to take answers); closed when destroyed.
class RawConnection {
 public:
  RawConnection(int port, const std::string& from = "127.0.0.1", int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && receive_buffer > 0)
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
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
  // Whether the server has answered or closed, without waiting and without taking the answer.
  bool answered() const {
    char c = 0;
    const ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }
  // At most `max_bytes` of what has arrived, without waiting; `closed` is set once the server
  // has closed (or reset) the connection.
  std::string receive_some(std::size_t max_bytes, bool* closed) {
    std::string in(max_bytes, '\0');
    const ssize_t n = ::recv(fd_, in.data(), max_bytes, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      *closed = true;
    in.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return in;
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

// A search sent over its own connection, once it holds the server's only search place (a server
// run with max_searches 1): `probe` (a quick search's status) is then refused as busy, 503. A
// probe may take the place before the search arrives, which is then refused at once: it is sent
// again. The connection, or nullptr when the search held no place within `timeout`.
inline std::unique_ptr<RawConnection> hold_the_search_place(
    int port, const std::string& search, const std::function<int()>& probe,
    std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto searching = std::make_unique<RawConnection>(port);
    if (!searching->send(search)) return nullptr;
    while (std::chrono::steady_clock::now() < deadline) {
      if (probe() == 503) return searching;
      if (searching->answered()) break;  // refused (or done): sent again
      ::usleep(10000);
    }
  }
  return nullptr;
}

}  // namespace oppidum::test_util
