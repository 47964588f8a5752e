// A run is never lost: `oppidum train` and the commands that read a run, driven the way a hostile
// tester drives them (kill -9, a second process, damaged and missing files, odd files, Ctrl-C
// during a gate), on the tiny config. Each test checks what the run folder guarantees
// (docs/FORMATS.md, "Run folder"). Label `fault`; run serially (they train).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/checkpoint.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "tests/process_util.h"
#include "util/csv_table.h"
#include "util/file_io.h"
#include "util/folder_lock.h"

namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using oppidum::test_util::BackgroundProcess;
using oppidum::test_util::CommandResult;
using oppidum::test_util::read_file;
using oppidum::test_util::run_shell;
using oppidum::test_util::wait_until;
using oppidum::util::CsvTable;

// OPPIDUM_TEST_BINARY runs the scenarios against another build (e.g. an older one, to see them fail).
const std::string kBinary =
    std::getenv("OPPIDUM_TEST_BINARY") ? std::getenv("OPPIDUM_TEST_BINARY") : OPPIDUM_BINARY;
const std::string kConfig = OPPIDUM_TINY_CONFIG;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("fault_" + name);
  fs::remove_all(dir);
  return dir;
}

// `oppidum train` on `dir` (tiny config), standard error included in the output.
CommandResult train(const fs::path& dir, const std::string& extra = "") {
  return run_shell(kBinary + " train --config " + kConfig + " --run " + dir.string() +
                   " --no-status " + extra + " 2>&1");
}

std::string train_command(const fs::path& dir, const std::string& extra) {
  return kBinary + " train --config " + kConfig + " --run " + dir.string() + " --no-status " +
         extra + " >" + dir.string() + ".out 2>&1";
}

// A finished two-generation run.
fs::path finished_run(const std::string& name) {
  const fs::path dir = fresh_dir(name);
  const CommandResult r = train(dir);
  EXPECT_EQ(r.status, 0) << r.out;
  return dir;
}

// A finished two-generation run in which every candidate was promoted (no gate): best.ckpt is
// generation 2.
fs::path promoted_run(const std::string& name) {
  const fs::path dir = fresh_dir(name);
  const CommandResult r = train(dir, "--set arena.max_games=0");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(oppidum::model::load_checkpoint((dir / "checkpoints" / "best.ckpt").string()).step, 20);
  return dir;
}

// Puts a NaN into the last weight of a checkpoint file and gives it a CRC that matches again: a
// file that only the finiteness check refuses (docs/FORMATS.md, "Checkpoint file").
void poison_with_nan(const fs::path& checkpoint) {
  std::string bytes = read_file(checkpoint);
  ASSERT_GT(bytes.size(), 64u);
  const std::size_t crc_at = bytes.size() - 4;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&bytes[crc_at - 4], &nan, 4);
  const std::uint32_t crc = oppidum::util::crc32(bytes.data(), crc_at);
  std::memcpy(&bytes[crc_at], &crc, 4);
  oppidum::util::write_file_atomically(checkpoint.string(), bytes);
  try {
    oppidum::model::load_checkpoint(checkpoint.string());
    ADD_FAILURE() << checkpoint << " still loads";
  } catch (const oppidum::model::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
}

std::vector<CsvTable::Row> table(const fs::path& file, CsvTable::Row& header) {
  int skipped = 0;
  auto rows = CsvTable::read(file.string(), &header, &skipped);
  EXPECT_EQ(skipped, 0) << file << " has cut-off or malformed rows";
  return rows;
}

std::size_t column(const CsvTable::Row& header, const std::string& name) {
  return CsvTable::column_of(header, name);
}

// What every run folder must hold after any sequence of kills and resumes: every checkpoint
// loads; train rows that account for every step from 1 to the trainer's step once (each row the
// steps since the row before: their loss_steps add up, the last at the trainer's step, and none
// covers a step another does) and one row per gate; one arena row
// per generation in order, each decided by the promotion rule; best.ckpt the last promoted
// generation; every game record replays.
void expect_consistent(const fs::path& dir) {
  const auto trainer = oppidum::model::load_checkpoint((dir / "trainer.ckpt").string());
  for (const auto& entry : fs::directory_iterator(dir / "checkpoints"))
    EXPECT_NO_THROW(oppidum::model::load_checkpoint(entry.path().string())) << entry.path();

  CsvTable::Row mh;
  const auto metrics = table(dir / "metrics.csv", mh);
  std::map<long, long> steps;  // a train row's step -> the steps it covers (loss_steps)
  std::set<int> gate_rows, selfplay_rows;
  bool session_open = false;  // a start row seen since the last stop row
  for (const auto& row : metrics) {
    if (row[0] == "start") {  // each session's first row, at its second 0
      EXPECT_EQ(row[column(mh, "seconds")], "0.0");
      session_open = true;
    } else if (row[0] == "stop") {  // a clean stop closes the session that started last
      EXPECT_TRUE(session_open) << "a stop row without its session's start row";
      session_open = false;
    } else if (row[0] == "train") {
      EXPECT_TRUE(steps
                      .emplace(std::stol(row[column(mh, "step")]),
                               std::stol(row[column(mh, "loss_steps")]))
                      .second)
          << "two rows for step " << row[column(mh, "step")];
    } else if (row[0] == "gate") {
      EXPECT_TRUE(gate_rows.insert(std::stoi(row[column(mh, "generation")])).second);
    } else if (row[0] == "selfplay") {  // at most one per trained generation
      const int g = std::stoi(row[column(mh, "generation")]);
      EXPECT_TRUE(selfplay_rows.insert(g).second) << "two selfplay rows for generation " << g;
      // tiny-mg.yaml trains 10 steps per generation.
      EXPECT_LE(g, trainer.step / 10) << "a selfplay row of an untrained generation";
    } else {
      ADD_FAILURE() << "a metrics row of kind " << row[0];
    }
  }
  long covered = 0;
  for (const auto& [step, count] : steps) {
    EXPECT_GE(count, 1) << "step " << step;
    EXPECT_EQ(step - count, covered) << "the row of step " << step << " does not start where "
                                     << "the row before ended";
    covered = step;
  }
  EXPECT_EQ(covered, trainer.step) << "a step without its row";

  CsvTable::Row ah;
  const auto gates = table(dir / "arena.csv", ah);
  int previous = 0;
  long best_step = 0;
  for (const auto& row : gates) {
    const int generation = std::stoi(row[column(ah, "generation")]);
    EXPECT_GT(generation, previous) << "a generation gated twice or out of order";
    previous = generation;
    EXPECT_TRUE(gate_rows.count(generation)) << "gate " << generation << " has no metrics row";
    const std::string verdict = row[column(ah, "verdict")];
    const bool promoted = row[column(ah, "promoted")] == "1";
    if (promoted) best_step = std::stol(row[column(ah, "step")]);
    // A row rebuilt by --recover does not know the games' results.
    if (verdict.find("rebuilt by --recover") != std::string::npos) continue;
    const int games = std::stoi(row[column(ah, "games")]);
    const double points = std::stoi(row[column(ah, "wins")]) + 0.5 * std::stoi(row[column(ah, "draws")]);
    // The promotion rule of trainer/gate.h.
    if (verdict.find("H1 accepted") != std::string::npos || verdict.rfind("no gate", 0) == 0) {
      EXPECT_TRUE(promoted) << verdict;
    } else if (verdict.find("H0 accepted") != std::string::npos) {
      EXPECT_FALSE(promoted) << verdict;
    } else {
      EXPECT_EQ(promoted, points > 0.5 * games) << verdict << " " << points << "/" << games;
    }
  }
  EXPECT_EQ(gate_rows.size(), gates.size());
  EXPECT_EQ(oppidum::model::load_checkpoint((dir / "checkpoints/best.ckpt").string()).step,
            best_step);

  const oppidum::selfplay::FolderReplayStore store(
      (dir / "games").string(), oppidum::selfplay::FolderReplayStore::Mode::kReadOnly);
  for (const auto& chunk : store.chunks()) {
    const auto read = oppidum::selfplay::read_game_file(chunk);
    EXPECT_TRUE(read.problems.empty()) << read.problems.front();
    for (const auto& r : read.records) EXPECT_NO_THROW(oppidum::selfplay::replay(r));
  }
}

// A copy of the run folder `from` (a finished run: no lock held).
fs::path copy_run(const fs::path& from, const std::string& name) {
  const fs::path dir = fresh_dir(name);
  fs::copy(from, dir, fs::copy_options::recursive);
  return dir;
}

// Every file of a run folder, by name, with its bytes: what a refused resume must leave as it was.
std::string snapshot_of(const fs::path& dir) {
  std::string all;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().filename() != "log.txt" &&
        entry.path().filename() != "lock")
      all += entry.path().string() + "\n" + read_file(entry.path()) + "\n";
  return all;
}

// Item 1: `games` and `report` never delete, rename or create anything in a run; a chunk being
// written (its .tmp file) survives them, also while `train` writes chunks.
TEST(FaultRun, ReadersNeverTouchALiveRun) {
  const fs::path dir = finished_run("readers");
  const fs::path in_flight = dir / "games" / "chunk-00000500.bin.tmp";
  std::ofstream(in_flight) << "a chunk being written";
  const CommandResult games = run_shell(kBinary + " games --run " + dir.string() + " 2>&1");
  EXPECT_EQ(games.status, 0) << games.out;
  const CommandResult report = run_shell(kBinary + " report --run " + dir.string() + " --out " +
                                         dir.string() + ".html 2>&1");
  EXPECT_EQ(report.status, 0) << report.out;
  EXPECT_TRUE(fs::exists(in_flight)) << "a reader deleted the writer's temporary file";

  // The same beside a live train: it must never die of a vanished temporary file.
  BackgroundProcess live(train_command(dir, "--set run.max_generations=1000"));
  ASSERT_TRUE(live.started());
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(run_shell(kBinary + " games --run " + dir.string() + " >/dev/null 2>&1").status, 0);
    EXPECT_EQ(run_shell(kBinary + " report --run " + dir.string() + " --out " + dir.string() +
                        ".html >/dev/null 2>&1").status, 0);
  }
  live.signal(SIGINT);
  const auto status = live.wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "train did not stop on SIGINT";
  EXPECT_EQ(*status, 0) << read_file(dir.string() + ".out");
  EXPECT_EQ(read_file(dir.string() + ".out").find("failed"), std::string::npos);
  expect_consistent(dir);
}

// Item 2: one owner per run folder; a second `train` is refused, naming the first one's pid, and
// the first trains on undisturbed.
TEST(FaultRun, ASecondTrainIsRefusedNamingTheOwner) {
  const fs::path dir = fresh_dir("lock");
  BackgroundProcess first(train_command(dir, "--set run.max_generations=1000"));
  ASSERT_TRUE(first.started());
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir / "config.yaml"); }, 60s));
  const CommandResult second = train(dir, "--set run.max_generations=1000");
  EXPECT_NE(second.status, 0);
  EXPECT_NE(second.out.find("in use by process " + std::to_string(first.pid())), std::string::npos)
      << second.out;
  // Nor may a second process take the folder while the first holds it.
  EXPECT_THROW(oppidum::util::FolderLock(dir.string(), "test"), oppidum::util::FolderLockedError);
  first.signal(SIGTERM);
  const auto status = first.wait_for(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << read_file(dir.string() + ".out");
  expect_consistent(dir);
  // The lock goes with its process, even after kill -9.
  {
    BackgroundProcess killed(train_command(dir, "--set run.max_generations=1000"));
    ASSERT_TRUE(wait_until([&] { return read_file(dir / "log.txt").find("session 2") != std::string::npos; }, 60s));
    ::kill(killed.pid(), SIGKILL);
    ASSERT_TRUE(killed.wait_for(30s).has_value());
  }
  EXPECT_NO_THROW(oppidum::util::FolderLock(dir.string(), "test"));
}

// Item 3: a record with a valid CRC but a visit entry outside the action range, or an illegal
// one, is dropped, counted and logged, never trained on (it used to corrupt the heap).
TEST(FaultRun, RecordsThatDoNotHoldUpAreDropped) {
  const fs::path dir = finished_run("records");
  const oppidum::selfplay::FolderReplayStore store(
      (dir / "games").string(), oppidum::selfplay::FolderReplayStore::Mode::kReadOnly);
  const auto chunks = store.chunks();
  ASSERT_FALSE(chunks.empty());
  const auto good = oppidum::selfplay::read_game_file(chunks.front()).records.at(0);
  auto out_of_range = good;
  out_of_range.moves[0].visits[0].action = 60000;
  auto illegal = good;
  {  // visits for an action in range but not legal at the second move
    const auto states = oppidum::selfplay::replay(good);
    oppidum::ActionList legal;
    states[1]->legal_actions(legal);
    std::uint16_t a = 0;
    while (legal.contains(a)) ++a;
    illegal.moves[1].visits.push_back({a, 7});
  }
  // `games` lists each such record as one that does not replay, and says why (it listed a game
  // whose search values are not numbers as a normal one).
  auto not_a_number = good;
  not_a_number.moves[0].root_value = std::numeric_limits<float>::quiet_NaN();
  const fs::path listed = dir.parent_path() / "records-listed.bin";
  oppidum::selfplay::write_game_file(listed.string(), {out_of_range, good, illegal, not_a_number});
  const CommandResult list = run_shell(kBinary + " games --file " + listed.string() + " 2>&1");
  EXPECT_EQ(list.status, 0) << list.out;
  for (const int game : {0, 2, 3})
    EXPECT_NE(list.out.find("warning: game " + std::to_string(game) + " (" + listed.string() +
                            ") does not replay, training skips it: "),
              std::string::npos)
        << game << ": " << list.out;
  EXPECT_NE(list.out.find("root value nan"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("4 games, 3 problems"), std::string::npos) << list.out;
  fs::remove(listed);
  oppidum::selfplay::write_game_file((dir / "games" / "chunk-00009000.bin").string(),
                                     {out_of_range, good, illegal});
  const CommandResult r = train(dir, "--set run.max_generations=3");
  EXPECT_EQ(r.status, 0) << r.out;
  const std::string log = read_file(dir / "log.txt");
  EXPECT_NE(log.find("dropped game 0 of"), std::string::npos) << log;
  EXPECT_NE(log.find("action 60000"), std::string::npos) << log;
  EXPECT_NE(log.find("dropped game 2 of"), std::string::npos) << log;
  EXPECT_NE(log.find("(2 dropped so far)"), std::string::npos) << log;
  fs::remove(dir / "games" / "chunk-00009000.bin");
  expect_consistent(dir);
}

// Item 4: a run that diverges stops with a clear error, in the log too, and leaves no checkpoint
// with a non-finite weight.
TEST(FaultRun, DivergedTrainingStopsWithTheLastGoodFiles) {
  const fs::path dir = fresh_dir("diverge");
  const CommandResult r = train(dir, "--set training.learning_rate=10 --set training.weight_decay=1"
                                     " --set training.value_loss_weight=100");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("training diverged"), std::string::npos) << r.out;
  EXPECT_NE(read_file(dir / "log.txt").find("stopped by an error: training diverged"),
            std::string::npos);
  for (const auto& entry : fs::directory_iterator(dir / "checkpoints"))
    EXPECT_NO_THROW(oppidum::model::load_checkpoint(entry.path().string())) << entry.path();
  EXPECT_FALSE(fs::exists(dir / "checkpoints" / "gen-0001.ckpt"));
}

// Item 5: missing files are errors that say how to recover, never a fresh start; --recover
// rebuilds them from the newest intact checkpoints without overwriting any generation.
TEST(FaultRun, MissingFilesAreErrorsAndRecoverRebuildsThem) {
  const fs::path dir = finished_run("missing");
  const std::string gen1 = read_file(dir / "checkpoints" / "gen-0001.ckpt");
  const std::string state = read_file(dir / "state.yaml");
  const auto id_at = state.find("run_id: \"");
  ASSERT_NE(id_at, std::string::npos) << state;
  const std::string run_id = state.substr(id_at + 9, 32);

  fs::remove(dir / "checkpoints" / "best.ckpt");
  CommandResult r = train(dir, "--set run.max_generations=3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("best.ckpt is missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--recover"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "checkpoints" / "best.ckpt")) << "a refused resume wrote a network";

  fs::remove(dir / "trainer.ckpt");
  r = train(dir, "--set run.max_generations=3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("trainer.ckpt is missing"), std::string::npos) << r.out;

  fs::remove(dir / "state.yaml");
  r = train(dir, "--set run.max_generations=3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("state.yaml is missing"), std::string::npos) << r.out;

  r = train(dir, "--set run.max_generations=3 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("recovered"), std::string::npos) << r.out;
  // state.yaml was once rebuilt without a word.
  EXPECT_NE(r.out.find("recovered: " + (dir / "state.yaml").string() +
                       " is missing; rebuilt it from " + (dir / "log.txt").string()),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--recover: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" repair(s) or warning(s), each in a line above"), std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "gen-0001.ckpt"), gen1) << "generation 1 overwritten";
  EXPECT_EQ(oppidum::model::load_checkpoint((dir / "trainer.ckpt").string()).step, 30);
  EXPECT_NE(read_file(dir / "state.yaml").find("sessions: 2"), std::string::npos)
      << read_file(dir / "state.yaml");
  EXPECT_NE(read_file(dir / "state.yaml").find(run_id), std::string::npos)
      << "the run id was not recovered from the log: " << read_file(dir / "state.yaml");
  expect_consistent(dir);
  // On an intact run --recover says there was nothing to repair.
  r = train(dir, "--set run.max_generations=3 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--recover: nothing to repair, every file of the run is intact"),
            std::string::npos)
      << r.out;
}

// A run folder whose config.yaml went missing is not a new run.
TEST(FaultRun, ARunWithoutItsConfigIsNotStartedAgain) {
  const fs::path dir = finished_run("orphan");
  fs::remove(dir / "config.yaml");
  const std::string best = read_file(dir / "checkpoints" / "best.ckpt");
  const CommandResult r = train(dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("config.yaml is missing, but"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best);
}

// Item 6: every write is checked; damaged tables are repaired on resume.
TEST(FaultRun, TableWritesAreCheckedAndRepaired) {
  const fs::path dir = finished_run("tables");
  // metrics.csv replaced by a directory: an error naming it, in the log too; never exit 0.
  fs::rename(dir / "metrics.csv", dir / "metrics.saved");
  fs::create_directory(dir / "metrics.csv");
  CommandResult r = train(dir, "--set run.max_generations=3");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("metrics.csv"), std::string::npos) << r.out;
  EXPECT_NE(read_file(dir / "log.txt").find("stopped by an error"), std::string::npos);
  fs::remove(dir / "metrics.csv");

  // Cut off in the middle of a row (a kill, a full disk): repaired, no merged rows.
  std::string text = read_file(dir / "metrics.saved");
  text.resize(text.size() - 7);
  std::ofstream(dir / "metrics.csv", std::ios::binary) << text;
  r = train(dir, "--set run.max_generations=3");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("repaired"), std::string::npos) << r.out;
  expect_consistent(dir);

  // Empty: all its rows are lost, as when it is missing: an error, and with --recover it gets
  // its header again (the steps before are gone, the rows after are well-formed).
  std::ofstream(dir / "metrics.csv", std::ios::trunc).flush();
  r = train(dir, "--set run.max_generations=4");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("metrics.csv is missing or empty"), std::string::npos) << r.out;
  r = train(dir, "--set run.max_generations=4 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  CsvTable::Row header;
  const auto rows = table(dir / "metrics.csv", header);
  EXPECT_EQ(header.at(0), "kind");
  EXPECT_FALSE(rows.empty());
}

// Item 6: a full disk stops the run with an error naming the file (never exit 0 with lost
// writes), and a copy of the folder on a disk with room continues consistently. Needs a small
// tmpfs, so root with mount rights; skipped (saying why) elsewhere.
TEST(FaultRun, AFullDiskStopsTheRunAndTheFolderContinuesElsewhere) {
  const fs::path mount_point = fresh_dir("full_disk_mount");
  fs::create_directories(mount_point);
  if (run_shell("mount -t tmpfs -o size=3m tmpfs " + mount_point.string() + " 2>&1").status != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root with mount rights)";
  struct Unmount {
    fs::path at;
    ~Unmount() { run_shell("umount " + at.string() + " 2>&1"); }
  } unmount{mount_point};
  const fs::path dir = mount_point / "run";
  const CommandResult r = run_shell("timeout 300 " + kBinary + " train --config " + kConfig +
                                    " --run " + dir.string() +
                                    " --no-status --set run.max_generations=1000 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(dir.string()), std::string::npos) << "the error names the file: " << r.out;
  const fs::path copy = fresh_dir("full_disk_copy");
  fs::copy(dir, copy, fs::copy_options::recursive);
  const CommandResult resumed = run_shell(kBinary + " train --run " + copy.string() +
                                          " --no-status --set run.max_generations=4 2>&1");
  EXPECT_EQ(resumed.status, 0) << resumed.out;
  expect_consistent(copy);
}

// A log that cannot be written stops the run with an error naming it, as a table does (spdlog
// alone printed the error and went on: the log cut mid-line, every later line lost, --recover's
// session lines among them); the next session ends the cut line before its own. The file size
// limit (ulimit -f) plays the full disk, on the log alone: it is padded to just under the limit,
// which every other file of the tiny run is far below.
TEST(FaultRun, ALogThatCannotBeWrittenStopsTheRun) {
  const fs::path dir = finished_run("log_cannot_be_written");
  const fs::path log = dir / "log.txt";
  {
    std::string text = read_file(log);
    const std::string filler =
        "[2026-01-01 00:00:00] a line of an earlier session, to bring the log near the limit\n";
    const std::size_t target = (std::size_t{1} << 20) - 40;
    ASSERT_LT(text.size() + 2, target) << "the tiny run's log is already near the limit";
    // Fillers while a line of at least one 'x' still fits after them: the last line is 'x's
    // and its newline, so the log ends exactly at the target whatever the run's log length was
    // (a log whose fillers met the target exactly asked for a string of -1 'x's).
    while (text.size() + filler.size() + 2 <= target) text += filler;
    text += std::string(target - text.size() - 1, 'x') + "\n";
    ASSERT_EQ(text.size(), target);
    std::ofstream(log, std::ios::binary | std::ios::trunc) << text;
  }
  const CommandResult r = run_shell("bash -c 'ulimit -f 1024; trap \"\" XFSZ; exec " + kBinary +
                                    " train --run " + dir.string() +
                                    " --no-status --set run.max_generations=4' 2>&1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("error: cannot write the run's log " + log.string() + ": "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("LOG ERROR"), std::string::npos) << r.out;
  EXPECT_NE(read_file(log).back(), '\n') << "the test did not cut the log's last line";
  const CommandResult resumed = train(dir, "--set run.max_generations=4");
  EXPECT_EQ(resumed.status, 0) << resumed.out;
  const std::regex stamp(R"(\[20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9:]{8}\])");
  std::istringstream lines(read_file(log));
  std::string last;
  for (std::string line; std::getline(lines, line); last = line) {
    if (line.empty() || line[0] == 'x') continue;
    const auto stamps = std::distance(std::sregex_iterator(line.begin(), line.end(), stamp),
                                      std::sregex_iterator());
    EXPECT_EQ(stamps, 1) << "a line runs into another: " << line;
  }
  EXPECT_NE(last.find("stopped: "), std::string::npos) << last;  // the resumed session's end
  expect_consistent(dir);
}

// A place the run writes only at the end of a generation (trainer.ckpt, checkpoints/) that cannot
// be written is named before the session starts, not a generation of steps later when the first
// save fails. The immutable flag plays it (root on ext4 or the like: permissions do not bind
// root); the resume changes nothing, and goes on once the flag is gone.
TEST(FaultRun, APlaceTheRunCannotWriteIsNamedBeforeTheSessionStarts) {
  const fs::path dir = finished_run("cannot_write");
  struct Flags {
    std::vector<fs::path> set;
    ~Flags() {
      for (const fs::path& p : set) run_shell("chattr -i " + p.string() + " 2>&1");
    }
  } flags;
  // A directory at the temporary name of a file the run writes was found only when the file was
  // written, a generation of steps later, and at every start after (--recover included); a link
  // there is removed, never followed.
  {
    const fs::path tmp = dir / "checkpoints" / "gen-0004.ckpt.tmp";
    fs::create_directory(tmp);
    fs::create_symlink(dir / "config.yaml", dir / "trainer.ckpt.tmp");
    const std::string before = snapshot_of(dir);
    const CommandResult r = train(dir, "--set run.max_generations=4");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find(tmp.string() + " is a directory: the run writes gen-0004.ckpt there "
                         "first"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("resuming"), std::string::npos) << "no session counted: " << r.out;
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "trainer.ckpt.tmp")));
    EXPECT_TRUE(fs::exists(dir / "config.yaml"));
    fs::create_symlink(dir / "config.yaml", dir / "trainer.ckpt.tmp");
    EXPECT_EQ(snapshot_of(dir), before) << "a refused resume changed the run";
    fs::remove(tmp);
    fs::remove(dir / "trainer.ckpt.tmp");
  }
  for (const fs::path& place :
       {dir / "trainer.ckpt", dir / "checkpoints", dir / "games" / "index.csv"}) {
    if (run_shell("chattr +i " + place.string() + " 2>&1").status != 0)
      GTEST_SKIP() << "cannot set the immutable flag here (needs root and a file system with it)";
    flags.set.push_back(place);
    const std::string before = snapshot_of(dir);
    const CommandResult r = train(dir, "--set run.max_generations=4");
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("cannot write " + place.string() + " (it is immutable (chattr +i)): the "
                         "run "),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("resuming"), std::string::npos) << "no session counted: " << r.out;
    EXPECT_EQ(snapshot_of(dir), before) << "a refused resume changed the run";
    run_shell("chattr -i " + place.string() + " 2>&1");
    flags.set.pop_back();
  }
  const CommandResult resumed = train(dir, "--set run.max_generations=4");
  EXPECT_EQ(resumed.status, 0) << resumed.out;
  expect_consistent(dir);
}

// Items 5 and 6: kill -9 at any moment, then the same command, any number of times, leaves one
// consistent run: one row per step, no generation gated twice, best.ckpt the last promoted.
TEST(FaultRun, KillNineAndResumeKeepOneConsistentRun) {
  const fs::path dir = fresh_dir("kill");
  for (int round = 0; round < 4; ++round) {
    BackgroundProcess run(train_command(dir, "--set run.max_generations=1000"));
    ASSERT_TRUE(run.started());
    const std::string session = "(session " + std::to_string(round + 1) + ")";
    ASSERT_TRUE(wait_until([&] { return read_file(dir / "log.txt").find(session) != std::string::npos; }, 60s));
    // Kill at different points: early in training, mid-gate, right after a generation.
    const auto generation_file = dir / "checkpoints" / ("gen-000" + std::to_string(round + 1) + ".ckpt");
    ASSERT_TRUE(wait_until([&] { return fs::exists(generation_file); }, 120s));
    std::this_thread::sleep_for(std::chrono::milliseconds(37 * round * round));
    ::kill(run.pid(), SIGKILL);
    ASSERT_TRUE(run.wait_for(30s).has_value());
  }
  const CommandResult r = train(dir, "--set run.max_generations=6");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read_file(dir / "state.yaml").find("sessions: 5"), std::string::npos);
  expect_consistent(dir);
}

// A trainer.ckpt older than the run (a stale copy put back) and a config.yaml whose
// steps_per_generation is not the run's are refused before anything is written (before: the
// resume deleted the gates and metrics rows after the stale step and trained the later
// generations again over their intact checkpoints); --recover continues from the newest intact
// generation and keeps every gate.
TEST(FaultRun, AStaleTrainerOrAnEditedConfigRollsNothingBack) {
  const fs::path dir = finished_run("stale");
  const auto snapshot = [&] {
    return read_file(dir / "arena.csv") + read_file(dir / "metrics.csv") +
           read_file(dir / "checkpoints" / "gen-0002.ckpt") + read_file(dir / "trainer.ckpt");
  };
  // A resume that is refused, saying `said`, and changes none of those files; its output.
  const auto refused = [&](const std::function<CommandResult()>& resume, const std::string& said) {
    const std::string before = snapshot();
    const CommandResult r = resume();
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(said), std::string::npos) << r.out;
    EXPECT_EQ(snapshot(), before);
    return r.out;
  };
  const auto resume_as_configured = [&] {
    return run_shell(kBinary + " train --run " + dir.string() + " --no-status 2>&1");
  };
  CsvTable::Row arena_header;
  const auto gates_before = table(dir / "arena.csv", arena_header);
  ASSERT_EQ(gates_before.size(), 2u);
  fs::copy_file(dir / "checkpoints" / "gen-0001.ckpt", dir / "trainer.ckpt",
                fs::copy_options::overwrite_existing);
  const std::string out =
      refused([&] { return train(dir, "--set run.max_generations=3"); },
              "trainer.ckpt holds step 10 (generation 1), older than the run");
  EXPECT_NE(out.find("--recover"), std::string::npos) << out;

  const std::string stale = read_file(dir / "trainer.ckpt");
  CommandResult r = train(dir, "--set run.max_generations=3 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the trainer restarts from"), std::string::npos) << r.out;
  // The replaced trainer files are kept beside the run, never lost.
  EXPECT_NE(r.out.find("kept the old trainer.ckpt.damaged and trainer.optim.damaged"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(dir / "trainer.ckpt.damaged"), stale);
  CsvTable::Row header;
  const auto gates = table(dir / "arena.csv", header);
  ASSERT_EQ(gates.size(), 3u);  // generations 1 and 2 kept as they were, 3 added
  EXPECT_EQ(gates[0], gates_before[0]);
  EXPECT_EQ(gates[1], gates_before[1]);
  expect_consistent(dir);

  // --recover when no intact network of a gated generation is left: the trainer restarts from the
  // newest one there is, and the later gates go to arena.csv.damaged (kept), never gated twice.
  {
    const fs::path lost = finished_run("stale_lost");
    CsvTable::Row lost_header;
    const auto lost_gates = table(lost / "arena.csv", lost_header);
    ASSERT_EQ(lost_gates.size(), 2u);
    const long best_step =
        oppidum::model::load_checkpoint((lost / "checkpoints" / "best.ckpt").string()).step;
    fs::remove(lost / "checkpoints" / "gen-0002.ckpt");
    fs::copy_file(lost / "checkpoints" / "gen-0001.ckpt", lost / "trainer.ckpt",
                  fs::copy_options::overwrite_existing);
    const CommandResult rec = train(lost, "--set run.max_generations=3 --recover");
    EXPECT_EQ(rec.status, 0) << rec.out;
    if (best_step == 10) {  // generation 2 was not promoted: only its gate row is left of it
      EXPECT_NE(rec.out.find("moved the 1 gate row(s) after generation 1 to"), std::string::npos)
          << rec.out;
      EXPECT_EQ(read_file(lost.string() + "/arena.csv.damaged"),
                CsvTable::format(lost_gates[1]) + "\n");
    }
    expect_consistent(lost);
  }

  // config.yaml edited to another steps_per_generation: every generation read from a step would be
  // wrong.
  std::string config = read_file(dir / "config.yaml");
  const std::size_t at = config.find("steps_per_generation: 10");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 24, "steps_per_generation: 20");
  oppidum::util::write_file_atomically((dir / "config.yaml").string(), config);
  refused(resume_as_configured, "training.steps_per_generation: 20 (the run was created with 10)");
  // A run from before state.yaml recorded the config: its gates' steps give the edit away.
  std::string state = read_file(dir / "state.yaml");
  state.erase(state.find("config_crc32:"));  // the record and its check
  oppidum::util::write_file_atomically((dir / "state.yaml").string(), state);
  refused(resume_as_configured, "was gated at step 10, not 1 x 20 (training.steps_per_generation");
}

// arena.csv cut short (its last rows lost) is no reason to lose the gates metrics.csv still holds
// (before: the resume took them for ungated generations and dropped them from metrics.csv too, so
// --recover had nothing left to rebuild them from, and gated the last generation twice).
TEST(FaultRun, GatesLostFromArenaCsvComeBackFromMetricsCsv) {
  const fs::path dir = fresh_dir("arena_cut");
  ASSERT_EQ(train(dir, "--set run.max_generations=4").status, 0);
  const std::string arena = read_file(dir / "arena.csv");
  std::size_t cut = 0;
  for (int line = 0; line < 3; ++line) cut = arena.find('\n', cut) + 1;  // header, gens 1 and 2
  oppidum::util::write_file_atomically((dir / "arena.csv").string(), arena.substr(0, cut + 20));
  const std::string metrics = read_file(dir / "metrics.csv");
  CommandResult r = train(dir, "--set run.max_generations=4");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("lacks the gates of generations 3..4 that"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir / "metrics.csv"), metrics) << "a refused resume dropped metrics rows";
  r = train(dir, "--set run.max_generations=4 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rebuilt 2 row(s) from metrics.csv"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("was not gated yet"), std::string::npos) << "a generation gated twice";
  CsvTable::Row header;
  EXPECT_EQ(table(dir / "arena.csv", header).size(), 4u);
  expect_consistent(dir);

  // Rows cut at a line's end this time: --recover writes the whole table anew (a rename, never
  // rows appended one by one, which a kill between them would leave one gate short).
  oppidum::util::write_file_atomically((dir / "arena.csv").string(), arena.substr(0, cut));
  struct stat before{}, after{};
  ASSERT_EQ(stat((dir / "arena.csv").c_str(), &before), 0);
  r = train(dir, "--set run.max_generations=4 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rebuilt 2 row(s) from metrics.csv"), std::string::npos) << r.out;
  ASSERT_EQ(stat((dir / "arena.csv").c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino) << "rows appended in place";
  EXPECT_EQ(table(dir / "arena.csv", header).size(), 4u);
  expect_consistent(dir);
}

// state.yaml's values are checked as it is read (before: a cursor "abc" was handed to Redis in
// the middle of a session, a negative count read as "not caught up" forever, and any text was
// taken as the run id).
TEST(FaultRun, DamagedStateValuesAreNamed) {
  const fs::path dir = finished_run("state_values");
  const std::string state = read_file(dir / "state.yaml");
  for (const auto& [line, message] : std::vector<std::pair<std::string, std::string>>{
           {"stream_cursor: \"abc\"", "stream_cursor \"abc\" is not a stream entry id"},
           {"stream_cursor: \"99999999999999999999-0\"",
            "stream_cursor \"99999999999999999999-0\" is not a stream entry id"},
           {"stream_cursor: \"5-18446744073709551616\"",
            "stream_cursor \"5-18446744073709551616\" is not a stream entry id"},
           {"stream_read: -5000000", "stream_read -5000000 is below 0"},
           {"run_id: \"../../x\"", "run_id \"../../x\" is not 32 hexadecimal digits"}}) {
    std::string damaged = state;
    const std::string key = line.substr(0, line.find(':') + 1);
    const std::size_t at = damaged.find(key);
    if (at == std::string::npos) {
      damaged += line + "\n";
    } else {
      const std::size_t end = damaged.find('\n', at);
      damaged.replace(at, end - at, line);
    }
    oppidum::util::write_file_atomically((dir / "state.yaml").string(), damaged);
    const CommandResult r = train(dir, "--set run.max_generations=3");
    EXPECT_NE(r.status, 0) << line << ": " << r.out;
    EXPECT_NE(r.out.find("state.yaml is damaged (" + message), std::string::npos)
        << line << ": " << r.out;
  }
  // A key given twice was read with its first value, without a word.
  oppidum::util::write_file_atomically((dir / "state.yaml").string(), state + "sessions: 5\n");
  const CommandResult twice = train(dir, "--set run.max_generations=3");
  EXPECT_NE(twice.status, 0) << twice.out;
  EXPECT_NE(twice.out.find("state.yaml is damaged (the key sessions is given twice"),
            std::string::npos)
      << twice.out;
  // An unknown key and a second document were accepted and lost at the next write; a line lost
  // from the config record (or the file cut off in it) let a forbidden edit of config.yaml
  // through, and the record was written over with it.
  const std::size_t rate = state.find("\n  training.learning_rate:");
  ASSERT_NE(rate, std::string::npos) << state;
  const std::string lost_line =
      state.substr(0, rate) + state.substr(state.find('\n', rate + 1));
  const std::string cut = state.substr(0, rate + 1);
  for (const auto& [damaged, message] : std::vector<std::pair<std::string, std::string>>{
           {state + "sesions: 5\n", "unknown key sesions; the trainer writes only config,"},
           {state + "---\nsessions: 5\n", "it holds a second YAML document"},
           {lost_line, "its config record does not match its check, config_crc32"},
           {cut, "its config record does not match its check"}}) {
    oppidum::util::write_file_atomically((dir / "state.yaml").string(), damaged);
    const CommandResult r = train(dir, "--set run.max_generations=3");
    EXPECT_NE(r.status, 0) << damaged << r.out;
    EXPECT_NE(r.out.find("state.yaml is damaged (" + message), std::string::npos)
        << damaged << r.out;
  }
  // A state from before the check is read as it was.
  const std::size_t check = state.find("config_crc32:");
  ASSERT_NE(check, std::string::npos) << state;
  oppidum::util::write_file_atomically(
      (dir / "state.yaml").string(),
      state.substr(0, check) + state.substr(state.find('\n', check) + 1));
  EXPECT_EQ(train(dir, "--set run.max_generations=3").status, 0);
  EXPECT_NE(read_file(dir / "state.yaml").find("config_crc32:"), std::string::npos)
      << "the check is written again";
}

// Item 7: Ctrl-C during a gate stops within seconds (not after arena.max_games games); the gate
// leaves no row and is played again when the run continues.
// A clean stop in the middle of a generation keeps every step (trainer.ckpt) and its rows account
// for each of them: the steps since the last train row get a row of their own before the stop row
// (before: up to a second of steps had none, and the page's step lagged the trainer's for good).
TEST(FaultRun, ACleanStopWritesTheStepsSinceTheLastTrainRow) {
  const fs::path dir = fresh_dir("clean_stop");
  BackgroundProcess run(train_command(dir, "--set training.steps_per_generation=1000000 --set "
                                           "training.sample_reuse=1000 --set run.max_generations=5"));
  ASSERT_TRUE(run.started());
  const auto train_rows = [&] {  // of a table being written: a last line may be half written
    CsvTable::Row header;
    int n = 0, skipped = 0;
    if (fs::exists(dir / "metrics.csv"))
      for (const auto& row : CsvTable::read((dir / "metrics.csv").string(), &header, &skipped))
        n += row[0] == "train";
    return n;
  };
  ASSERT_TRUE(wait_until([&] { return train_rows() >= 2; }, 120s));
  std::this_thread::sleep_for(500ms);  // half a second of steps after the last row
  run.signal(SIGINT);
  const auto status = run.wait_for(60s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << read_file(dir.string() + ".out");
  expect_consistent(dir);
  CsvTable::Row mh;
  const auto rows = table(dir / "metrics.csv", mh);
  ASSERT_GE(rows.size(), 2u);
  const auto& last = rows[rows.size() - 1];
  const auto& before = rows[rows.size() - 2];
  EXPECT_EQ(last[0], "stop");
  EXPECT_EQ(before[0], "train");
  EXPECT_EQ(before[column(mh, "step")], last[column(mh, "step")]);
}

// arena.csv that lost its last row. When that generation was promoted (best.ckpt holds it) the
// resume refuses before it moves any row, and --recover records the gate from its metrics.csv row,
// its one other record (before, the refusal had moved that row aside and --recover said the
// gate's results were lost); else the gate is played again and its metrics.csv row is kept beside
// the table. A train row whose step is no number is set aside too (it was kept, read as step 0).
// (Whether generation 2 was promoted depends on its gate: both ways are checked.)
TEST(FaultRun, AGateRowOfAnUngatedGenerationIsSetAsideNotDropped) {
  const fs::path dir = finished_run("lost_gate_row");
  CsvTable::Row mh;
  std::string gate_two, no_step;
  for (auto row : table(dir / "metrics.csv", mh)) {
    if (row[0] == "gate" && row[column(mh, "generation")] == "2") gate_two = CsvTable::format(row);
    if (row[0] == "train") row[column(mh, "step")] = "abc", no_step = CsvTable::format(row);
  }
  ASSERT_FALSE(gate_two.empty());
  std::ofstream(dir / "metrics.csv", std::ios::app) << no_step << "\n";  // a step by hand
  std::string arena = read_file(dir / "arena.csv");
  arena.erase(arena.rfind('\n', arena.size() - 2) + 1);  // its last row
  std::ofstream(dir / "arena.csv", std::ios::trunc) << arena;
  CommandResult r = train(dir, "--set run.max_generations=3");
  if (r.out.find("best.ckpt holds step 20, newer than generation") != std::string::npos) {
    // Generation 2 was promoted: best.ckpt holds it, so arena.csv lost a gate that metrics.csv
    // keeps. The resume stops before it moves any row; --recover records the gate from its row.
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_FALSE(fs::exists(dir.string() + "/metrics.csv.damaged")) << r.out;
    EXPECT_NE(read_file(dir / "metrics.csv").find(gate_two), std::string::npos);
    r = train(dir, "--set run.max_generations=3 --recover");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("metrics.csv keeps its gate: recorded generation 2"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("train row(s) without a step, to"), std::string::npos) << r.out;
    EXPECT_NE(read_file(dir.string() + "/metrics.csv.damaged").find(no_step), std::string::npos);
    return;
  }
  EXPECT_NE(r.out.find("moved 2 gate row(s) of generations after 1 (the last in arena.csv), or "
                       "train row(s) without a step, to"),
            std::string::npos)
      << r.out;
  const std::string aside = read_file(dir.string() + "/metrics.csv.damaged");
  EXPECT_NE(aside.find(gate_two), std::string::npos) << aside;
  EXPECT_NE(aside.find(no_step), std::string::npos) << aside;
}

TEST(FaultRun, CtrlCDuringAGateStopsPromptly) {
  const fs::path dir = fresh_dir("ctrl_c");
  BackgroundProcess run(train_command(dir, "--set arena.max_games=100000 --set arena.elo1=1000"
                                           " --set arena.elo0=999 --set arena.alpha=0.000001"
                                           " --set arena.beta=0.000001 --set run.max_generations=5"));
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(wait_until([&] { return read_file(dir / "log.txt").find("gating") != std::string::npos; }, 120s));
  std::this_thread::sleep_for(500ms);
  const auto sent = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  const auto status = run.wait_for(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << read_file(dir.string() + ".out");
  // Seconds here (ending the gate, saving, joining self-play); it took hours before.
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 30s);
  EXPECT_NE(read_file(dir / "log.txt").find("gate stopped"), std::string::npos);
  CsvTable::Row header;
  EXPECT_TRUE(table(dir / "arena.csv", header).empty());
}

// run.stop_after_minutes ends a session during a gate as Ctrl-C does: a gate of many games went on
// past it (a session of 0.3 minutes still gated at 86 s, and every later session replayed it).
TEST(FaultRun, TheTimeLimitStopsAGate) {
  const fs::path dir = fresh_dir("time_limit_gate");
  const auto started = std::chrono::steady_clock::now();
  const CommandResult r =
      run_shell("timeout -s KILL 300 " +
                train_command(dir, "--set arena.max_games=100000 --set arena.elo1=1000"
                                   " --set arena.elo0=999 --set arena.alpha=0.000001"
                                   " --set arena.beta=0.000001 --set run.max_generations=5"
                                   " --set run.stop_after_minutes=0.5"));
  const std::string log = read_file(dir / "log.txt");
  EXPECT_EQ(r.status, 0) << read_file(dir.string() + ".out");
  ASSERT_NE(log.find("gating"), std::string::npos) << log;
  EXPECT_NE(log.find("gate stopped; it is played again when the run continues"),
            std::string::npos)
      << log;
  // The limit and the stop's own seconds (saving, joining self-play), far from the 300 s kill.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 120s);
  CsvTable::Row header;
  EXPECT_TRUE(table(dir / "arena.csv", header).empty());
}

// Item 9: odd entries in games/ never stop a reader or the trainer: a chunk number too large for
// any counter, a directory named like a chunk, a symlink to /dev/zero.
TEST(FaultRun, OddFilesDoNotStopReaders) {
  const fs::path dir = finished_run("odd");
  std::ofstream(dir / "games" / "chunk-99999999999999999999.bin") << "x";
  fs::create_directory(dir / "games" / "chunk-00000777.bin");
  fs::create_symlink("/dev/zero", dir / "games" / "chunk-00000778.bin");
  const CommandResult games = run_shell("timeout 60 " + kBinary + " games --run " + dir.string() + " 2>&1");
  EXPECT_EQ(games.status, 0) << games.out;
  for (const char* name : {"chunk-99999999999999999999.bin", "chunk-00000777.bin", "chunk-00000778.bin"})
    EXPECT_NE(games.out.find(name), std::string::npos) << games.out;
  const CommandResult r = run_shell("timeout 120 " + kBinary + " train --config " + kConfig +
                                    " --run " + dir.string() +
                                    " --no-status --set run.max_generations=3 2>&1");
  EXPECT_EQ(r.status, 0) << r.out;
}

// Issue 25, item 3: a missing table never rolls a run back. A missing arena.csv used to make the
// resume copy gen-0000 over the promoted best.ckpt and gate again from generation 0; now each
// missing table is an error that writes nothing, and --recover rebuilds arena.csv from
// metrics.csv's gate rows (or, with both tables gone, from best.ckpt), keeping best.ckpt.
TEST(FaultRun, MissingTablesAreErrorsAndRecoverKeepsThePromotedNetwork) {
  const fs::path dir = promoted_run("missing_tables");
  const std::string best = read_file(dir / "checkpoints" / "best.ckpt");
  const std::string arena = read_file(dir / "arena.csv");
  for (const char* name : {"arena.csv", "metrics.csv"}) {
    const fs::path saved = dir.string() + "." + name;
    fs::rename(dir / name, saved);
    const CommandResult r = train(dir, "--set arena.max_games=0 --set run.max_generations=2");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(std::string(name) + " is missing"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--recover"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir / name)) << "a refused resume created " << name;
    EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best) << "best.ckpt was overwritten";
    // A table cut to nothing has lost as much (before: metrics.csv was started anew in silence).
    std::ofstream(dir / name).flush();
    const CommandResult empty = train(dir, "--set arena.max_games=0 --set run.max_generations=2");
    EXPECT_NE(empty.status, 0) << empty.out;
    EXPECT_NE(empty.out.find(std::string(name) + " is missing or empty"), std::string::npos)
        << empty.out;
    EXPECT_EQ(fs::file_size(dir / name), 0u) << "a refused resume wrote " << name;
    fs::rename(saved, dir / name);
  }
  EXPECT_NE(read_file(dir / "state.yaml").find("sessions: 1"), std::string::npos);

  // arena.csv lost: rebuilt from metrics.csv, the same gates and promotions.
  fs::remove(dir / "arena.csv");
  CommandResult r = train(dir, "--set arena.max_games=0 --set run.max_generations=2 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rebuilt 2 gate row(s) from metrics.csv"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gating"), std::string::npos) << "a gate was played again: " << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best);
  CsvTable::Row header, before_header;
  const auto rows = table(dir / "arena.csv", header);
  std::ofstream(dir.string() + ".arena") << arena;
  const auto before = table(dir.string() + ".arena", before_header);
  ASSERT_EQ(rows.size(), before.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (const char* c : {"generation", "step", "promoted", "games", "rating"})
      EXPECT_EQ(rows[i][column(header, c)], before[i][column(before_header, c)]) << c;
  expect_consistent(dir);

  // Both tables lost: arena.csv gets best.ckpt's generation as promoted; best.ckpt stays.
  fs::remove(dir / "arena.csv");
  fs::remove(dir / "metrics.csv");
  r = train(dir, "--set arena.max_games=0 --set run.max_generations=2 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("recorded generation 2 as promoted"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best);
  const auto last = table(dir / "arena.csv", header);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0][column(header, "generation")], "2");
  EXPECT_EQ(last[0][column(header, "promoted")], "1");

  // And the run goes on from there.
  r = train(dir, "--set arena.max_games=0 --set run.max_generations=3");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read_file(dir / "arena.csv").find("\n3,30,2,"), std::string::npos)
      << "generation 3 was not gated against generation 2: " << read_file(dir / "arena.csv");
}

// Issue 25, item 3: --recover with NaN in trainer.ckpt and in the newest gen-*.ckpt, but an
// intact, newer best.ckpt, used to overwrite best.ckpt with an older generation (the only copy
// of the promoted network lost). Now the trainer restarts from best.ckpt, the damaged candidate
// is rewritten from it, and best.ckpt stays.
TEST(FaultRun, RecoverNeverDiscardsAnIntactPromotedNetwork) {
  const fs::path dir = promoted_run("recover_best");
  const std::string best = read_file(dir / "checkpoints" / "best.ckpt");
  poison_with_nan(dir / "trainer.ckpt");
  poison_with_nan(dir / "checkpoints" / "gen-0002.ckpt");
  CommandResult r = train(dir, "--set arena.max_games=0 --set run.max_generations=2");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("--recover"), std::string::npos) << r.out;
  r = train(dir, "--set arena.max_games=0 --set run.max_generations=2 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best) << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "gen-0002.ckpt"), best)
      << "generation 2 was not rewritten from best.ckpt, its copy";
  EXPECT_EQ(oppidum::model::load_checkpoint((dir / "trainer.ckpt").string()).step, 20);
  EXPECT_NE(r.out.find("restarts from " + (dir / "checkpoints" / "best.ckpt").string()),
            std::string::npos)
      << r.out;
  expect_consistent(dir);

  // An intact best.ckpt newer than anything arena.csv promoted (the table edited) is never
  // overwritten: without --recover the resume stops and says so.
  std::string arena = read_file(dir / "arena.csv");
  arena.erase(arena.find("\n2,") + 1);
  oppidum::util::write_file_atomically((dir / "arena.csv").string(), arena);
  r = train(dir, "--set arena.max_games=0 --set run.max_generations=2");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("best.ckpt holds step 20, newer than generation 1"), std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best);
  // The refused resume leaves metrics.csv's gate row of generation 2 in place (it once moved it
  // aside first), and --recover records that gate from it, with what the row keeps.
  const std::string metrics = read_file(dir / "metrics.csv");
  EXPECT_TRUE(std::regex_search(metrics, std::regex("\ngate,[^,]*,20,2,"))) << metrics;
  r = train(dir, "--set arena.max_games=0 --set run.max_generations=2 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("metrics.csv keeps its gate: recorded generation 2 as promoted"),
            std::string::npos)
      << r.out;
  arena = read_file(dir / "arena.csv");
  EXPECT_NE(arena.find("\n2,20,"), std::string::npos) << arena;
  EXPECT_NE(arena.find("rebuilt by --recover from metrics.csv"), std::string::npos) << arena;
  EXPECT_EQ(read_file(dir / "checkpoints" / "best.ckpt"), best);
  expect_consistent(dir);
}

// --recover restarting the trainer from an older generation says that a damaged candidate after
// it will be written over when training reaches it (it was written over without a word).
TEST(FaultRun, ADamagedCandidateAheadOfTheTrainerIsNamedBeforeItIsWrittenOver) {
  const fs::path dir = promoted_run("damaged_ahead");
  for (const char* file : {"trainer.ckpt", "checkpoints/gen-0002.ckpt", "checkpoints/best.ckpt"})
    poison_with_nan(dir / file);
  const CommandResult r =
      train(dir, "--set arena.max_games=0 --set run.max_generations=2 --recover");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("generation 2 is after the trainer's 1, so this file is written over when "
                       "training reaches it"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find((dir / "checkpoints" / "gen-0002.ckpt").string()), std::string::npos);
  expect_consistent(dir);
}

// A run keeps the keys no later session may change in state.yaml as it was created with them: a
// config.yaml whose such key was edited by hand is refused, naming the key and both values, before
// anything is repaired or a session counted (it was accepted without a word); a key that may
// change is taken; a state from before the record gets it at the next start.
TEST(FaultRun, AConfigEditedByHandInAFixedKeyIsRefused) {
  const fs::path dir = finished_run("edited_config");
  const auto resume = [&](const std::string& extra) {
    return run_shell(kBinary + " train --run " + dir.string() + " --no-status " + extra + " 2>&1");
  };
  const std::string config = read_file(dir / "config.yaml"), state = read_file(dir / "state.yaml");
  const std::string metrics = read_file(dir / "metrics.csv");
  ASSERT_NE(state.find("config: |"), std::string::npos) << state;
  std::string edited = config;
  const auto at = edited.find("  batch_size: ");
  ASSERT_NE(at, std::string::npos) << config;
  edited.replace(at, edited.find('\n', at) - at, "  batch_size: 3");
  oppidum::util::write_file_atomically((dir / "config.yaml").string(), edited);
  CommandResult r = resume("--set run.max_generations=3");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("config.yaml was changed since the run was created, in keys that no later "
                       "session may change:\n  training.batch_size: 3 (the run was created with "),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read_file(dir / "state.yaml"), state) << "no session counted";
  EXPECT_EQ(read_file(dir / "metrics.csv"), metrics);
  // A key that may change, edited in the file, is taken.
  edited = config;
  const auto threads = edited.find("  threads: ");
  ASSERT_NE(threads, std::string::npos);
  edited.replace(threads, edited.find('\n', threads) - threads, "  threads: 1");
  oppidum::util::write_file_atomically((dir / "config.yaml").string(), edited);
  r = resume("--set run.max_generations=3");
  EXPECT_EQ(r.status, 0) << r.out;
  // A state from before the record: taken, and recorded.
  std::string old_state = read_file(dir / "state.yaml");
  old_state.erase(old_state.find("config_crc32:"));  // the record and its check
  oppidum::util::write_file_atomically((dir / "state.yaml").string(), old_state);
  r = resume("--set run.max_generations=4");
  EXPECT_EQ(r.status, 0) << r.out;
  std::string recorded = read_file(dir / "state.yaml");
  EXPECT_NE(recorded.find("  training.batch_size: "), std::string::npos);
  // A value recorded in another form (another version's writing) is the same value.
  const auto lr = recorded.find("  training.learning_rate: ");
  ASSERT_NE(lr, std::string::npos) << recorded;
  const auto value = lr + std::string("  training.learning_rate: ").size();
  const double rate = std::stod(recorded.substr(value));
  std::ostringstream other;
  other << std::scientific << std::setprecision(3) << rate;
  recorded.replace(value, recorded.find('\n', value) - value, other.str());
  // (that version's state, from before the record's check: without config_crc32)
  const auto check = recorded.find("config_crc32:");
  ASSERT_NE(check, std::string::npos) << recorded;
  recorded.erase(check, recorded.find('\n', check) + 1 - check);
  oppidum::util::write_file_atomically((dir / "state.yaml").string(), recorded);
  r = resume("--set run.max_generations=5");
  EXPECT_EQ(r.status, 0) << other.str() << ": " << r.out;
}

// Issue 25, item 3: games/index.csv is checked against the chunks. A garbage index used to stop
// every resume (--recover too), and the refused resume still counted a session; an edited row made
// the run report a hundred million positions. Now the index is rebuilt and the run goes on.
TEST(FaultRun, TheGamesIndexIsCheckedNotTrusted) {
  const fs::path dir = finished_run("index");
  const std::string first = read_file(dir / "log.txt");
  const auto positions_at_stop = [](const std::string& log) {
    const auto at = log.rfind("stopped: ");
    return at == std::string::npos ? -1 : std::atoll(log.c_str() + at + 9);
  };
  const long long positions = positions_at_stop(first);
  ASSERT_GT(positions, 0) << first;

  std::string index = read_file(dir / "games" / "index.csv");
  const auto row = index.find("\n3,");
  ASSERT_NE(row, std::string::npos) << index;
  const auto fields = index.find(',', index.find(',', row + 1) + 1);  // after "3,games,"
  index.replace(fields + 1, index.find_first_of(",\n", fields + 1) - fields - 1, "100000000");
  oppidum::util::write_file_atomically((dir / "games" / "index.csv").string(), index);
  CommandResult r = train(dir, "--set run.max_generations=2");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rebuilt it from the"), std::string::npos) << r.out;
  EXPECT_EQ(positions_at_stop(r.out), positions) << r.out;

  oppidum::util::write_file_atomically((dir / "games" / "index.csv").string(), "garbage\n");
  r = train(dir, "--set run.max_generations=2");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(positions_at_stop(r.out), positions) << r.out;
  EXPECT_NE(read_file(dir / "state.yaml").find("sessions: 3"), std::string::npos)
      << read_file(dir / "state.yaml");
  expect_consistent(dir);
}

// Issue 25, item 3: a bad arena.anchor used to be found only after the run folder existed, with
// its config frozen; now it is refused before anything is created.
TEST(FaultRun, ABadAnchorCreatesNothing) {
  const fs::path dir = fresh_dir("anchor");
  const CommandResult r = train(dir, "--set arena.anchor=alphabeta:depth=banana");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("arena.anchor"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "a refused run left a folder";
  // A person as the anchor used to stop the run at its first promotion, for good.
  const CommandResult human = train(dir, "--set arena.anchor=human");
  EXPECT_NE(human.status, 0) << human.out;
  EXPECT_NE(human.out.find("arena.anchor: human reads moves from a person"), std::string::npos)
      << human.out;
  EXPECT_FALSE(fs::exists(dir)) << "a refused run left a folder";
}

// Item 10: a refused config creates nothing.
TEST(FaultRun, ARefusedConfigCreatesNothing) {
  const fs::path dir = fresh_dir("refused");
  const CommandResult r = train(dir, "--set training.batch_sise=3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("batch_sise"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir));
}

// A config that could never train or gate used to be accepted and create the run, which then
// stopped with an internal error on every resume (its config frozen): fast-search rows dropped
// while every move is a fast search left the window empty for good; openings longer than the game
// stopped the run at its first gate. Both are refused before anything is created, naming the keys.
TEST(FaultRun, ConfigsThatCouldNeverTrainOrGateCreateNothing) {
  const fs::path dir = fresh_dir("never");
  CommandResult r = train(dir, "--set selfplay.full_search_fraction=0 "
                               "--set training.fast_search_rows=drop");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("training.fast_search_rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("selfplay.full_search_fraction"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("empty window"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "a refused run left a folder";
  r = train(dir, "--set arena.opening_plies=100");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("arena.opening_plies"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir)) << "a refused run left a folder";
}

// Damaged newest chunks (a byte flipped in every record) used to leave games/index.csv counting
// the older chunks' positions while the window held none, and every resume stopped with
// "ReplayWindow::sample on an empty window". Training now waits, saying so, until self-play has
// filled the window with training.min_positions rows again, and the run goes on.
TEST(FaultRun, DamagedNewestChunksMakeTrainingWaitForNewGames) {
  const fs::path dir = fresh_dir("damaged_chunks");
  // One game per chunk and a window of 100 positions: a restart reads only the newest chunks and
  // counts the older ones from the index.
  const std::string frozen = "--set selfplay.games_per_chunk=1 --set training.window_min=100 "
                             "--set training.window_max=100 --set training.min_positions=50 ";
  CommandResult r = train(dir, frozen);
  ASSERT_EQ(r.status, 0) << r.out;

  // The index rows, oldest first: chunk number and positions.
  std::vector<std::pair<long long, long long>> rows;
  {
    std::istringstream index(read_file(dir / "games" / "index.csv"));
    std::string line;
    std::getline(index, line);  // the header
    while (std::getline(index, line)) {
      std::istringstream fields(line);
      std::string chunk, games, positions;
      std::getline(fields, chunk, ',');
      std::getline(fields, games, ',');
      std::getline(fields, positions, ',');
      rows.emplace_back(std::stoll(chunk), std::stoll(positions));
    }
  }
  // Damages every record of the chunks a restart reads (newest first, until they hold the window).
  long long needed = 100, counted = 0;
  std::size_t damaged = 0;
  for (auto row = rows.rbegin(); row != rows.rend(); ++row) {
    if (needed <= 0) {
      counted += row->second;
      continue;
    }
    needed -= row->second;
    char name[32];
    std::snprintf(name, sizeof name, "chunk-%08lld.bin", row->first);
    const fs::path chunk = dir / "games" / name;
    std::string bytes = read_file(chunk);
    ASSERT_GE(bytes.size(), 16u) << chunk;
    std::uint32_t records = 0;
    std::memcpy(&records, bytes.data() + 12, 4);
    std::size_t at = 16;
    for (std::uint32_t i = 0; i < records; ++i) {
      std::uint32_t length = 0;
      ASSERT_LE(at + 8, bytes.size()) << chunk;
      std::memcpy(&length, bytes.data() + at, 4);
      ASSERT_LE(at + 8 + length, bytes.size()) << chunk;
      bytes[at + 8 + length / 2] = static_cast<char>(bytes[at + 8 + length / 2] ^ 0x20);
      at += 8 + length;
    }
    oppidum::util::write_file_atomically(chunk.string(), bytes);
    ++damaged;
  }
  ASSERT_GT(damaged, 0u);
  ASSERT_GE(counted, 50) << "the older chunks must hold training.min_positions for the old crash";

  r = train(dir, frozen + "--set run.max_generations=3");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("empty window"), std::string::npos) << r.out;
  const std::string log = read_file(dir / "log.txt");
  EXPECT_NE(log.find("replay: the window holds 0 positions"), std::string::npos) << log;
  EXPECT_NE(log.find("skipping damaged data"), std::string::npos) << log;
  EXPECT_EQ(oppidum::model::load_checkpoint((dir / "trainer.ckpt").string()).step, 30);
}


// Networks that are not the run's (another shape, another run's trainer, a copy of another
// generation) were adopted: a best.ckpt of another shape played self-play, a foreign trainer.ckpt
// ahead of the run skipped generations, a stale candidate awaiting its gate was promoted at the
// wrong step and the run could not continue. Each is now refused, naming it, and --recover
// rebuilds from the run's own networks.
TEST(FaultRun, NetworksThatAreNotTheRunsAreNeverAdopted) {
  const fs::path base = promoted_run("foreign_base");  // every candidate promoted: best is gen 2
  const fs::path other = fresh_dir("foreign_other");    // the same network, another seed, further
  ASSERT_EQ(train(other, "--set arena.max_games=0 --set run.max_generations=4 --set run.seed=9")
                .status, 0);
  const fs::path narrow = fresh_dir("foreign_narrow");  // another shape
  ASSERT_EQ(train(narrow, "--set arena.max_games=0 --set net.filters=4").status, 0);
  const std::string keep = "--set arena.max_games=0 --set run.max_generations=2";

  {  // best.ckpt of another shape.
    const fs::path dir = copy_run(base, "foreign_best");
    fs::copy_file(narrow / "checkpoints/best.ckpt", dir / "checkpoints/best.ckpt",
                  fs::copy_options::overwrite_existing);
    const std::string before = snapshot_of(dir);
    CommandResult r = train(dir, keep);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find((dir / "checkpoints/best.ckpt").string() + " does not fit: network 1x4"),
              std::string::npos) << r.out;
    EXPECT_EQ(snapshot_of(dir), before) << "a refused resume changed the run";
    r = train(dir, keep + " --recover");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(read_file(dir / "checkpoints/best.ckpt"), read_file(dir / "checkpoints/gen-0002.ckpt"));
    expect_consistent(dir);
  }
  {  // The newest candidate of another shape, trainer.ckpt lost: --recover skips it.
    const fs::path dir = copy_run(base, "foreign_candidate");
    fs::copy_file(narrow / "checkpoints/gen-0002.ckpt", dir / "checkpoints/gen-0002.ckpt",
                  fs::copy_options::overwrite_existing);
    fs::remove(dir / "trainer.ckpt");
    const CommandResult r = train(dir, keep + " --recover");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("rewrote " + (dir / "checkpoints/gen-0002.ckpt").string() +
                         " from best.ckpt"), std::string::npos) << r.out;
    expect_consistent(dir);
  }
  {  // Another run's trainer, two generations ahead.
    const fs::path dir = copy_run(base, "foreign_trainer");
    for (const char* f : {"trainer.ckpt", "trainer.optim"})
      fs::copy_file(other / f, dir / f, fs::copy_options::overwrite_existing);
    const std::string before = snapshot_of(dir);
    CommandResult r = train(dir, "--set arena.max_games=0 --set run.max_generations=5");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("trainer.ckpt holds step 40 (generation 4), but the run's newest "
                         "generation is 2"), std::string::npos) << r.out;
    EXPECT_EQ(snapshot_of(dir), before) << "a refused resume changed the run";
    r = train(dir, keep + " --recover");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(oppidum::model::load_checkpoint((dir / "trainer.ckpt").string()).step, 20);
    expect_consistent(dir);
  }
  {  // A kill before generation 2's gate, its candidate a stale copy of generation 1.
    const fs::path dir = copy_run(base, "foreign_stale");
    std::string arena = read_file(dir / "arena.csv");
    arena.erase(arena.find("\n2,") + 1);
    oppidum::util::write_file_atomically((dir / "arena.csv").string(), arena);
    std::string metrics = read_file(dir / "metrics.csv");
    const std::size_t gate = metrics.find("\ngate,");
    const std::size_t gate2 = metrics.find("\ngate,", gate + 1);
    ASSERT_NE(gate2, std::string::npos) << metrics;
    metrics.erase(gate2 + 1, metrics.find('\n', gate2 + 1) - gate2);
    oppidum::util::write_file_atomically((dir / "metrics.csv").string(), metrics);
    for (const char* f : {"best.ckpt", "gen-0002.ckpt"})
      fs::copy_file(dir / "checkpoints/gen-0001.ckpt", dir / "checkpoints" / f,
                    fs::copy_options::overwrite_existing);
    const CommandResult r = train(dir, keep);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("rewrote " + (dir / "checkpoints/gen-0002.ckpt").string() +
                         " from the trainer's state"), std::string::npos) << r.out;
    EXPECT_NE(read_file(dir / "arena.csv").find("\n2,20,1,"), std::string::npos)
        << read_file(dir / "arena.csv");
    EXPECT_EQ(oppidum::model::load_checkpoint((dir / "checkpoints/best.ckpt").string()).step, 20);
    expect_consistent(dir);
    EXPECT_EQ(train(dir, keep).status, 0) << "the run continues";
  }
  {  // A candidate newer than the trainer counts however many digits its number has.
    const fs::path dir = copy_run(base, "foreign_gen10000");
    auto newer = oppidum::model::load_checkpoint((dir / "checkpoints/gen-0002.ckpt").string());
    newer.step = 10000 * 10;
    oppidum::model::save_checkpoint(newer, (dir / "checkpoints/gen-10000.ckpt").string());
    const CommandResult r = train(dir, keep);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("older than the run: " + (dir / "checkpoints/gen-10000.ckpt").string() +
                         " is intact"), std::string::npos) << r.out;
  }
  {  // --recover reads every candidate: a damaged older one is named, not called intact.
    const fs::path dir = copy_run(base, "foreign_damaged_old");
    const std::string gen1 = read_file(dir / "checkpoints/gen-0001.ckpt");
    std::ofstream(dir / "checkpoints/gen-0001.ckpt", std::ios::binary) << gen1.substr(0, 500);
    const CommandResult r = train(dir, keep + " --recover");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.find("every file of the run is intact"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find((dir / "checkpoints/gen-0001.ckpt").string() + ": truncated or damaged"),
              std::string::npos) << r.out;
    EXPECT_EQ(read_file(dir / "checkpoints/gen-0001.ckpt"), gen1.substr(0, 500)) << "kept as it is";
  }
  {  // A directory where trainer.optim is written: refused at the start, not after a generation.
    const fs::path dir = copy_run(base, "foreign_optim_dir");
    fs::remove(dir / "trainer.optim");
    fs::create_directory(dir / "trainer.optim");
    const CommandResult r = train(dir, "--set arena.max_games=0 --set run.max_generations=3");
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("cannot write " + (dir / "trainer.optim").string() + ": it is a directory"),
              std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir / "checkpoints/gen-0003.ckpt")) << r.out;
  }
}

// A new run never writes over what a folder already holds: a best.ckpt kept there, or the tables
// of a run whose config.yaml was lost, are refused before anything is created.
TEST(FaultRun, ANewRunNeverOverwritesAFoldersNetworkOrTables) {
  const fs::path base = promoted_run("new_over_base");
  for (const char* kept : {"checkpoints/best.ckpt", "metrics.csv"}) {
    SCOPED_TRACE(kept);
    const fs::path dir = fresh_dir("new_over");
    fs::create_directories((dir / kept).parent_path());
    fs::copy_file(base / kept, dir / kept);
    const std::string before = snapshot_of(dir);
    const CommandResult r = train(dir);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("config.yaml is missing, but " + dir.string() + " holds a run"),
              std::string::npos) << r.out;
    EXPECT_EQ(snapshot_of(dir), before) << "a refused run changed the folder";
    EXPECT_FALSE(fs::exists(dir / "config.yaml"));
  }
  // Nor is a new run made among somebody's files (`train --run ~`: its state.yaml and log.txt
  // were written there, over or into the user's own).
  const fs::path dir = fresh_dir("new_among");
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "mine\n";
  std::ofstream(dir / "state.yaml") << "my state\n";
  const std::string before = snapshot_of(dir);
  const CommandResult r = train(dir);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(dir.string() + " holds notes.txt, which no run writes"), std::string::npos)
      << r.out;
  EXPECT_EQ(snapshot_of(dir), before) << "a refused run changed the folder";
  EXPECT_FALSE(fs::exists(dir / "log.txt"));
  EXPECT_FALSE(fs::exists(dir / "lock"));
}


// Found by a kill -9 torture of the stricter resume: a creation cut short twice, with another seed
// the second time, left an untrained best.ckpt that was no copy of gen-0000, and every later try
// was refused; a kill between a promotion's row and its best.ckpt, with the promoted candidate
// damaged too, stopped --recover with a bare error although the trainer holds that network; an
// interrupted write's .tmp file stayed for good.
TEST(FaultRun, CutShortCreationsAndLostCopiesAreRecovered) {
  const fs::path base = promoted_run("cut_base");  // every candidate promoted: best is gen 2
  {
    const fs::path dir = fresh_dir("cut_create");
    fs::create_directories(dir / "checkpoints");
    fs::copy_file(base / "checkpoints/gen-0000.ckpt", dir / "checkpoints/best.ckpt");
    const CommandResult r = train(dir, "--set arena.max_games=0 --set run.seed=5");
    EXPECT_EQ(r.status, 0) << r.out;
  }
  {
    const fs::path dir = copy_run(base, "cut_best");
    fs::copy_file(dir / "checkpoints/gen-0001.ckpt", dir / "checkpoints/best.ckpt",
                  fs::copy_options::overwrite_existing);
    const std::string gen2 = read_file(dir / "checkpoints/gen-0002.ckpt");
    std::ofstream(dir / "checkpoints/gen-0002.ckpt", std::ios::binary) << gen2.substr(0, 1000);
    const std::string keep = "--set arena.max_games=0 --set run.max_generations=2";
    CommandResult r = train(dir, keep);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("--recover"), std::string::npos) << r.out;
    r = train(dir, keep + " --recover");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("rewrote it from the trainer's state"), std::string::npos) << r.out;
    EXPECT_EQ(read_file(dir / "checkpoints/gen-0002.ckpt"), read_file(dir / "checkpoints/best.ckpt"));
    EXPECT_EQ(oppidum::model::load_checkpoint((dir / "checkpoints/best.ckpt").string()).step, 20);
    expect_consistent(dir);
  }
  {
    const fs::path dir = copy_run(base, "cut_tmp");
    for (const char* tmp : {"checkpoints/gen-0003.ckpt.tmp", "trainer.optim.tmp", "state.yaml.tmp"})
      std::ofstream(dir / tmp) << "half a file";
    std::ofstream(dir / "notes.tmp") << "the user's";
    EXPECT_EQ(train(dir, "--set arena.max_games=0 --set run.max_generations=2").status, 0);
    EXPECT_FALSE(fs::exists(dir / "checkpoints/gen-0003.ckpt.tmp"));
    EXPECT_FALSE(fs::exists(dir / "trainer.optim.tmp"));
    EXPECT_FALSE(fs::exists(dir / "state.yaml.tmp"));
    EXPECT_TRUE(fs::exists(dir / "notes.tmp")) << "not a file of the run's";
  }
}
}  // namespace
