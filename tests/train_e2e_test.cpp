// `oppidum train` end to end on a tiny config: two generations with every run-folder file in
// place; then a run killed with SIGKILL mid-way continues with the same command.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "model/checkpoint.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "tests/process_util.h"

namespace {
namespace fs = std::filesystem;

const std::string kBinary = OPPIDUM_BINARY;
const std::string kConfig = OPPIDUM_TINY_CONFIG;

using oppidum::test_util::read_file;

int count_lines(const fs::path& p) {
  const std::string text = read_file(p);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

int run(const std::string& args) {
  const int status = std::system((kBinary + " " + args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Every chunk reads without problems and every record replays.
void expect_intact_games(const fs::path& run) {
  oppidum::selfplay::FolderReplayStore store((run / "games").string());
  ASSERT_FALSE(store.chunks().empty());
  for (const auto& chunk : store.chunks()) {
    const auto read = store.read_chunk(chunk);
    EXPECT_TRUE(read.problems.empty()) << read.problems.front();
    for (const auto& r : read.records) EXPECT_NO_THROW(oppidum::selfplay::replay(r));
  }
}

TEST(TrainEndToEnd, TwoGenerationsFillTheRunFolder) {
  const fs::path dir = fs::path(::testing::TempDir()) / "e2e_two";
  fs::remove_all(dir);
  ASSERT_EQ(run("train --config " + kConfig + " --run " + dir.string() + " --no-status 2>" +
                (dir.string() + ".log")),
            0)
      << read_file(dir.string() + ".log");
  for (const char* f : {"config.yaml", "state.yaml", "arena.csv", "metrics.csv", "log.txt",
                        "trainer.ckpt", "trainer.optim", "checkpoints/best.ckpt",
                        "checkpoints/gen-0001.ckpt", "checkpoints/gen-0002.ckpt"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_EQ(count_lines(dir / "arena.csv"), 3) << "a header and one gate per generation";
  EXPECT_GE(count_lines(dir / "metrics.csv"), 1 + 20 + 2) << "a row per step and per gate";
  const auto best = oppidum::model::load_checkpoint((dir / "checkpoints/best.ckpt").string());
  EXPECT_EQ(best.game, "mg");
  EXPECT_TRUE(best.step == 0 || best.step == 10 || best.step == 20);
  const auto trainer = oppidum::model::load_checkpoint((dir / "trainer.ckpt").string());
  EXPECT_EQ(trainer.step, 20);
  expect_intact_games(dir);
  // A config that differs from the run's is refused, naming the key.
  std::ofstream(dir.string() + "-other.yaml") << read_file(kConfig) << "\n";
  EXPECT_NE(run("train --config " + kConfig + " --run " + dir.string() +
                " --set net.filters=16 --no-status 2>" + dir.string() + ".log2"),
            0);
  EXPECT_NE(read_file(dir.string() + ".log2").find("net.filters"), std::string::npos);
}

TEST(TrainEndToEnd, KilledRunContinues) {
  const fs::path dir = fs::path(::testing::TempDir()) / "e2e_kill";
  fs::remove_all(dir);
  const fs::path pid_file = dir.string() + ".pid";
  std::system((kBinary + " train --config " + kConfig + " --run " + dir.string() +
               " --set run.max_generations=1000 --no-status >/dev/null 2>&1 & echo $! > " +
               pid_file.string())
                  .c_str());
  const pid_t pid = std::stoi(read_file(pid_file));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(dir / "checkpoints" / "gen-0002.ckpt") &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(dir / "checkpoints" / "gen-0002.ckpt"));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The same command, with a stop condition, continues where the run was.
  ASSERT_EQ(run("train --config " + kConfig + " --run " + dir.string() +
                " --set run.max_generations=4 --no-status 2>" + dir.string() + ".log"),
            0)
      << read_file(dir.string() + ".log");
  const std::string log = read_file(dir.string() + ".log");
  EXPECT_NE(log.find("resuming run"), std::string::npos) << log;
  EXPECT_NE(log.find("session 2"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "checkpoints" / "gen-0004.ckpt"));
  const auto trainer = oppidum::model::load_checkpoint((dir / "trainer.ckpt").string());
  EXPECT_EQ(trainer.step, 40);
  expect_intact_games(dir);
  EXPECT_NE(read_file(dir / "state.yaml").find("sessions: 2"), std::string::npos);
}

}  // namespace
