#include "util/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace oppidum::util {
namespace {

std::string reason(int error) { return std::strerror(error); }

// Writes all of `size` bytes to `fd`; false with errno set on failure.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint64_t get_le(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

}  // namespace

void fsync_directory(const std::string& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw FileError("cannot open folder " + folder + ": " + reason(errno));
  const bool ok = ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw FileError("cannot sync folder " + folder + ": " + reason(error));
}

void write_file_atomically(const std::string& path, const void* data, std::size_t size) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw FileError("cannot write " + tmp + ": " + reason(errno));
  bool ok = write_all(fd, static_cast<const char*>(data), size) && ::fsync(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && ok) ok = false, error = errno;
  if (!ok) {
    ::unlink(tmp.c_str());
    throw FileError("cannot write " + tmp + ": " + reason(error));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(tmp.c_str());
    throw FileError("cannot rename " + tmp + " to " + path + ": " + reason(error));
  }
  fsync_directory(std::filesystem::path(path).parent_path().string());
}

std::string read_regular_file(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw FileError("cannot open " + path + ": " + reason(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw FileError("cannot read " + path + ": " + reason(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw FileError(path + ": not a regular file (" +
                    (S_ISDIR(st.st_mode) ? std::string("a directory") : std::string("a device, FIFO or socket")) +
                    ")");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw FileError(path + ": " + std::to_string(st.st_size) + " bytes, more than the " +
                    std::to_string(max_bytes) + " this reader accepts");
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw FileError("cannot read " + path + ": " + reason(error));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) {  // the file grew while being read
      ::close(fd);
      throw FileError(path + ": more than the " + std::to_string(max_bytes) +
                      " bytes this reader accepts");
    }
  }
  ::close(fd);
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

std::string unframe(std::string_view bytes, const char (&magic)[8], std::uint32_t version,
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
  return std::string(bytes.substr(kHeader, static_cast<std::size_t>(length)));
}

}  // namespace oppidum::util
