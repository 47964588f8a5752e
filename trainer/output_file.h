// Where a command that writes a file the user names (`oppidum export --out`, `report --out`) may
// write: never over one of a run folder's own files, and never over what is not a regular file.
//
// A run folder is a folder holding config.yaml or lock (trainer/run_folder.h). Its own files are
// config.yaml, state.yaml, lock, trainer.ckpt, trainer.optim, arena.csv, metrics.csv, log.txt and
// everything in its checkpoints/ and games/ folders; any other name in it (report.html) is the
// user's. The folder is found with symbolic links resolved, so a link to a run folder protects it
// too. A symbolic link at the path itself is fine: the atomic write replaces the link, never its
// target (util/file_io.h).
#pragma once

#include <string>

namespace oppidum::trainer {

// Throws std::runtime_error naming `option` and `path` when the path is a run folder's own file
// or exists and is not a regular file (nor a symbolic link): a directory, a device, a FIFO.
void check_output_file(const std::string& path, const std::string& option);

}  // namespace oppidum::trainer
