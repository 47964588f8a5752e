// Files that survive crashes and say what is wrong with them.
//
// write_file_atomically: the bytes go to `<path>.tmp`, which is flushed and fsynced, renamed over
// `path`, and then the folder is fsynced, so that after the call returns the new content survives a
// power cut and a reader never sees half a file. On any failure the temporary file is removed and
// an existing file at `path` is left as it was.
//
// Framed files: 8 magic bytes, a u32 format version, a u64 payload length, the payload and the
// CRC-32 of everything before it (little-endian). unframe() names the file and what is wrong: a
// foreign file, another version, a truncated or damaged one.
//
// read_regular_file reads only regular files (after following symlinks) up to a size limit, so a
// directory, a device such as /dev/zero or a FIFO gets an error naming it instead of a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace oppidum::util {

// A file that cannot be read or written, or whose content is damaged; the message names the file.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws FileError naming the file and the system's reason.
void write_file_atomically(const std::string& path, const void* data, std::size_t size);
inline void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, bytes.data(), bytes.size());
}

// Makes the entries of `folder` (renames, new files) durable. Throws FileError.
void fsync_directory(const std::string& folder);

// The content of a regular file of at most `max_bytes`. Throws FileError naming the file when it
// is missing, not a regular file, larger than the limit, or unreadable.
std::string read_regular_file(const std::string& path, std::size_t max_bytes = std::size_t{1} << 31);

// CRC-32 (IEEE 802.3, as zlib's crc32), continuing from `crc` (0 to start).
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

// A framed file's bytes (see above).
std::string frame(const char (&magic)[8], std::uint32_t version, std::string_view payload);
// The payload of framed bytes; throws FileError naming `source` when they are not a framed file
// with this magic, have another version, or are truncated or damaged.
std::string unframe(std::string_view bytes, const char (&magic)[8], std::uint32_t version,
                    const std::string& source);

}  // namespace oppidum::util
