#include "util/csv_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "games/quote.h"
#include "util/file_io.h"

namespace oppidum::util {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 || errno != ENOENT;
}

// The same of the name itself: a link is there even when what it points to is not.
bool name_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 || errno != ENOENT;
}

// A line's text, or what stands for it when it was too long to keep.
std::string line_text(const FileLine& line) {
  return line.too_long
             ? "(a line of more than " + std::to_string(CsvTable::kMaxLineBytes) + " bytes)"
             : std::string(line.text);
}

std::string header_text(const CsvTable::Row& header) { return CsvTable::format(header); }

// Throws FileError unless `first_line` holds `expected` or an older layout of it (a prefix:
// columns are only ever added at the end).
void check_header(const std::string& path, const std::string& first_line,
                  const CsvTable::Row& expected) {
  const CsvTable::Row found = CsvTable::parse(first_line);
  const bool older = found.size() < expected.size() &&
                     std::equal(found.begin(), found.end(), expected.begin());
  if (found != expected && !older)
    throw FileError(path + ": line 1 is not the header this program writes (\n  found:    " +
                    quote_input(first_line, 300) + "\n  expected: " + header_text(expected) +
                    "\n); the file has another layout or is not a table of this run");
}

}  // namespace

std::string CsvTable::format(const Row& row) {
  std::string line;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i > 0) line += ',';
    const std::string& f = row[i];
    if (f.find_first_of(",\"\n\r") == std::string::npos) {
      line += f;
      continue;
    }
    line += '"';
    for (char c : f) {
      if (c == '"') line += '"';
      line += c == '\n' || c == '\r' ? ' ' : c;
    }
    line += '"';
  }
  return line;
}

CsvTable::Row CsvTable::parse(const std::string& line) {
  Row out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

std::vector<CsvTable::Row> CsvTable::read(const std::string& path, Row* header, int* skipped,
                                          const Row* expected) {
  std::vector<Row> rows;
  Position at;
  bool restarted = false;
  read_new(path, at, &restarted, skipped, [&](const Row& row) { rows.push_back(row); }, expected);
  if (header && at.mark.until > 0) *header = at.header;
  // A last line without its newline, which a follower waits for, is no row to this reader.
  struct stat st {};
  if (skipped && ::stat(path.c_str(), &st) == 0 &&
      static_cast<std::uint64_t>(st.st_size) > at.mark.until)
    ++*skipped;
  return rows;
}

bool CsvTable::read_new(const std::string& path, Position& at, bool* restarted, int* skipped,
                        const std::function<void(const Row&)>& visit, const Row* expected,
                        std::uint64_t max_bytes) {
  *restarted = false;
  if (!name_exists(path)) {
    *restarted = at.mark.until != 0;
    at = Position{};
    return false;
  }
  // Never through a link: the owner writes its tables in place as files of their own, and a
  // reader (the web server among them) shows what it reads.
  RegularFileReader file(path, kMaxTableBytes, false);
  if (!still_follows(file, at.mark)) {
    *restarted = at.mark.until != 0;
    at = Position{};
  }
  std::uint64_t until = at.mark.until, last_line = at.mark.last_line;
  const std::uint64_t stop_after = max_bytes >= UINT64_MAX - until ? UINT64_MAX : until + max_bytes;
  bool more = false;
  // A line at a time, each parsed as it comes; a last line without its newline is a row being
  // written, read once it is whole.
  for_each_line(file, kMaxLineBytes, until, [&](const FileLine& l) {
    more = l.ended && l.next >= stop_after;
    if (!l.ended) return;
    const bool header = until == 0;
    until = l.next;
    last_line = l.offset;
    if (header) {
      const std::string text = line_text(l);
      if (expected) check_header(path, text, *expected);
      at.header = parse(text);
      return;
    }
    const Row row = l.too_long ? Row{} : parse(std::string(l.text));
    if (row.size() != at.header.size()) {
      if (skipped) ++*skipped;
      return;
    }
    visit(row);
  }, stop_after);
  at.mark = follow_mark(file, until, last_line);
  return more;
}

// A line of the file that the table keeps as a row: whole, and of the found header's field count
// or of this one's (a row of the current layout under a shorter header means the header was cut,
// not that the file is older: the row is kept and the header rewritten).
bool CsvTable::usable(const FileLine& line, std::size_t found_fields, Row* row) const {
  if (!line.ended || line.too_long) return false;
  *row = parse(std::string(line.text));
  return row->size() == found_fields || row->size() == header_.size();
}

CsvTable::CsvTable(std::string path, Row header, bool durable)
    : path_(std::move(path)), header_(std::move(header)), durable_(durable) {
  // A first pass checks the header and counts what the table cannot use; a second, only when
  // there is something to repair, writes the table again without it. No row is kept.
  std::optional<Row> found;
  bool rewrite_header = false;  // an older layout, or this one written otherwise ("kind",...)
  if (exists(path_)) {
    Row row;
    for_each_line(path_, kMaxTableBytes, kMaxLineBytes, 0, [&](const FileLine& l) {
      if (!found && l.ended) {
        check_header(path_, line_text(l), header_);
        found = parse(std::string(l.text));
        rewrite_header = l.text != format(header_);
      } else if (!found || !usable(l, found->size(), &row)) {
        ++dropped_;  // a header cut off by a kill, a row cut off, or a malformed row
      }
    });
  }
  if (!found || rewrite_header || dropped_ > 0) rewrite_repaired(found ? found->size() : 0);
  open_for_append();
}

namespace {

// What a rewrite of `table` sets aside is taken back when the rewrite fails before the table was
// replaced (a full disk: the lines are still in the table, which is left as it was), so a repair
// tried again, by every restart of a run on a full disk, never sets the same lines aside twice.
// Kept once the table is replaced (a new file in its place), whatever failed after that.
class SetAsideUndo {
 public:
  SetAsideUndo(const std::string& table, std::string path)
      : table_(table), path_(std::move(path)), table_inode_(inode_of(table)) {
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      existed_ = true;
      size_ = st.st_size;
    }
  }
  SetAsideUndo(const SetAsideUndo&) = delete;
  SetAsideUndo& operator=(const SetAsideUndo&) = delete;
  ~SetAsideUndo() {
    if (inode_of(table_) != table_inode_) return;
    if (!existed_) {
      ::unlink(path_.c_str());
      return;
    }
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > size_)
      (void)!::ftruncate(fd, size_);
    ::close(fd);
  }
 private:
  static ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  }

  std::string table_, path_;
  ino_t table_inode_;
  bool existed_ = false;
  off_t size_ = 0;
};

}  // namespace

void CsvTable::rewrite_repaired(std::size_t found_fields) {
  // Columns are only ever added at the end: an older file's header is a prefix of this one, and
  // its rows get empty new fields. Nothing read is lost: what the table cannot use goes to a file
  // beside it before the table is replaced.
  AtomicFile out(path_);
  SetAsideUndo undo(path_, set_aside_path());
  out.write(format(header_) + "\n");
  if (exists(path_)) {
    std::string set_aside;
    bool header = true;
    Row row;
    for_each_line(path_, kMaxTableBytes, kMaxLineBytes, 0, [&](const FileLine& l) {
      if (header && l.ended && found_fields > 0) {
        header = false;
        return;
      }
      if (found_fields > 0 && usable(l, found_fields, &row)) {
        row.resize(header_.size());
        out.write(format(row) + "\n");
        return;
      }
      if (l.too_long) {  // after what came before it, and straight to the file
        append_to_file(set_aside_path(), set_aside, false);
        set_aside.clear();
        RegularFileReader file(path_, kMaxTableBytes);
        for_each_block(file, l.offset, l.next, [&](std::string_view bytes) {
          append_to_file(set_aside_path(), bytes, false);
        });
        if (!l.ended) set_aside += '\n';
      } else {
        set_aside.append(l.text.data(), l.text.size()) += '\n';
      }
      if (set_aside.size() >= (std::size_t{1} << 20)) {
        append_to_file(set_aside_path(), set_aside, false);
        set_aside.clear();
      }
    });
    if (!set_aside.empty()) append_to_file(set_aside_path(), set_aside, false);
  }
  out.commit();
}

CsvTable::~CsvTable() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t CsvTable::column_of(const Row& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  throw std::logic_error("CSV table: no column " + name);
}

void CsvTable::open_for_append() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd_ < 0) {
    const int error = errno;
    if (error == ELOOP)
      throw FileError("cannot append to " + path_ +
                      ": it is a symbolic link; a table is written in place, never through a link");
    throw FileError("cannot open " + path_ + " for appending: " + std::strerror(error));
  }
}

void CsvTable::for_each_row(const std::function<void(const Row&)>& visit) const {
  // The table was checked and repaired when it was opened, and only its owner appends to it: a
  // line that is not a row now was written behind the owner's back.
  const std::string expected_header = format(header_);
  for_each_line(path_, kMaxTableBytes, kMaxLineBytes, 0, [&](const FileLine& l) {
    if (l.number == 1 && l.ended && !l.too_long && l.text == expected_header) return;
    if (l.number > 1 && l.ended && !l.too_long) {
      const Row row = parse(std::string(l.text));
      if (row.size() == header_.size()) return visit(row);
    }
    throw FileError(path_ + ": line " + std::to_string(l.number) +
                    " is not " + (l.number == 1 ? "the table's header" : "a row of its columns") +
                    "; the file was changed while this program held it");
  });
}

std::vector<CsvTable::Row> CsvTable::rows() const {
  std::vector<Row> rows;
  for_each_row([&](const Row& row) { rows.push_back(row); });
  return rows;
}

int CsvTable::rewrite_without(const std::vector<std::uint64_t>& gone) {
  if (gone.empty()) return 0;
  {
    AtomicFile out(path_);
    out.write(format(header_) + "\n");
    std::uint64_t index = 0;
    std::size_t next_gone = 0;
    for_each_row([&](const Row& row) {
      if (next_gone < gone.size() && gone[next_gone] == index++) {
        ++next_gone;
        return;
      }
      out.write(format(row) + "\n");
    });
    out.commit();
  }
  open_for_append();  // the new file's
  return static_cast<int>(gone.size());
}

int CsvTable::retain(const std::function<bool(const Row&)>& keep) {
  std::vector<std::uint64_t> gone;  // the rows' places, in order
  std::uint64_t index = 0;
  for_each_row([&](const Row& row) {
    if (!keep(row)) gone.push_back(index);
    ++index;
  });
  return rewrite_without(gone);
}

int CsvTable::set_aside(const std::function<bool(const Row&)>& drop) {
  SetAsideUndo undo(path_, set_aside_path());
  std::vector<std::uint64_t> gone;
  std::string moved;
  std::uint64_t index = 0;
  for_each_row([&](const Row& row) {
    if (drop(row)) {
      gone.push_back(index);
      moved += format(row) + "\n";
      if (moved.size() >= (std::size_t{1} << 20)) {
        append_to_file(set_aside_path(), moved, false);  // kept before it leaves the table
        moved.clear();
      }
    }
    ++index;
  });
  if (!moved.empty()) append_to_file(set_aside_path(), moved, false);
  return rewrite_without(gone);
}

void CsvTable::append(const Row& row) {
  if (row.size() != header_.size())
    throw std::logic_error("CsvTable " + path_ + ": a row of " + std::to_string(row.size()) +
                           " fields for " + std::to_string(header_.size()) + " columns");
  const std::string line = format(row) + "\n";
  struct stat before {};
  const bool sized = ::fstat(fd_, &before) == 0;
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n == 0 ? EIO : errno;
      // A row cut short (a full disk) is taken back, as append_to_file takes back its lines: the
      // table does not end in half a row that the next start would set aside. The bytes past the
      // size before are this row's (the table's owner is its one writer).
      struct stat now {};
      if (written > 0 && sized && ::fstat(fd_, &now) == 0 &&
          now.st_size == before.st_size + static_cast<off_t>(written))
        (void)::ftruncate(fd_, before.st_size);
      throw FileError("cannot append to " + path_ + ": " + std::strerror(error));
    }
    written += static_cast<std::size_t>(n);
  }
  if (durable_ && ::fdatasync(fd_) != 0)
    throw FileError("cannot sync " + path_ + ": " + std::strerror(errno));
}

}  // namespace oppidum::util
