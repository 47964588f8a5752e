// Elo, interval and SPRT arithmetic against hand-computed values.
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include "arena/elo.h"

namespace oppidum::arena {
namespace {

TEST(EloTest, ScoreAndEloConvert) {
  // elo(0.75) = -400 log10(1/0.75 - 1) = 400 log10(3) = 190.8485
  EXPECT_NEAR(elo_from_score(0.75), 190.8485, 1e-3);
  // score(200) = 1 / (1 + 10^(-0.5)) = 1 / 1.316228 = 0.759747
  EXPECT_NEAR(score_from_elo(200.0), 0.759747, 1e-6);
  EXPECT_DOUBLE_EQ(elo_from_score(0.5), 0.0);
  EXPECT_NEAR(score_from_elo(elo_from_score(0.3)), 0.3, 1e-12);
  EXPECT_TRUE(std::isinf(elo_from_score(1.0)) && elo_from_score(1.0) > 0);
  EXPECT_TRUE(std::isinf(elo_from_score(0.0)) && elo_from_score(0.0) < 0);
}

TEST(EloTest, TrinomialInterval) {
  // 60 wins, 20 draws, 20 losses: mean 0.7; variance (60*0.3^2 + 20*0.2^2 + 20*0.7^2) / 100 = 0.16;
  // standard error sqrt(0.16 / 100) = 0.04; interval 0.7 -+ 1.96*0.04 = [0.62160, 0.77840];
  // Elo 147.19 [86.23, 218.25].
  const EloEstimate e = estimate_elo(trinomial(60, 20, 20));
  EXPECT_NEAR(e.score, 0.7, 1e-12);
  EXPECT_NEAR(e.score_stderr, 0.04, 1e-12);
  EXPECT_NEAR(e.elo, 147.19, 0.01);
  EXPECT_NEAR(e.elo_low, 86.23, 0.01);
  EXPECT_NEAR(e.elo_high, 218.25, 0.01);
}

TEST(EloTest, PentanomialInterval) {
  // Pairs with 0, 1/2, 1, 3/2, 2 points: 5, 10, 50, 25, 10 (100 pairs), as mean scores 0, .25, .5,
  // .75, 1: mean (2.5 + 25 + 18.75 + 10) / 100 = 0.5625; variance
  // (5*.5625^2 + 10*.3125^2 + 50*.0625^2 + 25*.1875^2 + 10*.4375^2) / 100 = 0.05546875;
  // standard error sqrt(0.05546875 / 100) = 0.0235518; Elo 43.66 [11.36, 76.73].
  const EloEstimate e = estimate_elo(pentanomial({5, 10, 50, 25, 10}));
  EXPECT_NEAR(e.score, 0.5625, 1e-12);
  EXPECT_NEAR(e.score_stderr, 0.0235518, 1e-6);
  EXPECT_NEAR(e.elo, 43.66, 0.01);
  EXPECT_NEAR(e.elo_low, 11.36, 0.01);
  EXPECT_NEAR(e.elo_high, 76.73, 0.01);
}

TEST(EloTest, SprtBounds) {
  // alpha = beta = 0.05: log(0.05 / 0.95) = -log(19) = -2.944439 and +2.944439.
  const SprtBounds b = sprt_bounds(SprtConfig{0, 20, 0.05, 0.05});
  EXPECT_NEAR(b.lower, -2.944439, 1e-6);
  EXPECT_NEAR(b.upper, 2.944439, 1e-6);
  // alpha = 0.05, beta = 0.1: log(0.1 / 0.95) = -2.251292, log(0.9 / 0.05) = 2.890372.
  const SprtBounds c = sprt_bounds(SprtConfig{0, 20, 0.05, 0.1});
  EXPECT_NEAR(c.lower, -2.251292, 1e-6);
  EXPECT_NEAR(c.upper, 2.890372, 1e-6);
}

TEST(EloTest, LlrWithoutDrawsIsTheBinomialRatio) {
  // With wins and losses only, the constrained MLE under mean s is just (1 - s, s), so
  // LLR = W log(s1 / s0) + L log((1 - s1) / (1 - s0)). elo0 = 0, elo1 = 20: s0 = 0.5,
  // s1 = 0.5287506; W = 60, L = 40: 60 * 0.0559088 + 40 * (-0.0592206) = 0.98570
  // (the 1e-3 regularisation moves it by less than 1e-3).
  EXPECT_NEAR(sprt_llr(trinomial(60, 0, 40), 0, 20), 0.98570, 2e-3);
}

TEST(EloTest, LlrWithDrawsMatchesTheNormalApproximation) {
  // For small Elo differences the GSPRT agrees with the normal approximation
  // LLR ~ N (s1 - s0)(2 mean - s0 - s1) / (2 var). W 40, D 30, L 30: mean 0.55,
  // var (40*.45^2 + 30*.05^2 + 30*.55^2) / 100 = 0.1725; s0 = 0.5, s1 = score(10) = 0.5143868:
  // 100 * 0.0143868 * (1.1 - 1.0143868) / 0.345 = 0.35702.
  EXPECT_NEAR(sprt_llr(trinomial(40, 30, 30), 0, 10), 0.35702, 0.01);
  // Symmetry: the mirror-image results give the LLR of the mirrored hypotheses.
  EXPECT_NEAR(sprt_llr(trinomial(30, 30, 40), -10, 0), -sprt_llr(trinomial(40, 30, 30), 0, 10),
              1e-6);
  EXPECT_DOUBLE_EQ(sprt_llr(trinomial(0, 0, 0), 0, 10), 0.0);
}

TEST(EloTest, LlrNeedsManyWinsWhenThereIsNoVariance) {
  // A few wins in a row must not decide: 5 straight wins give only about 5 log(s1 / s0).
  const double llr = sprt_llr(trinomial(5, 0, 0), 0, 20);
  EXPECT_GT(llr, 0.0);
  EXPECT_LT(llr, 1.0);
  EXPECT_EQ(sprt_verdict(llr, sprt_bounds({})), SprtVerdict::kContinue);
  EXPECT_EQ(sprt_verdict(3.0, sprt_bounds({})), SprtVerdict::kAcceptH1);
  EXPECT_EQ(sprt_verdict(-3.0, sprt_bounds({})), SprtVerdict::kAcceptH0);
}

TEST(EloTest, ConstrainedMleHasTheAskedMean) {
  const std::vector<double> values = {0.0, 0.25, 0.5, 0.75, 1.0};
  const std::vector<double> freq = {0.1, 0.2, 0.3, 0.25, 0.15};
  const auto p = constrained_mle(values, freq, 0.6);
  double sum = 0.0, mean = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += p[i], mean += p[i] * values[i];
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_NEAR(mean, 0.6, 1e-9);
}

TEST(EloTest, ParseSprt) {
  const SprtConfig c = parse_sprt("elo0=0,elo1=20");
  EXPECT_EQ(c.elo0, 0.0);
  EXPECT_EQ(c.elo1, 20.0);
  EXPECT_EQ(c.alpha, 0.05);
  const SprtConfig d = parse_sprt("elo1=5,elo0=-5,alpha=0.1,beta=0.2");
  EXPECT_EQ(d.elo0, -5.0);
  EXPECT_EQ(d.beta, 0.2);
  EXPECT_THROW(parse_sprt("elo0=0"), std::invalid_argument);
  EXPECT_THROW(parse_sprt("elo0=20,elo1=0"), std::invalid_argument);
  EXPECT_THROW(parse_sprt("elo0=0,elo1=x"), std::invalid_argument);
  EXPECT_THROW(parse_sprt("elo0=0,elo1=20,gamma=1"), std::invalid_argument);
  EXPECT_THROW(parse_sprt("elo0=0,elo1=20,alpha=0.7"), std::invalid_argument);
}

TEST(EloTest, FormatElo) {
  EXPECT_EQ(format_elo(35.24), "+35.2");
  EXPECT_EQ(format_elo(-3.0), "-3.0");
  EXPECT_EQ(format_elo(elo_from_score(1.0)), "+inf");
}

}  // namespace
}  // namespace oppidum::arena
