// An append-only CSV table with one writer (the owner of a run folder): metrics.csv, arena.csv.
//
// Opening it repairs what a kill or a full disk can leave behind: a last line without its newline
// (cut off mid-write) and rows whose field count is not the header's are dropped and counted, and
// the file is rewritten atomically without them. Nothing is lost: the dropped lines are first
// appended to a file beside the table (set_aside_path(), `metrics.csv.damaged`). A missing or
// empty file gets the header. A path that is not a regular file (a directory), or a file whose
// first line is not the expected header (another layout), is refused with FileError naming it.
// Columns are only ever added at the end, so a file with an older header (a prefix of this one)
// is read with empty new fields and rewritten. Every append is checked; a durable table also
// fsyncs each row before append() returns, so a row that was appended survives a crash.
//
// The table holds no row: it is read a line at a time, up to kMaxTableBytes (a larger file is
// refused by name) and lines of up to kMaxLineBytes (a longer one is no row, and is set aside
// whole), so its memory does not grow with the file (metrics.csv grows for as long as a run
// trains). It is appended to in place, never through a symbolic link.
//
// Fields holding a comma, a quote or a newline are quoted ("a ""b"""), as RFC 4180 does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "util/file_io.h"

namespace oppidum::util {

// The largest table read: 4 GiB, about 20 million metrics rows (at a train row a second, some
// 230 days of training). Nothing holds a row per row of it: readers fold rows as they come (the
// page's and report's curves in bounded memory, util/curve.h).
inline constexpr std::size_t kMaxTableBytes = std::size_t{4} << 30;

class CsvTable {
 public:
  using Row = std::vector<std::string>;

  CsvTable(std::string path, Row header, bool durable);
  ~CsvTable();
  CsvTable(const CsvTable&) = delete;
  CsvTable& operator=(const CsvTable&) = delete;

  // The longest line read as a row.
  static constexpr std::size_t kMaxLineBytes = std::size_t{64} << 10;

  const std::string& path() const { return path_; }
  const Row& header() const { return header_; }
  // Each row in order, read from the file (a line at a time). Throws FileError when the file can
  // no longer be read, or holds a line that is not a row: one written behind the owner's back.
  void for_each_row(const std::function<void(const Row&)>& visit) const;
  // Every row, read from the file: for a small table (arena.csv, a game folder's index).
  std::vector<Row> rows() const;
  int dropped_on_open() const { return dropped_; }
  // Where the lines dropped on open were kept.
  std::string set_aside_path() const { return path_ + ".damaged"; }
  // The index of a header column; throws std::logic_error when there is none.
  std::size_t column(const std::string& name) const { return column_of(header_, name); }
  static std::size_t column_of(const Row& header, const std::string& name);

  // Keeps the rows for which keep(row) is true, in order; rewrites the file (atomically) when any
  // goes. keep is asked once of each row, in order. Returns how many went.
  int retain(const std::function<bool(const Row&)>& keep);
  // Moves the rows for which drop(row) is true to set_aside_path() (appended there first), and
  // keeps the others as retain does. Returns how many moved.
  int set_aside(const std::function<bool(const Row&)>& drop);
  // Appends one row (as many fields as the header). Throws FileError when the write fails.
  void append(const Row& row);

  // One CSV line (without its newline), and back.
  static std::string format(const Row& row);
  static Row parse(const std::string& line);

  // The rows of a CSV file for read-only users (reports, the web page): the header and every
  // complete row with the header's field count; `skipped` counts the others. A missing file has
  // no rows. Never writes. Throws FileError when the path exists but is not a readable file, and,
  // given `expected`, when its header is neither that one nor an older layout of it (a prefix),
  // as the owner's constructor does.
  static std::vector<Row> read(const std::string& path, Row* header, int* skipped,
                               const Row* expected = nullptr);
  // Where a reader that follows a growing table is in it (read_new).
  struct Position {
    FollowMark mark;  // after the last whole line read
    Row header;
  };
  // The complete rows added to the file since `at`, each given to `visit` as it is parsed and
  // none kept, for a reader that follows a table as its owner appends to it: only the new bytes
  // are read. A file that is new to `at`, replaced (another inode: the owner rewrites a table
  // whole), shorter than `at`, or whose first bytes or last line read are no longer the ones
  // read (rewritten in place, or a new file that took the old one's inode: util::FollowMark) is
  // read from its start, and `restarted` says so before the first row is visited; a missing one
  // has no rows (and restarts `at`); a symbolic link is not followed but refused, as the owner
  // refuses to append through one. `at` moves past the last complete line; `skipped` counts rows
  // of another field count. With `max_bytes`, about that many bytes are read at most (whole
  // lines), and the answer says whether the file may hold more: a reader that must answer soon
  // takes the rest at its next read. Throws FileError as read does.
  static bool read_new(const std::string& path, Position& at, bool* restarted, int* skipped,
                       const std::function<void(const Row&)>& visit,
                       const Row* expected = nullptr, std::uint64_t max_bytes = UINT64_MAX);

 private:
  bool usable(const FileLine& line, std::size_t found_fields, Row* row) const;
  // Writes the table again without the lines it cannot use, which go to set_aside_path() first.
  void rewrite_repaired(std::size_t found_fields);
  // Writes the table again without the rows at these places (in order); returns how many.
  int rewrite_without(const std::vector<std::uint64_t>& gone);
  void open_for_append();

  std::string path_;
  Row header_;
  bool durable_;
  int dropped_ = 0;
  int fd_ = -1;
};

}  // namespace oppidum::util
