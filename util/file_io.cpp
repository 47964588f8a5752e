#include "util/file_io.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <new>
#include <vector>

namespace oppidum::util {
namespace {

std::string reason(int error) { return std::strerror(error); }

// Writes all of `size` bytes to `fd`; false with errno set on failure, `*written` then saying how
// many went.
bool write_all(int fd, const char* data, std::size_t size, std::size_t* written = nullptr) {
  if (written != nullptr) *written = 0;
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    if (written != nullptr) *written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint64_t get_le(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

void fsync_directory(const std::string& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw FileError("cannot open folder " + folder + ": " + reason(errno));
  const bool ok = ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw FileError("cannot sync folder " + folder + ": " + reason(error));
}

std::string cannot_write(const std::string& path, WriteUse use) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "" : std::strerror(errno);
  // A folder must be one (a link to one is): a file there read as "Permission denied" to root.
  struct stat target {};
  if (use == WriteUse::kFolder && ::stat(path.c_str(), &target) == 0 && !S_ISDIR(target.st_mode))
    return "it is " + describe_file_type(target.st_mode) + ", not a folder";
  // The inode flags first (access() says only "Operation not permitted" for them), where the file
  // system keeps them (ext4, xfs, btrfs; not tmpfs): read through a descriptor opened without
  // following a link or waiting on a FIFO.
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int flags = 0;
    const bool known = fd >= 0 && ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    if (fd >= 0) ::close(fd);
    if (known && (flags & FS_IMMUTABLE_FL)) return "it is immutable (chattr +i)";
    if (known && (flags & FS_APPEND_FL) && use != WriteUse::kAppend)
      return "it is append-only (chattr +a)";
  }
  if (use != WriteUse::kReplace &&
      ::access(path.c_str(), use == WriteUse::kFolder ? W_OK | X_OK : W_OK) != 0)
    return std::strerror(errno);
  return "";
}

std::string describe_file_type(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string temporary_in_the_way(const std::string& temporary) {
  struct stat st {};
  const std::string what =
      ::lstat(temporary.c_str(), &st) == 0 ? describe_file_type(st.st_mode) : "not a regular file";
  return temporary + " is " + what + ": the run writes " +
         std::filesystem::path(temporary).stem().string() +
         " there first and renames it; remove it and run the same command again";
}

void check_replaceable(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw FileError("cannot write " + path + ": it is " + describe_file_type(st.st_mode) +
                    ", not a regular file; refusing to replace it");
}

namespace {

// The temporary files of the AtomicFiles alive, removed by a signal that ends the process (Ctrl-C
// during `export` left a half model as `x.onnx.tmp`, and every later write of `x.onnx` was refused
// while it was there). A slot's word is its use count times 4 plus its state: free (0), being
// filled (1) or holding a path (2). The handler, which may run at any moment on any thread, takes
// a copy of a held path and unlinks it only if the word did not change meanwhile (a slot let go
// and taken again would have given it half of each path), and calls only unlink, signal and
// raise.
struct TemporarySlot {
  std::atomic<std::uint64_t> word{0};
  char path[4096];
};
constexpr int kTemporarySlots = 64;  // AtomicFiles alive at once past this are not removed
TemporarySlot g_temporaries[kTemporarySlots];

}  // namespace

void remove_temporary_files() noexcept {
  char path[sizeof TemporarySlot::path];
  for (TemporarySlot& slot : g_temporaries) {
    const std::uint64_t word = slot.word.load(std::memory_order_acquire);
    if ((word & 3) != 2) continue;
    std::memcpy(path, slot.path, sizeof path);
    path[sizeof path - 1] = '\0';
    if (slot.word.load(std::memory_order_acquire) == word) ::unlink(path);
  }
}

namespace {

void remove_temporaries_and_end(int signo) {
  remove_temporary_files();
  ::signal(signo, SIG_DFL);  // then the signal ends the process as it would have
  ::raise(signo);
}

// Installed at the first AtomicFile for SIGINT, SIGTERM and SIGHUP where the program left them at
// their default (ending the process): a command with a handler of its own (a stop that finishes
// cleanly, whose AtomicFiles' destructors remove their files) or that ignores one keeps it.
void remove_temporaries_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int signo : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(signo, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 ||
          old.sa_handler != SIG_DFL)
        continue;
      struct sigaction action {};
      action.sa_handler = remove_temporaries_and_end;
      sigemptyset(&action.sa_mask);
      ::sigaction(signo, &action, nullptr);
    }
  });
}

// A slot holding `path`, or -1 when none is free (or the path is too long to hold).
int hold_temporary(const std::string& path) {
  if (path.size() >= sizeof TemporarySlot::path) return -1;
  remove_temporaries_on_signals();
  for (int i = 0; i < kTemporarySlots; ++i) {
    std::uint64_t word = g_temporaries[i].word.load();
    if ((word & 3) != 0 || !g_temporaries[i].word.compare_exchange_strong(word, word + 1))
      continue;
    std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
    g_temporaries[i].word.store(word + 2, std::memory_order_release);
    return i;
  }
  return -1;
}

void release_temporary(int slot) {
  // Free again, one use later: (count + 1) * 4.
  if (slot >= 0)
    g_temporaries[slot].word.store((g_temporaries[slot].word.load() | 3) + 1,
                                   std::memory_order_release);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {
  // A link at `path` is replaced by the rename (its target is left alone); anything else that is
  // not a regular file (a directory, /dev/full, a FIFO) is refused before anything is written.
  check_replaceable(path_);
  // O_EXCL: the temporary name is made new, so that no file there (somebody's `x.tmp` beside an
  // output `x`, a link planted there, another writer's) is ever truncated or removed.
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
               0644);
  if (fd_ < 0) {
    const int error = errno;
    struct stat there {};
    if (error == EEXIST && ::lstat(tmp_.c_str(), &there) == 0 && S_ISLNK(there.st_mode))
      throw FileError("cannot write " + tmp_ +
                      ": it is a symbolic link; refusing to write through it");
    if (error == EEXIST)
      throw FileError("cannot write " + path_ + ": " + tmp_ + " is there already (" +
                      path_ + " is written to it first, then renamed); move it away or remove it "
                      "if it is not needed");
    throw FileError("cannot write " + tmp_ + ": " + reason(error));
  }
  struct stat opened {};
  if (::fstat(fd_, &opened) != 0 || !S_ISREG(opened.st_mode)) {
    const std::string what = describe_file_type(opened.st_mode);
    ::close(fd_);
    fd_ = -1;
    throw FileError("cannot write " + tmp_ + ": it is " + what + ", not a regular file");
  }
  slot_ = hold_temporary(tmp_);  // (made here: a signal from now on removes it)
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
  release_temporary(slot_);
}

void AtomicFile::fail(int error) {
  ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  release_temporary(slot_);
  slot_ = -1;
  throw FileError("cannot write " + tmp_ + ": " + reason(error));
}

void AtomicFile::flush() {
  if (fd_ < 0) throw std::logic_error("AtomicFile " + path_ + ": written after its end");
  if (!write_all(fd_, buffer_.data(), buffer_.size())) fail(errno);
  buffer_.clear();
}

void AtomicFile::write(std::string_view bytes) {
  if (buffer_.size() + bytes.size() < kBufferBytes) {
    buffer_.append(bytes);
    return;
  }
  flush();  // and a large piece goes as it is, not through a copy
  if (!write_all(fd_, bytes.data(), bytes.size())) fail(errno);
}

void AtomicFile::commit() {
  flush();
  if (::fsync(fd_) != 0) fail(errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp_.c_str());
    release_temporary(slot_);
    slot_ = -1;
    throw FileError("cannot write " + tmp_ + ": " + reason(error));
  }
  // Let go before the rename: a signal between the two leaves the temporary (refused next time,
  // with a message), where after it the handler could remove another writer's new one.
  release_temporary(slot_);
  slot_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp_.c_str());
    throw FileError("cannot rename " + tmp_ + " to " + path_ + ": " + reason(error));
  }
  fsync_directory(std::filesystem::path(path_).parent_path().string());
}

void write_file_atomically(const std::string& path, const void* data, std::size_t size) {
  AtomicFile file(path);
  file.write(std::string_view(static_cast<const char*>(data), size));
  file.commit();
}

namespace {

int open_for_appending(const std::string& path, bool follow_links, bool readable = false) {
  struct stat st {};
  if ((follow_links ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) == 0 &&
      !S_ISREG(st.st_mode))
    throw FileError("cannot append to " + path + ": it is " + describe_file_type(st.st_mode) +
                    ", not a regular file");
  const int fd = ::open(path.c_str(),
                        (readable ? O_RDWR : O_WRONLY) | O_APPEND | O_CREAT | O_CLOEXEC |
                            O_NONBLOCK |
                            (follow_links ? 0 : O_NOFOLLOW),
                        0644);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP)
      throw FileError("cannot append to " + path +
                      ": it is a symbolic link; this file is written in place, never through a "
                      "link");
    throw FileError("cannot append to " + path + ": " + reason(error));
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError("cannot append to " + path + ": it is " + describe_file_type(st.st_mode) +
                    ", not a regular file");
  }
  return fd;
}

// append_to_file, and with `whole_lines` append_lines_to_file.
void append(const std::string& path, std::string_view bytes, bool follow_links, bool whole_lines) {
  const int fd = open_for_appending(path, follow_links, whole_lines);
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0;
  char last = '\n';
  std::string joined;  // one write: a newline first where the last line has none
  if (whole_lines && !bytes.empty() && sized && st.st_size > 0 &&
      ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
    bytes = joined.append("\n").append(bytes);
  std::size_t written = 0;
  bool ok = write_all(fd, bytes.data(), bytes.size(), &written);
  int error = errno;
  // A write cut short (a full disk) is taken back, so that the file does not end in half a line
  // that every reader after would refuse: when the file is its size before plus what went, no
  // other writer appended meanwhile, and the bytes past that size are this one's.
  struct stat now {};
  if (!ok && written > 0 && sized && ::fstat(fd, &now) == 0 &&
      now.st_size == st.st_size + static_cast<off_t>(written))
    (void)::ftruncate(fd, st.st_size);
  if (::close(fd) != 0 && ok) ok = false, error = errno;
  if (!ok) throw FileError("cannot append to " + path + ": " + reason(error));
}

}  // namespace

void append_to_file(const std::string& path, std::string_view bytes, bool follow_links) {
  append(path, bytes, follow_links, false);
}

void append_lines_to_file(const std::string& path, std::string_view lines, bool follow_links) {
  append(path, lines, follow_links, true);
}

void with_file_locked(const std::string& path, const std::function<void()>& fn) {
  struct Descriptor {
    int fd;
    ~Descriptor() { ::close(fd); }  // (and the lock with it)
  } held{open_for_appending(path, true)};
  while (::flock(held.fd, LOCK_EX) != 0)
    if (errno != EINTR) throw FileError("cannot lock " + path + ": " + reason(errno));
  fn();
}

RegularFileReader::RegularFileReader(std::string path, std::uint64_t max_bytes, bool follow_links)
    : path_(std::move(path)), max_bytes_(max_bytes) {
  // stat first, so that a device is never opened; then the descriptor again, against a swap.
  struct stat st {};
  if ((follow_links ? ::stat(path_.c_str(), &st) : ::lstat(path_.c_str(), &st)) != 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR || error == ELOOP || error == ENAMETOOLONG)
      throw FileError("cannot open " + path_ + ": " + reason(error));  // no such file
    throw FileAccessError("cannot open " + path_ + ": " + reason(error));
  }
  if (S_ISREG(st.st_mode)) {
    fd_ = ::open(path_.c_str(),
                 O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW));
    if (fd_ < 0 && errno == ELOOP)
      throw FileError(path_ + ": a symbolic link, not read (this file is read only as a file of "
                      "its own)");
    if (fd_ < 0 && errno == ENOENT)  // (removed since)
      throw FileError("cannot open " + path_ + ": " + reason(errno));
    if (fd_ < 0) throw FileAccessError("cannot open " + path_ + ": " + reason(errno));
    if (::fstat(fd_, &st) != 0) {
      const int error = errno;
      ::close(fd_);
      throw FileAccessError("cannot read " + path_ + ": " + reason(error));
    }
  }
  if (!S_ISREG(st.st_mode)) {
    if (fd_ >= 0) ::close(fd_);
    throw FileError(path_ + ": not a regular file (" + describe_file_type(st.st_mode) + ")");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  inode_ = static_cast<std::uint64_t>(st.st_ino);
  if (size_ > max_bytes_) {
    ::close(fd_);
    throw FileError(path_ + ": " + std::to_string(size_) + " bytes, more than the limit of " +
                    std::to_string(max_bytes_) + " bytes for this kind of file");
  }
}

RegularFileReader::~RegularFileReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t RegularFileReader::read(char* out, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd_, out + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileAccessError("cannot read " + path_ + ": " + reason(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    read_ += static_cast<std::uint64_t>(n);
    if (read_ > max_bytes_)  // the file grew while being read
      throw FileError(path_ + ": grew past the limit of " + std::to_string(max_bytes_) +
                      " bytes for this kind of file while it was read");
  }
  return got;
}

void RegularFileReader::seek(std::uint64_t offset) {
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
    throw FileAccessError("cannot read " + path_ + ": " + reason(errno));
  read_ = offset;
}

std::string RegularFileReader::read_to_size() {
  std::string out;
  try {
    out.resize(static_cast<std::size_t>(size_ > read_ ? size_ - read_ : 0));
  } catch (const std::bad_alloc&) {
    throw FileAccessError(path_ + ": not enough memory to read its " + std::to_string(size_) +
                          " bytes");
  }
  out.resize(read(out.data(), out.size()));
  return out;
}

void for_each_line(const std::string& path, std::uint64_t max_bytes, std::size_t max_line,
                   std::uint64_t from, const std::function<void(const FileLine&)>& visit) {
  RegularFileReader file(path, max_bytes);
  for_each_line(file, max_line, from, visit);
}

void for_each_line(RegularFileReader& file, std::size_t max_line, std::uint64_t from,
                   const std::function<void(const FileLine&)>& visit, std::uint64_t stop_after) {
  file.seek(from);
  std::string pending;              // the line read so far
  FileLine line;
  line.offset = from;
  line.number = 1;
  const auto hand_over = [&](bool ended) {
    std::string_view text = line.too_long ? std::string_view() : std::string_view(pending);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    line.text = text;
    line.ended = ended;
    visit(line);
  };
  std::vector<char> block(std::size_t{1} << 16);
  std::uint64_t at = from;
  for (std::size_t n; (n = file.read(block.data(), block.size())) > 0;) {
    for (std::size_t i = 0; i < n;) {
      const char* newline = static_cast<const char*>(std::memchr(block.data() + i, '\n', n - i));
      const std::size_t end = newline ? static_cast<std::size_t>(newline - block.data()) : n;
      if (!line.too_long) {
        if (pending.size() + (end - i) > max_line) {
          line.too_long = true;
          pending.clear();
          pending.shrink_to_fit();
        } else {
          pending.append(block.data() + i, end - i);
        }
      }
      at += end - i;
      i = end;
      if (!newline) break;
      line.next = at + 1;
      hand_over(true);
      if (line.next >= stop_after) return;
      ++i;
      ++at;
      pending.clear();
      const std::uint64_t next = line.number + 1;
      line = FileLine{};
      line.offset = at;
      line.number = next;
    }
  }
  line.next = at;
  if (!pending.empty() || line.too_long) hand_over(false);
}

std::optional<std::string> read_line_at(const std::string& path, std::uint64_t max_bytes,
                                        std::size_t max_line, std::uint64_t offset) {
  RegularFileReader file(path, max_bytes);
  if (offset >= file.size()) return std::nullopt;
  file.seek(offset);
  std::string line(static_cast<std::size_t>(
                       std::min<std::uint64_t>(file.size() - offset, max_line + 1)),
                   '\0');
  line.resize(file.read(line.data(), line.size()));
  const auto newline = line.find('\n');
  if (newline == std::string::npos && line.size() > max_line) return std::nullopt;
  if (newline != std::string::npos) line.resize(newline);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

void for_each_block(RegularFileReader& file, std::uint64_t from, std::uint64_t to,
                    const std::function<void(std::string_view)>& visit) {
  std::vector<char> block(std::size_t{1} << 16);
  file.seek(from);
  while (from < to) {
    const std::size_t n = file.read(
        block.data(), static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), to - from)));
    if (n == 0) break;
    visit(std::string_view(block.data(), n));
    from += n;
  }
}

namespace {

// The CRC of the bytes [from, to) of `file` (fewer where it is shorter).
std::uint32_t crc_of_range(RegularFileReader& file, std::uint64_t from, std::uint64_t to,
                           std::uint32_t crc) {
  for_each_block(file, from, to,
                 [&](std::string_view bytes) { crc = crc32(bytes.data(), bytes.size(), crc); });
  return crc;
}

std::uint32_t follow_check(RegularFileReader& file, std::uint64_t until, std::uint64_t last_line) {
  return crc_of_range(file, last_line, until,
                      crc_of_range(file, 0, std::min<std::uint64_t>(until, 4096), 0));
}

}  // namespace

FollowMark follow_mark(RegularFileReader& file, std::uint64_t until, std::uint64_t last_line) {
  FollowMark mark;
  mark.inode = file.inode();
  mark.until = until;
  mark.last_line = std::min(last_line, until);
  if (until > 0) mark.check = follow_check(file, until, mark.last_line);
  return mark;
}

bool still_follows(RegularFileReader& file, const FollowMark& mark) {
  return mark.until > 0 && file.inode() == mark.inode && file.size() >= mark.until &&
         follow_check(file, mark.until, mark.last_line) == mark.check;
}

std::string read_regular_file(const std::string& path, std::size_t max_bytes, bool follow_links) {
  RegularFileReader file(path, max_bytes, follow_links);
  std::string out = file.read_to_size();
  char probe[1 << 12];  // a file that grew since it was opened: read on, up to the limit
  for (std::size_t n; (n = file.read(probe, sizeof probe)) > 0;) {
    try {
      out.append(probe, n);
    } catch (const std::bad_alloc&) {
      throw FileAccessError(path + ": not enough memory to read it");
    }
  }
  return out;
}

std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc) {
  // zlib's, fed in pieces below 4 GiB (uInt).
  const auto* p = static_cast<const Bytef*>(data);
  uLong c = crc;
  while (size > 0) {
    const auto n = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    c = ::crc32(c, p, n);
    p += n;
    size -= n;
  }
  return static_cast<std::uint32_t>(c);
}

std::string frame(const char (&magic)[8], std::uint32_t version, std::string_view payload) {
  std::string out(magic, 8);
  put_le(out, version, 4);
  put_le(out, payload.size(), 8);
  out.append(payload);
  put_le(out, crc32(out.data(), out.size()), 4);
  return out;
}

std::string_view unframe(std::string_view bytes, const char (&magic)[8], std::uint32_t version,
                         const std::string& source) {
  constexpr std::size_t kHeader = 8 + 4 + 8;
  if (bytes.size() < 8 || bytes.compare(0, 8, std::string_view(magic, 8)) != 0)
    throw FileError(source + ": not a file of this kind (it does not start with " +
                    std::string(magic, 8) + ")");
  if (bytes.size() < kHeader + 4)
    throw FileError(source + ": truncated (" + std::to_string(bytes.size()) + " bytes)");
  const auto found = static_cast<std::uint32_t>(get_le(bytes, 8, 4));
  if (found != version)
    throw FileError(source + ": format version " + std::to_string(found) +
                    ", this program reads version " + std::to_string(version));
  const std::uint64_t length = get_le(bytes, 12, 8);
  if (length != bytes.size() - kHeader - 4)
    throw FileError(source + ": truncated or damaged: the header says " +
                    std::to_string(length) + " bytes of content, the file holds " +
                    std::to_string(bytes.size() - kHeader - 4));
  const auto stored = static_cast<std::uint32_t>(get_le(bytes, bytes.size() - 4, 4));
  if (crc32(bytes.data(), bytes.size() - 4) != stored)
    throw FileError(source + ": damaged: the CRC-32 of the content does not match the stored one");
  return bytes.substr(kHeader, static_cast<std::size_t>(length));
}

}  // namespace oppidum::util
