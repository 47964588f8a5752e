// `oppidum train` end to end on a tiny config: two generations with every run-folder file in
// place and consistent (one metrics row per step, one gate per generation, best.ckpt the last
// promoted candidate, the anchor match of each promotion). The kill, lock and damage scenarios
// are in fault_run_test.cpp.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "model/checkpoint.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "tests/process_util.h"
#include "util/csv_table.h"

namespace {
namespace fs = std::filesystem;
using oppidum::test_util::read_file;
using oppidum::test_util::run_shell;
using oppidum::util::CsvTable;

const std::string kBinary = OPPIDUM_BINARY;
const std::string kConfig = OPPIDUM_TINY_CONFIG;

int run(const std::string& args) { return run_shell(kBinary + " " + args).status; }

// The rows of a CSV file of the run; fails the test on damaged rows.
std::vector<CsvTable::Row> rows(const fs::path& file, CsvTable::Row* header) {
  int skipped = 0;
  auto r = CsvTable::read(file.string(), header, &skipped);
  EXPECT_EQ(skipped, 0) << file;
  return r;
}

std::size_t column(const CsvTable::Row& header, const std::string& name) {
  return CsvTable::column_of(header, name);
}

TEST(TrainEndToEnd, TwoGenerationsFillTheRunFolder) {
  const fs::path dir = fs::path(::testing::TempDir()) / "e2e_two";
  fs::remove_all(dir);
  // No gate (arena.max_games 0): every candidate is promoted, so that the promotion path, the
  // anchor match and best.ckpt's copy all run. Gated runs are checked in fault_run_test.cpp.
  const std::string log = dir.string() + ".log";
  ASSERT_EQ(run("train --config " + kConfig + " --run " + dir.string() +
                " --set arena.max_games=0 --set arena.anchor_games=4"
                " --set selfplay.resign_below=-0.5 --no-status 2>" + log),
            0)
      << read_file(log);
  for (const char* f : {"config.yaml", "state.yaml", "arena.csv", "metrics.csv", "log.txt", "lock",
                        "trainer.ckpt", "trainer.optim", "checkpoints/best.ckpt",
                        "checkpoints/gen-0000.ckpt", "checkpoints/gen-0001.ckpt",
                        "checkpoints/gen-0002.ckpt"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;

  CsvTable::Row gate_header;
  const auto gates = rows(dir / "arena.csv", &gate_header);
  ASSERT_EQ(gates.size(), 2u) << "one gate per generation";
  for (std::size_t g = 0; g < gates.size(); ++g) {
    EXPECT_EQ(gates[g][column(gate_header, "generation")], std::to_string(g + 1));
    EXPECT_EQ(gates[g][column(gate_header, "promoted")], "1") << "no gate promotes every candidate";
    EXPECT_EQ(gates[g][column(gate_header, "anchor")], "alphabeta:depth=2");
    EXPECT_EQ(gates[g][column(gate_header, "anchor_games")], "4");
  }
  // best.ckpt is gen-0002, the last promoted, byte for byte the candidate's weights.
  const auto best = oppidum::model::load_checkpoint((dir / "checkpoints/best.ckpt").string());
  const auto gen2 = oppidum::model::load_checkpoint((dir / "checkpoints/gen-0002.ckpt").string());
  EXPECT_EQ(best.step, 20);
  ASSERT_EQ(best.tensors.size(), gen2.tensors.size());
  for (std::size_t i = 0; i < best.tensors.size(); ++i)
    EXPECT_EQ(best.tensors[i].data, gen2.tensors[i].data);
  EXPECT_EQ(oppidum::model::load_checkpoint((dir / "trainer.ckpt").string()).step, 20);

  CsvTable::Row metrics_header;
  const auto metrics = rows(dir / "metrics.csv", &metrics_header);
  std::set<std::string> steps;
  long covered = 0;  // the steps the train rows account for (loss_steps), each once
  int gate_rows = 0, selfplay_rows = 0;
  std::vector<std::string> session_rows;  // "start 0" and "stop <step>", in order
  for (const auto& row : metrics) {
    if (row[0] == "start" || row[0] == "stop")
      session_rows.push_back(row[0] + " " + row[column(metrics_header, "step")]);
    if (row[0] == "train") {
      EXPECT_TRUE(steps.insert(row[column(metrics_header, "step")]).second);
      const long step = std::stol(row[column(metrics_header, "step")]);
      EXPECT_EQ(step - std::stol(row[column(metrics_header, "loss_steps")]), covered)
          << "a row that does not start where the one before ended";
      covered = step;
    }
    if (row[0] == "gate") ++gate_rows;
    if (row[0] == "selfplay") {
      // The self-play pipeline against its bound (docs/PERFORMANCE.md): every number positive,
      // and the forward busy share a share; resignation's counts (on in this run).
      ++selfplay_rows;
      for (const char* c : {"selfplay_positions_per_second", "evals_per_position", "forward_busy",
                            "forward_rate", "mean_batch", "selfplay_bound"})
        EXPECT_GT(std::atof(row[column(metrics_header, c)].c_str()), 0.0) << c;
      EXPECT_LE(std::atof(row[column(metrics_header, "forward_busy")].c_str()), 1.0);
      const double rate = std::stod(row[column(metrics_header, "resign_false_rate")]);
      EXPECT_GE(rate, 0.0);
      EXPECT_LE(rate, 1.0);
      EXPECT_GE(std::stol(row[column(metrics_header, "resign_checks")]), 0);
    }
  }
  EXPECT_EQ(covered, 20) << "the train rows account for every step";
  EXPECT_GE(steps.size(), 2u) << "a row at each generation's end at least";
  EXPECT_EQ(gate_rows, 2);
  // One per generation: positions count as their moves are played, so every generation has some
  // (even one that trains on the games of the one before alone).
  EXPECT_EQ(selfplay_rows, 2);
  // The session opened with a start row and its clean stop wrote a stop row: the page counts
  // sessions and their time from them.
  EXPECT_EQ(session_rows, (std::vector<std::string>{"start 0", "stop 20"}));
  const std::string log_text = read_file(log);
  EXPECT_NE(log_text.find("generation 1 self-play: "), std::string::npos) << log_text;
  EXPECT_NE(log_text.find("session self-play: "), std::string::npos) << log_text;
  EXPECT_NE(log_text.find("self-play resignations this session"), std::string::npos) << log_text;
  // The trainer's pace, with this session's 20 steps and how often each position was sampled.
  EXPECT_NE(log_text.find("trainer this session: 20 steps, "), std::string::npos) << log_text;
  EXPECT_NE(log_text.find(" times so far"), std::string::npos) << log_text;

  oppidum::selfplay::FolderReplayStore store((dir / "games").string(),
                                             oppidum::selfplay::FolderReplayStore::Mode::kReadOnly);
  ASSERT_FALSE(store.chunks().empty());
  for (const auto& chunk : store.chunks()) {
    const auto read = oppidum::selfplay::read_game_file(chunk);
    EXPECT_TRUE(read.problems.empty()) << read.problems.front();
    for (const auto& r : read.records) EXPECT_NO_THROW(oppidum::selfplay::replay(r));
  }

  // A config that differs from the run's is refused, naming the key.
  const auto refused = run_shell(kBinary + " train --config " + kConfig + " --run " + dir.string() +
                                 " --set net.filters=16 --no-status 2>&1");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.out.find("net.filters"), std::string::npos) << refused.out;

  // Where a run runs is not its identity: it continues on another backend (on a GPU box, another
  // device) with other thread and batching settings, for one more generation.
  const auto moved = run_shell(kBinary + " train --run " + dir.string() +
                               " --set run.max_generations=3 --set inference.backend=torch"
                               " --set selfplay.concurrent_games=8 --set inference.max_batch=16"
                               " --no-status 2>&1");
  ASSERT_EQ(moved.status, 0) << moved.out;
  EXPECT_NE(moved.out.find("over torch cpu"), std::string::npos) << moved.out;
  EXPECT_NE(moved.out.find("training on cpu"), std::string::npos) << moved.out;
  EXPECT_NE(moved.out.find("generation 3: "), std::string::npos) << moved.out;
  // The frozen config keeps what the run was started with.
  EXPECT_NE(read_file((dir / "config.yaml").string()).find("backend: \"eigen\""),
            std::string::npos);
}

// A fixed budget of self-play positions (run.stop_after_positions) ends the run, whatever the
// wall time: the learning benchmark's budget.
TEST(TrainEndToEnd, StopsAtAPositionBudget) {
  const fs::path dir = fs::path(::testing::TempDir()) / "e2e_budget";
  fs::remove_all(dir);
  const auto r = run_shell(kBinary + " train --config " + kConfig + " --run " + dir.string() +
                           " --set run.max_generations=0 --set run.stop_after_positions=2000"
                           " --no-status 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto at = r.out.find("stopped: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const long positions = std::atol(r.out.c_str() + at + 9);
  EXPECT_GE(positions, 2000);
  EXPECT_LT(positions, 20000) << "the budget did not stop the run";
}

}  // namespace
