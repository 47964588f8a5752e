// One log line to whoever shows it: the trainer's log, a worker's standard error, a test's capture.
// Modules that report as they go take a LogLine instead of a logging library, so they stay free of
// one (spdlog lives in the trainer node alone).
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace oppidum::util {

using LogLine = std::function<void(const std::string& line)>;

// Runs body(); an exception escaping it goes to `report` as "<what>: <message>" instead of ending
// the process (a thread body's last word; std::thread would call std::terminate). Returns whether
// body() returned normally.
template <class Body>
bool report_exceptions(const LogLine& report, const std::string& what, Body&& body) {
  try {
    body();
    return true;
  } catch (const std::exception& e) {
    report(what + ": " + e.what());
  } catch (...) {
    report(what + ": an unknown exception");
  }
  return false;
}

}  // namespace oppidum::util
