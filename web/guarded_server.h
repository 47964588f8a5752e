// The HTTP layer of `oppidum serve` made safe on a hostile network: cpp-httplib's Server with its
// per-connection loop replaced (process_and_close_socket, the extension point the library's own
// SSLServer uses), so that no client can hold the server or its memory:
// - admission: at most `max_connections` connections are open in all and `max_per_client` from
//   one peer address; one more is answered 503 at once and closed, and has no thread waiting;
// - reading: a request (its line, headers and body as sent, chunk framing included) must arrive
//   whole within `request_timeout`, however its bytes trickle in, and may hold at most
//   `max_request_bytes`; a read that fails ends the connection after its answer; between requests
//   a connection may stay idle for `keep_alive_timeout`;
// - writing: an answer must be taken by the client within `write_timeout`;
// - stopping: begin_stop() makes every read, idle wait and write give up within ~50 ms, and the
//   handlers see it through StopCheck (web/game_service.h), so stop() returns promptly.
// Every connection has a thread of its own, started at accept and joined when the server stops;
// its handler runs on that thread, and `current_connection()` is the connection it serves. The
// server sets httplib's post-routing handler (an answer before a close says `Connection: close`);
// its users must not set their own.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "web/server.h"

namespace oppidum::web {

// The connection whose request the calling thread is handling (a handler's own), for what a
// handler needs of it.
class Connection {
 public:
  // Why a read of the request failed; the connection closes after the answer.
  // kBareLf: the head ended by a blank line after a bare LF, which httplib reads past (the
  // request waited for its deadline, 408, where its framing is wrong at once).
  enum class Failure { kNone, kTimeout, kTooLarge, kClosed, kBareLf };

  Connection(int fd, const ConnectionLimits& limits) : fd_(fd), limits_(limits) {}
  // True once the client has closed or reset its side: nobody will read the answer. Looks at the
  // socket at most every 10 ms (a search asks far more often).
  bool client_gone();
  // Answers this request and then closes the connection: the handler left (part of) the body
  // unread, so the bytes that follow are not a request.
  void close_after_answer() { close_after_answer_ = true; }
  bool closing() const { return close_after_answer_; }

  void read_failed(Failure why) {
    failure_ = why;
    close_after_answer_ = true;
  }
  Failure failure() const { return failure_; }
  // The request line and header lines of the request being served, as the client sent them
  // (httplib percent-decodes header values and drops lines it cannot split: the framing checks
  // read the bytes themselves).
  const std::string& head() const { return head_; }
  // The stream's side: a request begins; bytes of it were read (kept until its head ends).
  void begin_head() {
    head_.clear();
    head_done_ = false;
    bare_lf_end_ = false;
  }
  void read_bytes(const char* data, std::size_t size);
  // The head so far ends with an empty line after a bare LF ("\n\n" or "\n\r\n").
  bool head_ended_by_bare_lf() const { return bare_lf_end_; }
  // The answer a failed read deserves: 408 for a request not sent whole in time, 413 for one
  // over max_request_bytes, 400 otherwise; and its message.
  int failure_status() const;
  std::string failure_message() const;

 private:
  int fd_;
  const ConnectionLimits& limits_;
  bool gone_ = false;
  bool close_after_answer_ = false;
  Failure failure_ = Failure::kNone;
  std::chrono::steady_clock::time_point next_probe_{};
  std::string head_;
  bool head_done_ = true;
  bool bare_lf_end_ = false;
};

class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(const ConnectionLimits& limits);

  // Makes every connection end within ~50 ms and StopCheck say stop; then httplib's stop() ends
  // the accept loop. Cannot be undone.
  void begin_stop() { stopping_.store(true); }
  bool stopping() const { return stopping_.load(); }

  // The calling thread's connection while it handles a request of this server; nullptr elsewhere.
  static Connection* current_connection();

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Counts the connection of `peer` in; false when a cap is reached (`why` says which).
  bool admit(const std::string& peer, std::string& why);
  // A connection's place among its client's (before it lingers), then among the server's.
  void release_client(const std::string& peer);
  void release_server();

  const ConnectionLimits limits_;
  std::atomic<bool> stopping_{false};
  std::mutex admission_mutex_;
  int open_ = 0;                             // connections admitted and not yet closed
  std::map<std::string, int> open_by_peer_;  // the same, by peer address, until they linger
};

}  // namespace oppidum::web
