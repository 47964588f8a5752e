#include "util/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace oppidum::util {
namespace {

// The first line of the lock file (the holder's description), or a note that it is unreadable.
std::string holder_of(int fd) {
  char buffer[512];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return "another process (the lock file is empty)";
  std::string text(buffer, static_cast<std::size_t>(n));
  const auto newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

}  // namespace

FolderLock::FolderLock(const std::string& folder, const std::string& what, const std::string& name)
    : path_(folder + "/" + name) {
  // O_NOFOLLOW: the pid is written into the lock file, so a link planted there would have its
  // target overwritten; O_NONBLOCK: a FIFO there fails instead of blocking.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd_ < 0) {
    const int error = errno;
    if (error == ELOOP)
      throw FileError("the lock file " + path_ +
                      " is a symbolic link; refusing to write through it (remove the link: the "
                      "lock file is made anew)");
    throw FileError("cannot open the lock file " + path_ + ": " + std::strerror(error));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw FileError("the lock file " + path_ + " is " + describe_file_type(st.st_mode) +
                    ", not a regular file; remove it (the lock file is made anew)");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = error == EWOULDBLOCK ? holder_of(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw FolderLockedError(folder + " is in use by " + holder + " (lock file " + path_ +
                              "); stop that process first, or use another folder");
    throw FileError("cannot lock " + path_ + ": " + std::strerror(error));
  }
  const std::time_t now = std::time(nullptr);
  char started[64] = "";
  std::strftime(started, sizeof started, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  const std::string text =
      "process " + std::to_string(::getpid()) + " (" + what + ", since " + started + ")\n";
  // Best effort: the lock itself is what counts; the text only names the holder to others.
  const bool named =
      ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, text.data(), text.size(), 0) ==
                                      static_cast<ssize_t>(text.size());
  (void)named;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (removing it would race)
}

}  // namespace oppidum::util
