// games/index.csv of a replay store (selfplay/replay_store.h), checked by the owner against the
// chunks on disk: one intact chunk (3 games) and the fuzzed index. Whatever the index says, the
// games the store takes must not exceed the chunk's header, and a reader must list the chunk.
// (Positions are only checked against what the chunk's bytes can hold, by design.)
#include <filesystem>

#include "common.h"
#include "selfplay/replay_store.h"
#include "ttt_chunk.h"

using namespace oppidum;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path dir = fs::path(fuzz::scratch_dir()) / "games";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  const std::string& chunk = fuzz::ttt_chunk();
  fuzz::write_file((dir / "chunk-00000002.bin").string(),
                   reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size());
  fuzz::write_file((dir / "index.csv").string(), data, size);
  try {
    selfplay::FolderReplayStore store(dir.string(), selfplay::FolderReplayStore::Mode::kOwner);
    for (const auto& [path, s] : store.sizes()) {
      FUZZ_CHECK(s.games >= 0 && s.games <= 3,
                 "index games within the chunk's: " + std::to_string(s.games));
      FUZZ_CHECK(s.positions >= 0, "index positions not negative");
    }
    FUZZ_CHECK(!store.chunks().empty(), "the chunk is listed");
    (void)selfplay::read_game_file(store.chunks().front());
  } catch (const util::FileError&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
