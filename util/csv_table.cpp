#include "util/csv_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "util/file_io.h"

namespace oppidum::util {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 || errno != ENOENT;
}

// Splits `text` into complete lines; a last line without its newline goes to `torn`.
std::vector<std::string> complete_lines(const std::string& text, bool* torn,
                                        std::string* torn_text = nullptr) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto newline = text.find('\n', at);
    if (newline == std::string::npos) {
      *torn = true;
      if (torn_text) *torn_text = text.substr(at);
      break;
    }
    lines.push_back(text.substr(at, newline - at));
    at = newline + 1;
  }
  return lines;
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
                    first_line.substr(0, 300) + "\n  expected: " + header_text(expected) +
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
  if (!exists(path)) return rows;
  bool torn = false;
  const auto lines = complete_lines(read_regular_file(path, kMaxTableBytes), &torn);
  if (torn && skipped) ++*skipped;
  if (lines.empty()) return rows;
  if (expected) check_header(path, lines.front(), *expected);
  const Row head = parse(lines.front());
  if (header) *header = head;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    Row row = parse(lines[i]);
    if (row.size() != head.size()) {
      if (skipped) ++*skipped;
      continue;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void CsvTable::read_new(const std::string& path, Position& at, bool* restarted, int* skipped,
                        const std::function<void(const Row&)>& visit, const Row* expected) {
  *restarted = false;
  if (!exists(path)) {
    *restarted = at.offset != 0;
    at = Position{};
    return;
  }
  RegularFileReader file(path, kMaxTableBytes);
  bool same = at.offset != 0 && file.inode() == at.inode && file.size() >= at.offset &&
              at.last_line.size() <= at.offset;
  if (same) {
    std::string before(at.last_line.size(), '\0');
    file.seek(at.offset - at.last_line.size());
    same = file.read(before.data(), before.size()) == before.size() && before == at.last_line;
  }
  if (!same) {
    *restarted = at.offset != 0;
    at = Position{};
    at.inode = file.inode();
    file.seek(0);
  }
  const std::string text = file.read_to_size();
  // Line by line, each parsed as it comes; a last line without its newline is a row being
  // written, read once it is whole.
  for (std::size_t from = 0;;) {
    const std::size_t newline = text.find('\n', from);
    if (newline == std::string::npos) break;
    const std::string line = text.substr(from, newline - from);
    from = newline + 1;
    const bool header = at.offset == 0;
    at.offset += line.size() + 1;
    at.last_line = line + "\n";
    if (header) {
      if (expected) check_header(path, line, *expected);
      at.header = parse(line);
      continue;
    }
    const Row row = parse(line);
    if (row.size() != at.header.size()) {
      if (skipped) ++*skipped;
      continue;
    }
    visit(row);
  }
}

CsvTable::CsvTable(std::string path, Row header, bool durable)
    : path_(std::move(path)), header_(std::move(header)), durable_(durable) {
  bool repair = false;
  if (exists(path_)) {
    bool torn = false;
    std::string torn_text;
    const auto lines =
        complete_lines(read_regular_file(path_, kMaxTableBytes), &torn, &torn_text);
    std::string set_aside;  // the lines the table drops, kept in set_aside_path()
    if (lines.empty()) {
      repair = true;  // empty, or a header cut off by a kill: start again with the header
    } else {
      check_header(path_, lines.front(), header_);
    }
    // Columns are only ever added at the end: an older file's header is a prefix of this one, and
    // its rows get empty new fields. A row of the current layout under a shorter header means the
    // header was cut, not that the file is older: the row is kept (and the header rewritten).
    const Row found = lines.empty() ? header_ : parse(lines.front());
    const bool older = found.size() < header_.size();
    for (std::size_t i = 1; i < lines.size(); ++i) {
      Row row = parse(lines[i]);
      if (row.size() != found.size() && row.size() != header_.size()) {
        ++dropped_;
        set_aside += lines[i] + '\n';
        continue;
      }
      row.resize(header_.size());
      rows_.push_back(std::move(row));
    }
    if (torn) {
      ++dropped_;
      set_aside += torn_text + '\n';
    }
    // Nothing read is lost: what the table cannot use goes to a file beside it first.
    if (dropped_ > 0) append_to_file(set_aside_path(), set_aside);
    repair = repair || older || dropped_ > 0;
  } else {
    repair = true;
  }
  if (repair) rewrite();
  open_for_append();
}

CsvTable::~CsvTable() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t CsvTable::column_of(const Row& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  throw std::logic_error("CSV table: no column " + name);
}

void CsvTable::rewrite() {
  std::string text = header_text(header_) + "\n";
  for (const Row& row : rows_) text += format(row) + "\n";
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  write_file_atomically(path_, text);
}

void CsvTable::open_for_append() {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd_ < 0) {
    const int error = errno;
    if (error == ELOOP)
      throw FileError("cannot append to " + path_ +
                      ": it is a symbolic link; a table is written in place, never through a link");
    throw FileError("cannot open " + path_ + " for appending: " + std::strerror(error));
  }
}

void CsvTable::let_go_of_rows() {
  rows_kept_ = false;
  std::vector<Row>().swap(rows_);
}

void CsvTable::check_rows_kept() const {
  // A rewrite without the rows would leave the header alone: never.
  if (!rows_kept_)
    throw std::logic_error("CsvTable " + path_ +
                           ": its rows were let go of; reopen it to read them");
}

const std::vector<CsvTable::Row>& CsvTable::rows() const {
  check_rows_kept();
  return rows_;
}

int CsvTable::retain(const std::function<bool(const Row&)>& keep) {
  check_rows_kept();
  std::vector<Row> kept;
  for (Row& row : rows_)
    if (keep(row)) kept.push_back(std::move(row));
  const int gone = static_cast<int>(rows_.size() - kept.size());
  rows_ = std::move(kept);
  if (gone > 0) {
    rewrite();
    open_for_append();
  }
  return gone;
}

int CsvTable::set_aside(const std::function<bool(const Row&)>& drop) {
  check_rows_kept();
  std::string moved;
  for (const Row& row : rows_)
    if (drop(row)) moved += format(row) + "\n";
  if (moved.empty()) return 0;
  append_to_file(set_aside_path(), moved);  // kept before it leaves the table
  return retain([&](const Row& row) { return !drop(row); });
}

void CsvTable::append(const Row& row) {
  if (row.size() != header_.size())
    throw std::logic_error("CsvTable " + path_ + ": a row of " + std::to_string(row.size()) +
                           " fields for " + std::to_string(header_.size()) + " columns");
  const std::string line = format(row) + "\n";
  const char* data = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw FileError("cannot append to " + path_ + ": " +
                      std::strerror(n == 0 ? EIO : errno));
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (durable_ && ::fdatasync(fd_) != 0)
    throw FileError("cannot sync " + path_ + ": " + std::strerror(errno));
  if (rows_kept_) rows_.push_back(row);
}

}  // namespace oppidum::util
