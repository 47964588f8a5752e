#include "selfplay/replay_store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace oppidum::selfplay {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "chunk-";
constexpr const char* kSuffix = ".bin";
constexpr std::size_t kMaxDigits = 18;  // below 2^63: every such number fits

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

}  // namespace

FolderReplayStore::FolderReplayStore(std::string folder, Mode mode)
    : folder_(std::move(folder)), mode_(mode) {
  if (mode_ == Mode::kReadOnly) {
    if (!fs::is_directory(folder_)) throw std::runtime_error(folder_ + ": no such game folder");
    return;
  }
  fs::create_directories(folder_);
  for (const auto& entry : fs::directory_iterator(folder_)) {
    const std::string name = entry.path().filename().string();
    // A write of this store's owner interrupted before its rename: never seen by readers.
    if (entry.path().extension() == ".tmp" && !chunk_digits(entry.path().stem().string()).empty()) {
      std::error_code ec;
      fs::remove(entry.path(), ec);
    }
  }
  for (const std::string& path : chunks()) {
    const std::string digits = chunk_digits(fs::path(path).filename().string());
    next_chunk_ = std::max<std::uint64_t>(next_chunk_, std::stoull(digits) + 1);
  }
  index_ = std::make_unique<util::CsvTable>((fs::path(folder_) / "index.csv").string(),
                                            util::CsvTable::Row{"chunk", "games", "positions"},
                                            false);
}

std::map<std::string, FolderReplayStore::ChunkSize> FolderReplayStore::sizes() const {
  std::map<std::string, ChunkSize> out;
  if (!index_) return out;
  for (const auto& row : index_->rows()) {
    char name[64];
    std::snprintf(name, sizeof name, "%s%08llu%s", kPrefix, std::strtoull(row[0].c_str(), nullptr, 10),
                  kSuffix);
    out[(fs::path(folder_) / name).string()] = {std::atoll(row[1].c_str()), std::atoll(row[2].c_str())};
  }
  return out;
}

void FolderReplayStore::append(const std::vector<GameRecord>& games) {
  if (mode_ != Mode::kOwner)
    throw std::logic_error("FolderReplayStore::append on the read-only store " + folder_);
  if (games.empty()) return;
  std::lock_guard<std::mutex> lock(append_mutex_);
  char name[64];
  std::snprintf(name, sizeof name, "%s%08llu%s", kPrefix,
                static_cast<unsigned long long>(next_chunk_), kSuffix);
  write_game_file((fs::path(folder_) / name).string(), games);
  std::int64_t positions = 0;
  for (const GameRecord& g : games) positions += static_cast<std::int64_t>(g.moves.size());
  index_->append({std::to_string(next_chunk_), std::to_string(games.size()), std::to_string(positions)});
  ++next_chunk_;
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
    const auto first = digits.find_first_not_of('0');
    const std::size_t significant = first == std::string::npos ? 0 : digits.size() - first;
    if (significant > kMaxDigits) {
      problems.push_back(path.string() + ": chunk number too large; skipped");
      continue;
    }
    found.emplace_back(std::stoull(digits), path.string());
  }
  if (ec) problems.push_back(folder_ + ": cannot list: " + ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  std::lock_guard<std::mutex> lock(problems_mutex_);
  problems_ = std::move(problems);
  return out;
}

std::vector<std::string> FolderReplayStore::problems() const {
  std::lock_guard<std::mutex> lock(problems_mutex_);
  return problems_;
}

ReadResult FolderReplayStore::read_chunk(const std::string& path) const {
  return read_game_file(path);
}

}  // namespace oppidum::selfplay
