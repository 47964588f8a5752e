#include "selfplay/replay_store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "games/quote.h"
#include "util/file_io.h"

namespace oppidum::selfplay {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "chunk-";
constexpr const char* kSuffix = ".bin";
// Chunk numbers and counts have at most 15 digits (so that sums of a few never overflow): a
// chunk named with a larger number is skipped, and the owner never writes one.
constexpr std::size_t kMaxDigits = 15;
constexpr std::uint64_t kMaxChunkNumber = [] {  // kMaxDigits nines
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kMaxDigits; ++i) n = n * 10 + 9;
  return n;
}();

const util::CsvTable::Row kIndexHeader = {"chunk", "games", "positions", "bytes"};

// The least a chunk can hold: a 16-byte file header; per record an 8-byte frame and a payload of
// at least 30 bytes (format version 1, no moves); per move at least 9 bytes (action, root value,
// flags, visit count). docs/FORMATS.md, "Game records".
constexpr std::int64_t kFileHeaderBytes = kGameFileHeaderBytes, kMinRecordBytes = 38,
                       kMinMoveBytes = 9;

std::string chunk_name(std::uint64_t number) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%08llu%s", kPrefix, static_cast<unsigned long long>(number),
                kSuffix);
  return name;
}

// A whole number of at most kMaxDigits digits, or nothing.
std::optional<std::int64_t> count_of(const std::string& text) {
  if (text.empty() || text.size() > kMaxDigits ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(text);
}

// The digits of a chunk file name (`chunk-<digits>.bin`), or empty for any other name.
std::string chunk_digits(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return "";
  return digits;
}

// The number a chunk's digits name: at most kMaxDigits of them count (leading zeros do not), or
// nothing (a number too large for a chunk).
std::optional<std::uint64_t> chunk_number(const std::string& digits) {
  const auto first = digits.find_first_not_of('0');
  if (first != std::string::npos && digits.size() - first > kMaxDigits) return std::nullopt;
  return std::stoull(digits);
}

}  // namespace

namespace {

// A chunk's row of index.csv, from the chunk alone: its intact games, their positions, its size.
util::CsvTable::Row index_row_of_chunk(std::uint64_t number, const std::string& chunk) {
  std::int64_t games = 0, positions = 0;
  for_each_game(chunk, [&](GameRecord&& g, const RecordPlace&) {
    ++games;
    positions += static_cast<std::int64_t>(g.moves.size());
    return true;
  });
  std::error_code ec;
  const auto bytes = fs::file_size(chunk, ec);
  return {std::to_string(number), std::to_string(games), std::to_string(positions),
          ec ? "" : std::to_string(bytes)};
}

}  // namespace

FolderReplayStore::FolderReplayStore(std::string folder, Mode mode)
    : folder_(std::move(folder)), mode_(mode) {
  if (mode_ == Mode::kReadOnly) {
    if (!fs::is_directory(folder_)) throw std::runtime_error(folder_ + ": no such game folder");
    return;
  }
  fs::create_directories(folder_);
  // Anything but a file or a link at a temporary name (a directory, a FIFO), with its number (the
  // index's: -1), checked once the next chunk's number is known.
  std::vector<std::pair<fs::path, std::int64_t>> odd;
  for (const auto& entry : fs::directory_iterator(folder_)) {
    const std::string name = entry.path().filename().string();
    // A write of this store's owner interrupted before its rename: never seen by readers (a
    // chunk's, or the index's). A file or a link is removed; anything else is left alone.
    const std::string stem_digits = chunk_digits(entry.path().stem().string());
    if (entry.path().extension() == ".tmp" && (!stem_digits.empty() || name == "index.csv.tmp")) {
      std::error_code ec;
      const fs::file_status status = entry.symlink_status(ec);
      if (!ec && !fs::is_regular_file(status) && !fs::is_symlink(status)) {
        const auto number = stem_digits.empty() ? std::nullopt : chunk_number(stem_digits);
        odd.emplace_back(entry.path(),
                         stem_digits.empty() ? -1
                         : number            ? static_cast<std::int64_t>(*number)
                                             : std::numeric_limits<std::int64_t>::max());
        continue;
      }
      fs::remove(entry.path(), ec);
    }
    // Every name of a chunk keeps its number, whatever is there (a link to /dev/zero is no chunk,
    // but its name is taken: the writer never writes over it); the chunks are among them.
    const std::string digits = chunk_digits(name);
    if (digits.empty()) continue;
    if (const auto number = chunk_number(digits))
      next_chunk_ = std::max<std::uint64_t>(next_chunk_, *number + 1);
  }
  open_index();
  index_->for_each_row([&](const util::CsvTable::Row& row) {  // gone chunks keep their numbers
    next_chunk_ = std::max<std::uint64_t>(next_chunk_, std::stoull(row[0]) + 1);
  });
  // One where a write is still to come (the index's, or a chunk's from the next number on) would
  // fail that write in the middle of a session: named now. One below is in no write's way.
  for (const auto& [path, number] : odd) {
    if (number >= 0 && static_cast<std::uint64_t>(number) < next_chunk_) continue;
    throw std::runtime_error(util::temporary_in_the_way(path.string()));
  }
}

void FolderReplayStore::open_index() {
  const std::string path = index_path(folder_);
  try {
    index_ = std::make_unique<util::CsvTable>(path, kIndexHeader, false);
  } catch (const util::FileError& e) {  // not a table of this layout: one line for the log
    std::string why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    for (char& c : why)
      if (c == '\n') c = ' ';
    rebuild_index(why);
    return;
  }
  const std::string why = index_disagreement();
  if (!why.empty()) return rebuild_index(why);
  // Chunks the index does not list (a kill between a chunk and its row, an index deleted): their
  // rows, from the chunks alone.
  std::map<std::uint64_t, std::string> unlisted;  // the chunks on disk, less those listed
  for (const std::string& chunk : chunks())
    unlisted[std::stoull(chunk_digits(fs::path(chunk).filename().string()))] = chunk;
  index_->for_each_row([&](const util::CsvTable::Row& row) {
    if (const auto chunk = count_of(row[0])) unlisted.erase(static_cast<std::uint64_t>(*chunk));
  });
  int added = 0;
  for (const auto& [number, chunk] : unlisted) {
    index_->append(index_row_of_chunk(number, chunk));
    ++added;
  }
  if (added > 0)
    index_repair_ = path + ": listed " + std::to_string(added) + " chunk(s) it did not list";
}

std::string FolderReplayStore::index_path(const std::string& folder) {
  return (fs::path(folder) / "index.csv").string();
}

std::string FolderReplayStore::index_disagreement() const {
  if (index_->dropped_on_open() > 0)
    return std::to_string(index_->dropped_on_open()) + " cut-off or malformed row(s)";
  std::map<std::uint64_t, std::int64_t> bytes_on_disk;  // chunk number -> file size
  for (const std::string& path : chunks()) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    bytes_on_disk[std::stoull(chunk_digits(fs::path(path).filename().string()))] =
        ec ? -1 : static_cast<std::int64_t>(size);
  }
  std::vector<std::int64_t> listed;  // 8 bytes a row: a row is kept for every chunk ever written
  std::string why;
  std::size_t i = 0;
  // The first row that disagrees is named; a table of a row a chunk is read a row at a time.
  index_->for_each_row([&](const util::CsvTable::Row& row) {
    if (why.empty()) why = row_disagreement(row, i, bytes_on_disk);
    if (const auto chunk = count_of(row[0])) listed.push_back(*chunk);
    ++i;
  });
  if (!why.empty()) return why;
  std::sort(listed.begin(), listed.end());
  const auto twice = std::adjacent_find(listed.begin(), listed.end());
  if (twice != listed.end())
    return "it lists " + chunk_name(static_cast<std::uint64_t>(*twice)) + " twice";
  return "";
}

std::string FolderReplayStore::row_disagreement(
    const util::CsvTable::Row& row, std::size_t i,
    const std::map<std::uint64_t, std::int64_t>& bytes_on_disk) const {
  const std::string where = "row " + std::to_string(i + 2);
  const auto chunk = count_of(row[0]), games = count_of(row[1]), positions = count_of(row[2]),
             bytes = count_of(row[3]);
  if (!chunk || !games || !positions || (!row[3].empty() && !bytes))
    return where + " is not a chunk number and three counts (\"" +
           quote_input(util::CsvTable::format(row), 60) + "\")";
  const std::string name = chunk_name(static_cast<std::uint64_t>(*chunk));
  const auto on_disk = bytes_on_disk.find(static_cast<std::uint64_t>(*chunk));
  if (on_disk == bytes_on_disk.end()) {
    if (*games > 0 || *positions > 0)
      return where + " counts " + std::to_string(*games) + " games in " + name +
             ", which is not there";
    return "";  // a chunk that is gone, kept so that its number is never used again
  }
  if (bytes && *bytes != on_disk->second)
    return where + " says " + name + " has " + std::to_string(*bytes) + " bytes; it has " +
           std::to_string(on_disk->second);
  if (kFileHeaderBytes + *games * kMinRecordBytes + *positions * kMinMoveBytes > on_disk->second)
    return where + " counts " + std::to_string(*games) + " games and " +
           std::to_string(*positions) + " positions in " + name + ", more than its " +
           std::to_string(on_disk->second) + " bytes can hold";
  // A row may count fewer games than the chunk's header (damaged records are not counted), never
  // more.
  const auto announced = game_file_record_count((fs::path(folder_) / name).string());
  if (announced && *games > static_cast<std::int64_t>(*announced))
    return where + " counts " + std::to_string(*games) + " games in " + name +
           ", whose header holds " + std::to_string(*announced);
  return "";
}

void FolderReplayStore::rebuild_index(const std::string& why) {
  const std::string path = (fs::path(folder_) / "index.csv").string();
  std::map<std::uint64_t, util::CsvTable::Row> rows;
  if (index_)  // the numbers of chunks that are gone are kept
    index_->for_each_row([&](const util::CsvTable::Row& row) {
      if (const auto chunk = count_of(row[0]))
        rows[static_cast<std::uint64_t>(*chunk)] = {row[0], "0", "0", ""};
    });
  const auto chunk_paths = chunks();
  for (const std::string& chunk : chunk_paths) {
    const std::uint64_t number = std::stoull(chunk_digits(fs::path(chunk).filename().string()));
    rows[number] = index_row_of_chunk(number, chunk);
  }
  std::string text = util::CsvTable::format(kIndexHeader) + "\n";
  for (const auto& [number, row] : rows) text += util::CsvTable::format(row) + "\n";
  index_.reset();
  util::write_file_atomically(path, text);
  index_ = std::make_unique<util::CsvTable>(path, kIndexHeader, false);
  index_repair_ = path + ": " + why + "; rebuilt it from the " +
                  std::to_string(chunk_paths.size()) + " chunks";
}

std::map<std::string, FolderReplayStore::ChunkSize> FolderReplayStore::sizes() const {
  std::map<std::string, ChunkSize> out;
  if (!index_) return out;
  index_->for_each_row([&](const util::CsvTable::Row& row) {
    if (row[1] == "0") return;  // a chunk that is gone (none is written without a game)
    out[(fs::path(folder_) / chunk_name(std::stoull(row[0]))).string()] = {std::stoll(row[1]),
                                                                          std::stoll(row[2])};
  });
  return out;
}

void FolderReplayStore::append(const std::vector<GameRecord>& games) {
  if (mode_ != Mode::kOwner)
    throw std::logic_error("FolderReplayStore::append on the read-only store " + folder_);
  if (games.empty()) return;
  std::lock_guard<std::mutex> lock(append_mutex_);
  if (next_chunk_ > kMaxChunkNumber)
    throw std::runtime_error(folder_ + ": a chunk is numbered " + std::to_string(next_chunk_ - 1) +
                             ", the largest number there is; no chunk can follow it (move that "
                             "file aside, or drop its row from index.csv if it is gone)");
  const std::string path = (fs::path(folder_) / chunk_name(next_chunk_)).string();
  // Never over a file: next_chunk_ is above every number seen, so one there now was put there
  // behind this store's back.
  std::error_code exists_ec;
  if (fs::symlink_status(path, exists_ec).type() != fs::file_type::not_found)
    throw std::runtime_error(path + " appeared while this run owned the folder; refusing to "
                             "overwrite it");
  write_game_file(path, games);
  std::int64_t positions = 0;
  for (const GameRecord& g : games) positions += static_cast<std::int64_t>(g.moves.size());
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  index_->append({std::to_string(next_chunk_), std::to_string(games.size()),
                  std::to_string(positions), ec ? "" : std::to_string(bytes)});
  ++next_chunk_;
}

std::optional<std::uint64_t> FolderReplayStore::number_of(const std::string& path) {
  const std::string digits = chunk_digits(fs::path(path).filename().string());
  if (digits.empty()) return std::nullopt;
  return chunk_number(digits);
}

std::vector<std::string> FolderReplayStore::chunks() const {
  std::vector<std::pair<std::uint64_t, std::string>> found;
  std::vector<std::string> problems;
  std::error_code ec;
  for (fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string digits = chunk_digits(path.filename().string());
    if (digits.empty()) continue;
    std::error_code type_ec;
    if (!fs::is_regular_file(it->status(type_ec))) {  // follows symlinks: /dev/zero is no chunk
      problems.push_back(path.string() + ": named like a chunk but not a regular file; skipped");
      continue;
    }
    const auto number = chunk_number(digits);
    if (!number) {
      problems.push_back(path.string() + ": chunk number too large; skipped");
      continue;
    }
    found.emplace_back(*number, path.string());
  }
  if (ec) problems.push_back(folder_ + ": cannot list: " + ec.message());
  // Several names for one number (chunk-571.bin beside chunk-00000571.bin): one chunk is read,
  // the one named as this program names it (or else the first by name), so no games count twice.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    const bool a_canonical = fs::path(a.second).filename() == chunk_name(a.first);
    const bool b_canonical = fs::path(b.second).filename() == chunk_name(b.first);
    return a_canonical != b_canonical ? a_canonical : a.second < b.second;
  });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (i > 0 && found[i].first == found[i - 1].first) {
      problems.push_back(found[i].second + ": the same chunk number as " + out.back() +
                         "; skipped");
      continue;
    }
    out.push_back(std::move(found[i].second));
  }
  std::lock_guard<std::mutex> lock(problems_mutex_);
  problems_ = std::move(problems);
  return out;
}

std::vector<std::string> FolderReplayStore::problems() const {
  std::lock_guard<std::mutex> lock(problems_mutex_);
  return problems_;
}


}  // namespace oppidum::selfplay
