// Ctrl-C and SIGTERM for the long-running subcommands (train, selfplay): the first signal sets a
// flag the command polls and stops cleanly on; a second one exits at once with status 130.
#pragma once

#include <atomic>

namespace oppidum::app {

// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& install_stop_signals();

}  // namespace oppidum::app
