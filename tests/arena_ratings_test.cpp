// Bradley-Terry ratings and the results file.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "arena/elo.h"
#include "arena/ratings.h"
#include "games/quote.h"

namespace oppidum::arena {
namespace {

std::map<std::string, Rating> by_player(const std::vector<Rating>& ratings) {
  std::map<std::string, Rating> out;
  for (const auto& r : ratings) out[r.player] = r;
  return out;
}

TEST(RatingsTest, TwoPlayersMatchTheClosedForm) {
  // One match, 76 wins and 24 losses out of 100: the maximum-likelihood difference is
  // elo(0.76) = -400 log10(1/0.76 - 1) = 200.24, and its standard error in natural units
  // 1 / sqrt(n p (1 - p)) = 1 / sqrt(100 * 0.76 * 0.24) = 0.23421, so the 95% half width is
  // 1.96 * 0.23421 / (ln 10 / 400) = 79.72 Elo.
  RatingOptions options;
  options.prior_draws = 0;
  const auto ratings = by_player(fit_ratings({{"x", "random", 76, 0, 24}}, options));
  EXPECT_NEAR(ratings.at("random").elo, 0.0, 1e-9);
  EXPECT_NEAR(ratings.at("x").elo, 200.24, 0.01);
  EXPECT_NEAR(ratings.at("x").half_width, 79.72, 0.01);
  EXPECT_EQ(ratings.at("x").games, 100);
  EXPECT_NEAR(ratings.at("x").score, 0.76, 1e-12);
}

// Millions of games, nearly all won: the fit settles at the closed form (before: "did not settle
// in 500 Newton steps", the gradient's rounding being above the step tolerance). With the default
// prior of one virtual draw per pair: 2,000,000.5 points of 2,000,002 games.
TEST(RatingsTest, MillionsOfLopsidedGamesSettle) {
  for (const double games : {1.6e6, 2e6, 3.1e6, 8.7e6}) {
    const auto wins = static_cast<int>(games);
    const auto ratings = by_player(fit_ratings({{"random", "b", wins, 0, 1}}, RatingOptions{}));
    const double score = (static_cast<double>(wins) + 0.5) / (static_cast<double>(wins) + 2.0);
    EXPECT_NEAR(ratings.at("b").elo, -400.0 * std::log10(score / (1.0 - score)), 1e-3) << games;
  }
}

// A player's name of any length keeps its row whole (before: a 256-byte row was cut, its newline
// lost, and the table ran into one line).
TEST(RatingsTest, LongNamesKeepTheirRows) {
  const std::string name = "net:checkpoint=" + std::string(300, 'r') + ",sims=800";
  const std::string table =
      format_ratings(fit_ratings({{"random", name, 10, 2, 8}}, RatingOptions{}), RatingOptions{});
  EXPECT_NE(table.find(name + "  "), std::string::npos) << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4) << table;
}

TEST(RatingsTest, RecoversKnownRatingsFromExpectedResults) {
  // Every pair plays 100000 games with the expected number of wins (draws counted as half);
  // the fit must give back the ratings the table was made from.
  const std::map<std::string, double> truth = {
      {"random", 0}, {"a", 150}, {"b", 420}, {"c", 300}, {"d", -80}};
  std::vector<MatchLine> lines;
  for (const auto& [x, rx] : truth)
    for (const auto& [y, ry] : truth) {
      if (x >= y || (x == "d" && y == "random")) continue;  // not every pair needs to meet
      const int n = 100000;
      const double points = n * score_from_elo(rx - ry);
      const int draws = 2000;
      const int wins = static_cast<int>(std::lround(points - draws / 2.0));
      lines.push_back({x, y, wins, draws, n - wins - draws});
    }
  RatingOptions options;
  options.prior_draws = 0;
  const auto ratings = fit_ratings(lines, options);
  const auto fitted = by_player(ratings);
  for (const auto& [name, elo] : truth) EXPECT_NEAR(fitted.at(name).elo, elo, 0.1) << name;
  EXPECT_EQ(ratings.front().player, "b");  // sorted, strongest first
  EXPECT_EQ(ratings.back().player, "d");
  EXPECT_EQ(fitted.at("random").half_width, 0.0);
  EXPECT_GT(fitted.at("c").half_width, 0.0);
}

// The intervals are the diagonal of the inverse of the negative Hessian, here computed by the test
// itself (Gauss-Jordan on the dense matrix) for a graph of many cycles: with every result even,
// every rating is 0, each game has p = 1/2, and the Hessian is the graph's Laplacian weighted by
// (games + prior) / 4, the anchor's row and column removed.
TEST(RatingsTest, IntervalsAreTheInverseHessiansDiagonal) {
  const int n = 40;
  std::vector<MatchLine> lines;
  std::map<std::pair<int, int>, double> games;  // a pair's games, in any number of lines
  unsigned seed = 7;
  const auto next = [&] { return (seed = seed * 1103515245u + 12345u) >> 16; };
  const auto meet = [&](int a, int b, int each) {
    lines.push_back({"p" + std::to_string(a), "p" + std::to_string(b), each, 2 * each, each});
    games[std::minmax(a, b)] += 4.0 * each;
  };
  for (int i = 1; i < n; ++i) meet(static_cast<int>(next() % i), i, 1 + next() % 5);
  for (int k = 0; k < 60; ++k) {
    const int a = static_cast<int>(next() % n), b = static_cast<int>(next() % n);
    if (a != b) meet(a, b, 1 + next() % 5);
  }
  std::vector<std::vector<double>> h(n - 1, std::vector<double>(n - 1, 0.0));
  for (const auto& [pair, g] : games) {
    const double w = (g + 1.0) / 4.0;  // one virtual draw per pair that met
    for (const auto& [x, y] : {pair, std::make_pair(pair.second, pair.first)})
      if (x > 0) {
        h[x - 1][x - 1] += w;
        if (y > 0) h[x - 1][y - 1] -= w;
      }
  }
  // Gauss-Jordan: inverse of h.
  const int m = n - 1;
  std::vector<std::vector<double>> inv(m, std::vector<double>(m, 0.0));
  for (int i = 0; i < m; ++i) inv[i][i] = 1.0;
  for (int c = 0; c < m; ++c) {
    const double pivot = h[c][c];
    for (int j = 0; j < m; ++j) h[c][j] /= pivot, inv[c][j] /= pivot;
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = h[r][c];
      for (int j = 0; j < m; ++j) h[r][j] -= f * h[c][j], inv[r][j] -= f * inv[c][j];
    }
  }
  RatingOptions options;
  options.anchor = "p0";
  const auto fitted = by_player(fit_ratings(lines, options));
  const double per_elo = std::log(10.0) / 400.0;
  for (int i = 1; i < n; ++i) {
    const Rating& r = fitted.at("p" + std::to_string(i));
    EXPECT_NEAR(r.elo, 0.0, 1e-6);
    EXPECT_NEAR(r.half_width, options.z * std::sqrt(inv[i - 1][i - 1]) / per_elo, 1e-6) << i;
  }
}

// A run's ladder is a long chain of generations: thousands of players fit (the dense fit that
// came before took minutes and gigabytes at 20,000), and along a chain the variances add up, one
// 1 / w per link. Results too large to fit at once are refused, saying so.
TEST(RatingsTest, LongLaddersFitAndOversizedResultsAreRefused) {
  const int n = 5000;
  std::vector<MatchLine> chain;
  for (int i = 0; i < n; ++i)
    chain.push_back({"g" + std::to_string(i), "g" + std::to_string(i + 1), 3, 0, 3});
  RatingOptions options;
  options.anchor = "g0";
  const auto fitted = by_player(fit_ratings(chain, options));
  ASSERT_EQ(fitted.size(), static_cast<std::size_t>(n + 1));
  const double per_elo = std::log(10.0) / 400.0, w = (6.0 + 1.0) / 4.0;
  for (int i : {1, 17, 2500, n}) {
    const Rating& r = fitted.at("g" + std::to_string(i));
    EXPECT_NEAR(r.elo, 0.0, 1e-6);
    EXPECT_NEAR(r.half_width, options.z * std::sqrt(i / w) / per_elo, 1e-6 * r.half_width) << i;
  }
  // A noisy chain drifts like a random walk, beyond 7000 Elo from its anchor: with a prior every
  // rating is finite, and such a ladder fits (it was refused as running off to infinity).
  std::vector<MatchLine> noisy;
  unsigned seed = 3;
  for (int i = 0; i < 20000; ++i) {
    seed = seed * 1103515245u + 12345u;
    const int wins = static_cast<int>((seed >> 16) % 7);
    noisy.push_back({"g" + std::to_string(i), "g" + std::to_string(i + 1), wins, 0, 6 - wins});
  }
  double span = 0;
  for (const Rating& r : fit_ratings(noisy, options)) span = std::max(span, std::abs(r.elo));
  EXPECT_GT(span, 7000.0) << "the chain did not drift far enough to tell";
  // A line of no games joins no one: a player with only such lines has no chain to the anchor.
  EXPECT_THROW(fit_ratings({{"a", "g0", 0, 0, 0}, {"g1", "g0", 3, 0, 3}}, options),
               std::invalid_argument);
  std::vector<MatchLine> everyone;  // 1,300 players who all met: about 730 million a step
  for (int i = 0; i < 1300; ++i)
    for (int j = i + 1; j < 1300; ++j)
      everyone.push_back({"p" + std::to_string(i), "p" + std::to_string(j), 1, 0, 1});
  options.anchor = "p0";
  try {
    fit_ratings(everyone, options);
    ADD_FAILURE() << "fitted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ratings: 1300 players in 844350 pairs that met are more "
                                         "than one fit takes"),
              std::string::npos)
        << e.what();
  }
  // More players than one fit takes are refused as they are counted (a 64 MiB results file held
  // 2.7 million, and their fit took five minutes and 2 GB).
  std::vector<MatchLine> crowd;
  for (std::size_t i = 0; i < kMaxRatedPlayers; ++i)
    crowd.push_back({"c" + std::to_string(i), "c" + std::to_string(i + 1), 1, 0, 1});
  options.anchor = "c0";
  try {
    fit_ratings(crowd, options);
    ADD_FAILURE() << "fitted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("more than 250000 players"), std::string::npos)
        << e.what();
  }
}

// A fit's steps together have a budget of work (at least kRatingFitSteps full steps): a steep
// chain, whose Newton steps are cut short by their line searches, runs out of a small one and is
// an error that says so, not a fit that runs for minutes. It fits within the real one.
TEST(RatingsTest, AFitThatOutrunsItsWorkBudgetIsAnError) {
  std::vector<MatchLine> chain;
  for (int i = 0; i < 2000; ++i)
    chain.push_back({"s" + std::to_string(i + 1), "s" + std::to_string(i), 10000, 0, 0});
  RatingOptions options;
  options.anchor = "s0";
  const auto ratings = by_player(fit_ratings(chain, options));
  EXPECT_GT(ratings.at("s2000").elo, ratings.at("s1999").elo);
  options.min_fit_budget = 0;
  try {
    fit_ratings(chain, options);
    ADD_FAILURE() << "fitted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ratings: the fit of 2001 players in 2000 pairs did not "
                                         "settle within the work one fit takes"),
              std::string::npos)
        << e.what();
  }
}

TEST(RatingsTest, PerfectScoresNeedThePrior) {
  const std::vector<MatchLine> lines = {{"strong", "random", 200, 0, 0}};
  RatingOptions raw;
  raw.prior_draws = 0;
  EXPECT_THROW(fit_ratings(lines, raw), std::invalid_argument);
  // One virtual draw: 200.5 points of 201, elo(200.5 / 201) = 400 log10(401) = 1041.2.
  const auto ratings = by_player(fit_ratings(lines, RatingOptions{}));
  EXPECT_NEAR(ratings.at("strong").elo, 1041.2, 0.1);
}

// Without a prior the ratings diverge when a group of players took every point from the others it
// met, though none of them won every game: the error names the group, not one of its players.
TEST(RatingsTest, WithoutAPriorTheGroupThatTookEveryPointIsNamed) {
  RatingOptions raw;
  raw.prior_draws = 0;
  const auto error_of = [&](const std::vector<MatchLine>& lines) {
    try {
      fit_ratings(lines, raw);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of({{"A", "B", 3, 0, 2}, {"C", "random", 2, 0, 3}, {"A", "C", 5, 0, 0},
                      {"B", "random", 5, 0, 0}}),
            "ratings: A and B took every point in their games against C and random, so without a "
            "prior their ratings run off to infinity; use a prior of virtual draws "
            "(--prior-draws)");
  EXPECT_EQ(error_of({{"A", "random", 5, 0, 0}}),
            "ratings: A won every game against random, so without a prior its rating runs off to "
            "infinity; use a prior of virtual draws (--prior-draws)");
  // A draw gives the other side a point: a cycle of results fits.
  EXPECT_EQ(error_of({{"A", "random", 5, 1, 0}, {"B", "A", 1, 0, 0}, {"random", "B", 1, 0, 0}}),
            "no error");
}

TEST(RatingsTest, PerfectAndZeroVarianceRecordsAreFiniteAndAgreeWithTheMatchEstimate) {
  // The default prior (one virtual draw) is estimate_elo's (half a win and half a loss): two
  // players give the same estimate as the match, and every record a finite interval.
  struct Case {
    int wins, draws, losses;
  };
  for (const Case c : {Case{4, 0, 0}, Case{0, 0, 4}, Case{0, 10, 0}, Case{4, 0, 4}}) {
    const std::vector<MatchLine> lines = {{"x", "random", c.wins, c.draws, c.losses}};
    const auto ratings = fit_ratings(lines, RatingOptions{});
    const Rating x = by_player(ratings).at("x");
    const std::string record = std::to_string(c.wins) + "-" + std::to_string(c.draws) + "-" +
                               std::to_string(c.losses);
    EXPECT_NEAR(x.elo, estimate_elo(trinomial(c.wins, c.draws, c.losses)).elo, 1e-3) << record;
    EXPECT_TRUE(std::isfinite(x.elo) && std::isfinite(x.half_width)) << record;
    EXPECT_GT(x.half_width, 10.0) << record;
    const std::string table = format_ratings(ratings, RatingOptions{});
    EXPECT_EQ(table.find("inf"), std::string::npos) << table;
    EXPECT_EQ(table.find("nan"), std::string::npos) << table;
  }
}

// Games played in pairs (one opening, each side once) are not independent: with the pairs' counts
// a match of two players has the centre and the width of its own pentanomial interval, the one
// `arena` and the gate print (arena/ratings.h). Ten pairs, five won twice and five lost twice, are
// as uncertain as ten independent games, not twenty (the ladder said +-149 where the match's own
// interval said +-199); 100 drawn pairs were +-4.8
// on the ladder and +-13.6 in the match, and 200-0 in pairs +921 Elo there and +1041 in the match.
// Where players' games form a loop, pairs that agree less count more.
TEST(RatingsTest, GamesInPairsGetThePairsInterval) {
  const auto fit = [](MatchLine line) {
    return by_player(fit_ratings({line}, RatingOptions{})).at("x");
  };
  struct Case {
    int wins, draws, losses;
    std::array<int, 5> pairs;
  };
  for (const Case c : {Case{10, 0, 10, {5, 0, 0, 0, 5}}, Case{10, 0, 10, {0, 0, 10, 0, 0}},
                       Case{0, 200, 0, {0, 0, 100, 0, 0}}, Case{200, 0, 0, {0, 0, 0, 0, 100}},
                       Case{197, 0, 3, {1, 0, 1, 0, 98}}, Case{70, 0, 30, {10, 0, 10, 0, 30}},
                       Case{5, 0, 5, {0, 0, 5, 0, 0}}}) {
    const std::string what = std::to_string(c.wins) + "-" + std::to_string(c.draws) + "-" +
                             std::to_string(c.losses) + " in pairs " +
                             std::to_string(c.pairs[0]) + "/" + std::to_string(c.pairs[2]) +
                             "/" + std::to_string(c.pairs[4]);
    const Rating x = fit({"x", "random", c.wins, c.draws, c.losses, c.pairs});
    std::array<double, 5> counts{};
    for (int k = 0; k < 5; ++k) counts[k] = c.pairs[k];
    const EloEstimate match = estimate_elo(pentanomial(counts));
    EXPECT_NEAR(x.elo, match.elo, 1e-6) << what;
    EXPECT_NEAR(2.0 * x.half_width, match.elo_high - match.elo_low, 1e-6) << what;
    // From the other player's view, the same.
    const auto other = by_player(fit_ratings(
        {{"random", "x", c.losses, c.draws, c.wins,
          std::array<int, 5>{c.pairs[4], c.pairs[3], c.pairs[2], c.pairs[1], c.pairs[0]}}},
        RatingOptions{}));
    EXPECT_NEAR(other.at("x").elo, x.elo, 1e-6) << what;
    EXPECT_NEAR(other.at("x").half_width, x.half_width, 1e-6) << what;
  }
  const Rating games = fit({"x", "random", 10, 0, 10});
  const Rating agreeing = fit({"x", "random", 10, 0, 10, std::array<int, 5>{5, 0, 0, 0, 5}});
  EXPECT_GT(agreeing.half_width, games.half_width);
  // With another prior the width is still the match's (its centre moves with the prior).
  for (const double prior : {0.0, 5.0}) {
    RatingOptions options;
    options.prior_draws = prior;
    const Rating x = by_player(fit_ratings(
        {{"x", "random", 10, 0, 10, std::array<int, 5>{5, 0, 0, 0, 5}}}, options)).at("x");
    const EloEstimate match = estimate_elo(pentanomial({5, 0, 0, 0, 5}));
    EXPECT_NEAR(2.0 * x.half_width, match.elo_high - match.elo_low, 1e-6) << prior;
  }
  // Counts whose interval has no width (the score's edge: ten billion pairs won twice) weigh as
  // independent games, not infinitely (the fit failed).
  const std::vector<MatchLine> edge_lines(
      10, {"x", "random", 2'000'000'000, 0, 0, std::array<int, 5>{0, 0, 0, 0, 1'000'000'000}});
  const Rating edge = by_player(fit_ratings(edge_lines, RatingOptions{})).at("x");
  EXPECT_TRUE(std::isfinite(edge.elo) && std::isfinite(edge.half_width)) << edge.elo;
  // With a line of two players without its pairs, their games count as independent ones.
  const auto mixed = by_player(fit_ratings(
      {{"x", "random", 10, 0, 10, std::array<int, 5>{5, 0, 0, 0, 5}}, {"x", "random", 1, 0, 1}},
      RatingOptions{}));
  EXPECT_NEAR(mixed.at("x").half_width, fit({"x", "random", 11, 0, 11}).half_width, 1e-9);
  // A loop of three: x beat random 70-30 in pairs that agree (its 100 games and the prior's draw
  // count as about 67), while x-y and y-random split every pair one to one (theirs count as about
  // 680 each). Pairs that agree less count more: x sits near y and random, where the games taken
  // as independent put it far above.
  const std::vector<MatchLine> loop = {
      {"x", "random", 70, 0, 30, std::array<int, 5>{10, 0, 10, 0, 30}},
      {"y", "random", 50, 0, 50, std::array<int, 5>{0, 0, 50, 0, 0}},
      {"x", "y", 50, 0, 50, std::array<int, 5>{0, 0, 50, 0, 0}}};
  std::vector<MatchLine> independent = loop;
  for (MatchLine& line : independent) line.pairs.reset();
  const double weighted = by_player(fit_ratings(loop, RatingOptions{})).at("x").elo;
  const double unweighted = by_player(fit_ratings(independent, RatingOptions{})).at("x").elo;
  EXPECT_GT(unweighted, 30.0);
  EXPECT_LT(std::abs(weighted), unweighted / 3) << weighted << " " << unweighted;
}

// The reader's limit is the writer's: no line takes a results file past kMaxResultsFileBytes (one
// did, and then neither `ratings` nor the next `arena --results` could read the file), and a file
// near it is refused before a match is played.
TEST(RatingsTest, NoLineTakesAResultsFilePastItsLimit) {
  const std::string path = ::testing::TempDir() + "arena_results_full.txt";
  {
    std::string text = "# game: mg\n";
    const std::string filler = "# " + std::string(1021, 'x') + "\n";
    while (text.size() + filler.size() + 30 < kMaxResultsFileBytes) text += filler;
    while (text.size() + 30 < kMaxResultsFileBytes) text += "#\n";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
  const auto size = std::filesystem::file_size(path);
  EXPECT_NO_THROW(read_results_file(path));
  EXPECT_THROW(append_result(path, {"a-long-player-name", "random", 100, 0, 0}, "mg"),
               ResultsFileError);
  EXPECT_EQ(std::filesystem::file_size(path), size) << "nothing appended";
  EXPECT_THROW(check_results_game(path, "mg"), ResultsFileError);
  EXPECT_NO_THROW(read_results_file(path));
  std::remove(path.c_str());
}

TEST(RatingsTest, RejectsUnratablePlayers) {
  EXPECT_THROW(fit_ratings({{"a", "b", 1, 1, 1}}, RatingOptions{}), std::invalid_argument);
  try {
    fit_ratings({{"a", "random", 1, 1, 1}, {"b", "c", 1, 1, 1}}, RatingOptions{});
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no chain of games"), std::string::npos) << e.what();
  }
}

// A record file's game line holds each player as one blank-free word: a spec with a blank (a
// checkpoint path with a space) made lines every reader refused, so such a match is not recorded.
TEST(RatingsTest, ARecordPlayerIsOneWordOfPrintableText) {
  EXPECT_NO_THROW(check_record_player("net:checkpoint=runs/x/best.ckpt,sims=8"));
  EXPECT_NO_THROW(check_record_player("random"));
  for (const std::string bad : {"net:checkpoint=sp ace.ckpt,sims=8", "", "#x", "a\x1b[1m",
                                "E\xe2\x80\xaex"}) {
    try {
      check_record_player(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ResultsFileError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot be written to a results or record file"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(RatingsTest, ReadsAndAppendsTheResultsFile) {
  std::istringstream in("# comment\n\nuct:sims=100 random 10 2 3\nalphabeta:depth=1 random 5 0 0\n");
  const auto lines = read_results(in, "test");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].a, "uct:sims=100");
  EXPECT_EQ(lines[0].draws, 2);
  EXPECT_EQ(format_result_line(lines[1]), "alphabeta:depth=1 random 5 0 0");

  std::istringstream bad("a random 1 2\n");
  try {
    read_results(bad, "results.txt");
    FAIL() << "expected an error";
  } catch (const ResultsFileError& e) {
    EXPECT_NE(std::string(e.what()).find("results.txt line 1"), std::string::npos) << e.what();
  }
  // A line is quoted, shortened and with its control characters escaped (a 60 MB line was said
  // whole, and a terminal's escape sequences reached the terminal).
  std::istringstream hostile("a b 1 0 0 \x1b]0;title\x07" + std::string(1 << 20, 'x') + "\n");
  try {
    read_results(hostile, "results.txt");
    FAIL() << "expected an error";
  } catch (const ResultsFileError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 300u);
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << what;
    EXPECT_NE(what.find("\\x1b]0;title\\x07"), std::string::npos) << what;
  }

  // A line may end in its pairs' counts (as `arena` writes them): read back, and checked against
  // the line's games and points.
  std::istringstream paired("x random 3 2 1 0/1/0/1/1\n");
  const auto with_pairs = read_results(paired, "test");
  ASSERT_TRUE(with_pairs[0].pairs.has_value());
  EXPECT_EQ(*with_pairs[0].pairs, (std::array<int, 5>{0, 1, 0, 1, 1}));
  EXPECT_EQ(format_result_line(with_pairs[0]), "x random 3 2 1 0/1/0/1/1");
  for (const char* wrong : {"x random 3 2 1 0/1/1/1/1\n", "x random 3 2 1 1/0/1/0/1\n",
                            "x random 3 2 1 0/1/1/1\n", "x random 3 2 1 0/1/-1/1/2\n",
                            "x random 3 2 1 0/1/1/1/0 extra\n", "x random 3 2 1 0//1/1/0\n"}) {
    std::istringstream line(wrong);
    try {
      read_results(line, "results.txt");
      ADD_FAILURE() << "read: " << wrong;
    } catch (const ResultsFileError& e) {
      EXPECT_NE(std::string(e.what()).find("results.txt line 1"), std::string::npos) << e.what();
    }
  }
  std::istringstream mismatch("x random 3 2 1 1/0/1/0/1\n");
  try {
    read_results(mismatch, "results.txt");
  } catch (const ResultsFileError& e) {
    EXPECT_NE(std::string(e.what()).find("the pairs 1/0/1/0/1 are 6 games of 3 points, the line 6 "
                                         "of 4"),
              std::string::npos)
        << e.what();
  }

  // Names written are UTF-8 without control characters, C1's included (0x9b and U+009B are a
  // terminal's CSI), and without bidirectional controls (U+202E reverses a row); a file of an earlier version is read as it was, and `ratings` prints its
  // names escaped. A name in another script is a name.
  const std::string results_path = ::testing::TempDir() + "arena_results_names.txt";
  for (const std::string& name : {std::string("\xc2\x9b" "31mX"), std::string("\x9b" "31mY"),
                                 std::string("\xff\xfe"), std::string("\xe2\x80\xae" "Z")}) {
    std::remove(results_path.c_str());
    EXPECT_THROW(append_result(results_path, {"random", name, 1, 0, 0}, "mg"), ResultsFileError)
        << quote_input(name);
    std::istringstream line("random " + name + " 1 0 0\n");
    const auto read = read_results(line, "results.txt");
    const std::string table = format_ratings(fit_ratings(read, RatingOptions{}), RatingOptions{});
    EXPECT_EQ(printable_text(table), table) << quote_input(table, 400);
  }
  std::remove(results_path.c_str());
  std::istringstream named("random g\xc3\xa9n\xc3\xa9ral 1 0 0\n");
  EXPECT_EQ(read_results(named, "results.txt").at(0).b, "g\xc3\xa9n\xc3\xa9ral");

  const std::string path = ::testing::TempDir() + "arena_results_test.txt";
  std::remove(path.c_str());
  append_result(path, {"a", "random", 3, 1, 0}, "mg");
  append_result(path, {"b", "a", 0, 0, 4}, "mg");
  std::string game;
  const auto read = read_results_file(path, &game);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].losses, 4);
  EXPECT_EQ(game, "mg") << "a new file starts with its game line";
  EXPECT_THROW(append_result(path, {"has space", "random", 1, 0, 0}, "mg"), ResultsFileError);
  // What read_results would refuse is never written (before: `random random 1 0 1` was appended,
  // and then no line of the file could be rated).
  EXPECT_THROW(append_result(path, {"random", "random", 1, 0, 1}, "mg"), ResultsFileError);
  EXPECT_EQ(read_results_file(path).size(), 2u);
  // A match of another game is refused (before, `ratings` fitted players of two games on one
  // ladder, joined through `random`).
  try {
    append_result(path, {"c", "random", 1, 0, 0}, "ttt");
    FAIL() << "expected an error";
  } catch (const ResultsFileError& e) {
    EXPECT_NE(std::string(e.what()).find("holds matches of mg, not of ttt"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check_results_game(path, "mg"));
  EXPECT_THROW(check_results_game(path, "dvonn"), ResultsFileError);
  EXPECT_NO_THROW(check_results_game(path + ".absent", "dvonn"));
  EXPECT_EQ(read_results_file(path).size(), 2u);
  // A comment hidden behind a vertical tab or a form feed once rated a player "#" (found by
  // fuzzing); no name that the file could not hold as one is read or written.
  for (const char* text : {"random uct:sims=1 1 0 0\n\v# random 0 0 5\n", "\f#x random 1 0 0\n"}) {
    std::istringstream in_text(text);
    EXPECT_THROW(read_results(in_text, "hidden.txt"), ResultsFileError) << text;
  }
  EXPECT_THROW(append_result(path, {"#x", "random", 1, 0, 0}, "mg"), ResultsFileError);
  EXPECT_THROW(append_result(path, {"a\x01", "random", 1, 0, 0}, "mg"), ResultsFileError);
  // A file whose last line has no newline (written by hand, or cut by a kill): the new line starts
  // a line of its own (before, it ran into the last one, and the file no longer read at all).
  for (const char* text : {"# game: mg\na random 1 0 0", "# game: mg"}) {
    const std::string unended = ::testing::TempDir() + "arena_results_unended.txt";
    std::ofstream(unended) << text;
    append_result(unended, {"b", "random", 0, 1, 1}, "mg");
    const auto appended = read_results_file(unended);
    ASSERT_EQ(appended.size(), std::string(text).find("random") == std::string::npos ? 1u : 2u);
    EXPECT_EQ(appended.back().a, "b");
    EXPECT_EQ(appended.back().losses, 1);
  }
  // A file from before game lines takes any game's matches, as written; a game line is only valid
  // first, once.
  std::istringstream untagged("a random 1 0 0\n");
  read_results(untagged, "old.txt", &game);
  EXPECT_EQ(game, "");
  for (const char* text : {"a random 1 0 0\n# game: mg\n", "# game: mg\n# game: ttt\n",
                           "# game:\n", "# game: m g\n"}) {
    std::istringstream bad_text(text);
    EXPECT_THROW(read_results(bad_text, "bad.txt"), ResultsFileError) << text;
  }
  // Counts whose sum would overflow are refused by line (before: a negative games column).
  std::istringstream huge("a random 1 2 3\nrandom a 1000000000 1 0\n");
  try {
    read_results(huge, "huge.txt");
    FAIL() << "expected an error";
  } catch (const ResultsFileError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.txt line 2: more than 1000000000 games"),
              std::string::npos)
        << e.what();
  }
  const auto big = fit_ratings({{"a", "random", 600'000'000, 0, 0}, {"random", "a", 0, 0, 600'000'000}},
                               RatingOptions{});
  EXPECT_EQ(big[0].games, 1'200'000'000);
  const std::string table = format_ratings(fit_ratings(read, RatingOptions{}), RatingOptions{});
  EXPECT_NE(table.find("random"), std::string::npos);
  EXPECT_NE(table.find("Bradley-Terry"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace oppidum::arena
