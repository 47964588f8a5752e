// Elo arithmetic for matches: score <-> Elo difference, a 95% interval, and the sequential
// probability ratio test (SPRT) that stops a match as soon as the evidence decides.
//
// Model: the logistic Elo model, expected score s = 1 / (1 + 10^(-elo / 400)).
//
// Results are tallied as an outcome distribution: `values[i]` is a score in [0, 1] and `counts[i]`
// how often it occurred. Per game (trinomial): values 0, 1/2, 1 for a loss, draw, win. Per pair of
// games with colours swapped (pentanomial): values 0, 1/4, 1/2, 3/4, 1, the mean score of the pair.
// Pairs are the better unit for paired openings: a pair's two games are correlated (the same
// opening), and treating them as independent games overstates the variance.
//
// Estimate and interval (docs/BASELINES.md, "Matches"): a weak prior of one virtual game, half a
// win and half a loss (the Jeffreys prior of a win rate; as units, 1/2 at score 0 and 1/2 at score
// 1 per game, 1/4 and 1/4 per pair), is added to the counts, so that no result is certain: the
// estimate is the Elo of the mean score of the counts with the prior (finite for 4-0 and 0-4), and
// the interval is the score interval of the outcome distribution (Wilson's interval, generalised
// from wins and losses to any outcome values): the scores p with (mean - p)^2 <= z^2 var(p) / N,
// where var(p) is the variance of the distribution with mean p closest to the counts (the
// constrained maximum-likelihood fit the SPRT uses) and N the units with the prior, mapped to Elo.
// With wins and losses only it is exactly Wilson's interval on the counts with the prior. Both ends
// are finite, the estimate lies strictly inside, and the width is never zero (all draws included).
//
// SPRT: the generalised SPRT of fishtest's "logistic Elo" model (M. Van den Bergh, "A simple
// derivation of the GSPRT"; fishtest's stat_util.LLR_logistic). For each hypothesis elo_k the
// outcome distribution is estimated by maximum likelihood under the constraint that its mean score
// is s_k = score(elo_k); LLR = N * sum_i p_i * log(p1_i / p0_i), with p the observed frequencies.
// As fishtest regularises them, an outcome never seen counts 1e-3 (so that the logarithms stay
// finite), and N is the regularised total.
// H0: elo = elo0, H1: elo = elo1; stop with H1 when LLR >= log((1 - beta) / alpha), with H0 when
// LLR <= log(beta / (1 - alpha)).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oppidum::arena {

inline constexpr double kZ95 = 1.959963984540054;

// Elo difference of an expected score; +-infinity at 1 and 0.
double elo_from_score(double score);
double score_from_elo(double elo);

struct OutcomeCounts {
  std::vector<double> values;  // scores in [0, 1]
  std::vector<double> counts;  // occurrences of each value, >= 0
  double games_per_unit = 1.0; // 1 for games, 2 for pairs (the prior is one game's worth)
  double total() const;
  double mean() const;      // 0.5 when empty
  double variance() const;  // population variance of one unit; 0 when empty
};

// Per game: losses, draws, wins.
OutcomeCounts trinomial(double wins, double draws, double losses);
// Per pair: counts[k] = pairs where A scored k/2 points over its two games (k = 0..4).
OutcomeCounts pentanomial(const std::array<double, 5>& counts);

// Those counts as text, "n0/n1/n2/n3/n4" (k = 0..4): a match report's `pairs` line, the pairs
// columns of a run's arena.csv, the last field of a results line.
template <class Count>
std::string format_pair_counts(const std::array<Count, 5>& counts) {
  std::string out;
  for (std::size_t k = 0; k < 5; ++k) out += (k ? "/" : "") + std::to_string(counts[k]);
  return out;
}
// The counts of such a text (each a whole number of 1 to 10 digits), or nothing for any other
// text (an empty one included).
std::optional<std::array<std::int64_t, 5>> parse_pair_counts(const std::string& text);
// Whether pair counts are the games and points of `wins` `draws` `losses` (two games a pair; A's
// points k/2 in a pair of count k).
template <class Count>
bool pair_counts_fit(const std::array<Count, 5>& counts, std::int64_t wins, std::int64_t draws,
                     std::int64_t losses) {
  std::int64_t pairs = 0, halves = 0;
  for (std::size_t k = 0; k < 5; ++k) {
    pairs += counts[k];
    halves += static_cast<std::int64_t>(k) * counts[k];
  }
  return 2 * pairs == wins + draws + losses && halves == 2 * wins + draws;
}

struct EloEstimate {
  double score = 0.5;     // mean score as observed (0.5 with no games)
  double elo = 0.0;       // the estimate: Elo of the mean score with the prior; always finite
  double elo_low = 0.0;   // the interval's ends: finite, elo_low < elo < elo_high
  double elo_high = 0.0;
  double score_stderr = 0.0;  // standard error of the mean score with the prior
};

EloEstimate estimate_elo(const OutcomeCounts& outcomes, double z = kZ95);

// The hypotheses' Elo differences lie within +-kMaxSprtElo: a score of 99.7% (beyond it the
// expected score rounds towards 1 and no game result can weigh for or against it).
inline constexpr double kMaxSprtElo = 1000.0;

struct SprtConfig {
  double elo0 = 0.0;
  double elo1 = 20.0;
  double alpha = 0.05;  // the chance of accepting H1 when H0 holds
  double beta = 0.05;   // the chance of accepting H0 when H1 holds
  // Throws std::invalid_argument unless -kMaxSprtElo <= elo0 < elo1 <= kMaxSprtElo and
  // 0 < alpha, beta < 0.5.
  void validate() const;
  std::string describe() const;  // "elo0=0,elo1=20,alpha=0.05,beta=0.05"
};

// "elo0=0,elo1=20[,alpha=0.05,beta=0.05]" (any order, each key once; elo0 and elo1 required); throws
// std::invalid_argument naming what is wrong.
SprtConfig parse_sprt(const std::string& text);

struct SprtBounds {
  double lower = 0.0;  // log(beta / (1 - alpha)): accept H0 at or below
  double upper = 0.0;  // log((1 - beta) / alpha): accept H1 at or above
};
SprtBounds sprt_bounds(const SprtConfig& config);

// The maximum-likelihood distribution over `values` whose mean is `mean`, closest to the observed
// frequencies `frequencies` (which sum to 1, all positive); `mean` must lie strictly between the
// smallest and largest value.
std::vector<double> constrained_mle(const std::vector<double>& values,
                                    const std::vector<double>& frequencies, double mean);

// The GSPRT log-likelihood ratio of H1 (elo1) against H0 (elo0); 0 for no data.
double sprt_llr(const OutcomeCounts& outcomes, double elo0, double elo1);

enum class SprtVerdict { kContinue, kAcceptH0, kAcceptH1 };
SprtVerdict sprt_verdict(double llr, const SprtBounds& bounds);

// "+35.2", "-inf", "+inf": an Elo value for tables and reports.
std::string format_elo(double elo);

}  // namespace oppidum::arena
