#include "arena/elo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "arena/spec.h"

namespace oppidum::arena {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRegularisation = 1e-3;
// The prior of estimate_elo, in games (half a win, half a loss).
constexpr double kPriorGames = 1.0;
// How close to a score of 0 or 1 an interval end may come (about 3600 Elo).
constexpr double kScoreEdge = 1e-9;

}  // namespace

double elo_from_score(double score) {
  if (score <= 0.0) return -kInf;
  if (score >= 1.0) return kInf;
  return 400.0 * std::log10(score / (1.0 - score));
}

double score_from_elo(double elo) { return 1.0 / (1.0 + std::pow(10.0, -elo / 400.0)); }

double OutcomeCounts::total() const {
  double n = 0.0;
  for (double c : counts) n += c;
  return n;
}

double OutcomeCounts::mean() const {
  const double n = total();
  if (n <= 0.0) return 0.5;
  double sum = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) sum += values[i] * counts[i];
  return sum / n;
}

double OutcomeCounts::variance() const {
  const double n = total();
  if (n <= 0.0) return 0.0;
  const double m = mean();
  double sum = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) sum += counts[i] * (values[i] - m) * (values[i] - m);
  return sum / n;
}

OutcomeCounts trinomial(double wins, double draws, double losses) {
  return {{0.0, 0.5, 1.0}, {losses, draws, wins}};
}

OutcomeCounts pentanomial(const std::array<double, 5>& counts) {
  return {{0.0, 0.25, 0.5, 0.75, 1.0}, {counts.begin(), counts.end()}, 2.0};
}

std::optional<std::array<std::int64_t, 5>> parse_pair_counts(const std::string& text) {
  std::array<std::int64_t, 5> counts{};
  std::size_t at = 0;
  for (std::size_t k = 0; k < 5; ++k) {
    const std::size_t end = k < 4 ? text.find('/', at) : text.size();
    if (end == std::string::npos || end == at || end - at > 10) return std::nullopt;
    std::int64_t v = 0;
    for (std::size_t i = at; i < end; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      v = 10 * v + (text[i] - '0');
    }
    counts[k] = v;
    at = end + 1;
  }
  return counts;
}

EloEstimate estimate_elo(const OutcomeCounts& outcomes, double z) {
  EloEstimate e;
  e.score = outcomes.mean();
  // The counts with the prior: one virtual game, half at the lowest value and half at the highest.
  OutcomeCounts prior = outcomes;
  const auto [lowest, highest] = std::minmax_element(prior.values.begin(), prior.values.end());
  if (lowest == prior.values.end() || !(*lowest < *highest))
    throw std::invalid_argument("estimate_elo: the outcome values must span a range");
  const double weight = kPriorGames / 2.0 / outcomes.games_per_unit;
  prior.counts[static_cast<std::size_t>(lowest - prior.values.begin())] += weight;
  prior.counts[static_cast<std::size_t>(highest - prior.values.begin())] += weight;
  const double n = prior.total();
  const double mean = prior.mean();
  e.elo = elo_from_score(mean);
  e.score_stderr = std::sqrt(prior.variance() / n);

  // The score interval: (mean - p)^2 = z^2 var(p) / n on either side of the mean, by bisection
  // (the left side is positive at the far end, negative at the mean).
  std::vector<double> frequencies = prior.counts;
  for (double& f : frequencies) f /= n;
  auto outside = [&](double p) {
    const std::vector<double> q = constrained_mle(prior.values, frequencies, p);
    double mass = 0.0, spread = 0.0;
    for (std::size_t i = 0; i < q.size(); ++i)
      mass += q[i], spread += q[i] * (prior.values[i] - p) * (prior.values[i] - p);
    return (mean - p) * (mean - p) > z * z * (spread / mass) / n;
  };
  auto end = [&](double far) {
    double inside = mean;
    for (int iteration = 0; iteration < 100; ++iteration) {
      const double mid = 0.5 * (inside + far);
      if (mid == inside || mid == far) break;  // (no double between them: nothing would change)
      if (outside(mid)) far = mid;
      else inside = mid;
    }
    return 0.5 * (inside + far);
  };
  const double edge = kScoreEdge * (*highest - *lowest);
  e.elo_low = elo_from_score(end(*lowest + edge));
  e.elo_high = elo_from_score(end(*highest - edge));
  return e;
}

void SprtConfig::validate() const {
  if (!std::isfinite(elo0) || !std::isfinite(elo1) || !(elo0 < elo1))
    throw std::invalid_argument("sprt: elo0 must be below elo1, got elo0=" + format_number(elo0) +
                                ", elo1=" + format_number(elo1));
  for (const double elo : {elo0, elo1})
    if (std::abs(elo) > kMaxSprtElo)
      throw std::invalid_argument("sprt: elo0 and elo1 must be within " +
                                  format_number(-kMaxSprtElo) + ".." + format_number(kMaxSprtElo) +
                                  " (a score of 99.7%), got " + format_number(elo));
  if (!(alpha > 0.0 && alpha < 0.5))
    throw std::invalid_argument("sprt: alpha must be in (0, 0.5), got " + format_number(alpha));
  if (!(beta > 0.0 && beta < 0.5))
    throw std::invalid_argument("sprt: beta must be in (0, 0.5), got " + format_number(beta));
}

std::string SprtConfig::describe() const {
  return "elo0=" + format_number(elo0) + ",elo1=" + format_number(elo1) +
         ",alpha=" + format_number(alpha) + ",beta=" + format_number(beta);
}

SprtConfig parse_sprt(const std::string& text) {
  SprtConfig config;
  bool has_elo0 = false, has_elo1 = false;
  std::set<std::string> seen;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("sprt: '" + item + "' is not key=value (e.g. elo0=0,elo1=20)");
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (!seen.insert(key).second) throw std::invalid_argument("sprt: " + key + " is given twice");
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(number))
      throw std::invalid_argument("sprt: " + key + " must be a number, got '" + value + "'");
    if (key == "elo0") config.elo0 = number, has_elo0 = true;
    else if (key == "elo1") config.elo1 = number, has_elo1 = true;
    else if (key == "alpha") config.alpha = number;
    else if (key == "beta") config.beta = number;
    else throw std::invalid_argument("sprt: unknown key '" + key + "'; keys: elo0, elo1, alpha, beta");
  }
  if (!has_elo0 || !has_elo1)
    throw std::invalid_argument("sprt: elo0 and elo1 are required (e.g. elo0=0,elo1=20), got '" +
                                text + "'");
  config.validate();
  return config;
}

SprtBounds sprt_bounds(const SprtConfig& config) {
  return {std::log(config.beta / (1.0 - config.alpha)), std::log((1.0 - config.beta) / config.alpha)};
}

std::vector<double> constrained_mle(const std::vector<double>& values,
                                    const std::vector<double>& frequencies, double mean) {
  // The maximiser of sum f_i log p_i subject to sum p_i = 1, sum p_i v_i = mean is
  // p_i = f_i / (1 + lambda (v_i - mean)), where lambda solves
  // g(lambda) = sum f_i (v_i - mean) / (1 + lambda (v_i - mean)) = 0. g decreases on the interval
  // where every denominator is positive, from +inf to -inf: bisection finds the root.
  double lo = -kInf, hi = kInf;
  for (double v : values) {
    const double d = v - mean;
    if (d > 0) lo = std::max(lo, -1.0 / d);
    if (d < 0) hi = std::min(hi, -1.0 / d);
  }
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw std::invalid_argument("constrained_mle: the mean must lie strictly between the values");
  auto g = [&](double lambda) {
    double sum = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double d = values[i] - mean;
      sum += frequencies[i] * d / (1.0 + lambda * d);
    }
    return sum;
  };
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (g(mid) > 0) lo = mid;
    else hi = mid;
  }
  const double lambda = 0.5 * (lo + hi);
  std::vector<double> p(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    p[i] = frequencies[i] / (1.0 + lambda * (values[i] - mean));
  return p;
}

double sprt_llr(const OutcomeCounts& outcomes, double elo0, double elo1) {
  const double n = outcomes.total();
  if (n <= 0.0) return 0.0;
  // As fishtest's results_to_pdf: an outcome never seen counts kRegularisation, and N is the
  // regularised total.
  std::vector<double> frequencies = outcomes.counts;
  double regularised = 0.0;
  for (double& f : frequencies) regularised += (f = f > 0.0 ? f : kRegularisation);
  for (double& f : frequencies) f /= regularised;
  const auto p0 = constrained_mle(outcomes.values, frequencies, score_from_elo(elo0));
  const auto p1 = constrained_mle(outcomes.values, frequencies, score_from_elo(elo1));
  double llr = 0.0;
  for (std::size_t i = 0; i < frequencies.size(); ++i)
    llr += frequencies[i] * std::log(p1[i] / p0[i]);
  return regularised * llr;
}

SprtVerdict sprt_verdict(double llr, const SprtBounds& bounds) {
  if (llr >= bounds.upper) return SprtVerdict::kAcceptH1;
  if (llr <= bounds.lower) return SprtVerdict::kAcceptH0;
  return SprtVerdict::kContinue;
}

std::string format_elo(double elo) {
  if (std::isinf(elo)) return elo > 0 ? "+inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f", elo);
  return buffer;
}

}  // namespace oppidum::arena
