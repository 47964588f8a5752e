// Every kind of file the `oppidum` binary reads or writes, given what a hostile world puts in its
// place (issue #25): a symbolic link to /dev/zero, a FIFO, a directory, a file over the limit for
// its kind (docs/FORMATS.md, "What a run folder guarantees"), a link planted where a file is
// written, a run's own files named as an output. A refused read ends at once with a message naming
// the file and a non-zero exit status; a refused write leaves what was there as it was. Every
// command runs under `timeout -s KILL 60`, so a hang fails the test (status 137) instead of
// blocking it. OPPIDUM_TEST_BINARY runs the tests against another build (an older one fails them).
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/ratings.h"
#include "games/game.h"
#include "model/checkpoint.h"
#include "selfplay/game_record.h"
#include "tests/process_util.h"
#include "trainer/run_folder.h"
#include "util/csv_table.h"

namespace {
namespace fs = std::filesystem;
using oppidum::test_util::CommandResult;
using oppidum::test_util::read_file;
using oppidum::test_util::run_shell;

const std::string kBinary =
    std::getenv("OPPIDUM_TEST_BINARY") ? std::getenv("OPPIDUM_TEST_BINARY") : OPPIDUM_BINARY;

// A run config with the smallest network; the checkpoints below are of this network.
const char* const kConfig =
    "run:\n  game: mg\nnet:\n  blocks: 1\n  filters: 8\n  policy_channels: 2\n"
    "  value_channels: 1\n  value_hidden: 16\n";

oppidum::model::NetConfig tiny_net() {
  oppidum::model::NetConfig net;
  net.blocks = 1;
  net.filters = 8;
  net.policy_channels = 2;
  net.value_channels = 1;
  net.value_hidden = 16;
  return net;
}

void save_tiny_checkpoint(const fs::path& path) {
  const oppidum::Game& game = oppidum::game_by_name("mg");
  oppidum::model::save_checkpoint(oppidum::model::random_checkpoint(game, tiny_net(), 1),
                                  path.string());
}

// What a hostile world puts where a file should be.
enum class Hostile { kDevZero, kFifo, kDirectory, kOversize };
constexpr Hostile kEveryHostile[] = {Hostile::kDevZero, Hostile::kFifo, Hostile::kDirectory,
                                     Hostile::kOversize};

const char* name_of(Hostile kind) {
  switch (kind) {
    case Hostile::kDevZero: return "dev-zero";
    case Hostile::kFifo: return "fifo";
    case Hostile::kDirectory: return "directory";
    case Hostile::kOversize: return "oversize";
  }
  return "";
}

// Puts `kind` at `path` (an oversize file is sparse: `oversize` bytes that take no room) and
// returns what the refusal must say about it.
std::string plant(const fs::path& path, Hostile kind, std::uintmax_t oversize) {
  fs::remove_all(path);
  switch (kind) {
    case Hostile::kDevZero:
      fs::create_symlink("/dev/zero", path);
      return "a character device";
    case Hostile::kFifo:
      EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
      return "a FIFO";
    case Hostile::kDirectory:
      fs::create_directory(path);
      return "a directory";
    case Hostile::kOversize:
      std::ofstream(path) << "x";
      fs::resize_file(path, oversize);
      return std::to_string(oversize) + " bytes";
  }
  return "";
}

class FileSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           (std::string("file_safety_") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path path(const std::string& name) const { return dir_ / name; }

  // `oppidum ARGS` (standard error included), killed after 60 s; `limits` go before it (ulimit).
  CommandResult oppidum(const std::string& args, const std::string& limits = "") const {
    return run_shell("cd " + dir_.string() + " && " + limits + " timeout -s KILL 60 " + kBinary +
                     " " + args + " 2>&1");
  }

  // A run folder that `train` resumes at once: the config, state.yaml and the best network.
  fs::path make_run(const std::string& name) const {
    const fs::path run = path(name);
    fs::create_directories(run / "checkpoints");
    std::ofstream(run / "config.yaml") << kConfig;
    std::ofstream(run / "state.yaml") << "sessions: 1\n";
    save_tiny_checkpoint(run / "checkpoints" / "best.ckpt");
    return run;
  }

  // Expects `r` to be a refusal that names `file` and says `why`, not a hang.
  static void expect_refused(const CommandResult& r, const fs::path& file, const std::string& why,
                             const std::string& what) {
    EXPECT_NE(r.status, 137) << what << ": killed after 60 s (it hung)";
    EXPECT_NE(r.status, 0) << what << ": " << r.out;
    EXPECT_NE(r.out.find(file.string()), std::string::npos) << what << ": " << r.out;
    EXPECT_NE(r.out.find(why), std::string::npos) << what << ": " << r.out;
    EXPECT_LT(r.out.size(), 2000u) << what;
  }

  fs::path dir_;
};

TEST_F(FileSafety, ConfigFilesAreRegularAndAtMostOneMebibyte) {
  for (const Hostile kind : kEveryHostile) {
    const std::string name = std::string("config-") + name_of(kind) + ".yaml";
    const std::string why = plant(path(name), kind, (2u << 20));
    const std::string run = std::string("run-") + name_of(kind);
    expect_refused(oppidum("train --no-status --config " + name + " --run " + run), name, why,
                   name);
    EXPECT_FALSE(fs::exists(path(run))) << name << ": a refused config creates nothing";
  }
}

TEST_F(FileSafety, CheckpointFilesAreRegularAndAtMostFourGibibytes) {
  for (const Hostile kind : kEveryHostile) {
    const std::string name = std::string("net-") + name_of(kind) + ".ckpt";
    const std::string why = plant(path(name), kind, oppidum::model::kMaxCheckpointBytes + 1);
    expect_refused(oppidum("export --checkpoint " + name + " --out net.onnx"), name, why,
                   "export " + name);
    EXPECT_FALSE(fs::exists(path("net.onnx")));
    expect_refused(oppidum("arena --game mg --a net:checkpoint=" + name +
                           ",sims=2 --b random --games 2"),
                   name, why, "arena " + name);
  }
}

// A checkpoint whose header is right but whose size the memory cannot hold: the allocation that
// fails is reported with the file's name, never as a bare std::bad_alloc.
TEST_F(FileSafety, ACheckpointLargerThanTheMemoryIsNamed) {
  save_tiny_checkpoint(path("small.ckpt"));
  const std::string cap = "ulimit -v 1500000 &&";  // 1.5 GB of address space
  const CommandResult control = oppidum("export --checkpoint small.ckpt --out small.onnx", cap);
  if (control.status != 0)
    GTEST_SKIP() << "oppidum does not start under `ulimit -v 1500000` here: " << control.out;
  const std::uint64_t size = std::uint64_t{3} << 30;
  {
    std::ofstream out(path("huge.ckpt"), std::ios::binary);
    out.write(oppidum::model::kCheckpointMagic, 8);
    const std::uint32_t version = oppidum::model::kCheckpointFormatVersion;
    const std::uint64_t length = size - 4;  // the header fits the file: only memory is short
    out.write(reinterpret_cast<const char*>(&version), 4);
    out.write(reinterpret_cast<const char*>(&length), 8);
  }
  fs::resize_file(path("huge.ckpt"), size);
  const CommandResult r = oppidum("export --checkpoint huge.ckpt --out huge.onnx", cap);
  expect_refused(r, "huge.ckpt", "not enough memory to read its 3221225472 bytes", "export");
  EXPECT_EQ(r.out.find("std::bad_alloc"), std::string::npos) << r.out;
}

TEST_F(FileSafety, GameRecordFilesAreRegularAndAtMostOneGibibyte) {
  for (const Hostile kind : kEveryHostile) {
    const std::string name = std::string("games-") + name_of(kind) + ".bin";
    const std::string why = plant(path(name), kind, oppidum::selfplay::kMaxGameFileBytes + 1);
    expect_refused(oppidum("games --file " + name), name, why, name);
  }
}

TEST_F(FileSafety, StateFilesAreRegularAndAtMostOneMebibyte) {
  for (const Hostile kind : kEveryHostile) {
    const fs::path run = make_run(std::string("run-") + name_of(kind));
    const std::string why = plant(run / "state.yaml", kind, 2u << 20);
    expect_refused(oppidum("train --no-status --run " + run.filename().string()), "state.yaml",
                   why, run.filename().string());
    EXPECT_FALSE(fs::exists(run / "checkpoints" / "gen-0000.ckpt"))
        << "a refused resume writes no network";
  }
}

// The games index is derived from the chunks: a link to a device or an oversize file in its place
// is not read but replaced by an index rebuilt from the chunks (the link's target untouched), and
// the run goes on; a FIFO or a directory there is not the run's to replace, and stops it.
TEST_F(FileSafety, ChunkIndexFilesAreRegularAndAtMostFourGibibytes) {
  for (const Hostile kind : kEveryHostile) {
    const fs::path run = make_run(std::string("run-") + name_of(kind));
    fs::create_directories(run / "games");
    const fs::path index = run / "games" / "index.csv";
    const std::string why = plant(index, kind, oppidum::util::kMaxTableBytes + 1);
    const CommandResult r = oppidum("train --no-status --run " + run.filename().string() +
                                    " --set run.stop_after_positions=1");
    if (kind == Hostile::kFifo || kind == Hostile::kDirectory) {
      expect_refused(r, "games/index.csv", why, run.filename().string());
      continue;
    }
    EXPECT_EQ(r.status, 0) << name_of(kind) << ": " << r.out;
    EXPECT_NE(r.out.find("repaired " + run.filename().string() + "/games/index.csv: "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(why), std::string::npos) << name_of(kind) << ": " << r.out;
    EXPECT_NE(r.out.find("rebuilt it from the"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(index))) << name_of(kind);
    EXPECT_LT(fs::file_size(index), 1u << 20) << name_of(kind);
    if (kind == Hostile::kDevZero) {
      EXPECT_TRUE(fs::is_character_file("/dev/zero"));
    }
  }
}

// A run's tables are read as files of their own, never through a link (their owner never appends
// through one either): a link is refused as a link, whatever it points to, so a reader never shows
// a file outside the run (the web server showed an arena.csv linked from elsewhere).
TEST_F(FileSafety, RunTablesAreRegularAndAtMostFourGibibytes) {
  for (const Hostile kind : kEveryHostile) {
    const fs::path run = make_run(std::string("run-") + name_of(kind));
    std::string why = plant(run / "metrics.csv", kind, oppidum::util::kMaxTableBytes + 1);
    if (kind == Hostile::kDevZero) why = "not a regular file (a symbolic link)";
    expect_refused(oppidum("report --run " + run.filename().string()), "metrics.csv", why,
                   run.filename().string());
    EXPECT_FALSE(fs::exists(run / "report.html"));
  }
  const fs::path run = make_run("run-linked");
  const fs::path elsewhere = path("elsewhere.csv");
  std::ofstream(elsewhere) << "generation,step\n1,10\n";
  fs::create_symlink(elsewhere, run / "arena.csv");
  expect_refused(oppidum("report --run run-linked"), "arena.csv",
                 "not a regular file (a symbolic link)", "run-linked");
}

TEST_F(FileSafety, ArenaResultsFilesAreRegularAndAtMost64Mebibytes) {
  for (const Hostile kind : kEveryHostile) {
    const std::string name = std::string("results-") + name_of(kind) + ".txt";
    const std::string why = plant(path(name), kind, oppidum::arena::kMaxResultsFileBytes + 1);
    expect_refused(oppidum("ratings --results " + name), name, why, name);
  }
}

// `arena --record` and `--results` append to the user's files: a FIFO there once blocked the
// arena forever, and a device got the lines; both are refused before the match is played.
TEST_F(FileSafety, ArenaOutputsThatAreNotRegularFilesAreRefusedBeforeTheMatch) {
  ASSERT_EQ(::mkfifo(path("games.fifo").c_str(), 0600), 0);
  fs::create_directory(path("results.dir"));
  const std::string match = "arena --game mg --a random --b alphabeta:depth=1 --games 2 ";
  CommandResult r = oppidum(match + "--record games.fifo");
  expect_refused(r, "games.fifo", "a FIFO, not a regular file", "--record");
  EXPECT_EQ(r.out.find("result (A's view)"), std::string::npos) << r.out;
  r = oppidum(match + "--results results.dir");
  expect_refused(r, "results.dir", "a directory, not a regular file", "--results");
  EXPECT_EQ(r.out.find("result (A's view)"), std::string::npos) << r.out;
  r = oppidum(match + "--results results.txt --record games.txt");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read_file(path("results.txt")).find("random alphabeta:depth=1 "), std::string::npos);
}

// `export --out` and `report --out` never replace one of a run folder's own files (reached
// directly, through `..` or through a link to the folder), nor a FIFO, and the commands that append
// to the user's files never append to them; the files stay as they were.
TEST_F(FileSafety, OutputsNeverReplaceARunsOwnFilesOrNonRegularFiles) {
  const fs::path run = make_run("run");
  const std::string metrics = oppidum::util::CsvTable::format(oppidum::trainer::metrics_header());
  std::ofstream(run / "metrics.csv") << metrics << "\n";
  std::ofstream(run / "lock") << "the owner\n";
  fs::create_directory_symlink("run", path("link-to-run"));
  ASSERT_EQ(::mkfifo(path("out.fifo").c_str(), 0600), 0);
  save_tiny_checkpoint(path("net.ckpt"));
  const std::string best = read_file(run / "checkpoints" / "best.ckpt");

  for (const std::string out : {"run/checkpoints/best.ckpt", "run/metrics.csv",
                                "run/checkpoints/../lock", "link-to-run/checkpoints/net.onnx"}) {
    expect_refused(oppidum("export --checkpoint net.ckpt --out " + out), out,
                   "a file of the run folder", "export --out " + out);
    expect_refused(oppidum("report --run run --out " + out), out, "a file of the run folder",
                   "report --out " + out);
  }
  // The files `arena`, `gauntlet` and `play` append to (a record appended as games/chunk-N.bin
  // was damaged data to every session after, and results as checkpoints/gen-N.ckpt were written
  // over at generation N).
  const std::string match = "arena --game ttt --a random --b uct:sims=2 --games 2 ";
  for (const std::string out : {"run/games/chunk-00000200.bin", "run/checkpoints/gen-0100.ckpt",
                                "run/arena.csv", "link-to-run/log.txt"}) {
    expect_refused(oppidum(match + "--record " + out), out, "a file of the run folder",
                   "arena --record " + out);
    expect_refused(oppidum(match + "--results " + out), out, "a file of the run folder",
                   "arena --results " + out);
    expect_refused(oppidum("gauntlet --game ttt --player random --opponent uct:sims=2 --games 2 "
                           "--record " + out),
                   out, "a file of the run folder", "gauntlet --record " + out);
    expect_refused(oppidum("play --game ttt --opponent random --record " + out), out,
                   "a file of the run folder", "play --record " + out);
  }
  EXPECT_FALSE(fs::exists(run / "games" / "chunk-00000200.bin"));
  EXPECT_FALSE(fs::exists(run / "checkpoints" / "gen-0100.ckpt"));
  EXPECT_FALSE(fs::exists(run / "arena.csv"));
  EXPECT_FALSE(fs::exists(run / "log.txt"));
  expect_refused(oppidum("export --checkpoint net.ckpt --out out.fifo"), "out.fifo",
                 "it is a FIFO, not a regular file", "export --out out.fifo");
  expect_refused(oppidum("report --run run --out out.fifo"), "out.fifo",
                 "it is a FIFO, not a regular file", "report --out out.fifo");
  EXPECT_EQ(read_file(run / "checkpoints" / "best.ckpt"), best);
  EXPECT_EQ(read_file(run / "metrics.csv"), metrics + "\n");
  EXPECT_EQ(read_file(run / "lock"), "the owner\n");
  EXPECT_FALSE(fs::exists(run / "checkpoints" / "net.onnx"));
  struct stat st {};
  ASSERT_EQ(::lstat(path("out.fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));

  // Anywhere else, and the report's own place in the run, are fine.
  CommandResult r = oppidum("export --checkpoint net.ckpt --out net.onnx");
  EXPECT_EQ(r.status, 0) << r.out;
  r = oppidum("report --run run");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::exists(run / "report.html"));
}

// The lock file gets the owner's pid: a link planted there once had its target overwritten.
TEST_F(FileSafety, ASymlinkedLockFileIsRefusedAndItsTargetKept) {
  const fs::path run = make_run("run");
  std::ofstream(path("victim.txt")) << "precious";
  fs::create_symlink(path("victim.txt"), run / "lock");
  expect_refused(oppidum("train --no-status --run run"), "run/lock",
                 "is a symbolic link; refusing to write through it", "train");
  EXPECT_EQ(read_file(path("victim.txt")), "precious");
}

// The log and a table's set-aside file are the run's own: a link planted at either once had its
// target written (the whole log, or the damaged rows), a FIFO at log.txt held `train` forever.
TEST_F(FileSafety, TheLogAndSetAsideFilesAreNeverWrittenThroughALinkOrAFifo) {
  std::ofstream(path("victim.txt")) << "precious";
  const fs::path linked = make_run("linked");
  fs::create_symlink(path("victim.txt"), linked / "log.txt");
  expect_refused(oppidum("train --no-status --run linked"), "linked/log.txt", "symbolic link",
                 "train");
  const fs::path fifo = make_run("fifo");
  ASSERT_EQ(::mkfifo((fifo / "log.txt").c_str(), 0600), 0);
  expect_refused(oppidum("train --no-status --run fifo"), "fifo/log.txt", "a FIFO", "train");
  const fs::path aside = make_run("aside");
  std::ofstream(aside / "metrics.csv") << "kind,seconds\ntrain,1,2";  // a row to set aside
  fs::create_symlink(path("victim.txt"), aside / "metrics.csv.damaged");
  expect_refused(oppidum("train --no-status --run aside"), "aside/metrics.csv.damaged",
                 "symbolic link", "train");
  EXPECT_EQ(read_file(path("victim.txt")), "precious");
}

}  // namespace
