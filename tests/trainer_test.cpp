// The optimisation step: the loss falls when training on a fixed set of games; the learning-rate
// schedule; the trainer's saved state (weights, optimiser, step) round-trips.
#include <cmath>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include <gtest/gtest.h>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/rollout_evaluator.h"
#include "model/checkpoint.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"
#include "trainer/replay_window.h"
#include "trainer/trainer.h"

namespace oppidum::trainer {
namespace {

model::NetConfig small_net() {
  model::NetConfig c;
  c.blocks = 1;
  c.filters = 16;
  c.policy_channels = 2;
  c.value_channels = 2;
  c.value_hidden = 16;
  return c;
}

TrainerSettings settings() {
  TrainerSettings s;
  s.learning_rate = 0.05;
  s.warmup_steps = 0;
  s.threads = 1;
  return s;
}

// A window filled with self-play games searched with random rollouts, so the visit targets and
// results carry a signal the network can learn.
ReplayWindow games_window(const std::string& game_name, const std::string& folder) {
  mcts::RolloutEvaluator rollouts(11);
  std::filesystem::remove_all(folder);
  selfplay::FolderReplayStore store(folder);
  selfplay::SelfPlaySettings s;
  s.game = game_name;
  s.threads = 1;
  s.concurrent_games = 8;
  s.simulations = 16;
  s.fast_simulations = 16;
  s.full_search_fraction = 1.0;
  s.max_plies = 100;
  s.games_per_chunk = 8;
  s.seed = 5;
  {
    selfplay::SelfPlay sp(rollouts, store, s, [] { return std::int64_t{0}; });
    sp.start();
    while (sp.stats().games < 8) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    sp.stop();
  }
  ReplayWindow window(game_by_name(game_name), {100000, 100000, 0.5});
  for (const auto& chunk : store.chunks())
    for (const auto& r : store.read_chunk(chunk).records) EXPECT_TRUE(window.add_game(r));
  return window;
}

TEST(Trainer, LossFallsOnAFixedSetOfGames) {
  const Game& game = game_by_name("mg");
  const ReplayWindow window = games_window("mg", ::testing::TempDir() + "trainer_games");
  ASSERT_GT(window.size(), 100);
  TrainerSettings fast = settings();
  fast.optimizer = "adamw";
  fast.learning_rate = 0.005;
  Trainer trainer(game, small_net(), fast, 1);
  mcts::Rng rng(2);
  TrainingBatch probe;
  window.sample(256, rng, probe);
  const StepStats before = trainer.evaluate(probe);
  TrainingBatch batch;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    window.sample(32, rng, batch);
    const StepStats s = trainer.step(batch);
    ASSERT_TRUE(std::isfinite(s.loss));
  }
  std::cerr << "200 steps: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  const StepStats after = trainer.evaluate(probe);
  std::cerr << "policy " << before.policy_loss << " -> " << after.policy_loss << ", value "
            << before.value_loss << " -> " << after.value_loss << "\n";
  EXPECT_EQ(trainer.steps(), 200);
  // A few hundred positions are easy to fit: both losses fall clearly. The policy loss cannot go
  // below the targets' own entropy, so compare what lies above it (the KL divergence).
  double entropy = 0, targets = 0;
  const int actions = game.num_actions();
  for (int i = 0; i < probe.n; ++i) {
    if (probe.policy_weight[static_cast<std::size_t>(i)] == 0) continue;
    ++targets;
    for (int a = 0; a < actions; ++a) {
      const double p = probe.policy[static_cast<std::size_t>(i * actions + a)];
      if (p > 0) entropy -= p * std::log(p);
    }
  }
  entropy /= targets;
  EXPECT_LT(after.policy_loss - entropy, 0.6 * (before.policy_loss - entropy))
      << "policy " << before.policy_loss << " -> " << after.policy_loss << ", target entropy "
      << entropy;
  EXPECT_LT(after.value_loss, 0.8 * before.value_loss) << "value " << before.value_loss << " -> "
                                                 << after.value_loss;
}

TEST(Trainer, LearningRateWarmsUpThenDecays) {
  TrainerSettings s = settings();
  s.learning_rate = 0.1;
  s.warmup_steps = 10;
  s.lr_decay_steps = 100;
  Trainer trainer(game_by_name("mg"), small_net(), s, 1);
  EXPECT_DOUBLE_EQ(trainer.learning_rate_at(0), 0.01);
  EXPECT_DOUBLE_EQ(trainer.learning_rate_at(9), 0.1);
  EXPECT_DOUBLE_EQ(trainer.learning_rate_at(10), 0.1);
  EXPECT_NEAR(trainer.learning_rate_at(60), 0.1 * (0.1 + 0.9 * 0.5), 1e-12);
  EXPECT_NEAR(trainer.learning_rate_at(110), 0.01, 1e-12);
  EXPECT_NEAR(trainer.learning_rate_at(1000), 0.01, 1e-12);
}

TEST(Trainer, SavedStateRoundTrips) {
  const Game& game = game_by_name("dvonn");
  const std::string prefix = ::testing::TempDir() + "trainer_state";
  Trainer a(game, small_net(), settings(), 1);
  mcts::Rng rng(3);
  TrainingBatch batch;
  ReplayWindow window(game, {1000, 1000, 0.5});
  selfplay::GameRecord r;
  r.game = "dvonn";
  auto state = game.initial_state();
  r.start = state->to_string();
  ActionList legal;
  for (int i = 0; i < 20; ++i) {
    state->legal_actions(legal);
    selfplay::MoveRecord m;
    m.action = static_cast<std::uint16_t>(legal[i % legal.size()]);
    m.visits = {{m.action, 5}};
    r.moves.push_back(m);
    state->apply(m.action);
  }
  ASSERT_TRUE(window.add_game(r));
  for (int i = 0; i < 3; ++i) {
    window.sample(16, rng, batch);
    a.step(batch);
  }
  a.save_state(prefix);
  Trainer b(game, small_net(), settings(), 99);
  EXPECT_FALSE(b.load_state(prefix + "-missing"));
  ASSERT_TRUE(b.load_state(prefix));
  EXPECT_EQ(b.steps(), 3);
  const model::Checkpoint ca = a.checkpoint(""), cb = b.checkpoint("");
  ASSERT_EQ(ca.tensors.size(), cb.tensors.size());
  for (std::size_t i = 0; i < ca.tensors.size(); ++i) EXPECT_EQ(ca.tensors[i].data, cb.tensors[i].data);
  // With the optimiser state restored, the next step is the same in both.
  window.sample(16, rng, batch);
  const StepStats sa = a.step(batch), sb = b.step(batch);
  EXPECT_DOUBLE_EQ(sa.loss, sb.loss);
  const model::Checkpoint na = a.checkpoint(""), nb = b.checkpoint("");
  for (std::size_t i = 0; i < na.tensors.size(); ++i) {
    ASSERT_EQ(na.tensors[i].data.size(), nb.tensors[i].data.size());
    for (std::size_t k = 0; k < na.tensors[i].data.size(); ++k)
      ASSERT_NEAR(na.tensors[i].data[k], nb.tensors[i].data[k], 1e-6) << na.tensors[i].name;
  }
}

}  // namespace
}  // namespace oppidum::trainer
