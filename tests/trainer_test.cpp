// The optimisation step: the loss falls when training on a fixed set of games; the learning-rate
// schedule; the trainer's saved state (weights, optimiser, step) round-trips; training stays finite
// (a NaN loss stops before any weight changes; damaged or non-finite optimiser state starts fresh,
// saying so in one line).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "games/game.h"
#include "mcts/evaluator.h"
#include "mcts/rollout_evaluator.h"
#include "model/checkpoint.h"
#include "model/inference_server.h"
#include "model/torch_net.h"
#include "selfplay/replay_store.h"
#include "selfplay/selfplay.h"
#include "trainer/gate.h"
#include "trainer/intake.h"
#include "trainer/run_folder.h"
#include "trainer/settings.h"
#include "trainer/replay_window.h"
#include "tests/window_test_util.h"
#include "trainer/trainer.h"
#include "store/redis_url.h"
#include "store/run_channel.h"
#include "tests/redis_server.h"
#include "util/file_io.h"

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
std::unique_ptr<ReplayWindow> games_window(const std::string& game_name,
                                           const std::string& folder) {
  mcts::RolloutEvaluator rollouts(11);
  std::filesystem::remove_all(folder);
  selfplay::FolderReplayStore store(folder, selfplay::FolderReplayStore::Mode::kOwner);
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
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (sp.stats().games < 8 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    sp.stop();
    EXPECT_GE(sp.stats().games, 8) << "self-play made too few games in two minutes";
  }
  // The first 8 games only: how many more finish before stop() takes effect depends on timing
  // (with fast rules, up to 60 more), and the loss test below is tuned for 8 games' positions.
  auto window = std::make_unique<ReplayWindow>(game_by_name(game_name),
                                               window_of(100000, 100000, 0.5));
  int games = 0;
  for (const auto& chunk : store.chunks())
    for (const auto& r : selfplay::read_game_file(chunk).records) {
      if (games++ < 8) {
        EXPECT_TRUE(window->add_game(r));
      }
    }
  return window;
}

TEST(Trainer, LossFallsOnAFixedSetOfGames) {
  const Game& game = game_by_name("mg");
  const auto owned = games_window("mg", ::testing::TempDir() + "trainer_games");
  const ReplayWindow& window = *owned;
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

// With a score head the score-margin loss is part of the optimised total and falls like the
// others; without one it is 0.
TEST(Trainer, ScoreHeadLearnsTheFinalMargin) {
  const Game& game = game_by_name("mg");
  const auto owned = games_window("mg", ::testing::TempDir() + "trainer_score_games");
  const ReplayWindow& window = *owned;
  mcts::Rng rng(2);
  TrainingBatch probe;
  window.sample(256, rng, probe);
  float with_score = 0;
  for (float w : probe.score_weight) with_score += w;
  ASSERT_GT(with_score, 0) << "the games ended by the rules carry score targets";
  TrainerSettings fast = settings();
  fast.optimizer = "adamw";
  fast.learning_rate = 0.005;
  fast.score_loss_weight = 2.0;
  EXPECT_EQ(Trainer(game, small_net(), fast, 1).evaluate(probe).score_loss, 0.0);
  model::NetConfig net = small_net();
  net.score_head = true;
  Trainer trainer(game, net, fast, 1);
  const StepStats before = trainer.evaluate(probe);
  EXPECT_GT(before.score_loss, 0.0);
  EXPECT_NEAR(before.loss, before.policy_loss + before.value_loss + 2.0 * before.score_loss, 1e-4);
  TrainingBatch batch;
  for (int i = 0; i < 200; ++i) {
    window.sample(32, rng, batch);
    ASSERT_TRUE(std::isfinite(trainer.step(batch).loss));
  }
  const StepStats after = trainer.evaluate(probe);
  EXPECT_LT(after.score_loss, 0.8 * before.score_loss)
      << "score " << before.score_loss << " -> " << after.score_loss;
  EXPECT_TRUE(trainer.checkpoint("").config.score_head);
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

// A small window of one DVONN game, and a trainer that took a few steps on it.
struct SmallSetup {
  const Game& game = game_by_name("dvonn");
  ReplayWindow window{game, window_of(1000, 1000, 0.5)};
  mcts::Rng rng{3};
  TrainingBatch batch;

  SmallSetup() {
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
    r.adjudicated = true;  // not over after 20 placements
    std::string why;
    EXPECT_TRUE(window.add_game(r, &why)) << why;
  }
  void train(Trainer& t, int steps) {
    for (int i = 0; i < steps; ++i) {
      window.sample(16, rng, batch);
      t.step(batch);
    }
  }
  // The state of a trainer of `ts` (seed 1) trained 3 steps, saved at TempDir + `name`: returns
  // that prefix (its .ckpt and .optim).
  std::string saved_state(const std::string& name, const TrainerSettings& ts = settings()) {
    const std::string prefix = ::testing::TempDir() + name;
    Trainer t(game, small_net(), ts, 1);
    train(t, 3);
    t.save_state(prefix);
    return prefix;
  }
};

// One step on the same batch from the same initial weights with `optimizer`, with decay on every
// parameter, decay on weights only, and no decay at all: weights-only matches the first on the
// convolution and linear weights (rank >= 2) and the last on everything else.
void check_weight_decay_on(const std::string& optimizer) {
  SmallSetup s;
  s.window.sample(16, s.rng, s.batch);
  TrainerSettings all = settings();
  all.optimizer = optimizer;
  all.weight_decay = 0.5;
  TrainerSettings weights_only = all;
  weights_only.weight_decay_on = "weights";
  TrainerSettings none = all;
  none.weight_decay = 0.0;
  std::vector<model::Checkpoint> after;
  for (const TrainerSettings& t : {all, weights_only, none}) {
    Trainer trainer(s.game, small_net(), t, 1);
    trainer.step(s.batch);
    after.push_back(trainer.checkpoint(""));
  }
  int spared = 0;
  for (std::size_t i = 0; i < after[0].tensors.size(); ++i) {
    const model::NamedTensor& w = after[1].tensors[i];
    if (w.shape.size() >= 2) {
      EXPECT_EQ(w.data, after[0].tensors[i].data) << w.name << " is decayed as before";
    } else {
      EXPECT_EQ(w.data, after[2].tensors[i].data) << w.name << " is not decayed";
      spared += w.data != after[0].tensors[i].data;
    }
  }
  EXPECT_GT(spared, 0) << "some batch-norm scale differs from its decayed value";
}

TEST(Trainer, WeightDecayCanSpareBatchNormAndBiases) {
  // Both optimisers: LibTorch 2.10 and later merge a group's options with the optimiser's
  // defaults, which would give SGD's group without decay the decay.
  for (const std::string optimizer : {"sgd", "adamw"}) {
    SCOPED_TRACE(optimizer);
    check_weight_decay_on(optimizer);
  }
}

TEST(Trainer, SavedStateRoundTrips) {
  SmallSetup s;
  const std::string prefix = ::testing::TempDir() + "trainer_state";
  Trainer a(s.game, small_net(), settings(), 1);
  s.train(a, 3);
  a.save_state(prefix);
  Trainer b(s.game, small_net(), settings(), 99);
  EXPECT_FALSE(b.load_state(prefix + "-missing").found);
  const Trainer::LoadResult loaded = b.load_state(prefix);
  ASSERT_TRUE(loaded.found);
  EXPECT_EQ(loaded.warning, "");
  EXPECT_EQ(b.steps(), 3);
  const model::Checkpoint ca = a.checkpoint(""), cb = b.checkpoint("");
  ASSERT_EQ(ca.tensors.size(), cb.tensors.size());
  for (std::size_t i = 0; i < ca.tensors.size(); ++i) EXPECT_EQ(ca.tensors[i].data, cb.tensors[i].data);
  // With the optimiser state restored, the next step is the same in both.
  s.window.sample(16, s.rng, s.batch);
  const StepStats sa = a.step(s.batch), sb = b.step(s.batch);
  EXPECT_DOUBLE_EQ(sa.loss, sb.loss);
  const model::Checkpoint na = a.checkpoint(""), nb = b.checkpoint("");
  for (std::size_t i = 0; i < na.tensors.size(); ++i) {
    ASSERT_EQ(na.tensors[i].data.size(), nb.tensors[i].data.size());
    for (std::size_t k = 0; k < na.tensors[i].data.size(); ++k)
      ASSERT_NEAR(na.tensors[i].data[k], nb.tensors[i].data[k], 1e-6) << na.tensors[i].name;
  }
}

TEST(Trainer, ANonFiniteLossStopsBeforeAnyWeightChanges) {
  SmallSetup s;
  Trainer t(s.game, small_net(), settings(), 1);
  s.train(t, 2);
  const model::Checkpoint before = t.checkpoint("");
  s.window.sample(16, s.rng, s.batch);
  s.batch.value[5] = std::numeric_limits<float>::quiet_NaN();  // a NaN loss, finite forward pass
  try {
    t.step(s.batch);
    FAIL() << "a NaN loss was trained on";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("training diverged at step 3"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(t.steps(), 2);
  // The forward pass updated batch-norm running statistics; no trained weight moved.
  const model::Checkpoint after = t.checkpoint("");
  for (std::size_t i = 0; i < before.tensors.size(); ++i)
    if (before.tensors[i].name.find("running_") == std::string::npos) {
      EXPECT_EQ(before.tensors[i].data, after.tensors[i].data) << before.tensors[i].name;
    }
}

TEST(Trainer, ADamagedOptimiserFileStartsFreshInOneLine) {
  SmallSetup s;
  const std::string prefix = s.saved_state("trainer_damaged_optim");
  std::string bytes = util::read_regular_file(prefix + ".optim");
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
  util::write_file_atomically(prefix + ".optim", bytes);
  Trainer b(s.game, small_net(), settings(), 9);
  const Trainer::LoadResult loaded = b.load_state(prefix);
  ASSERT_TRUE(loaded.found);
  EXPECT_EQ(b.steps(), 3);
  EXPECT_NE(loaded.warning.find("damaged"), std::string::npos) << loaded.warning;
  EXPECT_EQ(loaded.warning.find('\n'), std::string::npos) << loaded.warning;
  // A framed file that holds no optimiser state, and one of the first version (a LibTorch
  // archive): one line each.
  const char magic[8] = {'O', 'P', 'P', 'O', 'P', 'T', 'I', 'M'};
  util::write_file_atomically(prefix + ".optim", util::frame(magic, 2, "not a state"));
  const Trainer::LoadResult garbage = b.load_state(prefix);
  EXPECT_NE(garbage.warning.find("it names no optimiser"), std::string::npos) << garbage.warning;
  EXPECT_EQ(garbage.warning.find('\n'), std::string::npos) << garbage.warning;
  util::write_file_atomically(prefix + ".optim", util::frame(magic, 1, "an archive"));
  const Trainer::LoadResult old = b.load_state(prefix);
  EXPECT_NE(old.warning.find("format version 1, this program reads version 2"), std::string::npos)
      << old.warning;
}

const char kOptimMagic[8] = {'O', 'P', 'P', 'O', 'P', 'T', 'I', 'M'};

// The payload of the optimiser state at `prefix`, and the same written back with a valid frame
// (as a broken or hostile program could).
std::string optim_payload(const std::string& prefix) {
  return std::string(
      util::unframe(util::read_regular_file(prefix + ".optim"), kOptimMagic, 2, "optim"));
}
void write_optim_payload(const std::string& prefix, const std::string& payload) {
  util::write_file_atomically(prefix + ".optim", util::frame(kOptimMagic, 2, payload));
}

// Where each SGD momentum buffer's values start in a payload (docs/FORMATS.md, trainer.optim), and
// how many there are.
std::vector<std::pair<std::size_t, std::size_t>> momentum_places(const std::string& payload) {
  const auto le = [&](std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(payload.at(at + i))) << (8 * i);
    return v;
  };
  std::vector<std::pair<std::size_t, std::size_t>> out;
  EXPECT_EQ(le(0, 4), 1u) << "sgd";
  const std::uint64_t params = le(12, 4);
  std::size_t at = 16;
  for (std::uint64_t p = 0; p < params; ++p) {
    const std::size_t n = le(at, 8);
    const bool state = payload.at(at + 8) != 0;
    at += 9;
    if (state) out.emplace_back(at, n), at += 4 * n;
  }
  EXPECT_EQ(at, payload.size());
  return out;
}

// Optimiser state holding NaN (written by a broken or foreign program, with a valid checksum) is
// not loaded: it would turn every later step into NaN.
TEST(Trainer, NonFiniteOptimiserStateIsNotLoaded) {
  SmallSetup s;
  const std::string prefix = s.saved_state("trainer_nan_optim");
  std::string payload = optim_payload(prefix);
  const auto places = momentum_places(payload);
  ASSERT_FALSE(places.empty());
  const float nan = std::nanf("");
  std::memcpy(&payload[places.back().first + 4 * (places.back().second - 1)], &nan, 4);
  write_optim_payload(prefix, payload);

  Trainer b(s.game, small_net(), settings(), 9);
  const Trainer::LoadResult loaded = b.load_state(prefix);
  EXPECT_NE(loaded.warning.find("a momentum buffer holds NaN or infinity"), std::string::npos)
      << loaded.warning;
  s.train(b, 3);
  s.window.sample(16, s.rng, s.batch);
  EXPECT_TRUE(std::isfinite(b.evaluate(s.batch).loss));
}

// An AdamW second moment is a mean of squares: a file with one below 0 (finite, under a valid
// frame) is refused, not trained on into NaN (found by a hostile probe).
TEST(Trainer, ANegativeSecondMomentIsRefused) {
  SmallSetup s;
  TrainerSettings ts = settings();
  ts.optimizer = "adamw";
  const std::string prefix = s.saved_state("trainer_negative_moment", ts);
  std::string payload = optim_payload(prefix);
  // The first parameter's state: size (8 bytes at 16), flags (1), step count (8), exp_avg (4n),
  // then exp_avg_sq.
  std::uint64_t n = 0;
  std::memcpy(&n, &payload[16], 8);
  ASSERT_NE(payload[24], 0) << "the first parameter has state";
  const float negative = -1.0f;
  std::memcpy(&payload[16 + 8 + 1 + 8 + 4 * n], &negative, 4);
  write_optim_payload(prefix, payload);
  Trainer b(s.game, small_net(), ts, 9);
  EXPECT_NE(b.load_state(prefix).warning.find("an AdamW second moment holds a value below 0"),
            std::string::npos);
  s.window.sample(16, s.rng, s.batch);
  EXPECT_TRUE(std::isfinite(b.step(s.batch).loss));
}

// A finite but absurd optimiser state under a valid frame (1e30 in every momentum) loads, and
// training diverges at once: the divergence names the file it loaded and the way out (before, every
// resume failed alike and nothing named trainer.optim).
TEST(Trainer, ADivergenceAfterLoadedOptimiserStateNamesTheFile) {
  SmallSetup s;
  const std::string prefix = s.saved_state("trainer_absurd_optim");
  std::string payload = optim_payload(prefix);
  const float absurd = 1e30f;
  for (const auto& [at, n] : momentum_places(payload))
    for (std::size_t i = 0; i < n; ++i) std::memcpy(&payload[at + 4 * i], &absurd, 4);
  write_optim_payload(prefix, payload);
  Trainer b(s.game, small_net(), settings(), 9);
  EXPECT_EQ(b.load_state(prefix).warning, "");
  try {
    for (int i = 0; i < 10; ++i) {
      s.window.sample(16, s.rng, s.batch);
      b.step(s.batch);
      b.checkpoint("");
    }
    FAIL() << "no divergence";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("after this session loaded the optimiser state of " +
                                         prefix + ".optim"),
              std::string::npos)
        << e.what();
  }
  // A fresh optimiser says nothing of a file.
  Trainer c(s.game, small_net(), settings(), 9);
  s.window.sample(16, s.rng, s.batch);
  s.batch.value[0] = std::numeric_limits<float>::quiet_NaN();
  try {
    c.step(s.batch);
    FAIL() << "a NaN loss was trained on";
  } catch (const NonFiniteError& e) {
    EXPECT_EQ(std::string(e.what()).find("optimiser state of"), std::string::npos) << e.what();
  }
}

// Weights that are finite but give a loss that is not (a crafted or damaged trainer.ckpt whose
// CRC is right) diverge at the first step after the load: the message names the file and says the
// learning rate is not the cause (it advised lowering it, which changes nothing before a step).
TEST(Trainer, ALossNotFiniteBeforeAnyStepBlamesTheLoadedWeights) {
  SmallSetup s;
  const std::string prefix = s.saved_state("trainer_absurd_weights");
  model::Checkpoint c = model::load_checkpoint(prefix + ".ckpt");
  for (model::NamedTensor& t : c.tensors)
    if (t.name == "policy.fc.weight" || t.name == "value.fc2.weight")
      for (float& x : t.data) x = 3e38f;
  model::save_checkpoint(c, prefix + ".ckpt");
  Trainer b(s.game, small_net(), settings(), 9);
  b.load_state(prefix);
  s.window.sample(16, s.rng, s.batch);
  try {
    b.step(s.batch);
    FAIL() << "a loss that is not finite was trained on";
  } catch (const NonFiniteError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the weights of " + prefix + ".ckpt"), std::string::npos) << what;
    EXPECT_NE(what.find("the learning rate is not the cause"), std::string::npos) << what;
    EXPECT_NE(what.find("`train --recover`"), std::string::npos) << what;
    EXPECT_EQ(what.find("lower training.learning_rate"), std::string::npos) << what;
  }
  // After a step of its own, a loss that is not finite may be the learning rate's.
  Trainer d(s.game, small_net(), settings(), 9);
  d.load_state(s.saved_state("trainer_sane_weights"));
  s.train(d, 1);
  s.window.sample(16, s.rng, s.batch);
  s.batch.value[0] = std::numeric_limits<float>::quiet_NaN();
  try {
    d.step(s.batch);
    FAIL() << "a NaN loss was trained on";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("lower training.learning_rate"), std::string::npos)
        << e.what();
  }
}

// trainer.optim is our own layout, every size in it checked against the network before anything
// is read (version 1 was a LibTorch archive, whose loader compiles TorchScript source from the
// file: a crafted file crashed it). Whatever a file holds under a valid frame (cut anywhere, any
// byte changed), loading it either restores a state of the network's shapes or starts fresh with
// one line that names the file: never a crash, a failed step or a read past the bytes.
TEST(Trainer, ACraftedOptimiserFileNeverCrashesOrFailsAStep) {
  for (const std::string optimizer : {"sgd", "adamw"}) {
    SCOPED_TRACE(optimizer);
    SmallSetup s;
    TrainerSettings ts = settings();
    ts.optimizer = optimizer;
    const std::string prefix = s.saved_state("trainer_crafted_optim_" + optimizer, ts);
    const std::string good = optim_payload(prefix);
    // Each with whether it must be refused: a cut file, one with bytes after the state, and any
    // change to the optimiser's name, the step or the parameter count (the first 16 bytes).
    std::vector<std::pair<std::string, bool>> crafted;
    for (std::size_t cut = 0; cut < good.size(); cut += 1 + cut / 4)
      crafted.emplace_back(good.substr(0, cut), true);
    crafted.emplace_back(good + "x", true);
    for (std::size_t at = 0; at < good.size(); at += 1 + at / 8)
      for (const unsigned char value : {0x00, 0x01, 0x03, 0x80, 0xff}) {
        std::string bytes = good;
        bytes[at] = static_cast<char>(value);
        if (bytes != good) crafted.emplace_back(bytes, at < 16);
      }
    for (const auto& [bytes, refused] : crafted) {
      write_optim_payload(prefix, bytes);
      Trainer b(s.game, small_net(), ts, 9);
      const Trainer::LoadResult loaded = b.load_state(prefix);
      ASSERT_TRUE(loaded.found);
      EXPECT_EQ(b.steps(), 3);
      if (refused) {
        EXPECT_FALSE(loaded.warning.empty()) << bytes.size() << " bytes";
      }
      if (!loaded.warning.empty()) {
        EXPECT_NE(loaded.warning.find("starting with fresh optimiser state: " + prefix + ".optim"),
                  std::string::npos)
            << loaded.warning;
        EXPECT_EQ(loaded.warning.find('\n'), std::string::npos) << loaded.warning;
      }
      s.window.sample(16, s.rng, s.batch);
      ASSERT_NO_THROW(b.step(s.batch)) << "after " << loaded.warning;
    }
  }
  // The step is checked against the weights' step.
  SmallSetup s;
  const std::string prefix = s.saved_state("trainer_step_optim");
  std::string payload = optim_payload(prefix);
  payload[4] = 7;
  write_optim_payload(prefix, payload);
  Trainer b(s.game, small_net(), settings(), 9);
  EXPECT_NE(b.load_state(prefix).warning.find("it is from step 7, the weights from step 3"),
            std::string::npos);
}

// Optimiser state from a network of another shape at the same step (here 8 filters instead of 16:
// as many parameters, other sizes) has a valid frame, step and values; it is refused when loaded,
// costing only the momentum, never a failed step.
TEST(Trainer, OptimiserStateOfAnotherNetworkShapeStartsFresh) {
  for (const std::string optimizer : {"sgd", "adamw"}) {
    SCOPED_TRACE(optimizer);
    SmallSetup s;
    TrainerSettings ts = settings();
    ts.optimizer = optimizer;
    const std::string prefix = s.saved_state("trainer_shape_optim_" + optimizer, ts);
    const std::string other = ::testing::TempDir() + "trainer_shape_optim_other_" + optimizer;
    model::NetConfig narrow = small_net();
    narrow.filters = 8;
    Trainer n(s.game, narrow, ts, 1);
    s.train(n, 3);
    n.save_state(other);
    std::filesystem::copy_file(other + ".optim", prefix + ".optim",
                               std::filesystem::copy_options::overwrite_existing);

    Trainer b(s.game, small_net(), ts, 9);
    const Trainer::LoadResult loaded = b.load_state(prefix);
    ASSERT_TRUE(loaded.found);
    EXPECT_EQ(b.steps(), 3);
    EXPECT_NE(loaded.warning.find("starting with fresh optimiser state"), std::string::npos)
        << loaded.warning;
    EXPECT_NE(loaded.warning.find(prefix + ".optim"), std::string::npos)
        << "the warning names the file: " << loaded.warning;
    EXPECT_NE(loaded.warning.find("shape"), std::string::npos) << loaded.warning;
    EXPECT_EQ(loaded.warning.find('\n'), std::string::npos) << loaded.warning;
    s.window.sample(16, s.rng, s.batch);
    EXPECT_NO_THROW(b.step(s.batch)) << "the fresh optimiser steps";
    EXPECT_EQ(b.steps(), 4);
  }
}

// 5 plies of a real Murus Gallicus game, then adjudicated: a record of 5 positions.
selfplay::GameRecord five_ply_record() {
  const Game& game = game_by_name("mg");
  selfplay::GameRecord r;
  r.game = "mg";
  auto state = game.initial_state();
  r.start = state->to_string();
  r.adjudicated = true;
  ActionList legal;
  for (int i = 0; i < 5; ++i) {
    state->legal_actions(legal);
    selfplay::MoveRecord m;
    m.action = static_cast<std::uint16_t>(legal[0]);
    m.visits = {{m.action, 1}};
    r.moves.push_back(m);
    state->apply(m.action);
  }
  return r;
}

// While it lives, no file can be opened (the limit of descriptors lowered to those open).
class NoMoreFiles {
 public:
  NoMoreFiles() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    const int lowest_free = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::close(lowest_free);
    rlimit limited = saved_;
    limited.rlim_cur = static_cast<rlim_t>(lowest_free);
    EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &limited), 0);
  }
  ~NoMoreFiles() { ::setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

// A file that is there but cannot be read just now (no descriptor left; no permission, an I/O
// error) is not a damaged one: a resume stops, naming the error, and neither rebuilds state.yaml
// from the log (`--recover` replaced the intact file) nor takes the trainer's checkpoint for
// damaged (a recovery went back to an older network).
TEST(RunFolderFiles, AFileThatCannotBeReadNowIsNotTakenForDamaged) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "run_folder_unreadable";
  std::filesystem::remove_all(dir);
  RunFolder folder(dir);
  RunState state;
  state.sessions = 3;
  state.run_id = std::string(32, 'a');
  folder.save_state(state);
  const std::string saved = util::read_regular_file(folder.paths().state().string());
  SmallSetup s;
  const std::string prefix = s.saved_state("trainer_unreadable");
  Trainer b(s.game, small_net(), settings(), 9);
  {
    const NoMoreFiles no_more_files;
    std::string rebuilt;
    try {
      folder.load_state(true, &rebuilt);
      ADD_FAILURE() << "read with no descriptor left";
    } catch (const RunFolderError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("Too many open files"), std::string::npos) << what;
      EXPECT_NE(what.find("nothing of the run was changed"), std::string::npos) << what;
      EXPECT_EQ(what.find("damaged"), std::string::npos) << what;
    }
    EXPECT_EQ(rebuilt, "");
    try {
      b.load_state(prefix);
      ADD_FAILURE() << "loaded with no descriptor left";
    } catch (const model::CheckpointError& e) {
      ADD_FAILURE() << "taken for a damaged checkpoint: " << e.what();
    } catch (const util::FileAccessError& e) {
      EXPECT_NE(std::string(e.what()).find("Too many open files"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(util::read_regular_file(folder.paths().state().string()), saved);
  EXPECT_EQ(folder.load_state(false).sessions, 3u);
  EXPECT_TRUE(b.load_state(prefix).found);
  std::filesystem::remove_all(dir);
}

// A run folder at `dir` with 10 chunks of 2 games of 5 positions each.
void ten_chunks(const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  RunFolder folder(dir);
  selfplay::FolderReplayStore store((dir / "games").string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  const selfplay::GameRecord r = five_ply_record();
  for (int c = 0; c < 10; ++c) store.append({r, r});
}

// The newest train row of a step counts: a step written again (a session that trained it once
// more) drops the older row at the next resume, and so do rows past the trainer's step; a table
// whose steps only grow loses nothing (checked without holding anything a row).
TEST(RunFolderTables, ARepeatedStepKeepsItsNewestRow) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "run_folder_repeated_steps";
  std::filesystem::remove_all(dir);
  const auto steps_and_losses = [&] {
    std::vector<std::pair<double, double>> out;
    for_each_metrics_row(dir / "metrics.csv", nullptr, true, [&](const MetricsRow& row) {
      if (row.kind == "train") out.emplace_back(row.step, row.policy_loss);
    });
    return out;
  };
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    for (int step = 1; step <= 5; ++step)
      folder.append_train({1.0 * step, step, 0, 0, 0, 1.0, 0, 0});
    EXPECT_TRUE(folder.drop_rows_after(5, 10).empty()) << "growing steps: nothing to drop";
    folder.append_train({6.0, 3, 0, 0, 0, 2.0, 0, 0});  // step 3 again, newer
    folder.append_train({7.0, 4, 0, 0, 0, 2.0, 0, 0});  // and 4
    folder.append_train({8.0, 7, 0, 0, 0, 2.0, 0, 0});  // past the trainer's step
  }
  RunFolder folder(dir);
  folder.open_tables(false, "");
  const std::vector<std::string> repairs = folder.drop_rows_after(5, 10);
  ASSERT_EQ(repairs.size(), 1u);
  EXPECT_NE(repairs[0].find("dropped 3 row(s)"), std::string::npos) << repairs[0];
  const std::vector<std::pair<double, double>> expected = {{1, 1.0}, {2, 1.0}, {5, 1.0},
                                                           {3, 2.0}, {4, 2.0}};
  EXPECT_EQ(steps_and_losses(), expected);
  std::filesystem::remove_all(dir);
}

// A session killed (no stop row) whose rows of steps lost are dropped at the resume keeps its
// time: a stop row at its last clock ends it (the page counts a session's time to its last row,
// and the killed session counted 0 s); a session that stopped cleanly, or lost no row, gets none.
TEST(RunFolderTables, AKilledSessionKeepsItsTimeWhenItsRowsAreDropped) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "run_folder_killed_session";
  std::filesystem::remove_all(dir);
  const auto rows = [&] {
    std::vector<std::tuple<std::string, double, double>> out;
    for_each_metrics_row(dir / "metrics.csv", nullptr, true, [&](const MetricsRow& row) {
      out.emplace_back(row.kind, row.seconds, row.step);
    });
    return out;
  };
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    folder.append_session({true, 0.0, 0, 0, 0, 0});
    for (int step = 10; step <= 30; step += 10)
      folder.append_train({0.2 * step, step, 0, 0, 0, 1.0, 0, 0});
  }  // killed: no stop row
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    const std::vector<std::string> repairs = folder.drop_rows_after(10, 10);
    ASSERT_EQ(repairs.size(), 2u);
    EXPECT_NE(repairs[1].find("ends with one at its last clock (6.0 s)"), std::string::npos)
        << repairs[1];
    using Row = std::tuple<std::string, double, double>;
    EXPECT_EQ(rows(),
              (std::vector<Row>{{"start", 0.0, 0}, {"train", 2.0, 10}, {"stop", 6.0, 10}}));
    for_each_metrics_row(dir / "metrics.csv", nullptr, true, [](const MetricsRow& row) {
      if (row.kind == "stop") {  // not known: no totals of 0
        EXPECT_TRUE(std::isnan(row.positions) && std::isnan(row.games)) << row.positions;
      }
    });
    EXPECT_TRUE(folder.drop_rows_after(10, 10).empty()) << "the session has its stop row now";
    folder.append_session({true, 0.0, 10, 1, 0, 0});
    folder.append_train({3.0, 20, 0, 0, 0, 1.0, 0, 0});
    folder.append_session({false, 3.5, 20, 2, 0, 0});
    EXPECT_TRUE(folder.drop_rows_after(20, 10).empty()) << "a clean stop, nothing lost";
    folder.append_session({true, 0.0, 20, 2, 0, 0});
    folder.append_train({1.0, 30, 0, 0, 0, 1.0, 0, 0});
    EXPECT_TRUE(folder.drop_rows_after(30, 10).empty()) << "killed, but no row lost";
  }
  std::filesystem::remove_all(dir);
}

// A live session writes a "clock" row when the table has been quiet for its interval, so that the
// page's time goes on through self-play before training starts and long gates (it stood at 0 s
// until the first train row: minutes on a GPU config); no row while other rows come.
TEST(RunFolderTables, AQuietTableGetsAClockRow) {
  using Clock = std::chrono::steady_clock;
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "run_folder_clock_rows";
  std::filesystem::remove_all(dir);
  RunFolder folder(dir);
  folder.open_tables(false, "");
  const auto minute = std::chrono::seconds(60);
  const Clock::time_point t0 = Clock::now();
  folder.append_session({true, 0.0, 0, 0, 0, 0});
  folder.append_clock_if_quiet(30.0, t0 + std::chrono::seconds(30), minute);  // not quiet yet
  folder.append_clock_if_quiet(61.0, t0 + std::chrono::seconds(61), minute);
  folder.append_clock_if_quiet(62.0, t0 + std::chrono::seconds(62), minute);  // just written
  folder.append_clock_if_quiet(125.0, t0 + std::chrono::seconds(125), minute);
  std::vector<std::pair<std::string, double>> rows;
  for_each_metrics_row(dir / "metrics.csv", nullptr, true, [&](const MetricsRow& row) {
    rows.emplace_back(row.kind, row.seconds);
  });
  const std::vector<std::pair<std::string, double>> expected = {
      {"start", 0.0}, {"clock", 61.0}, {"clock", 125.0}};
  EXPECT_EQ(rows, expected);
  // Kept at a resume like start and stop rows: a record of what was seen, not keyed (and the
  // session's time is in its rows: no stop row is made for it).
  EXPECT_TRUE(folder.drop_rows_after(0, 10).empty());
  std::size_t count = 0;
  for_each_metrics_row(dir / "metrics.csv", nullptr, true, [&](const MetricsRow&) { ++count; });
  EXPECT_EQ(count, 3u);
  std::filesystem::remove_all(dir);
}

// A gate's pair counts, read where arena.csv is read, where the page rebuilds a match and where a
// results line ends in them (arena::parse_pair_counts).
TEST(RunFolderTables, PairCountsAreFiveCountsOrNothing) {
  EXPECT_EQ(arena::parse_pair_counts("1/0/13/0/36"),
            (std::array<std::int64_t, 5>{1, 0, 13, 0, 36}));
  EXPECT_EQ(arena::parse_pair_counts("9999999999/0/0/0/1"),
            (std::array<std::int64_t, 5>{9999999999, 0, 0, 0, 1}));
  for (const char* text : {"", "1/2/3/4", "1/2/3/4/5/6", "1/2/3/4/5x", "-1/2/3/4/5",
                           "1/2//4/5", "10000000000/0/0/0/0", " 1/2/3/4/5"})
    EXPECT_FALSE(arena::parse_pair_counts(text).has_value()) << text;
}

// What a train row's points weigh on the loss curves, for the page and `report` alike: its
// steps, one for a table from before loss_steps, nothing for a row with no step or count.
TEST(RunFolderTables, ATrainRowWeighsItsStepsOnALossCurve) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  MetricsRow row{};
  row.kind = "train";
  row.step = 10;
  row.policy_loss = 1.5;
  row.value_loss = 0.5;
  row.loss_steps = 9;
  EXPECT_EQ(loss_weight(row), 9.0);
  row.loss_steps = nan;  // an older table
  EXPECT_EQ(loss_weight(row), 1.0);
  for (const double count : {0.0, 0.5, -3.0, inf}) {
    row.loss_steps = count;
    EXPECT_EQ(loss_weight(row), 0.0) << count;
  }
  row.loss_steps = 4;
  for (const double step : {nan, inf}) {
    MetricsRow damaged = row;
    damaged.step = step;
    EXPECT_EQ(loss_weight(damaged), 0.0) << step;
  }
  row.kind = "gate";
  EXPECT_EQ(loss_weight(row), 0.0);
}

// A run no machine holds is refused before it is made, saying what each part needs and naming
// the keys: a window_max of 10^9 positions grew for hours at ~120 bytes each, then ran the
// machine out of memory; a network at the documented maximum (64x512) failed as a bare
// out-of-memory while it was created; and parts that fit one by one may not fit together.
TEST(RunMemory, ARunNoMachineHoldsIsRefusedNamingItsKeys) {
  const double gib = 1024.0 * 1024 * 1024;
  const auto refusal = [&](const config::RunConfig& c, double machine,
                           bool resuming = false) -> std::string {
    try {
      check_run_memory(c, resuming, machine);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  config::RunConfig c;
  EXPECT_EQ(refusal(c, 8 * gib), "") << "the default config on a laptop";

  c.training.window_max = 1000000000;
  std::string why = refusal(c, 24 * gib);
  EXPECT_NE(why.find("the replay window 89.4 GiB (training.window_max)"), std::string::npos) << why;
  EXPECT_NE(why.find("and this machine has 24.0 GiB"), std::string::npos) << why;
  EXPECT_NE(why.find("give smaller values of training.window_max"), std::string::npos) << why;
  EXPECT_EQ(refusal(c, 128 * gib), "") << "a GPU box";

  // The largest network the config allows: 1.2 GB of weights, some 20 copies of them on the CPU
  // (the trainer's, the inference backend's for self-play's best network and a gate's two), and a
  // training step's activations (13 GB at 256 positions).
  c = config::RunConfig{};
  c.net = model::NetConfig::sized(64, 512);
  why = refusal(c, 24 * gib);
  EXPECT_NE(why.find("the networks"), std::string::npos) << why;
  EXPECT_NE(why.find("a training step's activations"), std::string::npos) << why;
  EXPECT_NE(why.find("give smaller values of net.blocks, net.filters, inference.workers"),
            std::string::npos)
      << why;
  // On a GPU box the trainer and inference hold it on the GPU: the CPU keeps checkpoint buffers.
  c.inference.device = "cuda";
  EXPECT_EQ(refusal(c, 24 * gib), "") << "the networks on the GPU";
  // Measured here: 20x256 at batch 64 trained and gated in 2.2 GB.
  c = config::RunConfig{};
  c.net = model::NetConfig::sized(20, 256);
  c.training.batch_size = 64;
  EXPECT_EQ(refusal(c, 4 * gib), "");
  EXPECT_NE(refusal(c, 1 * gib), "");
  // Each inference worker holds its own copy of each network (self-play's best, and a gate's
  // candidate and best): 8 Eigen workers hold 120 copies of each of its 0.1 GB.
  c.inference.workers = 8;
  why = refusal(c, 8 * gib);
  EXPECT_NE(why.find("give smaller values of net.blocks, net.filters, inference.workers"),
            std::string::npos)
      << why;
  c.inference.workers = 1;
  EXPECT_EQ(refusal(c, 8 * gib), "");
  // The torch backend's batches: 64 workers of 65536 positions.
  c.inference.backend = "torch";
  c.inference.workers = 64;
  c.inference.max_batch = 65536;
  why = refusal(c, 24 * gib);
  EXPECT_NE(why.find("the torch backend's activations"), std::string::npos) << why;
  EXPECT_NE(why.find("(inference.workers, inference.max_batch, net.filters)"), std::string::npos)
      << why;

  // Self-play's trees and a window that each fit the machine, but not both.
  c = config::RunConfig{};
  c.selfplay.threads = 16;
  c.selfplay.concurrent_games = 4096;
  c.training.window_max = 100000000;
  const double trees = selfplay::search_memory_bytes(selfplay_settings(c, 0));
  const double window = 100000000 * kMinWindowRowBytes;
  EXPECT_GT(trees, 1 * gib) << "16 x 4096 games of 100 simulations";
  const double machine = std::max(trees, window) + 0.5 * std::min(trees, window);
  EXPECT_EQ(refusal(c, trees + window + gib), "");
  why = refusal(c, machine);
  EXPECT_NE(why.find("self-play's games and search trees"), std::string::npos) << why;
  EXPECT_NE(why.find("the replay window 8.9 GiB"), std::string::npos) << why;
  // A resumed run cannot change its window: the error names only what a later session may.
  why = refusal(c, machine, true);
  EXPECT_EQ(why.find("give smaller values"), std::string::npos) << why;
  EXPECT_NE(why.find("of its keys a resumed run may change only selfplay.threads, "
                     "selfplay.concurrent_games, "),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("inference.workers"), std::string::npos) << why;
  EXPECT_NE(why.find("the run needs a machine with more memory"), std::string::npos) << why;
  c.selfplay.threads = 0;  // a trainer whose self-play runs on worker nodes
  EXPECT_EQ(refusal(c, machine), "");
  // Below a GiB the parts are said in MiB, not "0.0 GiB".
  c = config::RunConfig{};
  c.training.window_max = 10000000;
  why = refusal(c, 0.5 * gib);
  EXPECT_NE(why.find("the replay window 916 MiB"), std::string::npos) << why;
  EXPECT_NE(why.find("this machine has 512 MiB"), std::string::npos) << why;
}

// --recover rebuilds state.yaml from the log's session lines, taking only what a line holds in
// full: a line cut short by a kill once gave a 7-digit run id that the next start refused, and
// "(session -1" counted 2^64-1 sessions.
TEST(RunFolderState, ALogCutShortRebuildsAStateTheNextStartAccepts) {
  const std::filesystem::path dir = ::testing::TempDir() + "run_folder_state_from_log";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string id = "0123456789abcdef0123456789abcdef";
  std::ofstream(dir / "log.txt")
      << "[t] starting run x (session 1): mg 1x8; run id " << id << "\n"
      << "[t] resuming run x (session 2): mg 1x8; run id " << id << "\n"
      << "[t] resuming run x (session -1): mg\n"
      << "[t] resuming run x (session 99999999999999999999): mg\n"
      << "[t] resuming run x (session 3): mg 1x8; run id 0123abc\n"
      // A run folder's name holding such text itself is no session of its own, on a session
      // line or on another line that names a path in the folder after its own text.
      << "[t] resuming run r (session 99); run id fedcba9876543210fedcba9876543210 (session 3): "
         "mg 1x8; run id " << id << "\n"
      << "[t] created run r (session 98): initial network in r (session 98)/gen-0000.ckpt\n";
  RunFolder folder(dir);
  std::string rebuilt;
  const RunState s = folder.load_state(true, &rebuilt);
  EXPECT_EQ(s.sessions, 3u);
  EXPECT_EQ(s.run_id, id) << "the whole id of an earlier line, not the cut one";
  folder.save_state(s);
  EXPECT_NO_THROW(folder.load_state(false)) << "the next start reads what --recover wrote";
  // A log that is there but cannot be read is no log of no sessions: --recover says why.
  std::filesystem::remove(dir / "state.yaml");
  std::filesystem::remove(dir / "log.txt");
  std::filesystem::create_directories(dir / "log.txt");
  try {
    folder.load_state(true);
    ADD_FAILURE() << "a state was made from a log that cannot be read";
  } catch (const RunFolderError& e) {
    EXPECT_NE(std::string(e.what()).find("log.txt: not a regular file"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

// A state.yaml that lost its run_id line once got a new random id in silence, and the run's keys
// on its Redis store then belonged to "another run"; a session count at the top of the range
// wrapped to 0 at the next start. Both are damage now, named, and --recover takes the log's id.
TEST(RunFolderState, AStateThatLostItsRunIdIsDamaged) {
  const std::filesystem::path dir = ::testing::TempDir() + "run_folder_state_no_id";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string id = "0123456789abcdef0123456789abcdef";
  RunFolder folder(dir);
  std::ofstream(dir / "state.yaml") << "sessions: 2\nstream_cursor: \"0-0\"\n";
  EXPECT_EQ(folder.load_state(false).run_id, "") << "a run from before run ids";
  std::ofstream(dir / "log.txt") << "[t] starting run x (session 1): mg 1x8; run id " << id << "\n";
  try {
    folder.load_state(false);
    ADD_FAILURE() << "a state without its run id was taken";
  } catch (const RunFolderError& e) {
    EXPECT_NE(std::string(e.what()).find("no run_id, but " + (dir / "log.txt").string() +
                                         " says the run's id is " + id),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(folder.load_state(true).run_id, id);
  // A log that cannot be read is named as such, not as a damaged state that --recover (which
  // reads the log) would mend.
  std::filesystem::remove(dir / "log.txt");
  std::filesystem::create_directories(dir / "log.txt");
  try {
    folder.load_state(false);
    ADD_FAILURE() << "a state without its run id was taken beside a log that cannot be read";
  } catch (const RunFolderError& e) {
    EXPECT_EQ(std::string(e.what()).find("state.yaml is damaged"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("log.txt: not a regular file"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir / "log.txt");
  std::ofstream(dir / "state.yaml", std::ios::trunc)
      << "sessions: 18446744073709551615\nrun_id: \"" << id << "\"\n";
  EXPECT_THROW(folder.load_state(false), RunFolderError);
  std::filesystem::remove_all(dir);
}

// A gate of generation 1 against 0 in a folder of its own: best.ckpt a fresh network of `game`,
// gen-0001.ckpt `candidate` of it (the same network when not given), a config of small nets.
struct GateSetup {
  const Game& game;
  std::filesystem::path dir;
  model::Checkpoint best;
  std::string best_path, candidate_path;
  config::RunConfig config;
  GateInputs in;

  GateSetup(const std::string& game_name, const std::string& name,
            const std::function<void(model::Checkpoint&)>& candidate = {})
      : game(game_by_name(game_name)), dir(::testing::TempDir() + name),
        best(Trainer(game, small_net(), settings(), 1).checkpoint("best")),
        best_path((dir / "best.ckpt").string()),
        candidate_path((dir / "gen-0001.ckpt").string()) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    model::Checkpoint c = best;
    if (candidate) candidate(c);
    model::save_checkpoint(best, best_path);
    model::save_checkpoint(c, candidate_path);
    config.run.game = game_name;
    config.net = small_net();
    in.game = &game;
    in.config = &config;
    in.generation = 1;
    in.best_generation = 0;
    in.candidate_path = candidate_path;
    in.best_path = best_path;
  }
  ~GateSetup() { std::filesystem::remove_all(dir); }
};

// A candidate whose network computes nothing (its outputs overflow float) is refused at its gate,
// not promoted, and the gate returns: it stopped the run, and every resume after at the same
// gate. Without a gate (arena.max_games 0) it is tried all the same, never promoted unseen.
TEST(Gate, ACandidateThatComputesNothingIsRefusedAndTheRunGoesOn) {
  GateSetup g("ttt", "gate_computes_nothing", [](model::Checkpoint& broken) {
    for (model::NamedTensor& t : broken.tensors)
      if (t.name == "stem.conv.weight")
        for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = i % 2 ? -3e38f : 3e38f;
  });
  config::RunConfig& c = g.config;
  GateInputs& in = g.in;
  const std::string& best_path = g.best_path;
  const std::string& candidate_path = g.candidate_path;
  c.arena.simulations = 4;
  for (const int games : {4, 0}) {
    c.arena.max_games = games;
    const GateMatches m = play_gate(in);
    EXPECT_FALSE(m.promoted) << games;
    EXPECT_NE(m.refused.find(candidate_path), std::string::npos) << m.refused;
    EXPECT_NE(m.refused.find("not finite"), std::string::npos) << m.refused;
  }
  // The best network computing nothing is no candidate's fault: it plays on with uniform priors
  // there (as in self-play, which goes on with it), and a candidate can replace it.
  in.candidate_path = best_path;
  in.best_path = candidate_path;
  c.arena.max_games = 4;
  const GateMatches m = play_gate(in);
  EXPECT_EQ(m.refused, "");
  EXPECT_EQ(m.gate.games_counted, 4);
}

// A gate's progress is told every second while a game is played, not only after each pair: the
// run's lease on its store is renewed from there (a pair longer than the lease let it lapse).
TEST(Gate, ItsProgressIsToldWhileALongGameIsPlayed) {
  GateSetup g("mg", "gate_told_while_playing");
  config::RunConfig& c = g.config;
  GateInputs& in = g.in;
  c.arena.simulations = 2;
  c.arena.max_games = 0;  // no gate match: promoted, then its anchor match of one pair
  c.arena.anchor = "uct:ms=150";  // some seconds a game: every move takes its time
  c.arena.anchor_games = 2;
  std::vector<std::string> told;
  in.on_progress = [&told](const std::string& line) { told.push_back(line); };
  const GateMatches m = play_gate(in);
  ASSERT_TRUE(m.promoted);
  ASSERT_TRUE(m.anchor.has_value());
  EXPECT_EQ(m.anchor->games_counted, 2);
  const auto before_the_pair = std::count_if(told.begin(), told.end(), [](const std::string& l) {
    return l.find(" 0/2 games") != std::string::npos;
  });
  EXPECT_GE(before_the_pair, 1) << (told.empty() ? "" : told.front());
}

// Generation 1's gate at step 10: 8 games, +5 =1 -2, promoted at +40.
GateRow first_gate() {
  GateRow g;
  g.generation = 1, g.step = 10, g.games = 8, g.wins = 5, g.draws = 1, g.losses = 2;
  g.promoted = true, g.elo = 40, g.verdict = "cap", g.rating = 40;
  return g;
}

// A gate's pair counts are kept in arena.csv, so that its interval can be computed again from the
// file; a damaged field is not trusted (left unknown), the row still read.
TEST(RunFolderTables, AGatesPairCountsAreKept) {
  const std::filesystem::path dir = ::testing::TempDir() + "run_folder_pairs";
  std::filesystem::remove_all(dir);
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    GateRow g = first_gate();
    g.elo_low = -50, g.elo_high = 130, g.llr = 0.2, g.pairs = "0/1/1/1/1";
    g.anchor = "random", g.anchor_games = 4, g.anchor_score = 1, g.anchor_pairs = "0/0/0/0/2";
    folder.append_gate(g, 100, 10);
    g.generation = 2, g.step = 20, g.pairs = "", g.anchor = "";
    folder.append_gate(g, 200, 20);
  }
  std::string text = util::read_regular_file((dir / "arena.csv").string());
  const auto at = text.find(",0/1/1/1/1");
  ASSERT_NE(at, std::string::npos) << text;
  std::vector<GateRow> gates = read_gates(dir / "arena.csv", nullptr, true);
  ASSERT_EQ(gates.size(), 2u);
  EXPECT_EQ(gates[0].pairs, "0/1/1/1/1");
  EXPECT_EQ(gates[0].anchor_pairs, "0/0/0/0/2");
  EXPECT_EQ(gates[1].pairs, "");
  EXPECT_EQ(gates[1].anchor_pairs, "");
  text.replace(at, 10, ",0/1/x/1/1");
  std::ofstream(dir / "arena.csv", std::ios::trunc) << text;
  gates = read_gates(dir / "arena.csv", nullptr, true);
  ASSERT_EQ(gates.size(), 2u);
  EXPECT_EQ(gates[0].pairs, "") << "a damaged field is not known";
  EXPECT_EQ(gates[0].games, 8);
  std::filesystem::remove_all(dir);
}

// A number of a table that its owner would never write (not finite, not decimal) reads as absent,
// as an empty field does: strtod read "nan", "inf", "1e400" and hex, and they were drawn.
TEST(RunFolderTables, NumbersNoOwnerWritesReadAsAbsent) {
  const std::filesystem::path dir = ::testing::TempDir() + "run_folder_odd_numbers";
  std::filesystem::remove_all(dir);
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    GateRow g = first_gate();
    g.elo = 12345;
    folder.append_gate(g, 100, 10);
  }
  const std::string text = util::read_regular_file((dir / "arena.csv").string());
  const auto at = text.find("12345");
  ASSERT_NE(at, std::string::npos) << text;
  const auto end = text.find_first_of(",\n", at);
  EXPECT_EQ(read_gates(dir / "arena.csv", nullptr, true).at(0).elo, 12345);
  for (const std::string odd : {"nan", "-nan", "inf", "-inf", "1e400", "-1e400", "0x10",
                                "infinity", " 5", "+5", "5x"}) {
    std::string damaged = text;
    damaged.replace(at, end - at, odd);
    std::ofstream(dir / "arena.csv", std::ios::trunc) << damaged;
    const std::vector<GateRow> gates = read_gates(dir / "arena.csv", nullptr, true);
    ASSERT_EQ(gates.size(), 1u) << odd;
    EXPECT_TRUE(std::isnan(gates[0].elo)) << odd << ": " << gates[0].elo;
  }
  std::filesystem::remove_all(dir);
}

// Whole numbers in the tables are read in full or refused, naming the row: a generation of 2^32+1
// was read as generation 1, and --recover cast a metrics.csv gate row's 1e308 to INT_MIN and
// wrote an arena.csv that no later command could read or rebuild.
TEST(RunFolderTables, NumbersOutOfRangeAreRefusedNotWrapped) {
  const std::filesystem::path dir = ::testing::TempDir() + "run_folder_ranges";
  std::filesystem::remove_all(dir);
  {
    RunFolder folder(dir);
    folder.open_tables(false, "");
    folder.append_gate(first_gate(), 100, 10);
  }
  const std::string arena = util::read_regular_file((dir / "arena.csv").string());
  const std::string metrics = util::read_regular_file((dir / "metrics.csv").string());
  const auto refused = [&](const std::string& what) {
    try {
      RunFolder folder(dir);
      folder.open_tables(true, "");
      ADD_FAILURE() << "accepted: " << what;
      return std::string();
    } catch (const RunFolderError& e) {
      return std::string(e.what());
    }
  };
  const std::size_t row = arena.find('\n') + 1;
  for (const std::string bad : {"4294967297", "99999999999999999999", "0", "-1", "1.5"}) {
    std::ofstream(dir / "arena.csv", std::ios::trunc)
        << arena.substr(0, row) + bad + arena.substr(arena.find(',', row));
    const std::string error = refused(bad);
    EXPECT_NE(error.find("arena.csv: row 2: generation is not a whole number from 1 to "
                         "2147483647 (\"" + bad + "\")"),
              std::string::npos)
        << error;
  }
  // arena.csv lost: --recover rebuilds it from metrics.csv's gate rows, but not from a damaged one.
  std::filesystem::remove(dir / "arena.csv");
  std::filesystem::create_directories(dir / "games");
  std::ofstream(dir / "games" / "chunk-00000000.bin") << "progress";
  const std::size_t gate = metrics.find("\ngate,") + 1;
  ASSERT_NE(gate, 0u) << metrics;
  std::size_t generation = gate;  // the comma before the fourth field, generation
  for (int field = 0; field < 3; ++field) generation = metrics.find(',', generation + 1);
  for (const std::string bad : {"1e308", "inf", "4294967297"}) {
    std::ofstream(dir / "metrics.csv", std::ios::trunc)
        << metrics.substr(0, generation + 1) + bad +
               metrics.substr(metrics.find(',', generation + 1));
    const std::string error = refused(bad);
    EXPECT_NE(error.find("metrics.csv: row "), std::string::npos) << error;
    EXPECT_NE(error.find(": generation is not a whole number"), std::string::npos) << error;
    EXPECT_FALSE(std::filesystem::exists(dir / "arena.csv")) << "nothing written for " << bad;
  }
  std::ofstream(dir / "metrics.csv", std::ios::trunc) << metrics;
  RunFolder folder(dir);
  folder.open_tables(true, "");
  ASSERT_EQ(folder.gates().size(), 1u);
  EXPECT_EQ(folder.gates()[0].generation, 1);
  EXPECT_EQ(folder.gates()[0].step, 10);
  std::filesystem::remove_all(dir);
}

// A stream entry of `run_id` under the entry id `id` ("*": the server's).
void push_game(const test_util::RedisServer& redis, const std::string& id,
               const std::string& run_id, const selfplay::GameRecord& record) {
  const std::string bytes = selfplay::encode_record(record);
  redis.command({"XADD", "oppidum:intake:games", id, "node", "w", "run", run_id, "network", "0",
                 "format", std::to_string(selfplay::kRecordFormatVersion), "record", bytes,
                 "crc32", std::to_string(util::crc32(bytes.data(), bytes.size()))});
}

// A trainer's intake of a Redis stream in a folder of its own; a Session is one start of the
// trainer on it (its window, its store of chunks and its Intake, over the same folder and state).
struct StreamIntake {
  explicit StreamIntake(const std::string& name) : dir(fresh(::testing::TempDir() + name)) {
    state.run_id = "0123456789abcdef0123456789abcdef";
  }
  ~StreamIntake() { std::filesystem::remove_all(dir); }
  static std::filesystem::path fresh(const std::filesystem::path& dir) {
    std::filesystem::remove_all(dir);
    return dir;
  }
  struct Session {
    explicit Session(StreamIntake& s)
        : window(game_by_name("mg"), window_of(1000, 1000, 0.5)),
          store((s.dir / "games").string(), selfplay::FolderReplayStore::Mode::kOwner),
          intake(s.folder, s.state, window, store, &s.channel,
                 [&s](const std::string& line) { s.lines.push_back(line); }) {}
    ReplayWindow window;
    selfplay::FolderReplayStore store;
    Intake intake;
  };
  std::string log() const {
    std::string all;
    for (const std::string& line : lines) all += line + "\n";
    return all;
  }
  void push(const std::string& id, int count = 1) {
    for (int i = 0; i < count; ++i) push_game(redis, id, state.run_id, game);
  }
  // The trainer started again after `count` more games were pushed: its chunks hold `kept`
  // games, and the new ones are read, not taken for kept.
  void expect_a_restart_reads_new_games(int kept, int count) {
    push("*", count);
    Session again(*this);
    again.intake.load_window(1000);
    EXPECT_EQ(again.intake.games(), kept) << "the chunks";
    again.intake.poll();
    EXPECT_EQ(again.intake.games(), kept + count)
        << "the games after a restart of the trainer were hidden";
  }

  test_util::RedisServer redis;
  std::filesystem::path dir;
  RunFolder folder{dir};
  RunState state;
  store::RunChannel channel{store::parse_redis_url(redis.url("intake"), nullptr),
                            [](const std::string&) {}};
  std::vector<std::string> lines;
  const selfplay::GameRecord game = five_ply_record();
};

// An entry id far ahead of the server's clock (XADD with an id of the writer's choosing) was kept,
// and when the server then lost its data every new game read as kept already: none was trained on
// again, silently. Now the new stream's entries after its end at the restart are new, and the
// ones taken for kept are counted in the summary.
TEST(IntakeStream, AnIdAheadOfTheClockDoesNotHideTheGamesAfterARestart) {
  StreamIntake s("intake_future_id");
  auto first = std::make_unique<StreamIntake::Session>(s);
  Intake& intake = first->intake;
  s.push("9999999999999-0");
  intake.poll();
  EXPECT_EQ(intake.games(), 1);
  s.redis.command({"FLUSHALL"});
  s.push("*");  // before the trainer sees the new stream
  intake.poll();
  s.push("*", 3);
  intake.poll();
  EXPECT_EQ(intake.games(), 4) << "the games after the restart were hidden";
  EXPECT_NE(intake.summary().find("skipped 1 kept before"), std::string::npos) << intake.summary();
  EXPECT_NE(s.log().find("ahead of the server's clock"), std::string::npos) << s.log();
  // The trainer started again: its chunks still hold the id ahead of the clock, and the games
  // after the cursor are still new.
  s.expect_a_restart_reads_new_games(4, 2);
}

// A stream the server lost with entries unread takes them with it: the summary counts them from
// the last lag the trainer knew (kept = pushed - evicted - dropped did not add up, and nothing
// said so).
TEST(IntakeStream, EntriesLostUnreadWithTheStreamAreCounted) {
  StreamIntake s("intake_lost_unread");
  auto first = std::make_unique<StreamIntake::Session>(s);
  Intake& intake = first->intake;
  s.push("*", 8 * 512 + 50);  // one poll reads 8 x 512
  intake.poll();
  ASSERT_EQ(intake.stream_lag(), 50);
  s.redis.command({"FLUSHALL"});
  s.push("*", 2);
  intake.poll();
  intake.poll();
  EXPECT_EQ(intake.games(), 8 * 512 + 2);
  EXPECT_NE(intake.summary().find(", about 50 unread lost with a stream the server lost"),
            std::string::npos)
      << intake.summary();
  EXPECT_NE(s.log().find("about 50 entries it held unread are lost"), std::string::npos)
      << s.log();
}

// A server whose clock went back 120 s gave ids that rose on from its last (120 s ahead of its
// clock); when it then lost its data, the new stream's ids came from its clock, below the newest
// game kept, and every new game read as kept for 120 s (the guard took only ids a day ahead of the
// clock for no clock's). Any id ahead of the clock is now.
TEST(IntakeStream, AClockThatWentBackDoesNotHideTheGamesAfterADataLoss) {
  StreamIntake s("intake_clock_back");
  auto first = std::make_unique<StreamIntake::Session>(s);
  Intake& intake = first->intake;
  const std::string time = s.redis.command({"TIME"});  // *2 $10 seconds $6 microseconds
  const long long seconds = std::atoll(time.c_str() + time.find("\r\n", time.find('$')) + 2);
  ASSERT_GT(seconds, 1700000000) << time;
  s.push(std::to_string((seconds + 120) * 1000) + "-0");
  intake.poll();
  EXPECT_EQ(intake.games(), 1);
  s.redis.command({"FLUSHALL"});
  s.push("*");  // before the trainer sees the new stream: taken for kept, and counted
  intake.poll();
  s.push("*", 3);
  intake.poll();
  EXPECT_EQ(intake.games(), 4) << "the games after the data loss were hidden";
  EXPECT_NE(intake.summary().find("skipped 1 kept before"), std::string::npos) << intake.summary();
}

// An entry with the largest id a stream can hold (XADD with an id of the writer's choosing) once
// stopped the trainer at every start (its read script asked XRANGE for what follows it) and every
// worker (XADD can add nothing after it). Now its game is read, the stream deleted, and the games
// the nodes add next are new, after a restart of the trainer too.
TEST(IntakeStream, AnEntryWithTheLargestIdEndsTheStreamWithoutStoppingTheRun) {
  StreamIntake s("intake_last_id");
  auto first = std::make_unique<StreamIntake::Session>(s);
  Intake& intake = first->intake;
  s.push("*");
  s.push(store::kLastStreamId);
  intake.poll();
  intake.poll();
  EXPECT_EQ(intake.games(), 2);
  EXPECT_EQ(s.redis.command({"EXISTS", "oppidum:intake:games"}), ":0\r\n") << "deleted";
  EXPECT_NE(s.log().find("the stream reached the largest id an entry can have"),
            std::string::npos)
      << s.log();
  s.push("*", 3);
  intake.poll();
  EXPECT_EQ(intake.games(), 5) << "the games after the largest id were hidden";
  // The trainer started again: its chunks hold the largest id, and new games are still new.
  s.expect_a_restart_reads_new_games(5, 2);
  // A trainer stopped with its cursor at the largest id, the stuck stream deleted by hand while
  // it was away: the games the nodes added since are read, and that new stream is never deleted.
  s.state.stream_cursor = store::kLastStreamId;
  s.redis.command({"DEL", "oppidum:intake:games"});
  s.push("*", 3);
  StreamIntake::Session third(s);
  third.intake.load_window(1000);
  third.intake.poll();
  third.intake.poll();
  EXPECT_EQ(third.intake.games(), 10) << "the games pushed while the trainer was away were lost";
  EXPECT_EQ(s.redis.command({"XLEN", "oppidum:intake:games"}), ":3\r\n");
}

struct Loaded {
  std::int64_t positions = 0, games = 0;
  std::vector<std::string> lines;
};

// What a restarted trainer finds in `dir`: a session's load_window with a window of 30.
Loaded load(const std::filesystem::path& dir) {
  RunFolder folder(dir);
  RunState state_yaml;
  ReplayWindow window(game_by_name("mg"), window_of(30, 30, 0.5));
  selfplay::FolderReplayStore store((dir / "games").string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  Loaded out;
  Intake intake(folder, state_yaml, window, store, nullptr,
                [&](const std::string& line) { out.lines.push_back(line); });
  intake.load_window(30);
  EXPECT_EQ(window.size(), 30);
  out.positions = window.total_positions();
  out.games = intake.games();
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

// A restart reads only the newest chunks its window needs and counts the older ones from the
// folder's index; without the index it reads them all, with the same totals.
TEST(Intake, ARestartReadsOnlyTheChunksTheWindowNeeds) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "intake_window";
  ten_chunks(dir);
  for (bool with_index : {true, false}) {
    if (!with_index) fs::remove(dir / "games" / "index.csv");
    const Loaded loaded = load(dir);
    EXPECT_EQ(loaded.positions, 100) << with_index;
    EXPECT_EQ(loaded.games, 20);
    const bool counted = !loaded.lines.empty() &&
                         loaded.lines[0].find("counted the 7 oldest chunks") != std::string::npos;
    EXPECT_EQ(counted, with_index) << joined(loaded.lines);
  }
}

// With fast-search rows dropped a restart reads back the chunks of as many rows as the window
// holds, not of as many positions: the window once came back with about full_search_fraction of
// its rows (mg-small with drop: 511 of 1,500 after a restart).
TEST(Intake, ARestartWithFastRowsDroppedFillsTheWindowWithRows) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "intake_drop";
  fs::remove_all(dir);
  selfplay::GameRecord r = five_ply_record();  // two of its five moves have full searches
  for (std::size_t i = 0; i < r.moves.size(); ++i) r.moves[i].policy_target = i == 0 || i == 3;
  {
    selfplay::FolderReplayStore store((dir / "games").string(),
                                      selfplay::FolderReplayStore::Mode::kOwner);
    for (int c = 0; c < 10; ++c) store.append({r, r});  // 4 rows a chunk, 40 in all
  }
  RunFolder folder(dir);
  RunState state_yaml;
  WindowSettings settings = window_of(30, 30, 0.5);
  settings.fast_search_rows = "drop";
  ReplayWindow window(game_by_name("mg"), settings);
  selfplay::FolderReplayStore store((dir / "games").string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  std::vector<std::string> lines;
  Intake intake(folder, state_yaml, window, store, nullptr,
                [&](const std::string& line) { lines.push_back(line); });
  intake.load_window(30);
  EXPECT_EQ(window.size(), 30) << "the window holds its rows again, not 12 (3 chunks' positions)";
  EXPECT_EQ(window.total_positions(), 100);
  EXPECT_EQ(intake.games(), 20);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("counted the 2 oldest chunks"), std::string::npos) << joined(lines);
  fs::remove_all(dir);
}

// games/index.csv is checked against the chunks, not trusted: an edited count, a garbage file, a
// row for a chunk that is gone, a chunk listed twice, a size that is not the file's: each is
// found, said in the log, and the index rebuilt from the chunks, with the right totals.
TEST(Intake, AnIndexThatDisagreesWithTheChunksIsRebuilt) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "intake_index";
  const fs::path index = dir / "games" / "index.csv";
  struct Damage {
    const char* what;
    std::function<void()> apply;
    const char* said;
    std::int64_t positions;
  };
  // Replaces the row of chunk `chunk` with `row`.
  const auto replace_row = [&](int chunk, const std::string& row) {
    std::string text = util::read_regular_file(index.string());
    const auto at = text.find("\n" + std::to_string(chunk) + ",");
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at + 1, text.find('\n', at + 1) - at - 1, row);
    util::write_file_atomically(index.string(), text);
  };
  const std::vector<Damage> damages = {
      {"an edited count", [&] { replace_row(1, "1,2,100000000,"); },
       "2 games and 100000000 positions in chunk-00000001.bin", 100},
      {"garbage", [&] { util::write_file_atomically(index.string(), "garbage\n1,2\n"); },
       "not the header", 100},
      {"a garbage row", [&] { replace_row(2, "2,x,10,"); }, "row 4 is not", 100},
      {"a chunk that is gone", [&] { fs::remove(dir / "games" / "chunk-00000009.bin"); },
       "chunk-00000009.bin, which is not there", 90},
      {"a chunk listed twice", [&] { replace_row(3, "2,2,10,"); },
       "it lists chunk-00000002.bin twice", 100},
      {"a wrong size", [&] { replace_row(4, "4,2,10,7"); }, "has 7 bytes", 100},
  };
  for (const Damage& d : damages) {
    ten_chunks(dir);
    d.apply();
    const Loaded loaded = load(dir);
    EXPECT_EQ(loaded.positions, d.positions) << d.what;
    EXPECT_EQ(loaded.games, d.positions / 5) << d.what;
    const std::string log = joined(loaded.lines);
    EXPECT_NE(log.find("games/index.csv"), std::string::npos) << d.what << ": " << log;
    EXPECT_NE(log.find(d.said), std::string::npos) << d.what << ": " << log;
    EXPECT_NE(log.find("rebuilt it from the"), std::string::npos) << d.what << ": " << log;
    // Rebuilt once: the next start finds it in order and says nothing about it.
    const Loaded again = load(dir);
    EXPECT_EQ(again.positions, d.positions) << d.what;
    EXPECT_EQ(joined(again.lines).find("rebuilt"), std::string::npos) << joined(again.lines);
  }
}

// A listing of the folder taken while chunks are added may lack one added during it and hold the
// next: each chunk is read once all the same, the late one included (the intake once went by
// places in the listing: the next chunk took the missing one's place and was read twice, the
// missing one never; the same games counted, other positions).
TEST(Intake, AChunkMissingFromAListingIsReadOnceItIsThere) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "intake_late_chunk";
  ten_chunks(dir);  // chunks 0-9, two five-ply games each
  RunFolder folder(dir);
  RunState state_yaml;
  ReplayWindow window(game_by_name("mg"), window_of(30, 30, 0.5));
  selfplay::FolderReplayStore store((dir / "games").string(),
                                    selfplay::FolderReplayStore::Mode::kOwner);
  Intake intake(folder, state_yaml, window, store, nullptr, [](const std::string&) {});
  intake.load_window(30);
  ASSERT_EQ(intake.games(), 20);
  // Chunk 11, of three games of another length, shows before chunk 10 (of one game) does.
  selfplay::GameRecord three_plies = five_ply_record();
  three_plies.moves.resize(3);
  store.append({five_ply_record()});  // chunk 10
  store.append({three_plies, three_plies, three_plies});  // chunk 11
  const fs::path late = dir / "games" / "chunk-00000010.bin", aside = dir / "late.bin";
  fs::rename(late, aside);
  intake.read_folder();
  EXPECT_EQ(intake.games(), 23);
  fs::rename(aside, late);
  intake.read_folder();
  intake.read_folder();
  EXPECT_EQ(intake.games(), 24);
  EXPECT_EQ(window.total_positions(), 100 + 5 + 9);
  EXPECT_EQ(intake.chunks(), 12u);
}

// A chunk number is used once: a chunk that is gone keeps its number in the index (0 games), and
// the next chunk is numbered above every number on disk or in the index.
TEST(Intake, ChunkNumbersAreNeverUsedTwice) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "intake_numbers";
  ten_chunks(dir);
  fs::remove(dir / "games" / "chunk-00000009.bin");
  fs::remove(dir / "games" / "chunk-00000008.bin");
  for (int round = 0; round < 2; ++round) {  // with the gone chunks' rows, then with 0-game rows
    RunFolder folder(dir);
    selfplay::FolderReplayStore store((dir / "games").string(),
                                      selfplay::FolderReplayStore::Mode::kOwner);
    store.append({five_ply_record()});
    EXPECT_TRUE(fs::exists(dir / "games" / ("chunk-0000001" + std::to_string(round) + ".bin")))
        << "round " << round;
    EXPECT_FALSE(fs::exists(dir / "games" / "chunk-00000008.bin"));
    EXPECT_FALSE(fs::exists(dir / "games" / "chunk-00000009.bin"));
  }
  const std::string text = util::read_regular_file((dir / "games" / "index.csv").string());
  EXPECT_NE(text.find("\n8,0,0,\n9,0,0,\n10,1,5,"), std::string::npos) << text;
  EXPECT_EQ(load(dir).positions, 90);
}

// The promotion rule of trainer/gate.h: H1 promotes, H0 does not, an undecided match promotes
// only at its cap with more than half the points; a stopped match never; no gate always.
TEST(Gate, PromotionRule) {
  arena::MatchStatus s;
  s.games_cap = 60;
  s.games_counted = 20;
  s.wins = 15, s.draws = 0, s.losses = 5;
  s.verdict = arena::SprtVerdict::kAcceptH1;
  EXPECT_TRUE(promotes(s));
  s.verdict = arena::SprtVerdict::kAcceptH0;
  EXPECT_FALSE(promotes(s));
  s.verdict = arena::SprtVerdict::kContinue;
  EXPECT_FALSE(promotes(s)) << "undecided before the cap: no promotion on a lean";
  s.games_counted = 60;
  s.wins = 30, s.draws = 1, s.losses = 29;
  EXPECT_TRUE(promotes(s)) << "30.5 of 60 points at the cap";
  s.wins = 29, s.draws = 2, s.losses = 29;
  EXPECT_FALSE(promotes(s)) << "exactly half is not more than half";
  s.wins = 40, s.draws = 0, s.losses = 20;
  s.stopped = true;
  EXPECT_FALSE(promotes(s)) << "a stopped gate is played again, never decided";
  arena::MatchStatus none;
  none.games_cap = 0;
  EXPECT_TRUE(promotes(none)) << "arena.max_games 0: every candidate is promoted";
}

// A gate's openings are checked before a run starts (its config is frozen once the folder exists):
// a length the game cannot reach, or one at the ply limit, is a ConfigError naming
// arena.opening_plies; with no match ever played there is nothing to check.
TEST(Gate, ImpossibleOpeningsAreAConfigError) {
  const Game& game = game_by_name("mg");
  config::RunConfig c;
  EXPECT_NO_THROW(check_openings(game, c));
  c.arena.opening_plies = 100;
  try {
    check_openings(game, c);
    FAIL() << "no error for 100 opening plies of mg";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("arena.opening_plies: ", 0), 0u) << e.what();
  }
  c.arena.opening_plies = 10;
  c.selfplay.max_plies = 10;
  try {
    check_openings(game, c);
    FAIL() << "no error for openings as long as the ply limit";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("arena.opening_plies"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("selfplay.max_plies"), std::string::npos) << e.what();
  }
  c.selfplay.max_plies = 300;
  c.arena.opening_plies = 100;
  c.arena.max_games = 0;
  c.arena.anchor_games = 0;
  EXPECT_NO_THROW(check_openings(game, c)) << "no gate and no anchor games: no opening is made";
  c.arena.anchor_games = 10;
  EXPECT_THROW(check_openings(game, c), config::ConfigError) << "anchor matches use openings too";
}

// An external anchor without openings=1 cannot play the gate's random openings (run_match refuses
// them), so it is refused before the run starts unless arena.opening_plies is 0.
TEST(Gate, AnAnchorThatNeedsTheInitialPositionNeedsNoOpenings) {
  const Game& game = game_by_name("mg");
  config::RunConfig c;
  c.arena.anchor_games = 10;
  c.arena.anchor = "external:cmd=\"true\"";
  try {
    check_anchor(game, c);
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("arena.anchor: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("arena.opening_plies"), std::string::npos) << e.what();
  }
  c.arena.opening_plies = 0;
  EXPECT_NO_THROW(check_anchor(game, c));
  c.arena.opening_plies = 4;
  c.arena.anchor = "external:cmd=\"true\",openings=1";
  EXPECT_NO_THROW(check_anchor(game, c));
}

}  // namespace
}  // namespace oppidum::trainer
