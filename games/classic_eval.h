// The classical engine's evaluation contract (arena/classic.h): beside each game's alpha-beta
// evaluation (games/<game>/evaluation.h, which stays as it is), games/<game>/classic_eval.h holds a
// linear evaluation over named features whose weights are fitted by `oppidum tune`
// (arena/tune.h: a logistic fit of the evaluation to game results, docs/BASELINES.md) and compiled
// in from games/<game>/classic_weights.h, a file that command writes. Found by argument-dependent
// lookup on the position type P:
//
//   bool classic_features(const P& pos, ClassicFeatures& out)
//       the features of a non-terminal position, each from the side to move's view (usually
//       mover minus opponent); false when the evaluation scores the position by a rule instead
//       (a Murus Gallicus mover that can break through now), so it is no sample for the fit
//   int classic_evaluate(const P& pos)
//       round(sum of weight * feature), or the rule's score; within +-kMaxEvaluation
//   const ClassicModel& classic_model(const P& pos)
//       the feature names and the compiled-in weights (the argument only picks the game)
//   bool classic_threatened(const P& pos)
//       the side to move faces a threat that decides the game unless answered now (a Murus
//       Gallicus breakthrough next move) and has no win of its own at once: the engine then
//       searches one ply more where its search would end (games without such threats: false)
//   bool classic_null_move(P& pos)
//       turns pos into the same position with the opponent to move (a "null move": not a move of
//       the game) and returns true, where the game seldom punishes a side for having to move, so
//       that standing still is a fair lower bound of the mover's best move: the engine then
//       prunes by null-move searches (arena/classic.h). False, pos unchanged, where that is not
//       so or not needed (each game's classic_eval.h says why)
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

namespace oppidum {

inline constexpr int kMaxClassicFeatures = 32;

struct ClassicFeatures {
  int count = 0;
  std::array<float, kMaxClassicFeatures> values{};
};

struct ClassicModel {
  std::vector<std::string> names;  // one per feature, in the order of ClassicFeatures::values
  std::vector<double> weights;     // evaluation points per unit of each feature
  // Where the weights come from (the tune run's summary line, or "hand-set").
  std::string source;
};

// The model of a game's weights header (games/<game>/classic_weights.h, as `oppidum tune` writes
// it: kClassicWeightNames, kClassicWeights, kClassicWeightsSource).
template <std::size_t N>
ClassicModel classic_model_of(const char* const (&names)[N], const double (&weights)[N],
                              const char* source) {
  return {std::vector<std::string>(std::begin(names), std::end(names)),
          std::vector<double>(std::begin(weights), std::end(weights)), source};
}

// The weighted sum of `features`, rounded to whole points and kept within +-limit.
inline int classic_score(const ClassicModel& model, const ClassicFeatures& features, int limit) {
  double sum = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(features.count); ++i)
    sum += model.weights[i] * features.values[i];
  const double clamped = std::fmax(-limit, std::fmin(limit, sum));
  return static_cast<int>(std::lround(clamped));
}

}  // namespace oppidum
