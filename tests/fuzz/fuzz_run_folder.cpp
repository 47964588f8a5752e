// The run folder's files (trainer/run_folder.h): state.yaml, the log that --recover rebuilds it
// from, arena.csv and metrics.csv (readers, and the owner's open, repairs and --recover rebuild).
// Input: a selector byte, then the file's bytes (for two tables: arena.csv NUL metrics.csv).
// Checks: a state that loads or is rebuilt saves and loads back the same; a run id rebuilt from
// the log is empty or 32 digits; a rebuilt arena.csv reads back whole.
#include <filesystem>

#include "common.h"
#include "trainer/run_folder.h"
#include "util/file_io.h"

using namespace oppidum;
namespace fs = std::filesystem;

namespace {

void clear(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename() != "lock") fs::remove_all(e.path(), ec);
}

bool same(const trainer::RunState& a, const trainer::RunState& b) {
  return a.sessions == b.sessions && a.run_id == b.run_id && a.stream_cursor == b.stream_cursor &&
         a.stream_read == b.stream_read && a.identity == b.identity;
}

void state_round_trip(trainer::RunFolder& folder, const trainer::RunState& s) {
  folder.save_state(s);
  trainer::RunState back;
  try {
    back = folder.load_state(false);
  } catch (const trainer::RunFolderError& e) {
    fuzz::fail(std::string("a state that was loaded or rebuilt does not load after save: ") +
               e.what());
  }
  FUZZ_CHECK(same(back, s), "state.yaml round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const fs::path dir = fs::path(fuzz::scratch_dir()) / "run";
  static trainer::RunFolder folder(dir);  // takes the lock once
  const trainer::RunPaths& paths = folder.paths();
  clear(dir);
  fs::create_directories(paths.checkpoints());
  const std::uint8_t mode = data[0] % 6;
  const std::uint8_t* body = data + 1;
  const std::size_t n = size - 1;
  switch (mode) {
    case 0: {  // state.yaml
      fuzz::write_file(paths.state(), body, n);
      trainer::RunState s;
      try {
        s = folder.load_state(false);
      } catch (const trainer::RunFolderError&) {
        return 0;
      }
      state_round_trip(folder, s);
      return 0;
    }
    case 1: {  // log.txt, state.yaml missing, --recover
      fuzz::write_file(paths.log(), body, n);
      const trainer::RunState s = folder.load_state(true);
      FUZZ_CHECK(s.run_id.empty() || s.run_id.size() == 32,
                 "recovered run id \"" + s.run_id + "\"");
      state_round_trip(folder, s);
      return 0;
    }
    case 2:
    case 3: {  // readers of arena.csv and metrics.csv
      const fs::path p = mode == 2 ? paths.arena() : paths.metrics();
      fuzz::write_file(p, body, n);
      for (bool check : {false, true}) {
        int skipped = 0;
        try {
          if (mode == 2)
            (void)trainer::read_gates(p, &skipped, check);
          else
            trainer::for_each_metrics_row(p, &skipped, check, [](const trainer::MetricsRow&) {});
        } catch (const util::FileError&) {
        }
      }
      return 0;
    }
    case 4: {  // the owner opens both tables (arena.csv NUL metrics.csv) and trims for a resume
      const std::string both(reinterpret_cast<const char*>(body), n);
      const std::size_t nul = both.find('\0');
      const std::string arena = both.substr(0, nul);
      const std::string metrics = nul == std::string::npos ? "" : both.substr(nul + 1);
      fuzz::write_file(paths.arena(), reinterpret_cast<const std::uint8_t*>(arena.data()),
                       arena.size());
      fuzz::write_file(paths.metrics(), reinterpret_cast<const std::uint8_t*>(metrics.data()),
                       metrics.size());
      // The tables are opened on the one RunFolder (a second one would be refused the lock).
      try {
        (void)folder.open_tables(false, "classic:depth=1");
        (void)folder.last_promoted();
        const std::int64_t step = std::int64_t{folder.last_gated()} * 10 + 5;
        (void)folder.drop_rows_after(step, 10);
        (void)folder.set_aside_gates_after(folder.last_gated() / 2);
      } catch (const trainer::RunFolderError&) {
      } catch (const util::FileError&) {
      }
      return 0;
    }
    case 5: {  // arena.csv lost, rebuilt from metrics.csv with --recover
      fuzz::write_file(paths.metrics(), body, n);
      const std::uint8_t none = 0;
      fuzz::write_file(paths.trainer_weights(), &none, 0);  // progress: the tables are required
      try {
        (void)folder.open_tables(true, "classic:depth=1");
        int skipped = 0;
        const auto gates = trainer::read_gates(paths.arena(), &skipped, true);
        FUZZ_CHECK(gates.size() == folder.gates().size(), "rebuilt arena.csv reads back whole");
      } catch (const trainer::RunFolderError&) {
      } catch (const util::FileError&) {
      }
      return 0;
    }
  }
  return 0;
}
