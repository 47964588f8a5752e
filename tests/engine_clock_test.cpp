// `oppidum engine --time` over a hundred games (slow: about 3 minutes on a loaded 2-core
// machine, most of it the programs' start-up).
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "arena/external.h"
#include "arena/match.h"
#include "arena/player.h"
#include "games/game.h"

namespace oppidum::arena {
namespace {

using Clock = std::chrono::steady_clock;

const Game& ttt() { return game_by_name("ttt"); }

std::string engine_cmd(const std::string& game, const std::string& player) {
  return std::string(OPPIDUM_BINARY) + " engine --game " + game + " --player " + player;
}

// `oppidum engine --time`: 100 games of tic-tac-toe on a 1-second clock against a program that
// answers at once, the referee holding the engine to its clock; not one is lost on time.
TEST(ExternalMatchTest, EngineKeepsItsClockOverAHundredGames) {
  const std::string timed = engine_cmd("ttt", "uct:sims=1000000") + " --time 1";
  auto engine = make_player(ttt(), "external:cmd=\"" + timed + "\",clock=1");
  auto instant = make_player(ttt(), "external:cmd=\"" + engine_cmd("ttt", "random") + "\"");
  MatchConfig config;
  config.games = 100;
  config.threads = 2;
  const auto start = Clock::now();
  const MatchStatus status = run_match(ttt(), *engine, *instant, config);
  EXPECT_EQ(status.games_counted, 100);
  EXPECT_EQ(status.forfeits, 0) << format_match_report(status);
  EXPECT_EQ(status.time_losses[0], 0);
  // About 3 minutes on a loaded 2-core machine; generous.
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 900.0);
}

}  // namespace
}  // namespace oppidum::arena
