#include "arena/tune.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "arena/concrete_search.h"

namespace oppidum::arena {
namespace {

// Which samples a loss or a fit covers: the training games, the held-out ones, or all.
enum class Split { kTrain, kTest, kAll };

bool in_split(std::uint32_t game, Split split, int holdout_every) {
  if (split == Split::kAll) return true;
  const bool held_out = holdout_every > 0 && game % static_cast<std::uint32_t>(holdout_every) == 0;
  return (split == Split::kTest) == held_out;
}

double dot(const float* x, const std::vector<double>& w) {
  double s = 0;
  for (std::size_t j = 0; j < w.size(); ++j) s += w[j] * x[j];
  return s;
}

// log(1 + e^z), without overflow.
double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

// Mean log loss of sigmoid(k * w . x) against y; `count` receives the samples scored.
double split_loss(const TuneSamples& s, const std::vector<double>& w, double k, Split split,
                  int holdout_every, std::size_t* count = nullptr) {
  double total = 0;
  std::size_t n = 0;
  const auto f = static_cast<std::size_t>(s.features);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!in_split(s.game[i], split, holdout_every)) continue;
    const double z = k * dot(&s.x[i * f], w);
    // -(y log p + (1 - y) log(1 - p)) with p = sigmoid(z)
    total += s.y[i] * softplus(-z) + (1 - s.y[i]) * softplus(z);
    ++n;
  }
  if (count != nullptr) *count = n;
  return n == 0 ? 0 : total / static_cast<double>(n);
}

// Golden-section search for the K in [kMinFittedK, kMaxFittedK] (on a log scale) with the least
// training loss.
double fit_k(const TuneSamples& s, const std::vector<double>& w, int holdout_every) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double lo = std::log(kMinFittedK), hi = std::log(kMaxFittedK);
  auto loss = [&](double log_k) { return split_loss(s, w, std::exp(log_k), Split::kTrain,
                                                    holdout_every); };
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = loss(a), fb = loss(b);
  for (int i = 0; i < 60; ++i) {
    if (fa < fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = loss(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = loss(b);
    }
  }
  return std::exp((lo + hi) / 2);
}

// Solves h * x = g for a symmetric positive definite h (Cholesky); n is small (<= 32).
std::vector<double> solve(std::vector<double> h, std::vector<double> g, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = h[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= h[j * n + k] * h[j * n + k];
    d = std::sqrt(std::max(d, 1e-300));
    h[j * n + j] = d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double v = h[i * n + j];
      for (std::size_t k = 0; k < j; ++k) v -= h[i * n + k] * h[j * n + k];
      h[i * n + j] = v / d;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // L y = g
    for (std::size_t k = 0; k < i; ++k) g[i] -= h[i * n + k] * g[k];
    g[i] /= h[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {  // L^T x = y
    for (std::size_t k = i + 1; k < n; ++k) g[i] -= h[k * n + i] * g[k];
    g[i] /= h[i * n + i];
  }
  return g;
}

}  // namespace

bool add_game_samples(const Game& game, const std::string& start, const std::vector<Action>& moves,
                      int result_first, TuneSamples& samples, bool may_stop_early) {
  if (result_first < -1 || result_first > 1)
    throw TuneError("tune: a result must be +1, 0 or -1 for the first side, not " +
                    std::to_string(result_first));
  std::unique_ptr<GameState> state = start.empty() ? game.initial_state() : game.parse_state(start);
  const bool added = with_position_type(game, [&](auto tag) {
    using P = typename decltype(tag)::Position;
    // The game first, whole: its positions' features and the checks; then the samples.
    P pos = search::position_of<P>(*state);
    std::vector<float> x;
    std::vector<float> y;
    ClassicFeatures features;
    int count = samples.features;
    for (std::size_t i = 0;; ++i) {
      if (pos.is_terminal()) {
        if (i < moves.size())
          throw TuneError("tune: move " + std::to_string(i + 1) + " follows the end of the game (" +
                          pos.to_string() + ")");
        const double actual = pos.result(0);
        if (actual != result_first)
          throw TuneError("tune: the recorded result " + std::to_string(result_first) +
                          " (first side's view) differs from the final position's " +
                          std::to_string(static_cast<int>(actual)) + " (" + pos.to_string() + ")");
        break;
      }
      if (classic_features(pos, features)) {
        if (count == 0) count = features.count;
        if (features.count != count)
          throw TuneError("tune: the " + game.name() + " features changed count within the data");
        x.insert(x.end(), features.values.begin(), features.values.begin() + features.count);
        const int own = pos.side_to_move() == 0 ? result_first : -result_first;
        y.push_back(static_cast<float>(own + 1) / 2.0f);
      }
      if (i == moves.size()) {
        if (!may_stop_early || result_first == 0) return false;
        break;
      }
      if (!pos.is_legal(moves[i]))
        throw TuneError("tune: move " + std::to_string(i + 1) + " (action " +
                        std::to_string(moves[i]) + ") is illegal in " + pos.to_string());
      pos.apply(moves[i]);
    }
    samples.features = count;
    samples.x.insert(samples.x.end(), x.begin(), x.end());
    samples.y.insert(samples.y.end(), y.begin(), y.end());
    samples.game.insert(samples.game.end(), y.size(), samples.games);
    return true;
  });
  if (added) ++samples.games;
  return added;
}

std::vector<std::string> classic_feature_names(const Game& game) {
  return with_position_type(game, [](auto tag) {
    using P = typename decltype(tag)::Position;
    return classic_model(P::initial()).names;
  });
}

std::vector<double> classic_weights(const Game& game) {
  return with_position_type(game, [](auto tag) {
    using P = typename decltype(tag)::Position;
    return classic_model(P::initial()).weights;
  });
}

std::string classic_weights_source(const Game& game) {
  return with_position_type(game, [](auto tag) {
    using P = typename decltype(tag)::Position;
    return classic_model(P::initial()).source;
  });
}

TuneResult tune_weights(const TuneSamples& s, const std::vector<double>& initial,
                        const TuneOptions& options) {
  const std::size_t n = initial.size();
  if (s.size() == 0) throw TuneError("tune: no positions to fit (the records hold no games)");
  if (s.features != static_cast<int>(n) || s.x.size() != s.size() * n || s.game.size() != s.size())
    throw TuneError("tune: the samples have " + std::to_string(s.features) +
                    " features, the evaluation " + std::to_string(n));
  for (float v : s.x)
    if (!std::isfinite(v)) throw TuneError("tune: a feature value is not finite");
  bool wins = false, losses = false;
  for (float y : s.y) {
    if (!std::isfinite(y) || y < 0 || y > 1)
      throw TuneError("tune: a result is not in [0, 1]");
    wins = wins || y > 0.5f;
    losses = losses || y < 0.5f;
  }
  if (!wins || !losses)
    throw TuneError("tune: the results are all alike (no win against a loss for the side to "
                    "move), so they say nothing about the evaluation");
  TuneResult r;
  const int every = options.holdout_every;
  r.k = options.fixed_k > 0 ? options.fixed_k : fit_k(s, initial, every);
  // (the search ends far closer than 0.01 in log K to the minimum: 60 golden-section steps)
  r.k_at_bound = options.fixed_k <= 0 && (std::log(r.k / kMinFittedK) < 0.01 ||
                                          std::log(kMaxFittedK / r.k) < 0.01);
  r.train_loss_before = split_loss(s, initial, r.k, Split::kTrain, every, &r.train_samples);
  r.test_loss_before = split_loss(s, initial, r.k, Split::kTest, every, &r.test_samples);
  if (r.train_samples == 0) throw TuneError("tune: every game is held out; nothing to fit on");

  // Newton's method on beta = K * w (logistic regression without intercept), ridge on beta.
  std::vector<double> beta(n);
  for (std::size_t j = 0; j < n; ++j) beta[j] = r.k * initial[j];
  const auto f = static_cast<std::size_t>(s.features);
  const double m = static_cast<double>(r.train_samples);
  auto loss_of = [&](const std::vector<double>& b) {
    double ridge = 0;
    for (double v : b) ridge += v * v;
    return split_loss(s, b, 1.0, Split::kTrain, every) + options.ridge * ridge / 2;
  };
  double loss = loss_of(beta);
  for (int it = 0; it < options.max_iterations; ++it) {
    std::vector<double> g(n, 0.0), h(n * n, 0.0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!in_split(s.game[i], Split::kTrain, every)) continue;
      const float* x = &s.x[i * f];
      const double p = 1 / (1 + std::exp(-dot(x, beta)));
      const double e = p - s.y[i], w = p * (1 - p);
      for (std::size_t a = 0; a < n; ++a) {
        g[a] += e * x[a];
        for (std::size_t b = 0; b <= a; ++b) h[a * n + b] += w * x[a] * x[b];
      }
    }
    for (std::size_t a = 0; a < n; ++a) {
      g[a] = g[a] / m + options.ridge * beta[a];
      for (std::size_t b = 0; b <= a; ++b) {
        h[a * n + b] = h[a * n + b] / m + (a == b ? options.ridge : 0);
        h[b * n + a] = h[a * n + b];
      }
    }
    const std::vector<double> step = solve(h, g, n);
    // Backtracking: the full Newton step, halved until the loss does not rise.
    double t = 1;
    std::vector<double> next(n);
    double next_loss = loss;
    for (int halvings = 0; halvings < 30; ++halvings, t /= 2) {
      for (std::size_t j = 0; j < n; ++j) next[j] = beta[j] - t * step[j];
      next_loss = loss_of(next);
      if (next_loss <= loss) break;
    }
    r.iterations = it + 1;
    if (!(next_loss <= loss)) break;
    const double gain = loss - next_loss;
    beta = next;
    loss = next_loss;
    if (gain < 1e-10) break;
  }
  r.weights.resize(n);
  for (std::size_t j = 0; j < n; ++j) r.weights[j] = beta[j] / r.k;
  r.train_loss_after = split_loss(s, r.weights, r.k, Split::kTrain, every);
  r.test_loss_after = split_loss(s, r.weights, r.k, Split::kTest, every);
  r.separated = r.train_samples > 0 && r.train_loss_after < kSeparatedLoss;
  return r;
}

namespace {

// `text` as comment lines of at most 100 columns, broken between words (leading spaces kept). A
// byte that is not printable ASCII, or a backslash, is written as \xNN: a file name with a
// newline, or with a backslash at a line's end (which joins the next line to the comment), stays
// in its comment, and one with a bidirectional control (U+202E) cannot make the source read
// otherwise than it compiles.
std::string comment_lines(const std::string& raw) {
  constexpr std::size_t kWidth = 100 - 3;
  std::string text;
  for (const char c : raw) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      text += c;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
    text += escaped;
  }
  std::string out, line;
  std::size_t pos = text.find_first_not_of(' ');
  if (pos == std::string::npos) return "//\n";
  const std::string indent(pos, ' ');
  line = indent;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      out += "// " + line + "\n";
      line = indent + "  ";
    }
    if (line.size() > indent.size() && line.back() != ' ') line += ' ';
    line += word;
    pos = end + 1;
  }
  if (!line.empty()) out += "// " + line + "\n";
  return out;
}

// `text` as a C++ string literal, cut into adjacent literals of at most 80 characters.
std::string string_literal(const std::string& text) {
  std::string out = "\"";
  std::size_t length = 0;
  for (char c : text) {
    if (length >= 80 && c == ' ') {
      out += "\"\n    \"";
      length = 0;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
    ++length;
  }
  return out + "\"";
}

}  // namespace

std::string classic_weights_header(const Game& game, const std::vector<std::string>& names,
                                   const std::vector<double>& weights, const std::string& source,
                                   const std::vector<std::string>& comment) {
  std::string out = comment_lines("Weights of the classical evaluation of " +
                                  game.display_name() + " (games/" + game.name() +
                                  "/classic_eval.h), in evaluation points, written by `oppidum "
                                  "tune`; rerun it rather than editing by hand.");
  for (const std::string& line : comment) out += comment_lines(line);
  out += "#pragma once\n\nnamespace oppidum::" + game.name() + " {\n\n";
  out += "inline constexpr const char* kClassicWeightsSource =\n    " + string_literal(source) +
         ";\n";
  out += "inline constexpr const char* kClassicWeightNames[] = {\n";
  for (const std::string& name : names) out += "    \"" + name + "\",\n";
  out += "};\ninline constexpr double kClassicWeights[] = {\n";
  for (std::size_t i = 0; i < weights.size(); ++i) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6g", weights[i]);
    out += "    " + std::string(buffer) + ",  // " + names[i] + "\n";
  }
  out += "};\n\n}  // namespace oppidum::" + game.name() + "\n";
  return out;
}

}  // namespace oppidum::arena
