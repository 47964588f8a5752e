// Ctrl-C, SIGTERM and SIGHUP (unless ignored, as under nohup) for the long-running subcommands
// (train, selfplay, serve): the first signal sets a flag the command polls and stops cleanly on; a
// second one removes the temporary files of the writes under way (util::remove_temporary_files)
// and exits at once with status 128 + that signal (130 for Ctrl-C, 143 for SIGTERM). And the signals of the commands that host external programs
// without a stop of their own.
#pragma once

#include <atomic>

namespace oppidum::app {

// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& install_stop_signals();

// For the commands that may run external programs and have no stop of their own (`play`,
// `engine`): SIGINT, SIGTERM and SIGHUP kill every external program with everything it started
// (arena::kill_all_external_engines), remove the temporary files of the writes under way, then
// exit with status 128 + the signal.
void install_exit_signals();

}  // namespace oppidum::app
