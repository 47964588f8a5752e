// Matches: paired openings, determinism, strength, the sequential test, the stop flag, records and
// play_game.
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "arena/game_record.h"
#include "arena/match.h"
#include "arena/play.h"
#include "arena/player.h"
#include "arena/players.h"
#include "games/game.h"

namespace oppidum::arena {
namespace {

const Game& mg() { return game_by_name("mg"); }

struct Played {
  MatchStatus status;
  std::vector<GameRecord> games;
  std::vector<std::string> lines;
};

Played play(const std::string& a_spec, const std::string& b_spec, MatchConfig config,
            const Game& game = mg()) {
  auto a = make_player(game, a_spec);
  auto b = make_player(game, b_spec);
  Played out;
  MatchHooks hooks;
  hooks.on_game = [&](const GameRecord& record) {
    out.games.push_back(record);
    const std::array<std::string, 2> specs =
        record.a_first ? std::array<std::string, 2>{a->spec(), b->spec()}
                       : std::array<std::string, 2>{b->spec(), a->spec()};
    out.lines.push_back(format_game_line(game, specs, record.moves, record.result));
  };
  out.status = run_match(game, *a, *b, config, hooks);
  return out;
}

TEST(MatchTest, AlphaBetaBeatsRandomClearly) {
  MatchConfig config;
  config.games = 20;
  config.threads = 2;
  config.seed = 3;
  const Played p = play("alphabeta:depth=2", "random", config);
  EXPECT_EQ(p.status.games_counted, 20);
  EXPECT_EQ(p.status.wins + p.status.draws + p.status.losses, 20);
  EXPECT_GE(p.status.wins, 18);
  EXPECT_GT(p.status.elo.elo, 200.0);
  EXPECT_GT(p.status.time[0].moves, 0);
  EXPECT_GT(p.status.time[1].moves, 0);
}

TEST(MatchTest, EachOpeningIsPlayedTwiceWithColoursSwapped) {
  MatchConfig config;
  config.games = 12;
  config.seed = 9;
  const Played p = play("alphabeta:depth=1", "random", config);
  ASSERT_EQ(p.games.size(), 12u);
  std::map<std::vector<Action>, int> openings;
  for (std::size_t i = 0; i < p.games.size(); i += 2) {
    const GameRecord& first = p.games[i];
    const GameRecord& second = p.games[i + 1];
    EXPECT_EQ(first.index / 2, second.index / 2);
    EXPECT_TRUE(first.a_first);
    EXPECT_FALSE(second.a_first);
    EXPECT_EQ(first.opening_plies, 4);
    const std::vector<Action> a(first.moves.begin(), first.moves.begin() + 4);
    const std::vector<Action> b(second.moves.begin(), second.moves.begin() + 4);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, make_opening(mg(), 4, config.seed, first.index / 2));
    ++openings[a];
  }
  EXPECT_EQ(openings.size(), 6u);  // six different openings
}

TEST(MatchTest, SameSeedSameGamesWhateverTheThreads) {
  MatchConfig config;
  config.games = 8;
  config.seed = 42;
  config.max_plies = 120;
  config.threads = 1;
  const Played one = play("uct:sims=24", "alphabeta:depth=1", config);
  config.threads = 2;
  const Played two = play("uct:sims=24", "alphabeta:depth=1", config);
  EXPECT_EQ(one.lines, two.lines);
  EXPECT_EQ(one.status.wins, two.status.wins);
  EXPECT_EQ(one.status.draws, two.status.draws);
  config.seed = 43;
  const Played other = play("uct:sims=24", "alphabeta:depth=1", config);
  EXPECT_NE(one.lines, other.lines);
}

// The distinct counts are exact past the many games they keep as hashes (a match once kept every
// game's moves: 400 bytes a game, 4 GB for 10^7 random games): Tic-tac-toe's random games repeat
// often, and 6000 of them pass the hash set's merges several times.
TEST(MatchTest, DistinctGamesAndPairsAreCountedExactly) {
  MatchConfig config;
  config.games = 6000;
  config.threads = 2;
  config.seed = 5;
  config.opening_plies = 1;
  const Played p = play("random", "random", config, game_by_name("ttt"));
  ASSERT_EQ(p.games.size(), 6000u);
  std::map<int, const GameRecord*> by_index;
  std::set<std::vector<Action>> games;
  for (const GameRecord& g : p.games) {
    games.insert(g.moves);
    by_index[g.index] = &g;
  }
  std::set<std::pair<std::vector<Action>, std::vector<Action>>> pairs;
  for (int i = 0; i < 6000; i += 2) pairs.insert({by_index.at(i)->moves, by_index.at(i + 1)->moves});
  EXPECT_GT(games.size(), 1100u) << "enough distinct games to merge the set several times";
  EXPECT_LT(games.size(), 5900u) << "and repeats among them";
  EXPECT_EQ(p.status.distinct_games, static_cast<int>(games.size()));
  EXPECT_EQ(p.status.distinct_pairs, static_cast<int>(pairs.size()));
}

TEST(MatchTest, SprtStopsWhenTheEvidenceDecides) {
  MatchConfig config;
  config.games = 400;
  config.threads = 2;
  config.seed = 5;
  config.sprt = SprtConfig{0, 50, 0.05, 0.05};
  const Played p = play("alphabeta:depth=1", "random", config);
  EXPECT_EQ(p.status.verdict, SprtVerdict::kAcceptH1);
  EXPECT_GE(p.status.llr, p.status.bounds.upper);
  EXPECT_LT(p.status.games_counted, 400);
  EXPECT_EQ(static_cast<int>(p.games.size()), p.status.games_counted);
  EXPECT_NE(format_match_report(p.status).find("H1 accepted"), std::string::npos);
}

// H1 accepted says "A is stronger" only when H1 and H0 both put A at least level: with elo0 < 0
// it can be a weaker A (elo0=-300, elo1=-100 accepted between two equal players).
TEST(MatchTest, AnAcceptedH1SaysStrongerOnlyWhereItMeansIt) {
  MatchStatus status;
  status.verdict = SprtVerdict::kAcceptH1;
  status.sprt = SprtConfig{0, 20, 0.05, 0.05};
  EXPECT_EQ(describe_verdict(status),
            "H1 accepted: A is stronger, elo >= 20 more likely than elo <= 0");
  status.sprt = SprtConfig{-300, -100, 0.05, 0.05};
  EXPECT_EQ(describe_verdict(status), "H1 accepted: elo >= -100 more likely than elo <= -300");
  status.sprt = SprtConfig{-10, 10, 0.05, 0.05};
  EXPECT_EQ(describe_verdict(status), "H1 accepted: elo >= 10 more likely than elo <= -10");
}

// A match's memory follows the games played, not its cap: an SPRT with a cap of ten million
// games, decided within a few hundred, took 1.4 GB before a game (a slot for every game of the
// cap). Peak resident memory of this test's own process (CTest runs each test as one).
TEST(MatchTest, AHugeCapTakesNoMemoryBeforeItsGames) {
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  MatchConfig config;
  config.games = 10'000'000;
  config.threads = 2;
  config.sprt = SprtConfig{0, 300, 0.05, 0.05};
  const Played p = play("random", "random", config, game_by_name("ttt"));
  EXPECT_NE(p.status.verdict, SprtVerdict::kContinue);
  EXPECT_LT(p.status.games_counted, 10'000);
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 200L * 1024) << "KiB more at the peak";
}

// What an Elo does not show is said beside it, in arena's report and under the gauntlet's table.
// A match stopped before a game was counted has no score, Elo or time a move to show: unknown,
// not the prior's 50% and +0.0 Elo [-605.8, +605.8], nor 0.0 us a move.
TEST(MatchReport, NoGameCountedIsNoNumber) {
  MatchStatus s;
  s.a = "a";
  s.b = "b";
  s.game = "mg";
  s.games_cap = 10;
  s.stopped = true;
  const std::string report = format_match_report(s);
  EXPECT_NE(report.find("score –\n"), std::string::npos) << report;
  EXPECT_NE(report.find("Elo (A - B): – (no game counted)"), std::string::npos) << report;
  EXPECT_NE(report.find("time per move: A – (0 moves), B – (0 moves)"), std::string::npos)
      << report;
  EXPECT_EQ(report.find("50.0%"), std::string::npos) << report;
  EXPECT_NE(format_progress(s).find("score –  Elo – (no game counted)"), std::string::npos)
      << format_progress(s);
  const std::string table = format_gauntlet_table({s});
  EXPECT_EQ(table.find("50.0%"), std::string::npos) << table;
  EXPECT_EQ(table.find("us"), std::string::npos) << table;
}

TEST(MatchReport, CaveatsSayWhatAnEloDoesNotShow) {
  MatchStatus s;
  s.a = "a";
  s.b = "b";
  s.games_cap = 100;
  // A result of these pairs (counts by A's points; pairs of 0, 1 or 2 points only: no draws),
  // every game and pair distinct.
  const auto result = [&s](const std::array<double, 5>& pairs) {
    s.games_counted = 2 * static_cast<int>(pairs[0] + pairs[2] + pairs[4]);
    s.wins = static_cast<int>(pairs[2] + 2 * pairs[4]);
    s.losses = s.games_counted - s.wins;
    s.distinct_games = s.games_counted;
    s.distinct_pairs = s.games_counted / 2;
    s.elo = estimate_elo(pentanomial(pairs));
  };
  result({0, 0, 0, 0, 5});
  std::vector<std::string> caveats = elo_caveats(s);
  ASSERT_EQ(caveats.size(), 1u);
  EXPECT_NE(caveats[0].find("a perfect score has no finite Elo: the estimate and interval count "
                            "one virtual game, half a win and half a loss: +528.9 is the Elo of "
                            "95.5%;"),
            std::string::npos)
      << caveats[0];

  // The prior moves any score but an even one: 17-3 is 85.0%, +301.3; with the virtual game (a
  // quarter pair at 0 and one at 1) 8.75 of 10.5 pairs, 83.3%, +279.6. The report says which.
  result({0, 0, 3, 0, 7});
  caveats = elo_caveats(s);
  ASSERT_EQ(caveats.size(), 1u);
  EXPECT_EQ(caveats[0], "the estimate and interval count one virtual game, half a win and half a "
                        "loss: +279.6 is the Elo of 83.3%, not +301.3 of the observed score; "
                        "docs/BASELINES.md, \"Matches\"");

  // A player against itself plays each opening's game twice: 5 of 10 games, all 5 pairs, differ.
  result({0, 0, 5, 0, 0});
  s.distinct_games = 5;
  EXPECT_TRUE(elo_caveats(s).empty());

  s.distinct_pairs = 2;
  caveats = elo_caveats(s);
  ASSERT_EQ(caveats.size(), 1u);
  EXPECT_NE(caveats[0].find("only 2 of the 5 pairs of games differ: the interval counts every "
                            "pair as independent evidence"),
            std::string::npos)
      << caveats[0];

  s.sprt = SprtConfig{};
  s.verdict = SprtVerdict::kAcceptH1;
  caveats = elo_caveats(s);
  ASSERT_EQ(caveats.size(), 2u);
  EXPECT_NE(caveats[0].find("the interval and the SPRT count"), std::string::npos) << caveats[0];
  EXPECT_NE(caveats[1].find("stopped early by the SPRT"), std::string::npos) << caveats[1];
  const std::string report = format_match_report(s);
  for (const std::string& caveat : caveats)
    EXPECT_NE(report.find("(" + caveat + ")"), std::string::npos) << report;
  s.pairs = {1, 0, 2, 0, 2};
  const std::string table = format_gauntlet_table({s});
  for (const std::string& caveat : caveats)
    EXPECT_NE(table.find("vs b: " + caveat), std::string::npos) << table;
  EXPECT_NE(table.find("pairs 0/.5/1/1.5/2"), std::string::npos) << table;
  EXPECT_NE(table.find("  1/0/2/0/2  "), std::string::npos) << table;

  // A decision at the cap is no early stop; all different pairs, no repeat.
  s.games_cap = 10;
  s.distinct_pairs = 5;
  EXPECT_TRUE(elo_caveats(s).empty());
}

// A random player that notes the games it was asked about and the games that ended.
class TrackingPlayer final : public Player {
 public:
  std::string spec() const override { return "tracking"; }
  Action choose_move(const GameState& state, std::uint64_t seed) override {
    return random_.choose_move(state, seed);
  }
  Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      asked_.insert(game_id);
    }
    return random_.choose_move(state, seed);
  }
  void game_ended(int game_id) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_.insert(game_id);
  }
  std::set<int> asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }
  std::set<int> ended() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ended_;
  }

 private:
  RandomPlayer random_;
  std::mutex mutex_;
  std::set<int> asked_, ended_;
};

// A random player whose first move of game 0 takes 300 ms: meanwhile the other thread plays on,
// so games finish past the decision that the first pair's result lets the SPRT reach.
class SlowStartPlayer final : public Player {
 public:
  std::string spec() const override { return "slow-start"; }
  Action choose_move(const GameState& state, std::uint64_t seed) override {
    return random_.choose_move(state, seed);
  }
  Action choose_move_in_game(int game_id, const GameState& state, std::uint64_t seed) override {
    if (game_id == 0 && !slept_.exchange(true))
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return random_.choose_move(state, seed);
  }

 private:
  RandomPlayer random_;
  std::atomic<bool> slept_{false};
};

// A random player whose first move takes `delay`: a game longer than a wait hook's period.
class FirstMoveWaits final : public Player {
 public:
  explicit FirstMoveWaits(std::chrono::milliseconds delay) : delay_(delay) {}
  std::string spec() const override { return "first-move-waits"; }
  Action choose_move(const GameState& state, std::uint64_t seed) override {
    if (!slept_.exchange(true)) std::this_thread::sleep_for(delay_);
    return random_.choose_move(state, seed);
  }

 private:
  const std::chrono::milliseconds delay_;
  RandomPlayer random_;
  std::atomic<bool> slept_{false};
};

// MatchHooks::on_wait goes on while a long game is played, before any pair is counted (a run's
// lease on its store was renewed only between pairs, and a pair longer than the lease let it
// lapse), one call at a time with on_progress; its exception fails the match.
TEST(MatchTest, TheWaitHookRunsDuringALongGame) {
  MatchConfig config;
  config.games = 2;
  config.threads = 1;
  config.seed = 5;
  auto random = make_player(mg(), "random");
  {
    FirstMoveWaits slow(std::chrono::milliseconds(2500));
    std::atomic<int> waits{0}, waits_before_a_pair{0}, inside{0}, overlaps{0};
    std::atomic<bool> counted{false};
    MatchHooks hooks;
    const auto enter = [&] {
      if (inside.fetch_add(1) != 0) ++overlaps;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --inside;
    };
    hooks.on_wait = [&](const MatchStatus& s) {
      enter();
      ++waits;
      if (s.games_counted == 0 && !counted) ++waits_before_a_pair;
    };
    hooks.on_progress = [&](const MatchStatus&) {
      enter();
      counted = true;
    };
    const MatchStatus status = run_match(mg(), slow, *random, config, hooks);
    EXPECT_EQ(status.games_counted, 2);
    EXPECT_GE(waits_before_a_pair.load(), 1);
    EXPECT_EQ(overlaps.load(), 0);
  }
  FirstMoveWaits slow(std::chrono::milliseconds(2500));
  MatchHooks hooks;
  hooks.on_wait = [](const MatchStatus&) { throw std::runtime_error("the lease is lost"); };
  try {
    run_match(mg(), slow, *random, config, hooks);
    FAIL() << "the wait hook's failure was not the match's";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "the lease is lost");
  }
}

// A wait hook that takes long holds up no stop: the stop reaches the runners while it runs, and no
// pair is counted after the stop (the hook ran on the thread that watched the stop flag, with the
// match's lock: a stop waited for it, and 0 to 4 pairs were counted after it).
TEST(MatchTest, ALongWaitHookHoldsUpNoStop) {
  using Clock = std::chrono::steady_clock;
  auto uct = make_player(mg(), "uct:sims=4");
  MatchConfig config;
  config.games = 1'000'000;
  config.threads = 2;
  config.seed = 9;
  std::atomic<bool> stop{false};
  std::atomic<int> after_stop{0};
  MatchHooks hooks;
  hooks.stop = &stop;
  hooks.on_wait = [](const MatchStatus&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  };
  hooks.on_progress = [&](const MatchStatus&) {
    if (stop) ++after_stop;
  };
  Clock::time_point stop_time;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // within the hook's sleep
    stop_time = Clock::now();
    stop = true;
  });
  const MatchStatus status = run_match(mg(), *uct, *uct, config, hooks);
  const double after = std::chrono::duration<double>(Clock::now() - stop_time).count();
  stopper.join();
  EXPECT_TRUE(status.stopped);
  // (One pair may be counted in the instant the flag is set, its check just before.)
  EXPECT_LE(after_stop.load(), 1);
  // The runners stop at once; the match's end then waits only for the hook it is in (up to 1.7 s
  // here), which is the hook's own time, not the stop's.
  EXPECT_LT(after, 2.5);
}

// The time per move counts the moves of the counted games only, not those of games another
// thread played past the decision: a direct player's (timed move by move) and a search player's
// (its share of the search time).
TEST(MatchTest, TimePerMoveCountsTheCountedGamesOnly) {
  SlowStartPlayer slow;
  auto uct = make_player(mg(), "uct:sims=8");
  MatchConfig config;
  config.games = 2000;
  config.threads = 2;
  config.seed = 1;
  config.sprt = SprtConfig{0, 20, 0.05, 0.05};
  std::vector<GameRecord> games;
  MatchHooks hooks;
  hooks.on_game = [&](const GameRecord& record) { games.push_back(record); };
  const MatchStatus status = run_match(mg(), slow, *uct, config, hooks);
  ASSERT_NE(status.verdict, SprtVerdict::kContinue);
  ASSERT_EQ(static_cast<int>(games.size()), status.games_counted);
  std::array<std::int64_t, 2> moves{};  // Murus Gallicus: player 0 moves at even plies
  for (const GameRecord& g : games)
    for (std::size_t ply = static_cast<std::size_t>(g.opening_plies); ply < g.moves.size(); ++ply)
      ++moves[(ply % 2 == 0) == g.a_first ? 0 : 1];
  EXPECT_EQ(status.time[0].moves, moves[0]);
  EXPECT_EQ(status.time[1].moves, moves[1]);
  EXPECT_GE(status.time[0].max_move, 0.3);  // the slow move was a counted game's
  EXPECT_GT(status.time[1].seconds, 0.0);
}

TEST(MatchTest, StopFlagEndsTheMatchWithTheCountedPrefix) {
  using Clock = std::chrono::steady_clock;
  auto uct = make_player(mg(), "uct:sims=16");
  TrackingPlayer tracking;
  MatchConfig config;
  config.games = 1'000'000;  // hours of games: only the stop flag ends this match in time
  config.threads = 2;
  config.seed = 7;
  std::atomic<bool> stop{false};
  std::atomic<int> progress{0};
  MatchHooks hooks;
  hooks.stop = &stop;
  hooks.on_progress = [&](const MatchStatus&) { ++progress; };
  Clock::time_point stop_time;
  std::thread stopper([&] {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (progress == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stop_time = Clock::now();
    stop = true;
  });
  const MatchStatus status = run_match(mg(), *uct, tracking, config, hooks);
  const double after_stop = std::chrono::duration<double>(Clock::now() - stop_time).count();
  stopper.join();
  EXPECT_TRUE(status.stopped);
  EXPECT_FALSE(status.finished);
  EXPECT_LT(after_stop, 5.0);  // a few milliseconds, plus the moves in progress
  EXPECT_GE(status.games_counted, 2);
  EXPECT_LT(status.games_counted, status.games_cap);
  EXPECT_EQ(status.games_counted % 2, 0);
  EXPECT_EQ(status.wins + status.draws + status.losses, status.games_counted);
  EXPECT_EQ(progress, status.games_counted / 2);  // no pair counted after the end
  // Every game that a player was asked about ended for it, the abandoned ones included.
  const std::set<int> asked = tracking.asked(), ended = tracking.ended();
  for (int id : asked) EXPECT_EQ(ended.count(id), 1u) << "game " << id << " never ended";
  const std::string report = format_match_report(status);
  EXPECT_NE(report.find("stopped: the match was stopped after " +
                        std::to_string(status.games_counted) + " of up to 1000000 games"),
            std::string::npos)
      << report;

  // A flag already set: no game is played at all.
  TrackingPlayer idle;
  const MatchStatus none = run_match(mg(), *uct, idle, config, hooks);
  EXPECT_TRUE(none.stopped);
  EXPECT_EQ(none.games_counted, 0);
  EXPECT_TRUE(idle.asked().empty());
}

// A stop reaches a direct player in the middle of a move on a depth budget (before: the match
// waited for the move, here practically forever: the web server's /api/match held its place and
// ignored SIGTERM), and one on a long time control (Ctrl-C waited for an `alphabeta:ms=3600000`
// move for good, and for a `uct:ms=` one until its tree was full).
TEST(MatchTest, StopFlagEndsADeepMoveInProgress) {
  using Clock = std::chrono::steady_clock;
  const Game& dvonn = game_by_name("dvonn");
  for (const char* spec : {"classic:depth=64", "alphabeta:depth=12", "alphabeta:ms=3600000",
                           "uct:ms=3600000", "uct:clock=86400", "alphabeta:clock=86400"}) {
    auto deep = make_player(dvonn, spec);
    auto random = make_player(dvonn, "random");
    std::atomic<bool> stop{false};
    MatchHooks hooks;
    hooks.stop = &stop;
    MatchConfig config;
    config.games = 2;
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      stop = true;
    });
    const auto start = Clock::now();
    const MatchStatus status = run_match(dvonn, *deep, *random, config, hooks);
    stopper.join();
    EXPECT_TRUE(status.stopped) << spec;
    EXPECT_EQ(status.games_counted, 0) << spec;
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(30)) << spec;
  }
}

TEST(MatchTest, StopFlagAfterTheEndChangesNothing) {
  std::atomic<bool> stop{false};
  MatchHooks hooks;
  hooks.stop = &stop;
  hooks.on_progress = [&](const MatchStatus& s) {
    if (s.finished) stop = true;  // set as the last pair is counted
  };
  auto a = make_player(mg(), "alphabeta:depth=1");
  auto b = make_player(mg(), "random");
  MatchConfig config;
  config.games = 4;
  const MatchStatus status = run_match(mg(), *a, *b, config, hooks);
  EXPECT_TRUE(status.finished);
  EXPECT_FALSE(status.stopped);
  EXPECT_EQ(status.games_counted, 4);
}

TEST(MatchTest, RecordsOneLinePerGame) {
  MatchConfig config;
  config.games = 2;
  config.seed = 1;
  const Played p = play("alphabeta:depth=1", "random", config);
  ASSERT_EQ(p.lines.size(), 2u);
  EXPECT_EQ(p.lines[0].rfind("mg alphabeta:depth=1 random ", 0), 0u) << p.lines[0];
  EXPECT_EQ(p.lines[1].rfind("mg random alphabeta:depth=1 ", 0), 0u) << p.lines[1];
  // The moves replay from the initial position to the recorded result.
  std::istringstream in(p.lines[0]);
  std::string game, first, second, result, move;
  in >> game >> first >> second >> result;
  auto state = mg().initial_state();
  while (in >> move) state->apply(state->parse_action(move));
  EXPECT_TRUE(state->is_terminal());
  EXPECT_EQ(result, result_notation(state->result(0)));
}

TEST(MatchTest, DvonnMatchRuns) {
  MatchConfig config;
  config.games = 4;
  config.threads = 2;
  const Played p = play("alphabeta:depth=1", "random", config, game_by_name("dvonn"));
  EXPECT_EQ(p.status.games_counted, 4);
  for (const auto& g : p.games) EXPECT_EQ(g.opening_plies, 6);
}

TEST(MatchTest, RefusesHumansAndBadConfigs) {
  std::istringstream in;
  std::ostringstream out;
  HumanPlayer human(in, out);
  auto random = make_player(mg(), "random");
  EXPECT_THROW(run_match(mg(), human, *random, MatchConfig{}), std::invalid_argument);
  MatchConfig bad;
  bad.games = 0;
  EXPECT_THROW(run_match(mg(), *random, *random, bad), std::invalid_argument);
}

TEST(PlayGameTest, HumanAgainstAlphaBetaWithScriptedInput) {
  // The person plays c1-c3 (after an illegal try), then quits.
  std::istringstream in("c1-c4\nc1-c3\nquit\n");
  std::ostringstream out;
  HumanPlayer human(in, out);
  auto engine = make_player(mg(), "alphabeta:depth=1");
  std::vector<std::string> seen;
  const auto start = mg().initial_state();
  EXPECT_THROW(play_game(*start, {&human, engine.get()}, 1, 0,
                         [&](const GameState& before, Action a) {
                           seen.push_back(before.action_to_string(a));
                         }),
               QuitGame);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "c1-c3");
  EXPECT_NE(out.str().find("Not playable"), std::string::npos);
}

TEST(PlayGameTest, EnginesPlayToTheEnd) {
  auto a = make_player(mg(), "alphabeta:depth=2");
  auto b = make_player(mg(), "random");
  const PlayedGame g = play_game(*mg().initial_state(), {a.get(), b.get()}, 4);
  EXPECT_TRUE(g.final_state->is_terminal());
  EXPECT_EQ(g.result, 1.0);
}

// A record line and back: the one reader of the format (tune and the web page read through it)
// takes what format_game_line writes, a forfeit's reason included, and lines from before the game's
// name was written.
TEST(RecordLine, WhatIsWrittenIsReadBack) {
  const Game& game = mg();
  auto state = game.initial_state();
  ActionList legal;
  std::vector<Action> moves;
  for (int i = 0; i < 3; ++i) {
    state->legal_actions(legal);
    moves.push_back(legal[0]);
    state->apply(legal[0]);
  }
  const std::string line = format_game_line(game, {"random", "external:x"}, moves, -1.0,
                                            "garbage: sent 'a\nb' instead of a move (ply 3)");
  const auto g = split_game_line(line);
  ASSERT_TRUE(g.has_value()) << line;
  EXPECT_EQ(g->game, &game);
  EXPECT_EQ(g->first, "random");
  EXPECT_EQ(g->second, "external:x");
  EXPECT_EQ(g->result, "0-1");
  EXPECT_EQ(g->moves.size(), 3u);
  EXPECT_EQ(g->forfeit, "garbage: sent 'a\\nb' instead of a move (ply 3)");  // one line
  const auto old = split_game_line("random alphabeta:depth=1 1/2-1/2 c1-c3");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->game, nullptr);
  EXPECT_EQ(old->first, "random");
  EXPECT_EQ(old->moves, std::vector<std::string>{"c1-c3"});
  EXPECT_EQ(old->forfeit, "");
  EXPECT_FALSE(split_game_line("").has_value());
  EXPECT_FALSE(split_game_line("mg random random 2-0 c1-c3").has_value());
  EXPECT_FALSE(split_game_line("mg random").has_value());
  // A player is a spec, never one with a control character (a NUL reached the web page's JSON);
  // a line of more moves than any game is refused before they all take memory (one of 100 MB took
  // 1.6 GB).
  const char nul[] = "mg x\0y random 1-0 c1-c3";
  EXPECT_FALSE(split_game_line(std::string(nul, sizeof nul - 1)).has_value());
  EXPECT_FALSE(split_game_line("mg random \x1b[2Jz 1-0 c1-c3").has_value());
  std::string longest = "mg random random 1-0";
  for (std::size_t i = 0; i < kMaxRecordedMoves; ++i) longest += " c1-c3";
  EXPECT_TRUE(split_game_line(longest).has_value());
  EXPECT_FALSE(split_game_line(longest + " c1-c3").has_value());
  // A move longer than any move's notation is no game (a 500 MB token took gigabytes).
  EXPECT_FALSE(split_game_line("ttt a b 1-0 " + std::string(kMaxRecordedMoveBytes + 1, 'a')));
}


}  // namespace
}  // namespace oppidum::arena
