// The errors of the web API, each with its HTTP status (web/server.cpp turns them into JSON
// answers); the message says what was wrong and where, and the page shows it.
#pragma once

#include <stdexcept>

namespace oppidum::web {

// A request with bad input (400).
class BadRequest : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request that names something that does not exist: a run, a game, a checkpoint (404).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request body over the limit, however it was sent (413).
class TooLarge : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request not sent whole within its time (408).
class TimedOut : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Too many searches at once (503).
class Busy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A search stopped before its end because its client left or the server is stopping (503; the
// client, if still there, may ask again).
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace oppidum::web
