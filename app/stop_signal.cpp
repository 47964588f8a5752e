#include "app/stop_signal.h"

#include <signal.h>

#include <csignal>
#include <cstdlib>

#include "arena/external.h"
#include "util/file_io.h"

namespace oppidum::app {
namespace {

std::atomic<bool> g_stop{false};  // the one flag a signal handler may touch

extern "C" void on_stop_signal(int signo) {
  if (g_stop.exchange(true)) {
    util::remove_temporary_files();  // (async-signal-safe) no half-written file left behind
    std::_Exit(128 + signo);
  }
}

extern "C" void on_exit_signal(int signo) {
  arena::kill_all_external_engines();  // async-signal-safe (arena/external.h)
  util::remove_temporary_files();
  std::_Exit(128 + signo);
}

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  // A closed terminal (SIGHUP) stops cleanly too (it ended the process at once, its steps since
  // the last generation lost), except under nohup, which ignores it.
  struct sigaction hangup {};
  if (::sigaction(SIGHUP, nullptr, &hangup) == 0 && hangup.sa_handler != SIG_IGN)
    std::signal(SIGHUP, on_stop_signal);
  return g_stop;
}

void install_exit_signals() {
  for (const int signo : {SIGINT, SIGTERM, SIGHUP}) std::signal(signo, on_exit_signal);
}

}  // namespace oppidum::app
