// The fit of the classical evaluation (arena/tune.h): it recovers known weights from synthetic
// results, turns recorded games into samples from the side to move's view, refuses input it cannot
// fit with a clear message, and writes a header the engine compiles.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/tune.h"
#include "games/registry.h"

namespace oppidum::arena {
namespace {

// Samples whose results are drawn with probability sigmoid(beta . x): 1 (win) or 0 (loss), with
// some draws (0.5) where the chance is near even.
TuneSamples synthetic(const std::vector<double>& beta, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  TuneSamples s;
  s.features = static_cast<int>(beta.size());
  for (std::size_t i = 0; i < n; ++i) {
    double z = 0;
    for (std::size_t j = 0; j < beta.size(); ++j) {
      const double x = j + 1 == beta.size() ? 1.0 : std::round(3 * normal(rng));
      s.x.push_back(static_cast<float>(x));
      z += beta[j] * x;
    }
    const double p = 1 / (1 + std::exp(-z));
    s.y.push_back(uniform(rng) < p ? 1.0f : 0.0f);
    s.game.push_back(static_cast<std::uint32_t>(i / 40));
  }
  s.games = static_cast<std::uint32_t>(n / 40 + 1);
  return s;
}

TEST(TuneTest, RecoversKnownWeights) {
  // beta = K * w: the evaluation's weights in points and the scale together.
  const std::vector<double> beta = {0.30, -0.15, 0.05, 0.0, 0.10};
  const TuneSamples s = synthetic(beta, 200'000, 1);
  // Start from weights of the wrong size and partly the wrong sign: K is fitted to them first, and
  // K * w then converges to beta whatever the start.
  const std::vector<double> start = {10, 10, -3, 2, 0};
  const TuneResult r = tune_weights(s, start);
  ASSERT_EQ(r.weights.size(), beta.size());
  for (std::size_t j = 0; j < beta.size(); ++j)
    EXPECT_NEAR(r.k * r.weights[j], beta[j], 0.01) << "feature " << j;
  EXPECT_LT(r.train_loss_after, r.train_loss_before);
  EXPECT_LT(r.test_loss_after, r.test_loss_before);
  EXPECT_GT(r.test_samples, 15'000u);  // every 10th game of 5000
  EXPECT_EQ(r.train_samples + r.test_samples, 200'000u);
  // With K given, the weights are beta / K.
  TuneOptions fixed;
  fixed.fixed_k = 0.02;
  const TuneResult f = tune_weights(s, start, fixed);
  EXPECT_EQ(f.k, 0.02);
  for (std::size_t j = 0; j < beta.size(); ++j)
    EXPECT_NEAR(f.weights[j], beta[j] / 0.02, 0.5) << "feature " << j;
}

TEST(TuneTest, FitsTheScaleOfGoodWeights) {
  // Weights already right up to scale: K alone makes them fit, and the weights hardly move.
  const std::vector<double> beta = {0.2, -0.1, 0.0};
  const TuneSamples s = synthetic(beta, 100'000, 2);
  const TuneResult r = tune_weights(s, {20, -10, 0});
  EXPECT_NEAR(r.k, 0.01, 0.0007);
  EXPECT_NEAR(r.weights[0], 20, 1.5);
  EXPECT_NEAR(r.weights[1], -10, 1.5);
}

TEST(TuneTest, RefusesWhatItCannotFit) {
  const TuneSamples empty;
  EXPECT_THROW(tune_weights(empty, {1.0}), TuneError);
  TuneSamples s = synthetic({0.3, 0.1}, 1000, 3);
  EXPECT_THROW(tune_weights(s, {1.0, 2.0, 3.0}), TuneError);  // three weights, two features
  TuneSamples all_won = s;
  for (float& y : all_won.y) y = 1.0f;
  try {
    tune_weights(all_won, {1.0, 1.0});
    FAIL();
  } catch (const TuneError& e) {
    EXPECT_NE(std::string(e.what()).find("all alike"), std::string::npos) << e.what();
  }
  TuneSamples nan = s;
  nan.x[7] = std::nanf("");
  EXPECT_THROW(tune_weights(nan, {1.0, 1.0}), TuneError);
  TuneOptions all_held_out;
  all_held_out.holdout_every = 1;
  EXPECT_THROW(tune_weights(s, {1.0, 1.0}, all_held_out), TuneError);
}

TEST(TuneTest, GamesBecomeSamplesFromTheMoversView) {
  const Game& game = game_by_name("dvonn");
  auto state = game.initial_state();
  std::vector<Action> moves;
  ActionList legal;
  while (!state->is_terminal()) {  // the first legal move each time: a finished game
    state->legal_actions(legal);
    moves.push_back(legal[0]);
    state->apply(legal[0]);
  }
  const int result_first = static_cast<int>(state->result(0));
  TuneSamples s;
  add_game_samples(game, "", moves, result_first, s);
  EXPECT_EQ(s.games, 1u);
  EXPECT_EQ(s.size(), moves.size());  // every position before the end has features
  EXPECT_EQ(s.features, static_cast<int>(classic_feature_names(game).size()));
  // The result seen by the side to move: White's plies 0, 2, 4 of the placement phase.
  EXPECT_EQ(s.y[0], (result_first + 1) / 2.0f);
  EXPECT_EQ(s.y[1], (1 - result_first) / 2.0f);
  std::vector<Action> bad = moves;
  bad[3] = bad[2];  // a space already taken
  TuneSamples t;
  EXPECT_THROW(add_game_samples(game, "", bad, 0, t), TuneError);
}

TEST(TuneTest, WritesAHeader) {
  const Game& game = game_by_name("mg");
  const auto names = classic_feature_names(game);
  const std::string long_line(30, 'x');
  const std::string text = classic_weights_header(
      game, names, classic_weights(game), "a \"test\" fit" + std::string(200, ' ') + "end",
      {"Data: none", "  /a/file", long_line + " " + long_line + " " + long_line + " " + long_line});
  EXPECT_NE(text.find("namespace oppidum::mg {"), std::string::npos);
  EXPECT_NE(text.find("\"towers\","), std::string::npos);
  EXPECT_NE(text.find("a \\\"test\\\" fit"), std::string::npos);
  EXPECT_NE(text.find("// Data: none"), std::string::npos);
  EXPECT_NE(text.find("kClassicWeights[]"), std::string::npos);
  EXPECT_NE(text.find("//   /a/file\n"), std::string::npos);
  // Within the project's 100 columns.
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
}

}  // namespace
}  // namespace oppidum::arena
