// The ratings tab of the page: every result the server can see, as one Bradley-Terry ladder per
// game (arena/ratings.h, with its virtual draws, so that no rating or interval is infinite). The
// results are the baselines' matches (docs/baselines/GAME-results.txt, compiled in), the gates of
// each run served (`RUN/gen-NNNN` against the network it challenged), the anchor matches of its
// promoted networks (against the anchor's spec, e.g. `alphabeta:depth=2`, the same player as in
// docs/BASELINES.md and in arena record files), and the games of every arena record file served
// (their players' specs). A run whose anchor is a baseline is so rated on the baselines' scale.
//
// Players joined by no chain of games make separate ladders. Each ladder is anchored at 0 on the
// first of these it holds: `random` (as in docs/BASELINES.md), an anchor a run's anchor matches
// named, a run's gen-0000, else its most-played player; every interval is relative to that player.
// The baselines are not held fixed: their own matches (hundreds of games each) place them, and a
// run's matches move them by little.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arena/ratings.h"

namespace oppidum::web {

// The results of one source: a run or an arena record file.
struct SourceResults {
  std::string game;    // a registered game's name; results of different games never meet
  std::string source;  // the run's or the file's name in the API
  std::vector<arena::MatchLine> matches;
  std::vector<std::string> baselines;  // anchors named by the source (a run's arena.anchor)
};

// {"ladders": [{game, anchor, sources, matches, players: [{player, elo, low, high, games,
// score}]} or {..., error} when a ladder cannot be fitted], "method": "..."}, the games in the
// registry's order (results of a game not registered are left out); the anchor's low and high
// are null (it is the fixed point, not an estimate). Throws Cancelled (web/errors.h) once `stop`
// (when given) returns true: it is asked between ladders and between the steps of each fit.
nlohmann::json rating_ladders(const std::vector<SourceResults>& sources,
                              const std::function<bool()>& stop = {});

// rating_ladders of the last sources asked for, kept: the page asks again every few seconds, and
// a fit of a long run's ladder takes a while (arena::kMaxRatingFactorWork). Safe to call from
// several threads: one fits, the others wait for its answer.
class RatingLadders {
 public:
  nlohmann::json operator()(std::vector<SourceResults> sources,
                            const std::function<bool()>& stop = {});

 private:
  std::mutex mutex_;
  std::vector<SourceResults> sources_;
  nlohmann::json ladders_;
  bool fitted_ = false;
};

// The baselines' results compiled in (web/assets.h), one source per registered game that has a
// file, named after it ("docs/baselines/mg-results.txt").
std::vector<SourceResults> baseline_results();

}  // namespace oppidum::web
