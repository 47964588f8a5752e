// Elo, interval and SPRT arithmetic against hand-computed values.
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

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

// Wilson's interval for a mean score m over n games: the roots of (m - p)^2 = z^2 p (1 - p) / n.
std::pair<double, double> wilson(double m, double n) {
  const double c = kZ95 * kZ95 / n;
  const double centre = m + c / 2, half = kZ95 * std::sqrt(m * (1 - m) / n + c / (4 * n));
  return {(centre - half) / (1 + c), (centre + half) / (1 + c)};
}

void expect_honest(const EloEstimate& e) {
  EXPECT_TRUE(std::isfinite(e.elo) && std::isfinite(e.elo_low) && std::isfinite(e.elo_high));
  EXPECT_LT(e.elo_low, e.elo);
  EXPECT_LT(e.elo, e.elo_high);
}

TEST(EloTest, WinsAndLossesGiveWilsonsIntervalWithTheJeffreysPrior) {
  // 60 wins, 40 losses, plus the prior's half win and half loss: 60.5 of 101, mean 0.5990099.
  const EloEstimate e = estimate_elo(trinomial(60, 0, 40));
  const auto [low, high] = wilson(60.5 / 101, 101);
  EXPECT_NEAR(e.score, 0.6, 1e-12);  // as observed
  EXPECT_NEAR(e.elo, elo_from_score(60.5 / 101), 1e-9);
  EXPECT_NEAR(e.elo_low, elo_from_score(low), 1e-3);
  EXPECT_NEAR(e.elo_high, elo_from_score(high), 1e-3);
  EXPECT_NEAR(e.score_stderr, std::sqrt(60.5 / 101 * 40.5 / 101 / 101), 1e-12);
}

TEST(EloTest, PerfectScoresAreFinite) {
  // 4-0: 4.5 of 5, Elo 400 log10(9) = +381.7, Wilson [-25.8, +789.2]; 0-4 the mirror image.
  const EloEstimate won = estimate_elo(trinomial(4, 0, 0));
  expect_honest(won);
  EXPECT_NEAR(won.score, 1.0, 1e-12);
  EXPECT_NEAR(won.elo, 381.697, 1e-3);
  EXPECT_NEAR(won.elo_low, -25.796, 1e-2);
  EXPECT_NEAR(won.elo_high, 789.190, 1e-2);
  const EloEstimate lost = estimate_elo(trinomial(0, 0, 4));
  expect_honest(lost);
  EXPECT_NEAR(lost.elo, -381.697, 1e-3);
  EXPECT_NEAR(lost.elo_low, -789.190, 1e-2);
  EXPECT_NEAR(lost.elo_high, 25.796, 1e-2);
  // As two pairs of 2-0 (arena's 4-0): the prior is a quarter pair at 0 and at 2 points, 2.25 of
  // 2.5 pairs: the same estimate, Wilson on 2.5 units [-130.0, +893.4].
  const EloEstimate pairs = estimate_elo(pentanomial({0, 0, 0, 0, 2}));
  expect_honest(pairs);
  EXPECT_NEAR(pairs.elo, 381.697, 1e-3);
  EXPECT_NEAR(pairs.elo_low, -129.992, 1e-2);
  EXPECT_NEAR(pairs.elo_high, 893.386, 1e-2);
  // 100-0 stays finite and its interval excludes equality by far.
  const EloEstimate hundred = estimate_elo(trinomial(100, 0, 0));
  expect_honest(hundred);
  EXPECT_GT(hundred.elo_low, 400.0);
}

// The interval's ends solve (mean - p)^2 = z^2 var(p) / n, var(p) the variance of the distribution
// with mean p closest to the counts with the prior (`counts_with_prior`, n units).
void expect_score_interval(const EloEstimate& e, const OutcomeCounts& counts_with_prior) {
  const double n = counts_with_prior.total(), mean = counts_with_prior.mean();
  std::vector<double> f = counts_with_prior.counts;
  for (double& x : f) x /= n;
  for (double elo : {e.elo_low, e.elo_high}) {
    const double p = score_from_elo(elo);
    const auto q = constrained_mle(counts_with_prior.values, f, p);
    double var = 0;
    for (std::size_t i = 0; i < q.size(); ++i)
      var += q[i] * (counts_with_prior.values[i] - p) * (counts_with_prior.values[i] - p);
    EXPECT_NEAR((mean - p) * (mean - p), kZ95 * kZ95 * var / n, 1e-6) << "at Elo " << elo;
  }
}

TEST(EloTest, ZeroVarianceScoresGetAnInterval) {
  // All draws: no spread in the games, but not certainty: 10 draws are 0.0 with a finite interval
  // of nonzero width, symmetric.
  const EloEstimate draws = estimate_elo(trinomial(0, 10, 0));
  expect_honest(draws);
  EXPECT_DOUBLE_EQ(draws.elo, 0.0);
  EXPECT_NEAR(draws.elo_low, -draws.elo_high, 1e-6);
  EXPECT_GT(draws.elo_high, 10.0);
  expect_score_interval(draws, OutcomeCounts{{0, 0.5, 1}, {0.5, 10, 0.5}});
  // +4 =0 -4 as four pairs of one point each (the gate's case that printed 0.0 [0, 0]).
  const EloEstimate split = estimate_elo(pentanomial({0, 0, 4, 0, 0}));
  expect_honest(split);
  EXPECT_DOUBLE_EQ(split.elo, 0.0);
  EXPECT_NEAR(split.elo_low, -split.elo_high, 1e-6);
  EXPECT_GT(split.elo_high, 10.0);
  expect_score_interval(split, OutcomeCounts{{0, .25, .5, .75, 1}, {.25, 0, 4, 0, .25}, 2});
  // +4 =0 -4 as games.
  const EloEstimate games = estimate_elo(trinomial(4, 0, 4));
  expect_honest(games);
  EXPECT_NEAR(games.elo_low, -games.elo_high, 1e-6);
  // No games at all: the prior alone, a wide but finite interval around 0.
  const EloEstimate none = estimate_elo(pentanomial({}));
  expect_honest(none);
  EXPECT_NEAR(none.score, 0.5, 1e-12);
}

TEST(EloTest, ManyPairsAgreeWithTheNormalApproximation) {
  // Pairs with 0, 1/2, 1, 3/2, 2 points: 5, 10, 50, 25, 10 (100 pairs): mean 0.5625, standard
  // error 0.0235518, normal approximation Elo 43.66 [11.36, 76.73]; the prior and the score
  // interval move it by about an Elo point.
  const EloEstimate e = estimate_elo(pentanomial({5, 10, 50, 25, 10}));
  expect_honest(e);
  EXPECT_NEAR(e.score, 0.5625, 1e-12);
  EXPECT_NEAR(e.elo, 43.66, 1.0);
  EXPECT_NEAR(e.elo_low, 11.36, 2.0);
  EXPECT_NEAR(e.elo_high, 76.73, 2.0);
  expect_score_interval(e, OutcomeCounts{{0, .25, .5, .75, 1}, {5.25, 10, 50, 25, 10.25}, 2});
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
  // (the 1e-3 regularisation of the unseen draws moves it by less than 1e-4).
  EXPECT_NEAR(sprt_llr(trinomial(60, 0, 40), 0, 20), 0.98570, 1e-4);
}

// fishtest's LLR_logistic to the last digits, computed with its regularisation (an outcome never
// seen counts 1e-3; N is the regularised total): 39 pairs won twice against elo0 = 300,
// elo1 = 500 give 4.2488066, at the upper bound of alpha 0.01, beta 0.3 (4.2484952), where
// adding 1e-3 to every count and multiplying by the raw N gave 4.24837, just under it.
TEST(EloTest, LlrIsFishtestsWithItsRegularisation) {
  EXPECT_NEAR(sprt_llr(pentanomial({0, 0, 0, 0, 39}), 300, 500), 4.2488066, 1e-6);
  EXPECT_GE(sprt_llr(pentanomial({0, 0, 0, 0, 39}), 300, 500),
            sprt_bounds(SprtConfig{300, 500, 0.01, 0.3}).upper);
  EXPECT_NEAR(sprt_llr(pentanomial({3, 5, 10, 6, 4}), 0, 20), 0.1150493, 1e-6);
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
  // Each key once, and hypotheses a game result can weigh (before: elo1=7000 played the match and
  // then failed in the likelihood; a second elo1 silently replaced the first).
  EXPECT_THROW(parse_sprt("elo0=0,elo1=5,elo1=3000"), std::invalid_argument);
  EXPECT_THROW(parse_sprt("elo0=0,elo1=7000"), std::invalid_argument);
  EXPECT_THROW(parse_sprt("elo0=-1001,elo1=0"), std::invalid_argument);
  EXPECT_NO_THROW(parse_sprt("elo0=-1000,elo1=1000"));
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
