// Fitting the classical engine's evaluation to game results (`oppidum tune`, docs/BASELINES.md
// "The classical engine"), the way chess engines tune theirs ("Texel tuning"): every position of
// the games given becomes a sample (its features, games/classic_eval.h, and the game's result
// for its side to move: 1 won, 1/2 drawn, 0 lost), and the weights w minimise the log loss of
// sigmoid(K * w . x) against the results. K (the scale that turns evaluation points into a
// winning chance) is fitted first, for the weights the engine has now; then the weights, with K
// fixed, by Newton's method (the loss is convex in w; a tiny ridge term keeps a feature that never
// varies at 0). The games are split by index: every `holdout_every`-th game is held out and only
// scored, so the loss before and after on it says whether the fit generalises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "games/game.h"

namespace oppidum::arena {

class TuneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TuneSamples {
  int features = 0;
  std::vector<float> x;             // row-major: sample i's features at [i * features, ...)
  std::vector<float> y;             // the result for the side to move: 1, 0.5 or 0
  std::vector<std::uint32_t> game;  // the index of the game each sample comes from
  std::uint32_t games = 0;          // games added
  std::size_t size() const { return y.size(); }
};

// Adds every position of one finished game of `game` (from `start`, a position in docs/RULES.md
// notation, or the initial position when empty; through `moves`) that the evaluation scores by
// its features, each with `result_first` (+1, 0, -1 for the game's side 0) seen from its side to
// move. The whole game is checked before anything is added, so a damaged one adds nothing: it
// throws TuneError naming the move when a move is illegal or follows the game's end, or when the
// game ends by the rules with another result than `result_first`. A game that stops before its end
// adds nothing and returns false (an adjudicated draw or a forfeit says nothing of the position),
// unless `may_stop_early` and the result is decisive (a self-play game ended by resignation: a
// result the search judged). True when the game was added.
bool add_game_samples(const Game& game, const std::string& start, const std::vector<Action>& moves,
                      int result_first, TuneSamples& samples, bool may_stop_early = false);

// The feature names and the compiled-in weights of `game`'s classical evaluation.
std::vector<std::string> classic_feature_names(const Game& game);
std::vector<double> classic_weights(const Game& game);
// Where they come from (the summary line of the `oppidum tune` run that wrote them, or "hand-set").
std::string classic_weights_source(const Game& game);

// The range K is fitted in (a log-scale search): a K at either end is no fit (the data do not
// determine it: too few games, or results the features separate).
inline constexpr double kMinFittedK = 1e-6;
inline constexpr double kMaxFittedK = 10.0;
// A training log loss below this: results the features separate perfectly (a handful of games),
// which drive the weights without end whatever K (one game with K 1 gave weights of +-35).
inline constexpr double kSeparatedLoss = 0.001;

struct TuneOptions {
  int holdout_every = 10;      // game g is held out when g % holdout_every == 0 (0: none)
  int max_iterations = 50;     // Newton steps
  double ridge = 1e-7;         // on K * w, per sample
  double fixed_k = 0;          // > 0: use this K instead of fitting it
};

struct TuneResult {
  double k = 0;
  std::vector<double> weights;
  std::size_t train_samples = 0, test_samples = 0;
  double train_loss_before = 0, train_loss_after = 0;
  double test_loss_before = 0, test_loss_after = 0;  // 0 when nothing is held out
  int iterations = 0;
  bool k_at_bound = false;  // the fitted K at an end of [kMinFittedK, kMaxFittedK]
  bool separated = false;   // a training loss below kSeparatedLoss: the weights mean nothing
};

// Fits K (unless options.fixed_k) for `initial` and then the weights. Throws TuneError when the
// samples cannot be fitted: none, a feature count other than initial's, values that are not
// finite, or results all alike (nothing to tell a win from a loss).
TuneResult tune_weights(const TuneSamples& samples, const std::vector<double>& initial,
                        const TuneOptions& options = {});

// The text of games/<game>/classic_weights.h for these weights: the namespace is the game's name
// (that of its folder), the comment says where the weights come from (`source`, one line).
std::string classic_weights_header(const Game& game, const std::vector<std::string>& names,
                                   const std::vector<double>& weights, const std::string& source,
                                   const std::vector<std::string>& comment);

}  // namespace oppidum::arena
