#include "arena/ratings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "arena/elo.h"
#include "games/quote.h"
#include "arena/spec.h"
#include "util/file_io.h"
#include "util/text.h"

namespace oppidum::arena {

using util::trim;

namespace {

// Natural-log units per Elo point: p = 1 / (1 + exp(-(theta_i - theta_j))) with theta = elo * this.
const double kThetaPerElo = std::log(10.0) / 400.0;

using Matrix = std::vector<std::vector<double>>;

// Cholesky factor L of a symmetric positive definite matrix (A = L L^T); false if not positive
// definite.
bool cholesky(const Matrix& a, Matrix& l) {
  const std::size_t n = a.size();
  l.assign(n, std::vector<double>(n, 0.0));
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (std::size_t k = 0; k < j; ++k) d -= l[j][k] * l[j][k];
    if (!(d > 0.0)) return false;
    l[j][j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i][j];
      for (std::size_t k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
      l[i][j] = s / l[j][j];
    }
  }
  return true;
}

// Solves L L^T x = b.
std::vector<double> cholesky_solve(const Matrix& l, std::vector<double> b) {
  const std::size_t n = l.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= l[i][k] * b[k];
    b[i] /= l[i][i];
  }
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= l[k][i] * b[k];
    b[i] /= l[i][i];
  }
  return b;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Without a prior the maximum-likelihood ratings are finite exactly when no group of players took
// every point from the others it met (Zermelo's condition: the graph with an edge i -> j where i
// took a point from j is strongly connected). Returns such a group, empty when there is none: the
// component of the node that finishes last in a depth-first search, which is a source component
// (Kosaraju's two passes, on the matrix).
std::vector<int> unbeaten_group(const Matrix& points) {
  const int n = static_cast<int>(points.size());
  const auto edge = [&](int i, int j) { return i != j && points[i][j] > 0.0; };
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  std::vector<int> finished;
  for (int root = 0; root < n; ++root) {
    if (seen[static_cast<std::size_t>(root)]) continue;
    std::vector<std::pair<int, int>> stack = {{root, 0}};  // (node, next neighbour to try)
    seen[static_cast<std::size_t>(root)] = true;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      while (next < n && (seen[static_cast<std::size_t>(next)] || !edge(node, next))) ++next;
      if (next == n) {
        finished.push_back(node);
        stack.pop_back();
        continue;
      }
      seen[static_cast<std::size_t>(next)] = true;
      stack.push_back({next, 0});
    }
  }
  if (finished.empty()) return {};
  // Everyone who reaches the last finisher along edges is in its component.
  std::vector<int> group = {finished.back()};
  std::vector<bool> in(static_cast<std::size_t>(n), false);
  in[static_cast<std::size_t>(finished.back())] = true;
  for (std::size_t q = 0; q < group.size(); ++q)
    for (int i = 0; i < n; ++i)
      if (!in[static_cast<std::size_t>(i)] && edge(i, group[q]))
        in[static_cast<std::size_t>(i)] = true, group.push_back(i);
  if (static_cast<int>(group.size()) == n) return {};
  std::sort(group.begin(), group.end());
  return group;
}

// "a, b, c and 4 more".
std::string name_list(const std::vector<std::string>& names, const std::vector<int>& who) {
  constexpr std::size_t kShown = 4;
  std::string text;
  for (std::size_t k = 0; k < who.size() && k < kShown; ++k)
    text += (k == 0 ? "" : k + 1 == who.size() ? " and " : ", ") +
            names[static_cast<std::size_t>(who[k])];
  if (who.size() > kShown) text += " and " + std::to_string(who.size() - kShown) + " more";
  return text;
}

}  // namespace

void check_result_players(const std::string& a, const std::string& b) {
  if (a == b) throw ResultsFileError(a + " cannot play itself in a results file");
  // A name the file could not hold as one: '#' starts a comment, and blanks and control
  // characters split or hide it (a "\v# x ..." line once rated a player "#").
  for (const std::string* name : {&a, &b})
    if (name->empty() || (*name)[0] == '#' ||
        std::any_of(name->begin(), name->end(), [](char c) {
          return std::isspace(static_cast<unsigned char>(c)) ||
                 std::iscntrl(static_cast<unsigned char>(c));
        }))
      throw ResultsFileError("player \"" + quote_input(*name, 60) +
                             "\" cannot be written to a results file (empty, starting with '#', or "
                             "holding blanks or control characters)");
}

namespace {

void check_result_line(const MatchLine& m) {
  check_result_players(m.a, m.b);
  if (m.wins < 0 || m.draws < 0 || m.losses < 0)
    throw ResultsFileError("game counts cannot be negative");
  if (static_cast<std::int64_t>(m.wins) + m.draws + m.losses > kMaxGamesPerResultLine)
    throw ResultsFileError("more than " + std::to_string(kMaxGamesPerResultLine) +
                           " games in one line");
}

}  // namespace

namespace {

constexpr std::string_view kGameLine = "# game:";

}  // namespace

std::vector<MatchLine> read_results(std::istream& in, const std::string& source,
                                    std::string* game_out) {
  std::vector<MatchLine> lines;
  std::string text, game;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    const std::string line = trim(text);
    if (line.compare(0, kGameLine.size(), kGameLine) == 0) {
      const std::string name = trim(line.substr(kGameLine.size()));
      const std::string where = source + " line " + std::to_string(number) + ": ";
      if (name.empty() || name.find_first_of(" \t") != std::string::npos)
        throw ResultsFileError(where + "expected `# game: NAME`, got \"" + line + "\"");
      if (!lines.empty() || !game.empty())
        throw ResultsFileError(where + "a game line after " +
                               (game.empty() ? "matches" : "the game line of " + game) +
                               ": one file holds the matches of one game, its line first");
      game = name;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    MatchLine m;
    std::string extra;
    if (!(fields >> m.a >> m.b >> m.wins >> m.draws >> m.losses) || (fields >> extra))
      throw ResultsFileError(source + " line " + std::to_string(number) +
                             ": expected `A B wins draws losses`, got \"" + line + "\"");
    try {
      check_result_line(m);
    } catch (const ResultsFileError& e) {
      throw ResultsFileError(source + " line " + std::to_string(number) + ": " + e.what());
    }
    lines.push_back(m);
  }
  if (game_out != nullptr) *game_out = game;
  return lines;
}

std::vector<MatchLine> read_results_file(const std::string& path, std::string* game) {
  std::string text;
  try {
    text = util::read_regular_file(path, kMaxResultsFileBytes);
  } catch (const util::FileError& e) {
    throw ResultsFileError("results file: " + std::string(e.what()));
  }
  std::istringstream in(text);
  return read_results(in, path, game);
}

std::string format_result_line(const MatchLine& line) {
  return line.a + ' ' + line.b + ' ' + std::to_string(line.wins) + ' ' +
         std::to_string(line.draws) + ' ' + std::to_string(line.losses);
}

namespace {

// The game line of the results file at `path` ("" when it has none), and whether it holds a game
// line or a match; ResultsFileError when it cannot be read as a results file.
std::pair<std::string, bool> results_file_game(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return {"", false};
  std::string game;
  // Read whole: a damaged file is said before a match, not after it.
  const bool has_matches = !read_results_file(path, &game).empty();
  return {game, has_matches || !game.empty()};
}

// Whether the file at `path` holds a game line or a match; ResultsFileError when it is of another
// game.
bool check_game(const std::string& path, const std::string& game) {
  const auto [held, holds_anything] = results_file_game(path);
  if (!held.empty() && held != game)
    throw ResultsFileError(path + " holds matches of " + held + ", not of " + game +
                           ": give each game a results file of its own (ratings rates the "
                           "players of one game)");
  return holds_anything;
}

}  // namespace

void check_results_game(const std::string& path, const std::string& game) {
  check_game(path, game);
}

void append_result(const std::string& path, const MatchLine& line, const std::string& game) {
  try {
    check_result_line(line);
  } catch (const ResultsFileError& e) {
    throw ResultsFileError("cannot append to " + path + ": " + e.what());
  }
  const bool holds_anything = check_game(path, game);
  try {
    util::append_to_file(path, (holds_anything ? std::string() : std::string(kGameLine) + " " +
                                                                     game + '\n') +
                                   format_result_line(line) + '\n');
  } catch (const util::FileError& e) {
    throw ResultsFileError("results file: " + std::string(e.what()));
  }
}

std::vector<Rating> fit_ratings(const std::vector<MatchLine>& matches,
                                const RatingOptions& options) {
  if (!(options.prior_draws >= 0.0))
    throw std::invalid_argument("ratings: prior_draws must be 0 or more");
  std::map<std::string, int> index;
  std::vector<std::string> names;
  auto id = [&](const std::string& name) {
    auto [it, inserted] = index.emplace(name, static_cast<int>(names.size()));
    if (inserted) names.push_back(name);
    return it->second;
  };
  for (const auto& m : matches) id(m.a), id(m.b);
  const auto anchor_it = index.find(options.anchor);
  if (anchor_it == index.end())
    throw std::invalid_argument("ratings: the anchor '" + options.anchor +
                                "' played no game in the results");
  const int n = static_cast<int>(names.size());
  const int anchor = anchor_it->second;

  // games[i][j] and points[i][j] (points of i against j), raw and then with the prior.
  Matrix games(n, std::vector<double>(n, 0.0)), points = games;
  std::vector<double> player_games(n, 0.0), player_points(n, 0.0);
  for (const auto& m : matches) {
    const int a = index[m.a], b = index[m.b];
    const double g = static_cast<double>(m.wins) + m.draws + m.losses;
    const double p = m.wins + 0.5 * m.draws;
    games[a][b] += g, games[b][a] += g;
    points[a][b] += p, points[b][a] += g - p;
    player_games[a] += g, player_games[b] += g;
    player_points[a] += p, player_points[b] += g - p;
  }
  // Every player needs a chain of games to the anchor.
  std::vector<bool> reached(n, false);
  std::vector<int> queue = {anchor};
  reached[anchor] = true;
  for (std::size_t q = 0; q < queue.size(); ++q)
    for (int j = 0; j < n; ++j)
      if (!reached[j] && games[queue[q]][j] > 0) reached[j] = true, queue.push_back(j);
  for (int i = 0; i < n; ++i)
    if (!reached[i])
      throw std::invalid_argument("ratings: " + names[i] + " has no chain of games to the anchor " +
                                  options.anchor + ", so it cannot be rated against it");
  if (options.prior_draws == 0.0) {
    const std::vector<int> group = unbeaten_group(points);
    if (!group.empty()) {
      std::vector<bool> in(static_cast<std::size_t>(n), false);
      for (int i : group) in[static_cast<std::size_t>(i)] = true;
      std::vector<int> met;
      for (int j = 0; j < n; ++j)
        if (!in[static_cast<std::size_t>(j)])
          for (int i : group)
            if (games[i][j] > 0) {
              met.push_back(j);
              break;
            }
      throw std::invalid_argument(
          "ratings: " + name_list(names, group) +
          (group.size() == 1 ? " won every game against "
                             : " took every point in their games against ") +
          name_list(names, met) + ", so without a prior " +
          (group.size() == 1 ? "its rating runs" : "their ratings run") +
          " off to infinity; use a prior of virtual draws (--prior-draws)");
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (games[i][j] > 0) games[i][j] += options.prior_draws, points[i][j] += 0.5 * options.prior_draws;

  // Unknowns: theta of every player but the anchor; slot[i] is i's position among them.
  std::vector<int> slot(n, -1), player_of;
  for (int i = 0; i < n; ++i)
    if (i != anchor) slot[i] = static_cast<int>(player_of.size()), player_of.push_back(i);
  const std::size_t m = player_of.size();
  std::vector<double> theta(n, 0.0);

  auto log_likelihood = [&](const std::vector<double>& t) {
    double ll = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        if (games[i][j] <= 0) continue;
        const double p = logistic(t[i] - t[j]);
        ll += points[i][j] * std::log(p) + (games[i][j] - points[i][j]) * std::log(1.0 - p);
      }
    return ll;
  };
  // The negative Hessian (reduced) and the gradient at t.
  auto derivatives = [&](const std::vector<double>& t, Matrix& neg_hessian,
                         std::vector<double>& gradient) {
    neg_hessian.assign(m, std::vector<double>(m, 0.0));
    gradient.assign(m, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (i == j || games[i][j] <= 0) continue;
        const double p = logistic(t[i] - t[j]);
        const double w = games[i][j] * p * (1.0 - p);
        if (slot[i] < 0) continue;
        gradient[slot[i]] += points[i][j] - games[i][j] * p;
        neg_hessian[slot[i]][slot[i]] += w;
        if (slot[j] >= 0) neg_hessian[slot[i]][slot[j]] -= w;
      }
  };

  Matrix neg_hessian, factor;
  std::vector<double> gradient;
  constexpr double kDivergence = 40.0;  // about 7000 Elo
  for (int iteration = 0; iteration < 500 && m > 0; ++iteration) {
    if (options.on_progress)
      options.on_progress("fitting " + std::to_string(n) + " players: iteration " +
                          std::to_string(iteration + 1));
    derivatives(theta, neg_hessian, gradient);
    if (!cholesky(neg_hessian, factor))
      throw std::invalid_argument("ratings: the results do not determine the ratings (a player "
                                  "won or lost every game; use a prior of virtual draws)");
    const std::vector<double> step = cholesky_solve(factor, gradient);
    double scale = 1.0, largest = 0.0;
    const double before = log_likelihood(theta);
    std::vector<double> next = theta;
    for (int halving = 0; halving < 40; ++halving, scale *= 0.5) {
      for (std::size_t k = 0; k < m; ++k) next[player_of[k]] = theta[player_of[k]] + scale * step[k];
      if (log_likelihood(next) >= before - 1e-12) break;
    }
    for (std::size_t k = 0; k < m; ++k) largest = std::max(largest, std::abs(scale * step[k]));
    theta = next;
    for (double t : theta)
      if (std::abs(t) > kDivergence)
        throw std::invalid_argument("ratings: a rating runs off to infinity (a player won or lost "
                                    "every game); use a prior of virtual draws (--prior-draws)");
    if (largest < 1e-10) break;
  }
  std::vector<double> variance(m, 0.0);
  if (m > 0) {
    derivatives(theta, neg_hessian, gradient);
    if (!cholesky(neg_hessian, factor))
      throw std::invalid_argument("ratings: the results do not determine the ratings");
    for (std::size_t k = 0; k < m; ++k) {
      std::vector<double> unit(m, 0.0);
      unit[k] = 1.0;
      variance[k] = cholesky_solve(factor, unit)[k];
      // A rating that ran off towards infinity stops where the likelihood is flat to rounding;
      // its variance gives it away.
      if (!(variance[k] < 1e4))
        throw std::invalid_argument("ratings: " + names[player_of[k]] +
                                    "'s rating runs off to infinity (it won or lost every game); "
                                    "use a prior of virtual draws (--prior-draws)");
    }
  }
  std::vector<Rating> ratings;
  for (int i = 0; i < n; ++i) {
    Rating r;
    r.player = names[i];
    r.elo = theta[i] / kThetaPerElo;
    r.half_width = slot[i] < 0 ? 0.0 : options.z * std::sqrt(variance[slot[i]]) / kThetaPerElo;
    r.games = static_cast<std::int64_t>(player_games[i]);
    r.score = player_games[i] > 0 ? player_points[i] / player_games[i] : 0.0;
    ratings.push_back(r);
  }
  std::stable_sort(ratings.begin(), ratings.end(),
                   [](const Rating& x, const Rating& y) { return x.elo > y.elo; });
  return ratings;
}

std::string format_ratings(const std::vector<Rating>& ratings, const RatingOptions& options) {
  std::size_t width = 6;
  for (const auto& r : ratings) width = std::max(width, r.player.size());
  std::ostringstream out;
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "%4s  %-*s  %8s  %7s  %6s  %6s\n", "rank",
                static_cast<int>(width), "player", "Elo", "95%+-", "games", "score");
  out << buffer;
  int rank = 0;
  for (const auto& r : ratings) {
    std::snprintf(buffer, sizeof buffer, "%4d  %-*s  %8s  %7.1f  %6lld  %5.1f%%\n", ++rank,
                  static_cast<int>(width), r.player.c_str(), format_elo(r.elo).c_str(),
                  r.half_width, static_cast<long long>(r.games), 100.0 * r.score);
    out << buffer;
  }
  out << "Bradley-Terry maximum likelihood, " << options.anchor << " = 0";
  if (options.prior_draws > 0)
    out << ", prior: " << format_number(options.prior_draws) << " virtual draw(s) per pair that met";
  out << '\n';
  return out.str();
}

}  // namespace oppidum::arena
