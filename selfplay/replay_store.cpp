#include "selfplay/replay_store.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace oppidum::selfplay {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "chunk-";
constexpr const char* kSuffix = ".bin";

// The number of a chunk file name, or -1 for any other file.
long long chunk_number(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

}  // namespace

FolderReplayStore::FolderReplayStore(std::string folder) : folder_(std::move(folder)) {
  fs::create_directories(folder_);
  for (const auto& entry : fs::directory_iterator(folder_)) {
    if (entry.path().extension() == ".tmp") {
      fs::remove(entry.path());  // a write interrupted before its rename: never seen by readers
      continue;
    }
    const long long n = chunk_number(entry.path());
    if (n >= 0) next_chunk_ = std::max<std::uint64_t>(next_chunk_, static_cast<std::uint64_t>(n) + 1);
  }
}

void FolderReplayStore::append(const std::vector<GameRecord>& games) {
  if (games.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  char name[64];
  std::snprintf(name, sizeof name, "%s%08llu%s", kPrefix,
                static_cast<unsigned long long>(next_chunk_), kSuffix);
  write_game_file((fs::path(folder_) / name).string(), games);
  ++next_chunk_;
}

std::vector<std::string> FolderReplayStore::chunks() const {
  std::vector<std::pair<long long, std::string>> found;
  for (const auto& entry : fs::directory_iterator(folder_)) {
    const long long n = chunk_number(entry.path());
    if (n >= 0) found.emplace_back(n, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

ReadResult FolderReplayStore::read_chunk(const std::string& id) const { return read_game_file(id); }

}  // namespace oppidum::selfplay
