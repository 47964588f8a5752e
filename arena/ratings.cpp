#include "arena/ratings.h"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
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

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The games of two players against each other, with the prior's virtual draws once added.
struct Pair {
  int i = 0, j = 0;     // i < j
  double games = 0.0;
  double points = 0.0;  // i's points against j
  std::array<double, 5> pairs{};  // the games as pairs by i's points (when every line has them)
  bool paired = true;
};

// What each game of two players' pairs counts as in the fit (and the prior's `prior_draws` draws
// with them): as many independent games as give, at the centre of the pairs' own interval
// (estimate_elo's, the one `arena` and the gate print), a Wald interval as wide as it, over the
// games and the prior's. A fit of that one match then has the width of the arena's interval, and
// its centre with the default prior (one draw, estimate_elo's one virtual game). Above 1 where a
// pair's two games split (the colour that decides, or draws: 100 drawn pairs are +-13.6 Elo, not
// the +-48 of 200 independent draws), below 1 where they agree (an opening that decides both);
// 1 where the interval has no width to go by (a billion pairs won twice: the score's edge).
double pair_weight(const std::array<double, 5>& pairs, double z, double prior_draws) {
  const EloEstimate e = estimate_elo(pentanomial(pairs), z);
  const double width = (e.elo_high - e.elo_low) * kThetaPerElo;
  const double p = score_from_elo(e.elo);
  double games = prior_draws;
  for (const double n : pairs) games += 2.0 * n;
  const double equivalent = (2.0 * z) * (2.0 * z) / (width * width * p * (1.0 - p));
  const double weight = equivalent / games;
  return std::isfinite(weight) && weight > 0.0 ? weight : 1.0;
}

// Without a prior the maximum-likelihood ratings are finite exactly when no group of players took
// every point from the others it met (Zermelo's condition: the graph with an edge i -> j where i
// took a point from j is strongly connected). Returns such a group, empty when there is none: the
// component of the node that finishes last in a depth-first search, which is a source component
// (Kosaraju's two passes).
std::vector<int> unbeaten_group(int n, const std::vector<Pair>& pairs) {
  std::vector<std::vector<int>> beat(static_cast<std::size_t>(n)), beaten_by = beat;
  for (const Pair& p : pairs) {
    if (p.points > 0.0) beat[p.i].push_back(p.j), beaten_by[p.j].push_back(p.i);
    if (p.points < p.games) beat[p.j].push_back(p.i), beaten_by[p.i].push_back(p.j);
  }
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  std::vector<int> finished;
  for (int root = 0; root < n; ++root) {
    if (seen[static_cast<std::size_t>(root)]) continue;
    std::vector<std::pair<int, std::size_t>> stack = {{root, 0}};  // (node, next edge to try)
    seen[static_cast<std::size_t>(root)] = true;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const std::vector<int>& out = beat[static_cast<std::size_t>(node)];
      while (next < out.size() && seen[static_cast<std::size_t>(out[next])]) ++next;
      if (next == out.size()) {
        finished.push_back(node);
        stack.pop_back();
        continue;
      }
      const int to = out[next];
      seen[static_cast<std::size_t>(to)] = true;
      stack.push_back({to, 0});
    }
  }
  if (finished.empty()) return {};
  // Everyone who reaches the last finisher along edges is in its component.
  std::vector<int> group = {finished.back()};
  std::vector<bool> in(static_cast<std::size_t>(n), false);
  in[static_cast<std::size_t>(finished.back())] = true;
  for (std::size_t q = 0; q < group.size(); ++q)
    for (int i : beaten_by[static_cast<std::size_t>(group[q])])
      if (!in[static_cast<std::size_t>(i)]) in[static_cast<std::size_t>(i)] = true, group.push_back(i);
  if (static_cast<int>(group.size()) == n) return {};
  std::sort(group.begin(), group.end());
  return group;
}

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

// What the factor L of the symmetric matrix whose upper triangle is `upper` will cost, from the
// elimination tree walk of Eigen's own analysis (here so that it is known before anything is
// allocated for it): its entries below the diagonal, the multiplications of the factorisation
// (the sum of its columns' counts squared) and of inverse_diagonal (the sum of each column's
// count times its row's). nullopt as soon as the entries pass `limit`.
struct FactorCost {
  std::int64_t entries = 0;
  double factor_work = 0.0, inverse_work = 0.0;
};
std::optional<FactorCost> factor_cost(const SparseMatrix& upper, std::int64_t limit) {
  const std::size_t m = static_cast<std::size_t>(upper.cols());
  std::vector<std::int64_t> column(m, 0), in_row(m, 0);
  std::vector<int> parent(m, -1), tag(m, -1);
  FactorCost cost;
  for (int k = 0; k < static_cast<int>(m); ++k) {
    tag[static_cast<std::size_t>(k)] = k;
    for (SparseMatrix::InnerIterator it(upper, k); it; ++it)
      for (int i = static_cast<int>(it.row()); i < k && tag[static_cast<std::size_t>(i)] != k;
           i = parent[static_cast<std::size_t>(i)]) {  // L(k, i) is an entry
        if (parent[static_cast<std::size_t>(i)] == -1) parent[static_cast<std::size_t>(i)] = k;
        ++column[static_cast<std::size_t>(i)], ++in_row[static_cast<std::size_t>(k)];
        tag[static_cast<std::size_t>(i)] = k;
        if (++cost.entries > limit) return std::nullopt;
      }
  }
  for (std::size_t k = 0; k < m; ++k) {
    const double c = static_cast<double>(column[k]);
    cost.factor_work += c * (c + 1.0);
    cost.inverse_work += c * static_cast<double>(in_row[k] + 1);
  }
  return cost;
}

// The diagonal of A^-1 from A = L D L^T (L unit lower triangular, its columns' row indices
// increasing), by Takahashi's recurrence: Z = A^-1 on L's pattern, column by column from the last,
//   Z(i, j) = -sum over k in S of L(k, j) Z(i, k)  (i in S),
//   Z(j, j) = 1 / D(j) - sum over k in S of L(k, j) Z(k, j),
// S being column j's rows. Every Z(i, k) it needs is on L's pattern (the fill closes S), found by
// walking column min(i, k) once for each k in S: the cost is about the factorisation's, where one
// solve per player would cost the number of players times L's size.
std::vector<double> inverse_diagonal(const SparseMatrix& l, const Eigen::VectorXd& d) {
  const int m = static_cast<int>(l.cols());
  const int* start = l.outerIndexPtr();
  const int* row = l.innerIndexPtr();
  const double* value = l.valuePtr();
  std::vector<double> z(static_cast<std::size_t>(l.nonZeros()), 0.0);  // Z on L's pattern
  std::vector<double> diagonal(static_cast<std::size_t>(m), 0.0);
  std::vector<int> where(static_cast<std::size_t>(m), -1);  // k in S: its entry of column j
  std::vector<double> sum(static_cast<std::size_t>(m), 0.0);
  for (int j = m - 1; j >= 0; --j) {
    for (int p = start[j]; p < start[j + 1]; ++p) where[row[p]] = p, sum[row[p]] = 0.0;
    // Each pair (k, r) of S with k <= r adds L(r, j) Z(r, k) to row k's sum and, off the
    // diagonal, L(k, j) Z(r, k) to row r's.
    for (int p = start[j]; p < start[j + 1]; ++p) {
      const int k = row[p];
      sum[k] += value[p] * diagonal[k];
      for (int q = start[k]; q < start[k + 1]; ++q) {
        const int r = row[q];
        if (where[r] < 0) continue;
        sum[k] += value[where[r]] * z[static_cast<std::size_t>(q)];
        sum[r] += value[p] * z[static_cast<std::size_t>(q)];
      }
    }
    double own = 1.0 / d[j];
    for (int p = start[j]; p < start[j + 1]; ++p) {
      z[static_cast<std::size_t>(p)] = -sum[row[p]];
      own -= value[p] * z[static_cast<std::size_t>(p)];
    }
    diagonal[static_cast<std::size_t>(j)] = own;
    for (int p = start[j]; p < start[j + 1]; ++p) where[row[p]] = -1;
  }
  return diagonal;
}

// "a, b, c and 4 more".
std::string name_list(const std::vector<std::string>& names, const std::vector<int>& who) {
  constexpr std::size_t kShown = 4;
  std::string text;
  for (std::size_t k = 0; k < who.size() && k < kShown; ++k)
    text += (k == 0 ? "" : k + 1 == who.size() ? " and " : ", ") +
            quote_input(names[static_cast<std::size_t>(who[k])], 60);
  if (who.size() > kShown) text += " and " + std::to_string(who.size() - kShown) + " more";
  return text;
}

}  // namespace

namespace {

// A name a results or record file could not hold as one, or "": '#' starts a comment, and blanks
// and control characters split or hide it (a "\v# x ..." line once rated a player "#"). Names
// written (`strict`) are UTF-8 without control characters, C1's included (a name with the byte
// 0x9b or U+009B, a terminal's CSI, reached the terminal raw), nor bidirectional controls (which
// reorder a line); names read may be of any earlier version (a name of Latin-1 bytes stays
// readable, and `ratings` prints it escaped).
std::string player_name_problem(const std::string& name, bool strict) {
  if (name.empty() || name[0] == '#' ||
      std::any_of(name.begin(), name.end(),
                  [](char c) {
                    return std::isspace(static_cast<unsigned char>(c)) ||
                           std::iscntrl(static_cast<unsigned char>(c));
                  }) ||
      (strict && printable_text(name) != name))
    return "player \"" + quote_input(name, 60) +
           "\" cannot be written to a results or record file (empty, starting with '#', or "
           "holding blanks, control characters, bidirectional controls or bytes that are not "
           "UTF-8)";
  return "";
}

void check_player_names(const std::string& a, const std::string& b, bool strict) {
  if (a == b)
    throw ResultsFileError("\"" + quote_input(a, 60) + "\" cannot play itself in a results file");
  for (const std::string* name : {&a, &b})
    if (const std::string why = player_name_problem(*name, strict); !why.empty())
      throw ResultsFileError(why);
}

}  // namespace

void check_record_player(const std::string& name) {
  if (const std::string why = player_name_problem(name, true); !why.empty())
    throw ResultsFileError(why);
}

void check_result_players(const std::string& a, const std::string& b) {
  check_player_names(a, b, true);
}

namespace {

// Half points as points: "7" or "7.5".
std::string format_half_points(std::int64_t halves) {
  return std::to_string(halves / 2) + (halves % 2 ? ".5" : "");
}

void check_result_line(const MatchLine& m, bool strict) {
  check_player_names(m.a, m.b, strict);
  if (m.wins < 0 || m.draws < 0 || m.losses < 0)
    throw ResultsFileError("game counts cannot be negative");
  const std::int64_t games = static_cast<std::int64_t>(m.wins) + m.draws + m.losses;
  if (games > kMaxGamesPerResultLine)
    throw ResultsFileError("more than " + std::to_string(kMaxGamesPerResultLine) +
                           " games in one line");
  if (!m.pairs) return;
  if (std::any_of(m.pairs->begin(), m.pairs->end(), [](int n) { return n < 0; }))
    throw ResultsFileError("pair counts cannot be negative");
  if (!pair_counts_fit(*m.pairs, m.wins, m.draws, m.losses)) {
    std::int64_t pairs = 0, halves = 0;  // the pairs, and A's points in them in halves
    for (int k = 0; k < 5; ++k) pairs += (*m.pairs)[k], halves += std::int64_t{k} * (*m.pairs)[k];
    throw ResultsFileError("the pairs " + format_pair_counts(*m.pairs) + " are " +
                           std::to_string(2 * pairs) + " games of " +
                           format_half_points(halves) + " points, the line " +
                           std::to_string(games) + " of " +
                           format_half_points(2 * static_cast<std::int64_t>(m.wins) + m.draws));
  }
}

// A results line's pair counts (parse_pair_counts), each within a line's games, or nothing.
std::optional<std::array<int, 5>> parse_pairs(const std::string& text) {
  const auto counts = parse_pair_counts(text);
  if (!counts) return std::nullopt;
  std::array<int, 5> out{};
  for (int k = 0; k < 5; ++k) {
    if ((*counts)[k] > kMaxGamesPerResultLine) return std::nullopt;
    out[k] = static_cast<int>((*counts)[k]);
  }
  return out;
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
        throw ResultsFileError(where + "expected `# game: NAME`, got \"" + quote_input(line, 60) +
                               "\"");
      if (!lines.empty() || !game.empty())
        throw ResultsFileError(where + "a game line after " +
                               (game.empty() ? "matches"
                                             : "the game line of " + quote_input(game, 60)) +
                               ": one file holds the matches of one game, its line first");
      game = name;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    MatchLine m;
    std::string pairs, extra;
    if (!(fields >> m.a >> m.b >> m.wins >> m.draws >> m.losses) ||
        ((fields >> pairs) && !(m.pairs = parse_pairs(pairs))) || (fields >> extra))
      throw ResultsFileError(source + " line " + std::to_string(number) +
                             ": expected `A B wins draws losses [n0/n1/n2/n3/n4]`, got \"" +
                             quote_input(line, 60) + "\"");
    try {
      check_result_line(m, false);
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
         std::to_string(line.draws) + ' ' + std::to_string(line.losses) +
         (line.pairs ? ' ' + format_pair_counts(*line.pairs) : "");
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
    throw ResultsFileError(path + " holds matches of " + quote_input(held, 60) + ", not of " + game +
                           ": give each game a results file of its own (ratings rates the "
                           "players of one game)");
  return holds_anything;
}

// The size of the file at `path` (0 when there is none): what an append adds to.
std::uintmax_t results_file_size(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : size;
}

// How close to kMaxResultsFileBytes a file may be before a match whose line is to be appended:
// more than any line takes (two specs and the counts).
constexpr std::uintmax_t kResultsLineRoom = 4096;

}  // namespace

void check_results_game(const std::string& path, const std::string& game) {
  check_game(path, game);
  if (results_file_size(path) + kResultsLineRoom > kMaxResultsFileBytes)
    throw ResultsFileError(path + " is within " + std::to_string(kResultsLineRoom) +
                           " bytes of the " + std::to_string(kMaxResultsFileBytes >> 20) +
                           " MiB a results file may hold: start a new one");
}

void append_result(const std::string& path, const MatchLine& line, const std::string& game) {
  try {
    check_result_line(line, true);
  } catch (const ResultsFileError& e) {
    throw ResultsFileError("cannot append to " + path + ": " + e.what());
  }
  try {
    // Matches that end at once take turns: each saw a new file empty, and each wrote a game
    // line (twice, or two games' lines), and every reader after refused the file.
    util::with_file_locked(path, [&] {
      const bool holds_anything = check_game(path, game);
      const std::string game_line =
          holds_anything ? std::string() : std::string(kGameLine) + " " + game + '\n';
      const std::string text = game_line + format_result_line(line) + '\n';
      // The reader's limit is the writer's: a line past it made the file unreadable (`ratings`
      // and the next `arena --results` refused it).
      if (results_file_size(path) + text.size() > kMaxResultsFileBytes)
        throw ResultsFileError("cannot append to " + path + ": it would pass the " +
                               std::to_string(kMaxResultsFileBytes >> 20) +
                               " MiB a results file may hold; start a new one");
      util::append_lines_to_file(path, text);
    });
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
  for (const auto& match : matches) {
    id(match.a), id(match.b);
    if (names.size() > kMaxRatedPlayers)
      throw std::invalid_argument("ratings: more than " + std::to_string(kMaxRatedPlayers) +
                                  " players, more than one fit takes; rate fewer players at once");
  }
  const auto anchor_it = index.find(options.anchor);
  if (anchor_it == index.end())
    throw std::invalid_argument("ratings: the anchor '" + quote_input(options.anchor, 60) +
                                "' played no game in the results");
  const int n = static_cast<int>(names.size());
  const int anchor = anchor_it->second;

  // The games of each pair of players that met, raw and then with the prior.
  std::vector<Pair> pairs;
  std::map<std::pair<int, int>, std::size_t> pair_of;
  std::vector<std::vector<int>> met(static_cast<std::size_t>(n));
  std::vector<double> player_games(n, 0.0), player_points(n, 0.0);
  for (const auto& m : matches) {
    const int a = index[m.a], b = index[m.b];
    const double g = static_cast<double>(m.wins) + m.draws + m.losses;
    const double p = m.wins + 0.5 * m.draws;
    if (g <= 0) continue;  // a line of no games joins no one (and gets no prior)
    const auto [it, added] = pair_of.emplace(std::minmax(a, b), pairs.size());
    if (added) {
      pairs.push_back({std::min(a, b), std::max(a, b), 0.0, 0.0});
      met[a].push_back(b), met[b].push_back(a);
    }
    Pair& pair = pairs[it->second];
    pair.games += g;
    pair.points += a == pair.i ? p : g - p;
    if (!m.pairs)
      pair.paired = false;
    else
      for (int k = 0; k < 5; ++k) pair.pairs[a == pair.i ? k : 4 - k] += (*m.pairs)[k];
    player_games[a] += g, player_games[b] += g;
    player_points[a] += p, player_points[b] += g - p;
  }
  // Every player needs a chain of games to the anchor.
  std::vector<bool> reached(n, false);
  std::vector<int> queue = {anchor};
  reached[anchor] = true;
  for (std::size_t q = 0; q < queue.size(); ++q)
    for (int j : met[queue[q]])
      if (!reached[j]) reached[j] = true, queue.push_back(j);
  for (int i = 0; i < n; ++i)
    if (!reached[i])
      throw std::invalid_argument("ratings: " + quote_input(names[i], 60) +
                                  " has no chain of games to the anchor " +
                                  quote_input(options.anchor, 60) +
                                  ", so it cannot be rated against it");
  if (options.prior_draws == 0.0) {
    const std::vector<int> group = unbeaten_group(n, pairs);
    if (!group.empty()) {
      std::vector<bool> in(static_cast<std::size_t>(n), false);
      for (int i : group) in[static_cast<std::size_t>(i)] = true;
      std::set<int> beaten;
      for (int i : group)
        for (int j : met[i])
          if (!in[static_cast<std::size_t>(j)]) beaten.insert(j);
      throw std::invalid_argument(
          "ratings: " + name_list(names, group) +
          (group.size() == 1 ? " won every game against "
                             : " took every point in their games against ") +
          name_list(names, std::vector<int>(beaten.begin(), beaten.end())) +
          ", so without a prior " + (group.size() == 1 ? "its rating runs" : "their ratings run") +
          " off to infinity; use a prior of virtual draws (--prior-draws)");
    }
  }
  // (Pair counts repeat along a ladder of gates of one size: each interval is computed once.)
  std::map<std::array<double, 5>, double> weights;
  for (Pair& pair : pairs) {
    // Games in pairs count as the pairs they are (pair_weight: a weighted fit, whose information
    // is the intervals'), the prior's virtual draws with them as the arena's prior joins its pairs.
    pair.games += options.prior_draws, pair.points += 0.5 * options.prior_draws;
    if (pair.paired) {
      auto [at, added] = weights.try_emplace(pair.pairs, 0.0);
      if (added) {
        at->second = pair_weight(pair.pairs, options.z, options.prior_draws);
        // (Each takes about 0.1 ms: a long ladder of distinct counts is told, and may be stopped.)
        if (options.on_progress && weights.size() % 1000 == 0)
          options.on_progress("weighing the pairs of " + std::to_string(weights.size()) +
                              " matches");
      }
      pair.games *= at->second, pair.points *= at->second;
    }
  }

  // Unknowns: theta of every player but the anchor; slot[i] is i's position among them.
  std::vector<int> slot(n, -1), player_of;
  for (int i = 0; i < n; ++i)
    if (i != anchor) slot[i] = static_cast<int>(player_of.size()), player_of.push_back(i);
  const int m = static_cast<int>(player_of.size());
  std::vector<double> theta(n, 0.0);

  auto log_likelihood = [&](const std::vector<double>& t) {
    double ll = 0.0;
    for (const Pair& pair : pairs) {
      const double p = logistic(t[pair.i] - t[pair.j]);
      ll += pair.points * std::log(p) + (pair.games - pair.points) * std::log(1.0 - p);
    }
    return ll;
  };
  // The negative Hessian's upper triangle (reduced: the anchor's row and column removed; a
  // graph Laplacian weighted by games x p x (1 - p), with one nonzero off the diagonal per pair),
  // and the gradient at t.
  std::vector<Eigen::Triplet<double, int>> entries;
  SparseMatrix neg_hessian(m, m);
  Eigen::VectorXd gradient(m);
  auto derivatives = [&](const std::vector<double>& t) {
    entries.clear();
    gradient.setZero();
    for (const Pair& pair : pairs) {
      const double p = logistic(t[pair.i] - t[pair.j]);
      const double w = pair.games * p * (1.0 - p);
      const int a = slot[pair.i], b = slot[pair.j];
      const double g = pair.points - pair.games * p;  // d log L / d theta_i; -g for j
      if (a >= 0) gradient[a] += g, entries.emplace_back(a, a, w);
      if (b >= 0) gradient[b] -= g, entries.emplace_back(b, b, w);
      if (a >= 0 && b >= 0) entries.emplace_back(std::min(a, b), std::max(a, b), -w);
    }
    neg_hessian.setFromTriplets(entries.begin(), entries.end());
  };

  // The players are ordered to keep the factor sparse (approximate minimum degree: a run's
  // ladder, a chain of generations, factors in linear time), and the fill is counted before the
  // factor is made: results whose fit would take more than a few seconds or a few hundred MB are
  // refused, naming their size.
  // order: AMD's permutation (a new index's old one); reorder its inverse, which takes the
  // players' vectors and the matrix to the new order (Eigen's conventions, as in its own
  // SimplicialCholesky).
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> order, reorder;
  SparseMatrix ordered(m, m);
  Eigen::SimplicialLDLT<SparseMatrix, Eigen::Upper, Eigen::NaturalOrdering<int>> factor;
  derivatives(theta);
  double factor_work = 0.0;  // the multiplications of one factor
  if (m > 0) {
    Eigen::AMDOrdering<int>()(neg_hessian.selfadjointView<Eigen::Upper>(), order);
    reorder = order.inverse();
    ordered.selfadjointView<Eigen::Upper>() =
        neg_hessian.selfadjointView<Eigen::Upper>().twistedBy(reorder);
    const std::optional<FactorCost> cost = factor_cost(ordered, kMaxRatingFactorSize);
    const double work = cost ? std::max(cost->factor_work, cost->inverse_work) : 0.0;
    if (!cost || work > kMaxRatingFactorWork)
      throw std::invalid_argument(
          "ratings: " + std::to_string(n) + " players in " + std::to_string(pairs.size()) +
          " pairs that met are more than one fit takes (its factor would need " +
          (cost ? "about " + std::to_string(std::llround(work / 1e6)) +
                      " million multiplications a step, at most " +
                      std::to_string(std::llround(kMaxRatingFactorWork / 1e6))
                : "more than " + std::to_string(kMaxRatingFactorSize / 1'000'000) +
                      " million entries") +
          "); rate fewer players at once");
    factor_work = std::max(1.0, cost->factor_work);
  }
  // The work of every step, counted against the budget (kMaxRatingFitWork; a steep chain of a
  // million players
  // once took five minutes of Newton steps and line searches).
  const double pass_work = kRatingPairWork * static_cast<double>(pairs.size());
  const double budget =
      std::max(options.min_fit_budget, kRatingFitSteps * (factor_work + pass_work));
  double spent = 0.0;
  const auto spend = [&](double work, int iteration) {
    spent += work;
    if (spent > budget)
      throw std::invalid_argument(
          "ratings: the fit of " + std::to_string(n) + " players in " +
          std::to_string(pairs.size()) + " pairs did not settle within the work one fit takes (" +
          std::to_string(iteration + 1) + " Newton steps); rate fewer players at once" +
          (options.prior_draws == 0.0 ? ", or use a prior of virtual draws (--prior-draws) if "
                                        "some won or lost nearly every game"
                                      : ""));
  };
  const auto factorise = [&] {
    ordered.selfadjointView<Eigen::Upper>() =
        neg_hessian.selfadjointView<Eigen::Upper>().twistedBy(reorder);
    factor.compute(ordered);
    return factor.info() == Eigen::Success && factor.vectorD().minCoeff() > 0.0;
  };

  constexpr double kDivergence = 40.0;  // about 7000 Elo
  constexpr int kMaxSteps = 500;
  bool settled = m == 0;
  for (int iteration = 0; iteration < kMaxSteps && !settled; ++iteration) {
    if (options.on_progress)
      options.on_progress("fitting " + std::to_string(n) + " players: iteration " +
                          std::to_string(iteration + 1));
    if (iteration > 0) derivatives(theta);
    spend(factor_work + pass_work, iteration);
    if (!factorise())
      throw std::invalid_argument("ratings: the results do not determine the ratings (a player "
                                  "won or lost every game; use a prior of virtual draws)");
    const Eigen::VectorXd step = order * factor.solve(reorder * gradient);
    double scale = 1.0, largest = 0.0, after = 0.0;
    const double before = log_likelihood(theta);
    std::vector<double> next = theta;
    for (int halving = 0; halving < 40; ++halving, scale *= 0.5) {
      for (int k = 0; k < m; ++k) next[player_of[k]] = theta[player_of[k]] + scale * step[k];
      spend(pass_work, iteration);
      after = log_likelihood(next);
      if (after >= before - 1e-12) break;
    }
    for (int k = 0; k < m; ++k) largest = std::max(largest, std::abs(scale * step[k]));
    theta = next;
    // Without a prior a rating can run off to infinity (a safety net: unbeaten_group finds such
    // results first); with one every rating is finite, and a long chain can span any distance.
    if (options.prior_draws == 0.0)
      for (double t : theta)
        if (std::abs(t) > kDivergence)
          throw std::invalid_argument("ratings: a rating runs off to infinity (a player won or "
                                      "lost every game); use a prior of virtual draws "
                                      "(--prior-draws)");
    // Settled: steps too small to matter, or small steps that no longer raise the likelihood
    // beyond its rounding (a pair of millions of games, nearly all won: the gradient, games x
    // (score - p), carries a rounding error larger than 1e-10 of a step).
    settled = largest < 1e-10 ||
              (largest < 1e-6 && std::abs(after - before) <= 1e-13 * std::abs(before));
  }
  if (!settled)  // ratings still moving are no fit
    throw std::invalid_argument("ratings: the fit of " + std::to_string(n) +
                                " players did not settle in " + std::to_string(kMaxSteps) +
                                " Newton steps; rate fewer players at once");
  std::vector<double> variance(static_cast<std::size_t>(m), 0.0);
  if (m > 0) {
    derivatives(theta);
    if (!factorise())
      throw std::invalid_argument("ratings: the results do not determine the ratings");
    const SparseMatrix l = factor.matrixL();
    const std::vector<double> ordered_variance = inverse_diagonal(l, factor.vectorD());
    for (int k = 0; k < m; ++k) {
      variance[static_cast<std::size_t>(k)] =
          ordered_variance[static_cast<std::size_t>(reorder.indices()[k])];
      // Without a prior, a rating that ran off towards infinity stops where the likelihood is
      // flat to rounding; its variance gives it away. (With one, every rating is finite, and a
      // long chain of few games can be that uncertain.)
      if (options.prior_draws == 0.0 && !(variance[static_cast<std::size_t>(k)] < 1e4))
        throw std::invalid_argument("ratings: " + quote_input(names[player_of[k]], 60) +
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
  // Names as the terminal may show them (one read from a file of any version can hold any byte).
  std::vector<std::string> names;
  for (const auto& r : ratings) names.push_back(printable_text(r.player));
  std::size_t width = 6;
  for (const std::string& name : names) width = std::max(width, name.size());
  std::ostringstream out;
  // Room for the widest name and the numbers (a name of any length, never cut).
  std::vector<char> buffer(width + 128);
  std::snprintf(buffer.data(), buffer.size(), "%4s  %-*s  %8s  %7s  %6s  %6s\n", "rank",
                static_cast<int>(width), "player", "Elo", "95%+-", "games", "score");
  out << buffer.data();
  for (std::size_t i = 0; i < ratings.size(); ++i) {
    const Rating& r = ratings[i];
    std::snprintf(buffer.data(), buffer.size(), "%4d  %-*s  %8s  %7.1f  %6lld  %5.1f%%\n",
                  static_cast<int>(i + 1), static_cast<int>(width), names[i].c_str(),
                  format_elo(r.elo).c_str(),
                  r.half_width, static_cast<long long>(r.games), 100.0 * r.score);
    out << buffer.data();
  }
  out << "Bradley-Terry maximum likelihood, " << printable_text(options.anchor) << " = 0";
  if (options.prior_draws > 0)
    out << ", prior: " << format_number(options.prior_draws) << " virtual draw(s) per pair that met";
  out << '\n';
  return out.str();
}

}  // namespace oppidum::arena
