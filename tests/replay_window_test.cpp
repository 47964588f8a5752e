// The training window: value targets from the side to move's view, policy targets that follow the
// board under the random symmetry, and a window that grows with the data and drops the oldest.
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "selfplay/game_record.h"
#include "trainer/replay_window.h"
#include "tests/window_test_util.h"

namespace oppidum::trainer {
namespace {

// The first plies of a real game from the start, playing the first legal action each ply, then
// stopped and scored a draw (as self-play adjudicates at its ply limit); each move's visit target
// puts 3 visits on the move played and 1 on the last legal action.
selfplay::GameRecord first_action_game(const std::string& name, int plies) {
  const Game& game = game_by_name(name);
  auto state = game.initial_state();
  selfplay::GameRecord r;
  r.game = name;
  r.start = state->to_string();
  r.adjudicated = true;
  ActionList legal;
  for (int i = 0; i < plies; ++i) {
    state->legal_actions(legal);
    if (legal.empty()) break;
    selfplay::MoveRecord m;
    m.action = static_cast<std::uint16_t>(legal[0]);
    m.visits = {{static_cast<std::uint16_t>(legal[0]), 3}};
    if (legal.size() > 1) m.visits.push_back({static_cast<std::uint16_t>(legal[legal.size() - 1]), 1});
    m.policy_target = i % 2 == 0;
    r.moves.push_back(m);
    state->apply(legal[0]);
  }
  return r;
}

// A whole random game with a winner, as a record; visits only on even plies' moves.
selfplay::GameRecord decided_random_game(const std::string& name) {
  const Game& game = game_by_name(name);
  for (std::uint64_t seed = 1;; ++seed) {
    mcts::Rng rng(seed);
    auto state = game.initial_state();
    selfplay::GameRecord r;
    r.game = name;
    r.start = state->to_string();
    ActionList legal;
    for (state->legal_actions(legal); !legal.empty(); state->legal_actions(legal)) {
      selfplay::MoveRecord m;
      m.action = static_cast<std::uint16_t>(legal[rng.uniform_int(legal.size())]);
      m.visits = {{m.action, 2}};
      m.policy_target = r.moves.size() % 2 == 0;
      r.moves.push_back(m);
      state->apply(m.action);
    }
    r.result = static_cast<std::int8_t>(state->result(0));
    for (int p = 0; p < 2; ++p) r.score[p] = static_cast<std::int16_t>(state->score(p));
    if (r.result != 0) return r;
  }
}

class ReplayWindowTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReplayWindowTest, PolicyTargetsFollowTheSymmetry) {
  const Game& game = game_by_name(GetParam());
  ReplayWindow window(game, window_of(1000, 1000, 0.5));
  selfplay::GameRecord record = first_action_game(GetParam(), 1);
  ASSERT_TRUE(window.add_game(record));
  const auto start = game.parse_state(record.start);
  const Action a = record.moves[0].visits[0].action, b = record.moves[0].visits[1].action;
  mcts::Rng rng(3);
  TrainingBatch batch;
  window.sample(64, rng, batch);
  const int plane_size = game.input_shape().size();
  const int actions = game.num_actions();
  std::set<int> symmetries_seen;
  std::vector<float> expected(static_cast<std::size_t>(plane_size));
  for (int i = 0; i < batch.n; ++i) {
    const float* policy = batch.policy.data() + static_cast<std::size_t>(i) * actions;
    int sym = -1;
    for (int s = 0; s < game.num_symmetries(); ++s)
      if (policy[game.transform_action(s, a)] == 0.75f) sym = s;
    ASSERT_GE(sym, 0) << "the played move's target is not where any symmetry puts it";
    symmetries_seen.insert(sym);
    EXPECT_EQ(policy[game.transform_action(sym, b)], 0.25f);
    const auto t = start->transformed(sym);
    t->encode(expected.data());
    const std::vector<float> planes(batch.planes.begin() + static_cast<std::ptrdiff_t>(i) * plane_size,
                                    batch.planes.begin() + static_cast<std::ptrdiff_t>(i + 1) * plane_size);
    EXPECT_EQ(planes, expected) << "planes and policy target use the same symmetry";
    ActionList legal;
    t->legal_actions(legal);
    const float* mask = batch.legal_mask.data() + static_cast<std::size_t>(i) * actions;
    float mask_sum = 0;
    for (int k = 0; k < actions; ++k) mask_sum += mask[k];
    EXPECT_EQ(mask_sum, static_cast<float>(legal.size()));
    for (Action l : legal) EXPECT_EQ(mask[l], 1.0f);
    EXPECT_EQ(batch.policy_weight[static_cast<std::size_t>(i)], 1.0f);
  }
  EXPECT_EQ(static_cast<int>(symmetries_seen.size()), game.num_symmetries());
}

TEST_P(ReplayWindowTest, ValuesAreForTheSideToMove) {
  const Game& game = game_by_name(GetParam());
  ReplayWindow window(game, window_of(1000, 1000, 0.5));
  // A decided game: each position's value is the result for its side to move, so the winner's
  // positions are +1 and the loser's -1; the window holds exactly one sample per position.
  const selfplay::GameRecord record = decided_random_game(GetParam());
  std::string why;
  ASSERT_TRUE(window.add_game(record, &why)) << why;
  const auto states = selfplay::replay(record);
  double expected_sum = 0;
  for (std::size_t i = 0; i < record.moves.size(); ++i)
    expected_sum += states[i]->current_player() == 0 ? record.result : -record.result;
  mcts::Rng rng(4);
  TrainingBatch batch;
  window.sample(4000, rng, batch);
  int with_target = 0;
  std::set<float> values;
  double sum = 0;
  for (int i = 0; i < batch.n; ++i) {
    values.insert(batch.value[static_cast<std::size_t>(i)]);
    sum += batch.value[static_cast<std::size_t>(i)];
    with_target += batch.policy_weight[static_cast<std::size_t>(i)] > 0;
  }
  EXPECT_EQ(values, (std::set<float>{-1.0f, 1.0f}));
  // The mean sampled value estimates the mean over positions (4000 samples: within 0.1).
  EXPECT_NEAR(sum / batch.n, expected_sum / static_cast<double>(record.moves.size()), 0.1);
  EXPECT_GT(with_target, 1700);
  EXPECT_LT(with_target, 2300) << "half the positions have a policy target";
}

TEST_P(ReplayWindowTest, WindowGrowsWithTheDataAndDropsTheOldest) {
  const Game& game = game_by_name(GetParam());
  ReplayWindow window(game, window_of(10, 30, 0.5));
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(window.add_game(first_action_game(GetParam(), 5)));
  EXPECT_EQ(window.total_positions(), 100);
  EXPECT_EQ(window.window_size(), 30) << "10 + 0.5 * 90 = 55, capped at 30";
  EXPECT_EQ(window.size(), 30);
  ReplayWindow growing(game, window_of(10, 1000, 0.5));
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(growing.add_game(first_action_game(GetParam(), 5)));
  EXPECT_EQ(growing.window_size(), 20) << "10 + 0.5 * (30 - 10)";
  EXPECT_EQ(growing.size(), 20);
}

TEST_P(ReplayWindowTest, MixesTheSearchValueIntoTheTargetAndCanDropFastSearches) {
  const Game& game = game_by_name(GetParam());
  selfplay::GameRecord record = decided_random_game(GetParam());
  const auto states = selfplay::replay(record);
  // Root values that differ per position: +0.5 on even plies, -0.25 on odd ones.
  std::set<float> expected;  // the targets of the full-search (even) plies, w = 0.25
  for (std::size_t i = 0; i < record.moves.size(); ++i) {
    record.moves[i].root_value = i % 2 == 0 ? 0.5f : -0.25f;
    const double z = states[i]->current_player() == 0 ? record.result : -record.result;
    if (i % 2 == 0) expected.insert(static_cast<float>(0.75 * z + 0.25 * 0.5));
  }
  WindowSettings settings = window_of(1000, 1000, 0.5);
  settings.value_q_weight = 0.25;
  settings.fast_search_rows = "drop";
  ReplayWindow window(game, settings);
  std::string why;
  ASSERT_TRUE(window.add_game(record, &why)) << why;
  EXPECT_EQ(window.total_positions(), static_cast<std::int64_t>(record.moves.size()))
      << "dropped positions still count as self-play positions";
  EXPECT_EQ(window.size(), static_cast<std::int64_t>((record.moves.size() + 1) / 2))
      << "only the full-search positions are rows";
  mcts::Rng rng(5);
  TrainingBatch batch;
  window.sample(500, rng, batch);
  std::set<float> values;
  for (int i = 0; i < batch.n; ++i) {
    values.insert(batch.value[static_cast<std::size_t>(i)]);
    EXPECT_EQ(batch.policy_weight[static_cast<std::size_t>(i)], 1.0f) << "no value-only rows";
  }
  EXPECT_EQ(values, expected) << "0.75 * result + 0.25 * root value, full searches only";

  // Without dropping, the fast searches' positions stay as value-only rows with the mixed value.
  settings.fast_search_rows = "value";
  ReplayWindow all(game, settings);
  ASSERT_TRUE(all.add_game(record, &why)) << why;
  EXPECT_EQ(all.size(), static_cast<std::int64_t>(record.moves.size()));
  all.sample(500, rng, batch);
  for (int i = 0; i < batch.n; ++i) {
    const float v = batch.value[static_cast<std::size_t>(i)];
    if (batch.policy_weight[static_cast<std::size_t>(i)] == 0.0f) {
      EXPECT_TRUE(v == 0.75f - 0.0625f || v == -0.75f - 0.0625f) << v;
    }
  }
}

// Score targets: the final score margin for the side to move in a game the rules ended; none in
// an adjudicated game or a resigned one, whose scores are not final.
TEST_P(ReplayWindowTest, ScoreTargetsAreTheFinalMarginForTheSideToMove) {
  const Game& game = game_by_name(GetParam());
  const selfplay::GameRecord record = decided_random_game(GetParam());
  const int total = record.score[0] + record.score[1];
  ASSERT_GT(total, 0);
  const float margin0 =
      static_cast<float>(record.score[0] - record.score[1]) / static_cast<float>(total);
  ReplayWindow window(game, window_of(1000, 1000, 0.5));
  std::string why;
  ASSERT_TRUE(window.add_game(record, &why)) << why;
  mcts::Rng rng(6);
  TrainingBatch batch;
  window.sample(400, rng, batch);
  std::set<float> scores;
  for (int i = 0; i < batch.n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    ASSERT_EQ(batch.score_weight[k], 1.0f);
    // value = the result for the side to move, so it says who is to move.
    const bool player0 = batch.value[k] == static_cast<float>(record.result);
    EXPECT_EQ(batch.score[k], player0 ? margin0 : -margin0);
    scores.insert(batch.score[k]);
  }
  EXPECT_EQ(scores.size(), 2u) << "both sides' positions were sampled";
  // The winner's margin is positive.
  EXPECT_GT(record.result * margin0, 0.0f);

  ReplayWindow adjudicated(game, window_of(1000, 1000, 0.5));
  ASSERT_TRUE(adjudicated.add_game(first_action_game(GetParam(), 6), &why)) << why;
  adjudicated.sample(50, rng, batch);
  for (float w : batch.score_weight)
    EXPECT_EQ(w, 0.0f) << "an adjudicated game has no score target";

  selfplay::GameRecord resigned = record;
  resigned.moves.pop_back();
  auto last = game.parse_state(resigned.start);
  for (const auto& m : resigned.moves) last->apply(m.action);
  for (int p = 0; p < 2; ++p) resigned.score[p] = static_cast<std::int16_t>(last->score(p));
  resigned.resigned = true;
  ReplayWindow resigns(game, window_of(1000, 1000, 0.5));
  ASSERT_TRUE(resigns.add_game(resigned, &why)) << why;
  resigns.sample(50, rng, batch);
  for (float w : batch.score_weight) EXPECT_EQ(w, 0.0f) << "a resigned game has no score target";
}

TEST_P(ReplayWindowTest, RefusesRecordsThatDoNotReplay) {
  const Game& game = game_by_name(GetParam());
  ReplayWindow window(game, window_of(10, 30, 0.5));
  selfplay::GameRecord bad = first_action_game(GetParam(), 3);
  auto second = game.parse_state(bad.start);
  second->apply(bad.moves[0].action);
  Action illegal = 0;
  while (second->is_legal(illegal)) ++illegal;
  bad.moves[1].action = static_cast<std::uint16_t>(illegal);
  std::string why;
  EXPECT_FALSE(window.add_game(bad, &why));
  EXPECT_NE(why.find("illegal"), std::string::npos) << why;
  selfplay::GameRecord other = first_action_game(GetParam() == "mg" ? "dvonn" : "mg", 3);
  EXPECT_FALSE(window.add_game(other, &why));
  // A forged game name is said as one printable line, cut short (it went into log.txt raw: lines
  // of its own, terminal escapes, 60 KB).
  other.game = "\n[2026-12-07 20:00:00] stopped\n\x1b[2J" + std::string(60000, 'A');
  EXPECT_FALSE(window.add_game(other, &why));
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(why.find('\x1b'), std::string::npos) << why;
  EXPECT_LT(why.size(), 200u);
  EXPECT_EQ(window.size(), 0);
}

bool same_batch(const TrainingBatch& a, const TrainingBatch& b) {
  return a.n == b.n && a.planes == b.planes && a.policy == b.policy &&
         a.legal_mask == b.legal_mask && a.policy_weight == b.policy_weight &&
         a.value == b.value && a.score == b.score && a.score_weight == b.score_weight;
}

// Drawn one ahead, the batches are those drawn in turn with the same seed (the draws' order is
// the same), and each lasts until the next call while the one after it is drawn.
TEST_P(ReplayWindowTest, PrefetchedBatchesAreTheSerialDraws) {
  const Game& game = game_by_name(GetParam());
  ReplayWindow window(game, window_of(1000, 1000, 0.5));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(window.add_game(decided_random_game(GetParam())));
  mcts::Rng rng(77);
  std::vector<TrainingBatch> serial(6);
  for (TrainingBatch& b : serial) window.sample(16, rng, b);
  BatchPrefetcher prefetcher(window, 16, 77);
  for (std::size_t k = 0; k < serial.size(); ++k) {
    const TrainingBatch& b = prefetcher.next();
    const TrainingBatch copy = b;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the next draw runs meanwhile
    EXPECT_TRUE(same_batch(b, copy)) << "batch " << k << " changed while the next was drawn";
    EXPECT_TRUE(same_batch(b, serial[k])) << "batch " << k;
  }
}

// Games come into the window while batches are drawn on the prefetcher's thread (ThreadSanitizer
// runs this in scripts/test.sh); every batch is whole, and an empty window's error reaches next().
TEST_P(ReplayWindowTest, PrefetchingWhileGamesComeIn) {
  const Game& game = game_by_name(GetParam());
  ReplayWindow window(game, window_of(200, 400, 0.5));
  ASSERT_TRUE(window.add_game(decided_random_game(GetParam())));
  {
    BatchPrefetcher prefetcher(window, 64, 5);
    for (int k = 0; k < 50; ++k) {
      const TrainingBatch& b = prefetcher.next();
      ASSERT_EQ(b.n, 64);
      ASSERT_EQ(b.planes.size(), 64u * static_cast<std::size_t>(game.input_shape().size()));
      for (int i = 0; i < b.n; ++i) {
        float legal = 0;
        for (int a = 0; a < game.num_actions(); ++a)
          legal += b.legal_mask[static_cast<std::size_t>(i * game.num_actions() + a)];
        EXPECT_GT(legal, 0) << "every sampled position has a legal move";
      }
      ASSERT_TRUE(window.add_game(first_action_game(GetParam(), 6)));
    }
  }
  ReplayWindow empty(game, window_of(10, 10, 0.5));
  BatchPrefetcher none(empty, 8, 1);
  EXPECT_THROW(none.next(), std::logic_error);
}

INSTANTIATE_TEST_SUITE_P(BothGames, ReplayWindowTest, ::testing::Values("mg", "dvonn"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace oppidum::trainer
