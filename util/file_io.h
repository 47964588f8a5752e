// Files that survive crashes and say what is wrong with them.
//
// write_file_atomically: the bytes go to `<path>.tmp`, which is flushed and fsynced, renamed over
// `path`, and then the folder is fsynced, so that after the call returns the new content survives a
// power cut and a reader never sees half a file. On any failure the temporary file is removed and
// an existing file at `path` is left as it was. `<path>.tmp` is created new: anything already
// there (somebody's file, a link, another writer's temporary file) is refused, never written over
// or removed; a run's owner removes its own interrupted writes' temporary files when it starts.
// It never writes through a symbolic link (a link at `path` is replaced by the file, its target is
// left alone) and never replaces what is not a regular file: a directory, a device such as
// /dev/full, a FIFO or a socket at `path` is refused with FileError naming it.
//
// Framed files: 8 magic bytes, a u32 format version, a u64 payload length, the payload and the
// CRC-32 of everything before it (little-endian). unframe() names the file and what is wrong: a
// foreign file, another version, a truncated or damaged one.
//
// Bounded reads: read_regular_file and RegularFileReader read only regular files (after following
// symlinks) up to a size limit that the caller chooses per kind of file, so a directory, a device
// such as /dev/zero or a FIFO gets an error naming it instead of a hang or an endless allocation.
// The path is checked with stat() before it is opened (a device is never opened), opened with
// O_NONBLOCK (a FIFO swapped in meanwhile cannot block the open) and checked again on the open
// descriptor. A file that grows past the limit while it is read, and an allocation that fails, are
// FileErrors naming the file too, never a bare std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace oppidum::util {

// A file that cannot be read or written, or whose content is damaged; the message names the file.
class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file that is there but could not be opened or read: no permission, an I/O error, no file
// descriptors or memory left. A fault of the machine, not of the file's content, so a caller that
// rebuilds or starts afresh from a damaged file must not do so for this (an unreadable state.yaml
// was rebuilt from the log and the intact file replaced; an unreadable optimiser state was
// written over by a fresh one).
class FileAccessError : public FileError {
 public:
  using FileError::FileError;
};

// A file written in pieces and put in place as write_file_atomically puts one, by commit(): for a
// writer whose content is too large to hold. Until then `path` is untouched; a file destroyed
// without commit() leaves no temporary file, nor does a SIGINT, SIGTERM or SIGHUP that ends the
// process meanwhile (where the program left them at their default: the first AtomicFile installs a
// handler that removes the temporaries alive, then lets the signal end the process). Every member
// throws FileError naming the file and the system's reason.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  void commit();

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  void flush();
  [[noreturn]] void fail(int error);

  std::string path_, tmp_, buffer_;
  int fd_ = -1;
  int slot_ = -1;  // where the signal handler finds tmp_ (file_io.cpp), or -1
};

// Removes the temporary files of the AtomicFiles alive (those a signal would remove, above). Only
// async-signal-safe calls: for a signal handler of a command's own that ends the process (a
// second Ctrl-C), which would otherwise leave them.
void remove_temporary_files() noexcept;

// Throws FileError naming the file and the system's reason.
void write_file_atomically(const std::string& path, const void* data, std::size_t size);
inline void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, bytes.data(), bytes.size());
}

// Throws the FileError write_file_atomically would when `path` is something it never replaces (a
// directory, a device, a FIFO, a socket); a missing file, a regular file or a link pass. For a
// writer that should refuse at its start rather than after its work.
void check_replaceable(const std::string& path);

// Appends `bytes` to the file at `path` (created if missing), for logs kept by the user such as
// arena results (a link to a regular file is followed) and files of a run folder (with
// `follow_links` false: a link is refused, never written through). Anything but a regular file (a
// directory, a device, a FIFO) is refused with FileError naming it, without blocking. No bytes:
// a check that the file can be appended to.
void append_to_file(const std::string& path, std::string_view bytes, bool follow_links = true);
// The same for whole lines: when the file does not end with a newline (a last line cut off, or
// written without one), one goes first, so the new lines never run into the last one.
void append_lines_to_file(const std::string& path, std::string_view lines,
                          bool follow_links = true);

// Runs `fn` while holding an exclusive flock(2) on the file at `path` (created if missing, a link
// followed, anything but a regular file refused as by append_to_file), after any other process
// that holds it lets go: writers that read a shared file and append what depends on what they
// read (a results file's game line, written by the first match only) take turns.
void with_file_locked(const std::string& path, const std::function<void()>& fn);

// Makes the entries of `folder` (renames, new files) durable. Throws FileError.
void fsync_directory(const std::string& folder);

// The content of a regular file of at most `max_bytes`. Throws FileError naming the file when it
// is missing, not a regular file or larger than the limit, and FileAccessError when it is there
// but unreadable, or when the memory for its content cannot be had.
// With `follow_links` false, a symbolic link at `path` is refused too (checked on the open file:
// no window between a check and the open).
std::string read_regular_file(const std::string& path,
                              std::size_t max_bytes = std::size_t{1} << 31,
                              bool follow_links = true);

// One line of a file, as for_each_line hands it over.
struct FileLine {
  std::string_view text;     // without its newline (and a '\r' before it); empty when too_long
  std::uint64_t offset = 0;  // the byte it starts at
  std::uint64_t next = 0;    // the byte after its newline (where the next line starts)
  std::uint64_t number = 0;  // 1 for the first line read (the file's first when read from 0)
  bool too_long = false;     // longer than the limit: its text was not kept
  bool ended = true;         // false for a last line that no newline ends (yet)
};
// Reads the regular file at `path` (of at most `max_bytes`) from byte `from`, a line at a time:
// the memory of one line of at most `max_line` bytes, whatever the file's size. Throws FileError
// naming the file when it cannot be read.
void for_each_line(const std::string& path, std::uint64_t max_bytes, std::size_t max_line,
                   std::uint64_t from, const std::function<void(const FileLine&)>& visit);
class RegularFileReader;
// The same, of a file already open (read from `from` to its end, or, with `stop_after`, no
// further than the first whole line that ends at or past that byte).
void for_each_line(RegularFileReader& file, std::size_t max_line, std::uint64_t from,
                   const std::function<void(const FileLine&)>& visit,
                   std::uint64_t stop_after = UINT64_MAX);
// The line that starts at byte `offset` (from for_each_line), for reading one line again without
// reading the file again; nothing when no line of at most `max_line` bytes is there. Throws
// FileError naming the file when it cannot be read.
std::optional<std::string> read_line_at(const std::string& path, std::uint64_t max_bytes,
                                        std::size_t max_line, std::uint64_t offset);

// A regular file of at most `max_bytes` opened for reading in pieces, for a reader that checks a
// header before it allocates for the rest (checked as read_regular_file does).
class RegularFileReader {
 public:
  // Throws FileError naming the file when it is missing, not a regular file or larger than
  // `max_bytes`.
  RegularFileReader(std::string path, std::uint64_t max_bytes, bool follow_links = true);
  ~RegularFileReader();
  RegularFileReader(const RegularFileReader&) = delete;
  RegularFileReader& operator=(const RegularFileReader&) = delete;

  std::uint64_t size() const { return size_; }  // when it was opened
  std::uint64_t inode() const { return inode_; }
  // Reads on from byte `offset` of the file (the bytes before it count towards the limit).
  void seek(std::uint64_t offset);
  // The bytes from here to the size the file had when it was opened (fewer if it shrank); throws
  // FileError naming the file when the memory for them cannot be had.
  std::string read_to_size();
  // Reads up to `size` bytes into `out`, fewer only at the end of the file; 0 at its end. Throws
  // FileError on a read error, or when the file has grown past the limit.
  std::size_t read(char* out, std::size_t size);

 private:
  std::string path_;
  std::uint64_t size_ = 0, max_bytes_ = 0, read_ = 0, inode_ = 0;
  int fd_ = -1;
};

// The bytes [from, to) of `file` (fewer where it is shorter), handed to `visit` a block of at
// most 64 KiB at a time: for a range too long to hold.
void for_each_block(RegularFileReader& file, std::uint64_t from, std::uint64_t to,
                    const std::function<void(std::string_view)>& visit);

// Where a reader that follows a file its writer only appends to (a table, a record file) stands
// in it: after the last whole line it read, with a check of what it read, so that a file that
// only grew is read on from there and one rewritten in place, or made again on the same inode, is
// read again from its start.
struct FollowMark {
  std::uint64_t inode = 0;
  std::uint64_t until = 0;      // after the last whole line read; 0: nothing read yet
  std::uint64_t last_line = 0;  // where that line starts
  std::uint32_t check = 0;      // CRC-32 of the file's first 4 KiB and of that line
};
// The mark of a reader that read `file` up to `until`, its last whole line starting at
// `last_line` (read again in blocks, whatever its length).
FollowMark follow_mark(RegularFileReader& file, std::uint64_t until, std::uint64_t last_line);
// Whether `file` still holds what `mark` was made of: the same inode, at least `until` bytes,
// and the same first 4 KiB and last line. False for a mark of nothing read.
bool still_follows(RegularFileReader& file, const FollowMark& mark);

// How a process goes on to write a path that already exists: files made in a folder (and files
// in it replaced by a rename), a file appended to, a file replaced by a rename over it.
enum class WriteUse { kFolder, kAppend, kReplace };
// Why this process could not write `path` as `use` says, in words ("Permission denied", "Read-only
// file system", "it is immutable (chattr +i)", ...), or "" when it can or the path does not exist:
// what a write found only later would stop a run on, told before any work is done. A folder needs
// write and search permission and neither flag (a rename over a file in an append-only folder
// fails); an appended file write permission and not the immutable flag; a replaced file neither
// flag (its permission bits do not matter, the folder's do).
std::string cannot_write(const std::string& path, WriteUse use);

// What a file of this st_mode is, in words ("a directory", "a FIFO", "a character device", ...).
std::string describe_file_type(unsigned mode);

// The error for something its writer may not remove (a directory, a FIFO) at `temporary`, the
// name a file is written to first and then renamed from: "<temporary> is a FIFO: the run writes
// <file> there first and renames it; remove it and run the same command again".
std::string temporary_in_the_way(const std::string& temporary);

// CRC-32 (IEEE 802.3, as zlib's crc32), continuing from `crc` (0 to start).
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

// Little-endian whole numbers of `bytes` bytes: the frame's, and those of the files framed in it.
void put_le(std::string& out, std::uint64_t v, int bytes);
std::uint64_t get_le(std::string_view in, std::size_t at, int bytes);

// A framed file's bytes (see above).
std::string frame(const char (&magic)[8], std::uint32_t version, std::string_view payload);
// The payload of framed bytes; throws FileError naming `source` when they are not a framed file
// with this magic, have another version, or are truncated or damaged.
// The view points into `bytes`.
std::string_view unframe(std::string_view bytes, const char (&magic)[8], std::uint32_t version,
                         const std::string& source);

}  // namespace oppidum::util
