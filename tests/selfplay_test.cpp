// Self-play workers and the replay store: games reach the store as readable, legal records with
// policy targets in the configured share; the store keeps numbering across reopenings.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "mcts/evaluator.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"

namespace oppidum::selfplay {
namespace {

std::string temp_folder(const std::string& name) {
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(path);
  return path.string();
}

SelfPlaySettings small_settings(const std::string& game) {
  SelfPlaySettings s;
  s.game = game;
  s.threads = 2;
  s.concurrent_games = 4;
  s.simulations = 12;
  s.fast_simulations = 3;
  s.full_search_fraction = 0.25;
  s.max_plies = 60;
  s.games_per_chunk = 3;
  s.seed = 7;
  return s;
}

void run_until(SelfPlay& sp, std::int64_t games) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sp.stats().games < games && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

class SelfPlayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SelfPlayTest, GamesReachTheStoreAsLegalRecords) {
  mcts::UniformEvaluator uniform;
  FolderReplayStore store(temp_folder("selfplay_" + GetParam()));
  SelfPlay sp(uniform, store, small_settings(GetParam()), [] { return std::int64_t{42}; });
  sp.start();
  run_until(sp, 9);
  sp.stop();
  EXPECT_EQ(sp.error(), "");
  const SelfPlayStats stats = sp.stats();
  ASSERT_GE(stats.games, 9);
  std::int64_t games = 0, positions = 0, targets = 0;
  for (const std::string& chunk : store.chunks()) {
    const ReadResult read = store.read_chunk(chunk);
    EXPECT_TRUE(read.problems.empty());
    for (const GameRecord& r : read.records) {
      ++games;
      EXPECT_EQ(r.game, GetParam());
      EXPECT_EQ(r.network_step, 42);
      const auto states = replay(r);
      EXPECT_TRUE(states.back()->is_terminal() || r.adjudicated);
      if (!r.adjudicated) {
        EXPECT_EQ(r.result, states.back()->result(0));
      }
      for (const MoveRecord& m : r.moves) {
        positions++;
        targets += m.policy_target;
        std::uint32_t visits = 0;
        for (const VisitCount& v : m.visits) visits += v.visits;
        EXPECT_GE(visits, 1u);
      }
    }
  }
  EXPECT_EQ(games, stats.games);
  EXPECT_EQ(positions, stats.positions);
  EXPECT_EQ(targets, stats.policy_targets);
  // About a quarter of the moves are full searches.
  EXPECT_GT(targets, positions / 10);
  EXPECT_LT(targets, positions / 2);
}

INSTANTIATE_TEST_SUITE_P(BothGames, SelfPlayTest, ::testing::Values("mg", "dvonn"),
                         [](const auto& param_info) { return param_info.param; });

TEST(FolderReplayStore, ContinuesNumberingAndDropsInterruptedWrites) {
  const std::string folder = temp_folder("store_numbering");
  GameRecord r;
  r.game = "mg";
  r.start = "tttttttt/......../......../......../......../......../TTTTTTTT L";
  {
    FolderReplayStore store(folder);
    store.append({r});
    store.append({r, r});
  }
  std::ofstream(std::filesystem::path(folder) / "chunk-00000002.bin.tmp") << "half written";
  FolderReplayStore again(folder);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(folder) / "chunk-00000002.bin.tmp"));
  again.append({r});
  const auto chunks = again.chunks();
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_NE(chunks[2].find("chunk-00000002.bin"), std::string::npos);
  EXPECT_EQ(again.read_chunk(chunks[1]).records.size(), 2u);
}

}  // namespace
}  // namespace oppidum::selfplay
