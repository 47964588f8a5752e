// Resignation in self-play: who wants to resign, when it is allowed (enough checks, few wrong,
// over the last 100), and self-play games that end by resignation or are played out and checked.
#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "mcts/evaluator.h"
#include "selfplay/replay_store.h"
#include "selfplay/resignation.h"
#include "selfplay/selfplay.h"

namespace oppidum::selfplay {
namespace {

mcts::MoveStats move(int player, float value) {
  mcts::MoveStats m;
  m.player = player;
  m.root_value = value;
  return m;
}

TEST(ResignControl, WantsToResignAfterItsOwnMovesStayBelow) {
  ResignSettings s;
  s.below = -0.9;
  s.moves = 2;
  const ResignControl control(s);
  // Player 0's last two own moves are below -0.9; player 1's moves in between do not count.
  EXPECT_EQ(control.wants_to_resign({move(0, -0.95f), move(1, 0.95f), move(0, -0.99f)}), 0);
  EXPECT_EQ(control.wants_to_resign({move(0, -0.95f), move(1, 0.95f), move(1, 0.9f), move(0, -0.99f)}), 0)
      << "players need not alternate";
  EXPECT_EQ(control.wants_to_resign({move(0, -0.5f), move(1, 0.95f), move(0, -0.99f)}), -1);
  EXPECT_EQ(control.wants_to_resign({move(1, 0.95f), move(0, -0.99f)}), -1) << "only one move";
  EXPECT_EQ(control.wants_to_resign({move(0, -0.9f), move(1, 0.9f), move(0, -0.95f)}), -1)
      << "strictly below";
  const ResignControl off{ResignSettings{}};
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.wants_to_resign({move(0, -1.0f), move(1, 1.0f), move(0, -1.0f), move(1, 1.0f),
                                 move(0, -1.0f)}),
            -1);
}

TEST(ResignControl, AllowedOnlyWithEnoughChecksAndFewWrong) {
  ResignSettings s;
  s.below = -0.9;
  s.min_checks = 20;
  s.max_false = 0.05;
  ResignControl control(s);
  for (int i = 0; i < 19; ++i) control.record_check(false);
  EXPECT_FALSE(control.allowed()) << "19 checks are not enough";
  control.record_check(false);
  EXPECT_TRUE(control.allowed());
  control.record_check(true);  // 1 of 21 wrong: 4.8%
  EXPECT_TRUE(control.allowed());
  control.record_check(true);  // 2 of 22: 9.1%
  EXPECT_FALSE(control.allowed());
  EXPECT_NEAR(control.stats().recent_false_rate, 2.0 / 22.0, 1e-12);
  // Right checks bring the rate down: 2 of 39 is 5.1%, 2 of 40 is 5%.
  for (int i = 0; i < 17; ++i) control.record_check(false);
  EXPECT_FALSE(control.allowed());
  control.record_check(false);
  EXPECT_TRUE(control.allowed());
  // The rate is over the last 100 checks only: wrong ones age out.
  for (int i = 0; i < 5; ++i) control.record_check(true);  // 7 of 45
  EXPECT_FALSE(control.allowed());
  for (int i = 0; i < 99; ++i) control.record_check(false);
  EXPECT_NEAR(control.stats().recent_false_rate, 0.01, 1e-12) << "one wrong check left";
  control.record_check(false);
  const ResignControl::Stats st = control.stats();
  EXPECT_TRUE(st.allowed);
  EXPECT_EQ(st.checks, 145);
  EXPECT_EQ(st.wrong, 7);
  EXPECT_EQ(st.recent_false_rate, 0.0);
}

// Player 0 always sees a lost position (-0.95 for it, +0.95 for player 1 to move).
class GloomyForPlayerZero final : public mcts::Evaluator {
 public:
  void evaluate(const mcts::EvalRequest* requests, int n, mcts::EvalResult* results) override {
    for (int i = 0; i < n; ++i) {
      mcts::set_uniform_priors(*requests[i].legal, results[i].priors);
      results[i].value = requests[i].state->current_player() == 0 ? -0.95f : 0.95f;
    }
  }
  std::string describe() const override { return "gloomy"; }
};

SelfPlaySettings resigning_settings(const std::string& game, double playout) {
  SelfPlaySettings s;
  s.game = game;
  s.threads = 1;
  s.concurrent_games = 4;
  s.simulations = 8;
  s.fast_simulations = 4;
  s.max_plies = 400;
  s.games_per_chunk = 2;
  s.seed = 3;
  s.resign.below = -0.5;
  s.resign.moves = 2;
  s.resign.playout = playout;
  s.resign.min_checks = 0;  // trust from the start: every game that may resign does
  s.resign.max_false = 1.0;
  return s;
}

std::vector<GameRecord> play(const SelfPlaySettings& settings, const std::string& folder,
                             SelfPlayStats* stats) {
  GloomyForPlayerZero gloomy;
  const auto path = std::filesystem::path(::testing::TempDir()) / folder;
  std::filesystem::remove_all(path);
  FolderReplayStore store(path.string(), FolderReplayStore::Mode::kOwner);
  SelfPlay sp(gloomy, store, settings, [] { return std::int64_t{0}; });
  sp.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sp.stats().games < 6 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  sp.stop();
  EXPECT_EQ(sp.error(), "");
  *stats = sp.stats();
  std::vector<GameRecord> records;
  for (const std::string& chunk : store.chunks())
    for (GameRecord& r : selfplay::read_game_file(chunk).records) records.push_back(std::move(r));
  return records;
}

class ResignationSelfPlay : public ::testing::TestWithParam<std::string> {};

TEST_P(ResignationSelfPlay, GamesEndByResignationOrArePlayedOutAndChecked) {
  SelfPlayStats stats;
  const auto resigned = play(resigning_settings(GetParam(), 0.0), "resign_" + GetParam(), &stats);
  ASSERT_GE(resigned.size(), 6u);
  EXPECT_EQ(stats.resign.resigned, static_cast<std::int64_t>(resigned.size()));
  EXPECT_EQ(stats.resign.checks, 0);
  for (const GameRecord& r : resigned) {
    EXPECT_TRUE(r.resigned);
    EXPECT_EQ(r.result, -1) << "player 0 resigns";
    EXPECT_NO_THROW(replay(r));
    // Player 0 resigns after its second move below -0.5.
    int own = 0;
    const auto states = replay(r);
    for (std::size_t i = 0; i < r.moves.size(); ++i) own += states[i]->current_player() == 0;
    EXPECT_EQ(own, 2);
  }

  const auto played = play(resigning_settings(GetParam(), 1.0), "resign_out_" + GetParam(), &stats);
  ASSERT_GE(played.size(), 6u);
  EXPECT_EQ(stats.resign.resigned, 0);
  EXPECT_EQ(stats.resign.checks, static_cast<std::int64_t>(played.size()))
      << "every game wanted to resign once and was checked";
  std::int64_t wrong = 0;
  for (const GameRecord& r : played) {
    EXPECT_FALSE(r.resigned);
    wrong += r.result >= 0;  // player 0 did not lose
  }
  EXPECT_EQ(stats.resign.wrong, wrong);
}

INSTANTIATE_TEST_SUITE_P(BothGames, ResignationSelfPlay, ::testing::Values("mg", "dvonn"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace oppidum::selfplay
