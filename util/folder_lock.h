// One owner per folder: an exclusive flock(2) on a lock file inside it, held for the lifetime of
// the FolderLock. The kernel releases it when the process ends in any way (kill -9 included), so
// a stale lock file never blocks a later owner. The file holds the owner's pid and command, so
// that a second would-be owner is told who holds the folder. The descriptor is close-on-exec:
// child processes (external engines) never inherit the lock. A lock file that is a symbolic link
// or not a regular file (a FIFO, a device) is refused with FileError naming it: the owner's text
// is never written through a link.
#pragma once

#include <string>

#include "util/file_io.h"

namespace oppidum::util {

// The folder is held by another process; the message names its pid.
class FolderLockedError : public FileError {
 public:
  using FileError::FileError;
};

class FolderLock {
 public:
  // Takes the lock `<folder>/<name>` (creating the file; the folder must exist). `what` describes
  // the owner in the file and in the error another process gets ("oppidum train"). Throws
  // FolderLockedError when another process holds it, FileError when the file cannot be opened or
  // is a symbolic link or not a regular file.
  FolderLock(const std::string& folder, const std::string& what, const std::string& name = "lock");
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace oppidum::util
