// Ratings of many players from their pairwise match results: the Bradley-Terry model on the Elo
// scale (P(i beats j) = 1 / (1 + 10^((r_j - r_i) / 400)), a draw counting as half a win and half a
// loss), fitted by maximum likelihood with Newton's method, one player anchored at 0. Each step
// solves with the sparse Hessian (one entry per pair of players that met), so a ladder of
// thousands of generations fits in about the time it takes to read.
//
// Intervals come from the observed Fisher information: the inverse of the negative Hessian of the
// log-likelihood (the anchor's row and column removed) is the covariance of the other ratings, so
// each interval is relative to the anchor: +- 1.96 standard errors. The model takes every game as
// independent; games played in pairs (one opening, each side once) are not: a pair's two games
// agree more (an opening that decides both) or less (the colour that decides) than chance would.
// Where every line of two players has its pairs' counts, each of their games (and the prior's
// draws with them) counts as the pairs say: as many independent games as give, at the centre of
// the pairs' own interval (estimate_elo's, the one `arena` prints), a Wald interval as wide, over
// the games and the prior's draws. A fit weighted so, as quasi-likelihood weighs it, gives two
// players alone about the width of their match's interval, and its centre with the default prior
// (one draw, estimate_elo's one virtual game); in a loop of players, pairs whose games agree less
// count more. Lines without the counts count as independent games. The interval of each distinct
// set of counts takes about 0.1 ms (on_progress is told every thousand).
//
// A player who won (or lost) every game has no finite maximum-likelihood rating. `prior_draws` adds
// that many virtual draws to every pair of players that met (default 1: it keeps a 200-0 result
// finite at about +1000 Elo, and pulls lopsided results most, a 197-3 match by 26 Elo); 0 fits
// the raw results and fails when a rating runs off to infinity.
//
// The results file holds one match per line, `A B wins draws losses [n0/n1/n2/n3/n4]` (wins,
// draws, losses from A's view; A and B are player specs; the pairs' counts by A's points, 0 to 2
// in halves, as `oppidum arena` writes them, their games and points those of the line); blank lines and lines starting with '#' are skipped, but for a
// line `# game: NAME` before the first match, which says the game every match of the file is of.
// Matches append to it (`oppidum arena --results FILE`, which writes that line first in a new
// file and refuses a match of another game) and `oppidum ratings --results FILE` reads it:
// players of different games never meet in one file (a file from before the game line can hold
// any, as written).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "arena/elo.h"

namespace oppidum::arena {

struct MatchLine {
  MatchLine() = default;
  MatchLine(std::string a_, std::string b_, int wins_, int draws_, int losses_,
            std::optional<std::array<int, 5>> pairs_ = std::nullopt)
      : a(std::move(a_)), b(std::move(b_)), wins(wins_), draws(draws_), losses(losses_),
        pairs(pairs_) {}

  std::string a, b;
  int wins = 0, draws = 0, losses = 0;  // from a's view
  // The games as pairs (one opening, the colours swapped) by a's points in each: 0, 1/2, 1, 3/2
  // and 2 (a match's pentanomial counts), when known. The fit's intervals then take a pair's two
  // games as the pair they are, not as two independent games (see fit_ratings).
  std::optional<std::array<int, 5>> pairs;
};

class ResultsFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most games one results line may count (wins + draws + losses).
inline constexpr int kMaxGamesPerResultLine = 1'000'000'000;

// The largest results file read: 64 MiB, about a million matches.
inline constexpr std::size_t kMaxResultsFileBytes = std::size_t{64} << 20;

// Reads results lines; throws ResultsFileError naming `source` and the line number of a bad line.
// `game`, when given, gets the file's game line's game ("" without one).
std::vector<MatchLine> read_results(std::istream& in, const std::string& source,
                                    std::string* game = nullptr);
// The same from a file: a regular file of at most kMaxResultsFileBytes, or ResultsFileError
// naming it.
std::vector<MatchLine> read_results_file(const std::string& path, std::string* game = nullptr);
// Throws ResultsFileError when a results line of `a` against `b` would be refused (a player
// against itself rates nothing): `arena` and `gauntlet` ask before a match whose line is wanted.
void check_result_players(const std::string& a, const std::string& b);
// Throws ResultsFileError when a record file's game line could not hold `name` as one player (a
// spec with a blank: a checkpoint path with a space; a control character): `arena`, `gauntlet`
// and `play` ask before a game is recorded.
void check_record_player(const std::string& name);
// "A B wins draws losses".
std::string format_result_line(const MatchLine& line);
// Throws ResultsFileError when the file at `path` holds matches of another game than `game` (its
// game line says so), or cannot be read as a results file; nothing when it does not exist yet.
// `arena` and `gauntlet` ask before their matches.
void check_results_game(const std::string& path, const std::string& game);
// Appends one line of a match of `game`, creating the file with its game line; throws
// ResultsFileError when it cannot (the path is not a regular file, the disk is full, the file is
// of another game), when a spec holds whitespace, or for a line that read_results would refuse.
// Processes appending to one file take turns (an exclusive flock from the check to the append).
void append_result(const std::string& path, const MatchLine& line, const std::string& game);

// The largest fit: at most kMaxRatedPlayers players; the factor of its Hessian (sparse, players in
// approximate-minimum-degree order) holds at most kMaxRatingFactorSize entries and costs at most
// kMaxRatingFactorWork multiplications a step; all its steps together cost at most
// kMaxRatingFitWork or kRatingFitSteps full steps of the fit, whichever is more (the factors'
// multiplications, and kRatingPairWork for each pair each time the likelihood or its derivatives
// are evaluated). Seconds and a few hundred MB at most: a chain of 250,000 generations fits, and
// so do about 1,100 players who all met each other.
inline constexpr std::size_t kMaxRatedPlayers = 250'000;
inline constexpr std::int64_t kMaxRatingFactorSize = 10'000'000;
inline constexpr double kMaxRatingFactorWork = 5e8;
inline constexpr double kMaxRatingFitWork = 5e9;
inline constexpr int kRatingFitSteps = 30;
inline constexpr double kRatingPairWork = 50.0;

struct RatingOptions {
  std::string anchor = "random";  // rated 0
  double prior_draws = 1.0;       // virtual draws per pair that met, >= 0
  double z = kZ95;                // interval half-width in standard errors
  // The work all steps of a fit may take at least (the budget above; a test makes it small).
  double min_fit_budget = kMaxRatingFitWork;
  // Told how the fit goes ("fitting 12 players: iteration 3"); may be empty.
  std::function<void(const std::string& text)> on_progress;
};

struct Rating {
  std::string player;
  double elo = 0.0;
  double half_width = 0.0;  // the interval is elo +- half_width (0 for the anchor)
  std::int64_t games = 0;
  double score = 0.0;       // points (wins + draws / 2) per game, over all its games
};

// Fits ratings; sorted from the highest. Throws std::invalid_argument when the anchor played no
// game, a player has no chain of games to the anchor, (prior_draws = 0) a rating diverges, or the
// fit would be larger than the limits above.
std::vector<Rating> fit_ratings(const std::vector<MatchLine>& matches, const RatingOptions& options);

// A plain-text table: rank, player, Elo, +-, games, score.
std::string format_ratings(const std::vector<Rating>& ratings, const RatingOptions& options);

}  // namespace oppidum::arena
