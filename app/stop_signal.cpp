#include "app/stop_signal.h"

#include <csignal>
#include <cstdlib>

namespace oppidum::app {
namespace {

std::atomic<bool> g_stop{false};  // the one flag a signal handler may touch

extern "C" void on_stop_signal(int) {
  if (g_stop.exchange(true)) std::_Exit(130);
}

}  // namespace

const std::atomic<bool>& install_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  return g_stop;
}

}  // namespace oppidum::app
