#include "web/ladder.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "games/game.h"
#include "web/assets.h"
#include "web/errors.h"

namespace oppidum::web {
namespace {
using nlohmann::json;

// The players joined to `start` by a chain of matches, each given `group` in `group_of`.
std::vector<std::string> component(const std::string& start, int group,
                                   const std::map<std::string, std::set<std::string>>& met,
                                   std::map<std::string, int>& group_of) {
  std::vector<std::string> members{start}, todo{start};
  group_of[start] = group;
  while (!todo.empty()) {
    const std::string p = todo.back();
    todo.pop_back();
    for (const std::string& q : met.at(p))
      if (group_of.emplace(q, group).second) members.push_back(q), todo.push_back(q);
  }
  return members;
}

}  // namespace

json rating_ladders(const std::vector<SourceResults>& sources, const std::function<bool()>& stop) {
  const auto check_stop = [&stop] {
    if (stop && stop())
      throw Cancelled("the ratings were not fitted: their client left or the server is stopping");
  };
  json ladders = json::array();
  std::vector<std::string> games;
  for (const Game* g : all_games())  // in the registry's order
    for (const SourceResults& s : sources)
      if (s.game == g->name() && std::find(games.begin(), games.end(), s.game) == games.end())
        games.push_back(s.game);
  for (const std::string& game : games) {
    std::vector<arena::MatchLine> matches;
    std::vector<std::string> preferred;  // anchors, in order of preference
    std::map<std::string, std::set<std::string>> met;
    std::map<std::string, int> played;
    std::map<std::string, std::set<std::string>> sources_of;  // player -> sources naming it
    for (const SourceResults& s : sources) {
      if (s.game != game) continue;
      for (const std::string& b : s.baselines) preferred.push_back(b);
      for (const arena::MatchLine& m : s.matches) {
        if (m.wins + m.draws + m.losses <= 0 || m.a == m.b) continue;
        matches.push_back(m);
        met[m.a].insert(m.b);
        met[m.b].insert(m.a);
        played[m.a] += m.wins + m.draws + m.losses;
        played[m.b] += m.wins + m.draws + m.losses;
        sources_of[m.a].insert(s.source);
        sources_of[m.b].insert(s.source);
      }
    }
    preferred.insert(preferred.begin(), "random");
    for (const SourceResults& s : sources)
      if (s.game == game) preferred.push_back(s.source + "/gen-0000");
    // Players by games played, most first: the last resort for an anchor.
    std::vector<std::string> by_games;
    for (const auto& [player, n] : played) by_games.push_back(player);
    std::stable_sort(by_games.begin(), by_games.end(), [&](const auto& a, const auto& b) {
      return played[a] > played[b];
    });
    // The groups of players joined by games, each player's and each match's found once (a file of
    // 60,000 separate pairs took 49 s when every group looked at every match).
    std::map<std::string, int> group_of;
    std::vector<std::vector<std::string>> groups;
    for (const std::string& first : by_games)
      if (!group_of.count(first))
        groups.push_back(component(first, static_cast<int>(groups.size()), met, group_of));
    std::vector<std::vector<arena::MatchLine>> matches_of(groups.size());
    for (arena::MatchLine& m : matches) matches_of[group_of.at(m.a)].push_back(std::move(m));
    std::vector<std::string> anchor_of(groups.size());
    for (auto p = preferred.rbegin(); p != preferred.rend(); ++p)  // the first preferred wins
      if (const auto it = group_of.find(*p); it != group_of.end()) anchor_of[it->second] = *p;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      check_stop();
      const std::vector<std::string>& members = groups[g];
      const std::string anchor = anchor_of[g].empty() ? members.front() : anchor_of[g];
      std::vector<arena::MatchLine>& own = matches_of[g];
      std::set<std::string> from;
      for (const std::string& p : members) from.insert(sources_of[p].begin(), sources_of[p].end());
      json ladder = {{"game", game},
                     {"anchor", anchor},
                     {"sources", std::vector<std::string>(from.begin(), from.end())},
                     {"matches", own.size()}};
      try {
        arena::RatingOptions options;
        options.anchor = anchor;
        options.on_progress = [&check_stop](const std::string&) { check_stop(); };
        json players = json::array();
        for (const arena::Rating& r : arena::fit_ratings(own, options)) {
          const bool fixed = r.player == anchor;
          players.push_back({{"player", r.player},
                             {"elo", r.elo},
                             {"low", fixed ? json(nullptr) : json(r.elo - r.half_width)},
                             {"high", fixed ? json(nullptr) : json(r.elo + r.half_width)},
                             {"games", r.games},
                             {"score", r.score}});
        }
        ladder["players"] = players;
      } catch (const Cancelled&) {
        throw;
      } catch (const std::exception& e) {
        ladder["error"] = e.what();
      }
      ladders.push_back(std::move(ladder));
    }
  }
  return {{"ladders", ladders},
          {"method", "Bradley-Terry maximum likelihood on the Elo scale (arena/ratings.h), a draw "
                     "half a win, 1 virtual draw per pair that met; 95% intervals relative to "
                     "each ladder's anchor, a match's games taken as pairs where their pair "
                     "counts are known (gates), else as independent games"}};
}

json RatingLadders::operator()(std::vector<SourceResults> sources,
                               const std::function<bool()>& stop) {
  const auto same_line = [](const arena::MatchLine& x, const arena::MatchLine& y) {
    return x.a == y.a && x.b == y.b && x.wins == y.wins && x.draws == y.draws &&
           x.losses == y.losses;
  };
  const auto same = [&](const SourceResults& x, const SourceResults& y) {
    return x.game == y.game && x.source == y.source && x.baselines == y.baselines &&
           std::equal(x.matches.begin(), x.matches.end(), y.matches.begin(), y.matches.end(),
                      same_line);
  };
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fitted_ || !std::equal(sources.begin(), sources.end(), sources_.begin(), sources_.end(),
                              same)) {
    fitted_ = false;  // until the new fit is in
    ladders_ = rating_ladders(sources, stop);
    sources_ = std::move(sources);
    fitted_ = true;
  }
  return ladders_;
}

std::vector<SourceResults> baseline_results() {
  std::vector<SourceResults> out;
  const std::string suffix = "-results.txt";
  for (const Asset& asset : page_assets()) {
    const std::string path = asset.path;  // "/mg-results.txt", "/classic-mg-results.txt"
    if (path.size() <= suffix.size() + 1 ||
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    // [WHAT-]GAME-results.txt: the game is the name's last part (a classic-mg file was skipped
    // without a word, so the classical engine's matches never reached the ladder).
    const std::string stem = path.substr(1, path.size() - 1 - suffix.size());
    const std::size_t dash = stem.rfind('-');
    const std::string game = dash == std::string::npos ? stem : stem.substr(dash + 1);
    const Game* registered = nullptr;
    for (const Game* g : all_games())
      if (g->name() == game) registered = g;
    if (!registered) continue;
    std::istringstream text(std::string(asset.data, asset.size));
    const std::string source = "docs/baselines" + path;
    out.push_back({game, source, arena::read_results(text, source), {}});
  }
  return out;
}

}  // namespace oppidum::web
