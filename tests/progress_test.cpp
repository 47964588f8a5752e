// The trainer node's small units: its telemetry fed a Progress value (trainer/progress.h: the
// pipeline numbers and line from given stats, the status line from a Progress, the gate summary,
// the per-generation lines and selfplay rows, the cluster monitor's text and rows against a private
// redis-server), the gate row from given matches and the anchor check (trainer/gate.h), and config
// identity on resume (trainer/resume.h: resolve_config's refusals naming the keys).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "arena/match.h"
#include "games/game.h"
#include "store/run_channel.h"
#include "tests/redis_server.h"
#include "trainer/gate.h"
#include "trainer/progress.h"
#include "trainer/resume.h"
#include "trainer/run_folder.h"
#include "trainer/settings.h"
#include "util/csv_table.h"

namespace oppidum::trainer {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

// A fresh folder under the test's temp dir, removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(fs::path(::testing::TempDir()) /
              ("progress_" + tag + "_" + std::to_string(std::random_device{}()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The rows of metrics.csv of kind `kind`, as column name -> field.
std::vector<std::map<std::string, std::string>> metrics_rows(const RunPaths& paths,
                                                             const std::string& kind) {
  util::CsvTable::Row header;
  int skipped = 0;
  std::vector<std::map<std::string, std::string>> out;
  for (const auto& row : util::CsvTable::read(paths.metrics().string(), &header, &skipped)) {
    if (row[0] != kind) continue;
    std::map<std::string, std::string> named;
    for (std::size_t i = 0; i < header.size(); ++i) named[header[i]] = row[i];
    out.push_back(named);
  }
  return out;
}

// An interval of 10 s in which self-play played 1000 moves (and finished games of 300 positions)
// and the two forward workers ran 100 batches of 10000 evaluations in 5 s of forward time.
std::pair<PipelineMark, PipelineMark> ten_seconds() {
  PipelineMark from, to;
  from.at = Clock::now();
  from.inference.positions = 1000;
  from.inference.batches = 10;
  from.inference.forward_seconds = 1.0;
  from.selfplay.moves = 100;
  from.selfplay.positions = 50;
  to.at = from.at + seconds(10);
  to.inference.positions = 11000;
  to.inference.batches = 110;
  to.inference.forward_seconds = 6.0;
  to.inference.workers = 2;
  to.selfplay.moves = 1100;
  to.selfplay.positions = 350;
  to.selfplay.resign.resigned = 3;
  to.selfplay.resign.checks = 7;
  to.selfplay.resign.recent_false_rate = 0.25;
  return {from, to};
}

TEST(Pipeline, NumbersFromTheStatsOfAnInterval) {
  const auto [from, to] = ten_seconds();
  Progress now;
  now.seconds = 42.5;
  now.generation = 3;
  now.positions = 5000;
  now.games = 60;
  const auto row = pipeline_row(from, to, now, true);
  ASSERT_TRUE(row);
  EXPECT_DOUBLE_EQ(row->seconds, 42.5);
  EXPECT_EQ(row->generation, 3);
  EXPECT_EQ(row->positions, 5000);
  EXPECT_EQ(row->games, 60);
  EXPECT_DOUBLE_EQ(row->positions_per_second, 100.0);
  EXPECT_DOUBLE_EQ(row->evals_per_position, 10.0);
  EXPECT_DOUBLE_EQ(row->forward_busy, 0.25) << "5 s of forward time over 2 workers x 10 s";
  EXPECT_DOUBLE_EQ(row->forward_rate, 2000.0);
  EXPECT_DOUBLE_EQ(row->mean_batch, 100.0);
  EXPECT_DOUBLE_EQ(row->bound, 400.0) << "2 workers x 2000 positions/s / 10 evaluations";
  EXPECT_EQ(row->resigned, 3);
  EXPECT_EQ(row->resign_checks, 7);
  EXPECT_DOUBLE_EQ(row->resign_false_rate, 0.25);
  EXPECT_EQ(pipeline_line("generation 3", *row, 2),
            "generation 3 self-play: 100.0 positions/s, 10.0 evaluations/position, forward busy "
            "25% (2 workers, mean batch 100.0), forward alone 2000 evaluations/s a worker, so the "
            "bound is 400.0 positions/s: 25.0% of it");
  EXPECT_NE(pipeline_line("session", *row, 1).find("(1 worker, mean"), std::string::npos);

  EXPECT_EQ(pipeline_row(from, to, now, false)->resign_checks, -1) << "resignation off";
  PipelineMark busy = to;
  busy.inference.forward_seconds = 100.0;
  EXPECT_DOUBLE_EQ(pipeline_row(from, busy, now, false)->forward_busy, 1.0) << "capped at 1";
}

TEST(Pipeline, MovesPlayedCountWhetherOrNotTheirGamesFinished) {
  const auto [from, to] = ten_seconds();
  PipelineMark no_game = to;
  no_game.selfplay.positions = from.selfplay.positions;
  no_game.selfplay.games = from.selfplay.games;
  const auto row = pipeline_row(from, no_game, Progress{}, false);
  ASSERT_TRUE(row) << "no game finished, but 1000 moves were played";
  EXPECT_DOUBLE_EQ(row->positions_per_second, 100.0);
  EXPECT_DOUBLE_EQ(row->evals_per_position, 10.0);
}

TEST(Pipeline, NothingForAnIntervalWithoutAMoveOrABatch) {
  const auto [from, to] = ten_seconds();
  PipelineMark no_move = to;
  no_move.selfplay.moves = from.selfplay.moves;
  EXPECT_FALSE(pipeline_row(from, no_move, Progress{}, false));
  PipelineMark no_batch = to;
  no_batch.inference.batches = from.inference.batches;
  no_batch.inference.forward_seconds = from.inference.forward_seconds;
  EXPECT_FALSE(pipeline_row(from, no_batch, Progress{}, false));
  EXPECT_FALSE(pipeline_row(from, from, Progress{}, false)) << "no time passed";
}

TEST(TrainerPace, StepsRateWaitingShareAndReuse) {
  Progress p;
  p.steps = 1000;  // the run's, earlier sessions' included
  p.positions = 64000;
  p.pace = {400, 20.0, 5.0};
  EXPECT_EQ(trainer_pace_line(p, 256, 4, 5000),
            "trainer this session: 400 steps, 20.00 steps/s (5120 samples/s) while stepping; "
            "waited for self-play's positions 20% of the time (sample_reuse 4.00); each position "
            "sampled 4.00 times so far");
  p.pace.waiting_seconds = 0;
  p.steps = 500;
  EXPECT_NE(trainer_pace_line(p, 256, 4, 5000).find("waited for self-play's positions 0% of the time"),
            std::string::npos);
  EXPECT_NE(trainer_pace_line(p, 256, 4, 5000).find("each position sampled 2.00 times so far"),
            std::string::npos)
      << "a trainer that never waits falls behind sample_reuse";
}

TEST(TrainerPace, BeforeTheFirstStepItSaysWhatItWaitsFor) {
  Progress p;
  p.positions = 1200;
  EXPECT_EQ(trainer_pace_line(p, 256, 4, 5000),
            "trainer this session: no step (the run has 1200 self-play positions; training "
            "starts at 5000)");
  p.positions = 6000;  // enough: it stopped for another reason (a generation limit reached)
  EXPECT_EQ(trainer_pace_line(p, 256, 4, 5000), "trainer this session: no step");
}

Progress some_progress() {
  Progress p;
  p.seconds = 10;
  p.generation = 2;
  p.steps = 25;
  p.positions = 4000;
  p.games = 50;
  p.last_step.loss = 1.75;
  p.last_step.policy_loss = 1.23456;
  p.last_step.value_loss = 0.5;
  p.last_step.score_loss = 0.125;
  p.best_generation = 1;
  p.rating = 35.3;
  return p;
}

TEST(StatusLine, TextFromAProgress) {
  Progress p = some_progress();
  selfplay::SelfPlayStats sp;
  sp.moves = 1234;     // the rate: moves played this session, in finished games or not
  sp.positions = 999;  // written to the store: not the rate
  model::InferenceStats inf;
  inf.evals_per_second = 456.7;
  inf.mean_fill = 0.5;
  inf.forward_share = 0.756;
  const std::string base = "gen 2 | games 50 pos 4000 (123/s) | eval 457/s fill 0.50 fwd 76% | "
                           "step 25 loss 1.750 (p 1.235 v 0.500";
  EXPECT_EQ(status_text(p, &sp, inf, false, ""), base + ") | best gen 1 chained +35.3 Elo");
  EXPECT_EQ(status_text(p, &sp, inf, true, ""), base + " s 0.125) | best gen 1 chained +35.3 Elo");
  const std::string cluster = "nodes 1 (w1 0.5/s) lag 0 evicted 0";
  p.last_gate = "gen 2 -3.0 [-40.0, +30.0] over 8 games: rejected";
  EXPECT_EQ(status_text(p, &sp, inf, false, cluster),
            base + ") | best gen 1 chained +35.3 Elo | " + cluster + " | last gate " + p.last_gate);
  p.gate = "12/40 games";
  EXPECT_EQ(status_text(p, &sp, inf, false, ""),
            base + ") | best gen 1 chained +35.3 Elo | gate 12/40 games")
      << "a gate in progress shows instead of the last one";
  p.seconds = 0;
  EXPECT_NE(status_text(p, &sp, inf, false, "").find("pos 4000 (1234000000000/s)"),
            std::string::npos)
      << "a rate at time 0 divides by 1e-9 s, never by zero";
  // The chain of a run without gates is unknown: no Elo, rather than "+0.0 Elo".
  p.rating = std::nan("");
  EXPECT_NE(status_text(p, &sp, inf, false, "").find(") | best gen 1 | gate"), std::string::npos)
      << status_text(p, &sp, inf, false, "");
  p.rating = 35.3;
  // A trainer without self-play threads of its own (fed by nodes) has no rate of its own to show:
  // its line once said "pos 647771 (0/s) | eval 0/s" while the nodes played 6,000 a second.
  EXPECT_EQ(status_text(p, nullptr, inf, false, ""),
            "gen 2 | games 50 pos 4000 | step 25 loss 1.750 (p 1.235 v 0.500) | best gen 1 "
            "chained +35.3 Elo | gate 12/40 games");
  // A resumed run before its first step once showed "loss 0.000".
  p.last_step = {};
  EXPECT_NE(status_text(p, &sp, inf, true, "").find("step 25 loss - (no step yet this session) |"),
            std::string::npos)
      << status_text(p, &sp, inf, true, "");
}

GateMatches promoted_with_anchor() {
  GateMatches m;
  m.gate.games_counted = 40;
  m.gate.wins = 20;
  m.gate.draws = 8;
  m.gate.losses = 12;
  m.gate.elo.elo = 25.04;
  m.gate.elo.elo_low = -10.0;
  m.gate.elo.elo_high = 60.0;
  m.gate.llr = 1.5;
  m.gate.games_cap = 40;
  m.gate.pairs = {1, 2, 3, 4, 10};
  m.gate.sprt = arena::SprtConfig{};
  m.gate.verdict = arena::SprtVerdict::kAcceptH1;
  m.promoted = true;
  m.anchor.emplace();
  m.anchor->games_counted = 10;
  m.anchor->elo.score = 0.55;
  m.anchor->elo.elo = 34.9;
  m.anchor->elo.elo_low = -50.0;
  m.anchor->elo.elo_high = 120.0;
  m.anchor->pairs = {0, 1, 2, 1, 1};
  return m;
}

TEST(Gate, RowFromTheMatches) {
  config::RunConfig c;
  c.arena.anchor = "alphabeta:depth=2";
  GateInputs in;
  in.config = &c;
  in.generation = 3;
  in.best_generation = 1;
  const GateMatches m = promoted_with_anchor();
  const GateRow row = gate_row(in, m, 30, 99.5, 40.0);
  EXPECT_EQ(row.generation, 3);
  EXPECT_EQ(row.step, 30);
  EXPECT_EQ(row.opponent_generation, 1);
  EXPECT_EQ(row.games, 40);
  EXPECT_EQ(row.wins, 20);
  EXPECT_EQ(row.draws, 8);
  EXPECT_EQ(row.losses, 12);
  EXPECT_DOUBLE_EQ(row.elo, 25.04);
  EXPECT_DOUBLE_EQ(row.elo_low, -10.0);
  EXPECT_DOUBLE_EQ(row.elo_high, 60.0);
  EXPECT_DOUBLE_EQ(row.llr, 1.5);
  EXPECT_EQ(row.pairs, "1/2/3/4/10") << "the counts the interval was computed from";
  EXPECT_EQ(row.verdict, arena::describe_verdict(m.gate));
  EXPECT_NE(row.verdict.find("H1 accepted"), std::string::npos) << row.verdict;
  EXPECT_TRUE(row.promoted);
  EXPECT_DOUBLE_EQ(row.seconds, 99.5);
  EXPECT_DOUBLE_EQ(row.rating, 65.04) << "the chained rating gains the promoted gate's Elo";
  EXPECT_EQ(row.anchor, "alphabeta:depth=2");
  EXPECT_EQ(row.anchor_games, 10);
  EXPECT_DOUBLE_EQ(row.anchor_score, 0.55);
  EXPECT_DOUBLE_EQ(row.anchor_elo, 34.9);
  EXPECT_DOUBLE_EQ(row.anchor_elo_low, -50.0);
  EXPECT_DOUBLE_EQ(row.anchor_elo_high, 120.0);
  EXPECT_EQ(row.anchor_pairs, "0/1/2/1/1");
  EXPECT_EQ(gate_summary(row), "gen 3 +25.0 [-10.0, +60.0] over 40 games: promoted; vs "
                               "alphabeta:depth=2 55.0% (+34.9 Elo [-50.0, +120.0] over 10 games)");
}

// A self-play node's line about positions whose outputs were not finite: at the first, and each
// time their count has doubled, so that a network broken everywhere fills no log.
TEST(NonFiniteNotice, TellsTheFirstAndEachDoubling) {
  NonFiniteNotice notice;
  EXPECT_EQ(notice(0), "");
  EXPECT_EQ(notice(1), "the network's outputs were not finite (NaN or infinite) for 1 "
                       "position(s) so far; it was searched with uniform priors and value 0 there");
  EXPECT_EQ(notice(1), "");
  EXPECT_NE(notice(2), "");
  EXPECT_EQ(notice(3), "");
  EXPECT_NE(notice(5), "");
  EXPECT_EQ(notice(9), "");
  EXPECT_NE(notice(10).find(" for 10 position(s)"), std::string::npos);
}

TEST(Gate, RowOfARejectedCandidateOrOfNoGate) {
  config::RunConfig c;
  c.arena.anchor = "alphabeta:depth=2";
  GateInputs in;
  in.config = &c;
  in.generation = 4;
  in.best_generation = 3;
  GateMatches m = promoted_with_anchor();
  m.promoted = false;
  m.anchor.reset();
  m.gate.verdict = arena::SprtVerdict::kAcceptH0;
  m.gate.elo.elo = -5.0;
  GateRow row = gate_row(in, m, 40, 120.0, 65.0);
  EXPECT_FALSE(row.promoted);
  EXPECT_DOUBLE_EQ(row.rating, 65.0) << "a rejected candidate leaves the rating";
  EXPECT_EQ(row.anchor, "") << "no anchor match: no anchor columns";
  EXPECT_EQ(row.anchor_games, 0);
  EXPECT_EQ(gate_summary(row), "gen 4 -5.0 [-10.0, +60.0] over 40 games: rejected");

  GateMatches none;  // arena.max_games 0: no match, every candidate promoted
  none.gate.games_cap = 0;
  none.promoted = true;
  row = gate_row(in, none, 40, 120.0, 65.0);
  EXPECT_EQ(row.verdict, "no gate (arena.max_games 0)");
  EXPECT_EQ(row.pairs, "") << "no match, no pairs";
  EXPECT_TRUE(row.promoted);
  // A promotion nothing measured leaves the chain unknown, never a measured-looking +0 (it was
  // shown as a flat line at 0 on the page and "best gen 18 +0.0 Elo" in the status line).
  EXPECT_TRUE(std::isnan(row.rating)) << row.rating;
  EXPECT_TRUE(std::isnan(chained_rating(row.rating, true, 30.0))) << "unknown from there on";
  EXPECT_TRUE(std::isnan(chained_rating(row.rating, false, 30.0)));
  // Nothing measured: no estimate and no interval, never "+0.0 [+0.0, +0.0]".
  EXPECT_TRUE(std::isnan(row.elo) && std::isnan(row.elo_low) && std::isnan(row.elo_high));
  EXPECT_EQ(gate_summary(row), "gen 4 no gate match: promoted");

  GateMatches refused;  // a candidate whose network computes nothing
  refused.gate.games_cap = 40;
  refused.refused = "checkpoint gen-0004.ckpt: the network's outputs are not finite";
  row = gate_row(in, refused, 40, 120.0, 65.0);
  EXPECT_FALSE(row.promoted);
  EXPECT_EQ(row.verdict, "not promoted: " + refused.refused);
  EXPECT_TRUE(std::isnan(row.elo) && std::isnan(row.elo_low) && std::isnan(row.llr));
  EXPECT_DOUBLE_EQ(row.rating, 65.0);
  EXPECT_EQ(gate_summary(row), "gen 4 no gate match: refused, its network computes nothing");
  // A row rebuilt by --recover knows its Elo but not its interval nor its games.
  GateRow rebuilt;
  rebuilt.generation = 2, rebuilt.games = -1, rebuilt.elo = 12.0, rebuilt.promoted = true;
  rebuilt.elo_low = rebuilt.elo_high = std::nan("");
  EXPECT_EQ(gate_summary(rebuilt), "gen 2 +12.0: promoted");
}

// At the cap without an SPRT decision the score decides (promotes()), and the verdict says so
// next to "no decision".
TEST(Gate, AVerdictAtTheCapSaysWhichWayTheScoreDecided) {
  config::RunConfig c;
  GateInputs in;
  in.config = &c;
  in.generation = 5;
  in.best_generation = 4;
  GateMatches m = promoted_with_anchor();
  m.anchor.reset();
  m.gate.verdict = arena::SprtVerdict::kContinue;
  m.gate.games_cap = m.gate.games_counted = 40;  // +20 =8 -12: 60%
  m.promoted = promotes(m.gate);
  ASSERT_TRUE(m.promoted);
  GateRow row = gate_row(in, m, 50, 1.0, 10.0);
  EXPECT_EQ(row.verdict, "no decision after 40 games (the cap); promoted on its score, 24 of 40 "
                         "points (60%), more than half");
  m.gate.wins = 12, m.gate.losses = 20;  // 40%
  m.promoted = promotes(m.gate);
  ASSERT_FALSE(m.promoted);
  row = gate_row(in, m, 50, 1.0, 10.0);
  EXPECT_EQ(row.verdict, "no decision after 40 games (the cap); kept the best: its score, 16 of "
                         "40 points (40%), not more than half");
  // A share that rounds to 50.0% says by its points which side of half it is.
  m.gate.games_cap = m.gate.games_counted = 2000;
  m.gate.wins = 1000, m.gate.draws = 1, m.gate.losses = 999;
  m.promoted = promotes(m.gate);
  ASSERT_TRUE(m.promoted);
  EXPECT_NE(gate_row(in, m, 50, 1.0, 10.0).verdict.find("1000.5 of 2000 points (50%), more than half"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(row.rating, 10.0);
}

// The anchor is checked before a run starts, as a gate would make it.
TEST(Gate, AnUnusableAnchorIsAConfigError) {
  const Game& game = game_by_name("mg");
  config::RunConfig c;
  c.arena.anchor_games = 10;
  c.arena.anchor = "alphabeta:depth=2";
  EXPECT_NO_THROW(check_anchor(game, c));
  c.arena.anchor = "grandmaster";
  try {
    check_anchor(game, c);
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("arena.anchor: ", 0), 0u) << e.what();
  }
  c.arena.anchor_games = 0;
  EXPECT_NO_THROW(check_anchor(game, c)) << "no anchor games: nothing to check";
}

// What a session's telemetry logs and records, on stats given by the test.
TEST(Telemetry, GenerationAndSessionLinesAndSelfplayRows) {
  TempDir dir("telemetry");
  RunFolder folder(dir.path());
  folder.open_tables(false, "");
  config::RunConfig c;
  c.net.score_head = true;
  c.selfplay.resign_below = -0.9;
  model::InferenceStats inference;
  selfplay::SelfPlayStats selfplay;
  std::vector<std::string> lines;
  const auto log = [&lines](const std::string& line) { lines.push_back(line); };
  Telemetry telemetry(c, false,
                      {[&inference] { return inference; }, [&selfplay] { return selfplay; }},
                      folder, nullptr, log);
  Progress p = some_progress();
  telemetry.update(p);
  ASSERT_EQ(lines.size(), 1u) << "off a terminal the status line is logged (every 30 s)";
  EXPECT_EQ(lines[0], status_text(p, &selfplay, inference, true, ""));
  telemetry.update(p);
  EXPECT_EQ(lines.size(), 1u) << "at most once a second, and logged every 30 s";

  telemetry.end_generation(p);  // no game finished yet: nothing is measured
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "generation 2: step 25 losses: policy 1.2346, value 0.5000, score margin "
                      "0.1250");
  EXPECT_EQ(lines[2], "self-play resignations this session: 0 games resigned; 0 checked by playing "
                      "on, 0 wrong (0.0% of the last 0); resigning is off");
  lines.clear();
  EXPECT_TRUE(metrics_rows(folder.paths(), "selfplay").empty());

  // The first move played starts the measure (no game has finished yet); a generation later, a
  // line and a row.
  inference.positions = 1000;
  inference.batches = 10;
  inference.forward_seconds = 1.0;
  selfplay.moves = 100;
  telemetry.update(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  inference.positions = 11000;
  inference.batches = 110;
  inference.forward_seconds = 6.0;
  inference.workers = 2;
  selfplay.moves = 1100;
  selfplay.positions = 1100;
  selfplay.resign = {3, 7, 1, 0.25, true};
  p.generation = 3;
  telemetry.end_generation(p);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("generation 3: step 25 losses:", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("generation 3 self-play: ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(" 10.0 evaluations/position, forward busy 100% (2 workers, mean batch "
                          "100.0), forward alone 2000 evaluations/s a worker"),
            std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[2], "self-play resignations this session: 3 games resigned; 7 checked by playing "
                      "on, 1 wrong (25.0% of the last 7); resigning is on");
  const auto rows = metrics_rows(folder.paths(), "selfplay");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("generation"), "3");
  EXPECT_EQ(rows[0].at("positions"), "4000");
  EXPECT_EQ(rows[0].at("evals_per_position"), "10.00");
  EXPECT_EQ(rows[0].at("mean_batch"), "100.00");
  EXPECT_EQ(rows[0].at("resign_checks"), "7");

  lines.clear();
  telemetry.end_session(p);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("session self-play: ", 0), 0u) << lines[0];
  EXPECT_EQ(metrics_rows(folder.paths(), "selfplay").size(), 1u) << "a session line has no row";

  // Self-play stopped and its last games taken in: the trainer's pace counts the positions of
  // then (the "stopped: N positions" line's), not those before the games in flight came in.
  lines.clear();
  selfplay.policy_targets = 600;
  selfplay.target_visits = 200;
  selfplay.reused_target_visits = 50;
  Progress drained = p;
  drained.positions = 2 * p.positions;
  telemetry.end_selfplay(drained);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], trainer_pace_line(drained, c.training.batch_size, c.training.sample_reuse,
                                        c.training.min_positions));
  EXPECT_NE(lines[0], trainer_pace_line(p, c.training.batch_size, c.training.sample_reuse,
                                        c.training.min_positions));
  EXPECT_EQ(lines[1], "self-play this session: 1100 positions, 600 with full searches; 25.0% of "
                      "the target visits of full PUCT searches were kept from earlier searches by "
                      "tree reuse");
}

TEST(Telemetry, WithoutSelfPlayThreadsOnlyTheTrainerIsMeasured) {
  TempDir dir("telemetry_none");
  RunFolder folder(dir.path());
  folder.open_tables(false, "");
  config::RunConfig c;
  c.selfplay.resign_below = -0.9;
  std::vector<std::string> lines;
  Telemetry telemetry(c, false, {[] { return model::InferenceStats{}; }, {}}, folder, nullptr,
                      [&lines](const std::string& line) { lines.push_back(line); });
  telemetry.update(some_progress());
  lines.clear();
  telemetry.end_generation(some_progress());
  telemetry.end_session(some_progress());
  telemetry.end_selfplay(some_progress());
  // The trainer's pace still counts: it may be the bottleneck of a cluster's self-play.
  ASSERT_EQ(lines.size(), 1u) << lines.front();
  EXPECT_EQ(lines[0].rfind("trainer this session: ", 0), 0u) << lines[0];
  EXPECT_TRUE(metrics_rows(folder.paths(), "selfplay").empty());
}

// The cluster monitor on a private redis-server, on a clock of the test's.
TEST(ClusterMonitor, NodesRatesAndRows) {
  test_util::RedisServerOptions options;
  options.append_only = false;
  test_util::RedisServer redis(options);
  const store::RedisUrl url = store::parse_redis_url(redis.url("monitor"), nullptr);
  store::RunChannel channel(url, [](const std::string&) {});
  store::RunChannel worker(url, [](const std::string&) {});
  TempDir dir("cluster");
  RunFolder folder(dir.path());
  folder.open_tables(false, "");
  selfplay::SelfPlayStats own;
  own.games = 5;
  own.positions = 300;
  const auto t0 = Clock::now();
  ClusterMonitor monitor(channel, folder, [&own] { return own; }, t0);
  Progress p;
  p.seconds = 12.0;
  p.positions = 800;
  p.games = 15;
  p.stream_lag = 3;
  p.stream_evicted = 1;

  // A beat found on the server may be old (a node gone before the trainer started): a node counts
  // once its beat changes; the trainer's own self-play at once.
  worker.heartbeat("w1", 1, 10, 500);
  EXPECT_EQ(monitor.poll(p, t0 + seconds(1)), "nodes 1 (trainer 0.0/s) lag 3 evicted 1");
  EXPECT_EQ(channel.nodes().at("trainer").beats, 1) << "the trainer's own heartbeat";
  EXPECT_EQ(channel.nodes().at("trainer").games, 5);

  worker.heartbeat("w1", 2, 30, 900);
  own.games = 29;
  p.stream_lag = 0;
  EXPECT_EQ(monitor.poll(p, t0 + seconds(3)), "nodes 1 (trainer 0.0/s) lag 3 evicted 1")
      << "polled at most every 5 s";
  EXPECT_EQ(channel.nodes().at("trainer").beats, 1);
  // Rates are taken over 20 s or more: 24 games in 24 s, 20 games in 24 s.
  EXPECT_EQ(monitor.poll(p, t0 + seconds(25)), "nodes 2 (trainer 1.0/s, w1 0.8/s) lag 0 evicted 1");
  EXPECT_TRUE(metrics_rows(folder.paths(), "node").empty()) << "rows every 30 s";
  EXPECT_TRUE(metrics_rows(folder.paths(), "stream").empty());

  p.seconds = 43.0;
  monitor.poll(p, t0 + seconds(31));
  const auto nodes = metrics_rows(folder.paths(), "node");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].at("node"), "trainer");
  EXPECT_EQ(nodes[0].at("games"), "29");
  EXPECT_EQ(nodes[0].at("games_per_second"), "1.00");
  EXPECT_EQ(nodes[1].at("node"), "w1");
  EXPECT_EQ(nodes[1].at("games"), "30");
  EXPECT_EQ(nodes[1].at("seconds"), "43.0");
  const auto stream = metrics_rows(folder.paths(), "stream");
  ASSERT_EQ(stream.size(), 1u);
  EXPECT_EQ(stream[0].at("nodes"), "2");
  EXPECT_EQ(stream[0].at("positions"), "800");
  EXPECT_EQ(stream[0].at("games"), "15");
  EXPECT_EQ(stream[0].at("stream_lag"), "0");
  EXPECT_EQ(stream[0].at("stream_evicted"), "1");

  // A node silent for 15 s (w1's last beat was seen at 25 s) plays no games: its rate is 0, not
  // the 0.8 it last had; silent for over a minute, it is no longer counted.
  EXPECT_EQ(monitor.poll(p, t0 + seconds(40)), "nodes 2 (trainer 1.0/s, w1 0.0/s) lag 0 evicted 1");
  EXPECT_EQ(monitor.poll(p, t0 + seconds(90)), "nodes 1 (trainer 0.0/s) lag 0 evicted 1");

  // A worker started again under the node's name counts its games from 0: its rate is taken
  // afresh from its new count, never negative ((3 - 30) / 75 s was written as -0.36/s).
  worker.heartbeat("w1", 1, 3, 100);
  const std::string restarted = monitor.poll(p, t0 + seconds(100));
  EXPECT_EQ(restarted.find("w1 -"), std::string::npos) << restarted;
  worker.heartbeat("w1", 2, 23, 300);
  EXPECT_NE(monitor.poll(p, t0 + seconds(125)).find("w1 0.8/s"), std::string::npos)
      << "20 games in 25 s";
  for (const auto& row : metrics_rows(folder.paths(), "node"))
    EXPECT_NE(row.at("games_per_second").rfind('-', 0), 0u) << row.at("games_per_second");
}

// Whatever the nodes hash holds, the status line and the rows stay small: hostile names are
// never read, the status line names a few nodes, and a nodes key of a wrong type is only a warning.
TEST(ClusterMonitor, HostileHeartbeatsNeverReachTheRowsOrTheStatusLine) {
  test_util::RedisServerOptions options;
  options.append_only = false;
  test_util::RedisServer redis(options);
  const store::RedisUrl url = store::parse_redis_url(redis.url("hostile"), nullptr);
  std::vector<std::string> log;
  store::RunChannel channel(url, [&log](const std::string& line) { log.push_back(line); });
  TempDir dir("hostile");
  RunFolder folder(dir.path());
  folder.open_tables(false, "");
  const auto t0 = Clock::now();
  ClusterMonitor monitor(channel, folder, {}, t0);
  Progress p;
  std::vector<std::string> hset = {"HSET", "oppidum:hostile:nodes", std::string(4 << 20, 'N'),
                                   "1 5 5", "a\nb", "1 5 5"};
  for (int i = 0; i < 20; ++i) hset.insert(hset.end(), {"w" + std::to_string(i + 10), "1 5 5"});
  redis.command(hset);
  EXPECT_EQ(monitor.poll(p, t0 + seconds(1)), "nodes 0 lag 0 evicted 0")
      << "beats found on the server are no proof of life until they change";
  for (std::size_t i = 3; i < hset.size(); i += 2) hset[i] = "2 5 5";
  redis.command(hset);
  EXPECT_EQ(monitor.poll(p, t0 + seconds(31)),
            "nodes 20 (w10 0.0/s, w11 0.0/s, w12 0.0/s, w13 0.0/s, w14 0.0/s, w15 0.0/s, w16 "
            "0.0/s, w17 0.0/s, 12 more) lag 0 evicted 0");
  const auto rows = metrics_rows(folder.paths(), "node");
  EXPECT_EQ(rows.size(), 20u);
  for (const auto& row : rows) EXPECT_LE(row.at("node").size(), 3u) << row.at("node").substr(0, 40);
  EXPECT_LT(fs::file_size(folder.paths().metrics()), 4096u);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("ignoring 2 heartbeat(s)"), std::string::npos) << log[0];

  redis.command({"SET", "oppidum:hostile:nodes", "garbage"});
  EXPECT_EQ(monitor.poll(p, t0 + seconds(120)), "nodes 0 lag 0 evicted 0")
      << "a wrong type stops nothing";
  monitor.poll(p, t0 + seconds(130));
  ASSERT_EQ(log.size(), 2u) << "warned once";
  EXPECT_NE(log[1].find("oppidum:hostile:nodes: WRONGTYPE"), std::string::npos) << log[1];
}

// A run keeps the config it was started with; only resumable keys may change.
class ResolveConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    config_path_ = (dir_.path() / "start.yaml").string();
    std::ofstream(config_path_) << "run:\n  game: mg\n  seed: 3\ntraining:\n  batch_size: 128\n";
  }
  TempDir dir_{"resolve"};
  RunPaths paths_{dir_.path() / "run"};
  std::string config_path_;
};

TEST_F(ResolveConfig, ANewRunTakesItsConfigAndOverrides) {
  try {
    resolve_config(paths_, "", {});
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a run yet: give --config"), std::string::npos)
        << e.what();
  }
  const config::RunConfig c = resolve_config(paths_, config_path_, {"training.batch_size=64"});
  EXPECT_EQ(c.training.batch_size, 64);
  EXPECT_EQ(c.run.seed, 3u);
}

TEST_F(ResolveConfig, AFolderWithProgressButNoConfigIsRefused) {
  fs::create_directories(paths_.checkpoints());
  std::ofstream(paths_.candidate(1)) << "x";
  try {
    resolve_config(paths_, config_path_, {});
    FAIL() << "no error";
  } catch (const RunFolderError& e) {
    EXPECT_NE(std::string(e.what()).find("config.yaml is missing, but"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("gen-0001.ckpt"), std::string::npos) << e.what();
  }
}

TEST_F(ResolveConfig, AResumedRunChangesOnlyResumableKeys) {
  fs::create_directories(paths_.dir);
  std::ofstream(paths_.config()) << config::to_yaml(config::load_config(config_path_));
  config::RunConfig c = resolve_config(paths_, "", {"run.max_generations=5"});
  EXPECT_EQ(c.run.max_generations, 5) << "a stop condition may change";
  EXPECT_EQ(c.training.batch_size, 128);
  c = resolve_config(paths_, config_path_, {"inference.threads=2"});
  EXPECT_EQ(c.inference.threads, 2);

  try {
    resolve_config(paths_, "", {"training.batch_size=64", "net.filters=16",
                                "run.max_generations=5"});
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--set differs from the config " + paths_.dir.string() +
                             " was started with:", 0),
              0u)
        << what;
    EXPECT_NE(what.find("\n  training.batch_size: 64 (the run has 128)"), std::string::npos)
        << what;
    EXPECT_NE(what.find("\n  net.filters: 16 (the run has "), std::string::npos) << what;
    EXPECT_EQ(what.find("max_generations"), what.rfind("max_generations"))
        << "a resumable key is listed once, as one that may change, never as a difference: "
        << what;
    for (const std::string& key : config::resumable_keys())
      EXPECT_NE(what.find(key), std::string::npos) << "the keys that may change name " << key;
  }

  std::ofstream(config_path_) << "run:\n  game: mg\n  seed: 4\ntraining:\n  batch_size: 128\n";
  try {
    resolve_config(paths_, config_path_, {});
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(config_path_ + " differs from the config", 0), 0u) << what;
    EXPECT_NE(what.find("\n  run.seed: 4 (the run has 3)"), std::string::npos) << what;
  }
}

// The README's Gumbel line once reused a run and was refused "configs/... differs" when only its
// --set did.
TEST_F(ResolveConfig, ARefusalBlamesTheSetWhenTheConfigFileMatches) {
  fs::create_directories(paths_.dir);
  std::ofstream(paths_.config()) << config::to_yaml(config::load_config(config_path_));
  try {
    resolve_config(paths_, config_path_, {"selfplay.root=gumbel"});
    FAIL() << "no error";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--set (with " + config_path_ + ", which matches) differs from the config",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("\n  selfplay.root: \"gumbel\" (the run has \"puct\")"), std::string::npos)
        << what;
    EXPECT_NE(what.find("start a new run (--run runs/<another name>)"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace oppidum::trainer
