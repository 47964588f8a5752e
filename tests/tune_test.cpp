// The fit of the classical evaluation (arena/tune.h): it recovers known weights from synthetic
// results, turns recorded games into samples from the side to move's view, refuses input it cannot
// fit with a clear message, writes a header the engine compiles, and `oppidum tune` reads a run
// folder's self-play chunks and arena record files, skipping what it must with the reason.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arena/tune.h"
#include "games/registry.h"
#include "selfplay/game_record.h"
#include "tests/process_util.h"
#include "tests/record_test_util.h"

namespace oppidum::arena {
namespace {

// Samples whose results are drawn with probability sigmoid(beta . x): 1 (win) or 0 (loss), with
// some draws (0.5) where the chance is near even.
TuneSamples synthetic(const std::vector<double>& beta, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  TuneSamples s;
  s.features = static_cast<int>(beta.size());
  for (std::size_t i = 0; i < n; ++i) {
    double z = 0;
    for (std::size_t j = 0; j < beta.size(); ++j) {
      const double x = j + 1 == beta.size() ? 1.0 : std::round(3 * normal(rng));
      s.x.push_back(static_cast<float>(x));
      z += beta[j] * x;
    }
    const double p = 1 / (1 + std::exp(-z));
    s.y.push_back(uniform(rng) < p ? 1.0f : 0.0f);
    s.game.push_back(static_cast<std::uint32_t>(i / 40));
  }
  s.games = static_cast<std::uint32_t>(n / 40 + 1);
  return s;
}

TEST(TuneTest, RecoversKnownWeights) {
  // beta = K * w: the evaluation's weights in points and the scale together.
  const std::vector<double> beta = {0.30, -0.15, 0.05, 0.0, 0.10};
  const TuneSamples s = synthetic(beta, 200'000, 1);
  // Start from weights of the wrong size and partly the wrong sign: K is fitted to them first, and
  // K * w then converges to beta whatever the start.
  const std::vector<double> start = {10, 10, -3, 2, 0};
  const TuneResult r = tune_weights(s, start);
  ASSERT_EQ(r.weights.size(), beta.size());
  for (std::size_t j = 0; j < beta.size(); ++j)
    EXPECT_NEAR(r.k * r.weights[j], beta[j], 0.01) << "feature " << j;
  EXPECT_LT(r.train_loss_after, r.train_loss_before);
  EXPECT_LT(r.test_loss_after, r.test_loss_before);
  EXPECT_GT(r.test_samples, 15'000u);  // every 10th game of 5000
  EXPECT_EQ(r.train_samples + r.test_samples, 200'000u);
  // With K given, the weights are beta / K.
  TuneOptions fixed;
  fixed.fixed_k = 0.02;
  const TuneResult f = tune_weights(s, start, fixed);
  EXPECT_EQ(f.k, 0.02);
  for (std::size_t j = 0; j < beta.size(); ++j)
    EXPECT_NEAR(f.weights[j], beta[j] / 0.02, 0.5) << "feature " << j;
}

TEST(TuneTest, FitsTheScaleOfGoodWeights) {
  // Weights already right up to scale: K alone makes them fit, and the weights hardly move.
  const std::vector<double> beta = {0.2, -0.1, 0.0};
  const TuneSamples s = synthetic(beta, 100'000, 2);
  const TuneResult r = tune_weights(s, {20, -10, 0});
  EXPECT_NEAR(r.k, 0.01, 0.0007);
  EXPECT_NEAR(r.weights[0], 20, 1.5);
  EXPECT_NEAR(r.weights[1], -10, 1.5);
}

TEST(TuneTest, RefusesWhatItCannotFit) {
  const TuneSamples empty;
  EXPECT_THROW(tune_weights(empty, {1.0}), TuneError);
  TuneSamples s = synthetic({0.3, 0.1}, 1000, 3);
  EXPECT_THROW(tune_weights(s, {1.0, 2.0, 3.0}), TuneError);  // three weights, two features
  TuneSamples all_won = s;
  for (float& y : all_won.y) y = 1.0f;
  try {
    tune_weights(all_won, {1.0, 1.0});
    FAIL();
  } catch (const TuneError& e) {
    EXPECT_NE(std::string(e.what()).find("all alike"), std::string::npos) << e.what();
  }
  TuneSamples nan = s;
  nan.x[7] = std::nanf("");
  EXPECT_THROW(tune_weights(nan, {1.0, 1.0}), TuneError);
  TuneOptions all_held_out;
  all_held_out.holdout_every = 1;
  EXPECT_THROW(tune_weights(s, {1.0, 1.0}, all_held_out), TuneError);
}

TEST(TuneTest, GamesBecomeSamplesFromTheMoversView) {
  const Game& game = game_by_name("dvonn");
  auto state = game.initial_state();
  std::vector<Action> moves;
  ActionList legal;
  while (!state->is_terminal()) {  // the first legal move each time: a finished game
    state->legal_actions(legal);
    moves.push_back(legal[0]);
    state->apply(legal[0]);
  }
  const int result_first = static_cast<int>(state->result(0));
  TuneSamples s;
  add_game_samples(game, "", moves, result_first, s);
  EXPECT_EQ(s.games, 1u);
  EXPECT_EQ(s.size(), moves.size());  // every position before the end has features
  EXPECT_EQ(s.features, static_cast<int>(classic_feature_names(game).size()));
  // The result seen by the side to move: White's plies 0, 2, 4 of the placement phase.
  EXPECT_EQ(s.y[0], (result_first + 1) / 2.0f);
  EXPECT_EQ(s.y[1], (1 - result_first) / 2.0f);
  std::vector<Action> bad = moves;
  bad[3] = bad[2];  // a space already taken
  TuneSamples t;
  EXPECT_THROW(add_game_samples(game, "", bad, 0, t), TuneError);
  EXPECT_EQ(t.size(), 0u) << "a damaged game adds nothing, not the positions before the damage";
  EXPECT_EQ(t.games, 0u);
}

// Only what the game shows is learnt from: a result the final position contradicts, a move after
// the end and a game that stops before its end (adjudicated, forfeited) add nothing; a resigned
// self-play game adds its positions with its decisive result.
TEST(TuneTest, ResultsAreCheckedAgainstTheGame) {
  const Game& game = game_by_name("mg");
  auto state = game.initial_state();
  std::vector<Action> moves;
  ActionList legal;
  std::mt19937 rng(7);
  while (!state->is_terminal() && moves.size() < 2000) {  // random moves end a game quickly
    state->legal_actions(legal);
    moves.push_back(legal[rng() % legal.size()]);
    state->apply(moves.back());
  }
  ASSERT_TRUE(state->is_terminal());
  ASSERT_GT(moves.size(), 10u);
  const int result_first = static_cast<int>(state->result(0));
  ASSERT_NE(result_first, 0);
  TuneSamples s;
  EXPECT_THROW(add_game_samples(game, "", moves, -result_first, s), TuneError);
  EXPECT_THROW(add_game_samples(game, "", moves, 0, s), TuneError);
  EXPECT_THROW(add_game_samples(game, "", moves, 2, s), TuneError);
  std::vector<Action> longer = moves;
  longer.push_back(moves.front());
  EXPECT_THROW(add_game_samples(game, "", longer, result_first, s), TuneError);
  EXPECT_EQ(s.size(), 0u);

  const std::vector<Action> cut(moves.begin(), moves.begin() + 10);
  EXPECT_FALSE(add_game_samples(game, "", cut, 0, s));
  EXPECT_FALSE(add_game_samples(game, "", cut, 1, s));
  EXPECT_FALSE(add_game_samples(game, "", cut, 0, s, true)) << "a draw before the end";
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.games, 0u);
  EXPECT_TRUE(add_game_samples(game, "", cut, -1, s, true));
  EXPECT_EQ(s.games, 1u);
  // The start and the positions after each of the ten moves, less those where the mover breaks
  // through at once (no features: the evaluation scores them by rule).
  EXPECT_GT(s.size(), 0u);
  EXPECT_LE(s.size(), 11u);
  const std::size_t first_game = s.size();
  EXPECT_TRUE(add_game_samples(game, "", moves, result_first, s));
  EXPECT_EQ(s.games, 2u);
  EXPECT_EQ(s.game[first_game - 1], 0u);
  EXPECT_EQ(s.game.back(), 1u);
}

TEST(TuneTest, WritesAHeader) {
  const Game& game = game_by_name("mg");
  const auto names = classic_feature_names(game);
  const std::string long_line(30, 'x');
  const std::string text = classic_weights_header(
      game, names, classic_weights(game), "a \"test\" fit" + std::string(200, ' ') + "end",
      {"Data: none", "  /a/file", long_line + " " + long_line + " " + long_line + " " + long_line});
  EXPECT_NE(text.find("namespace oppidum::mg {"), std::string::npos);
  EXPECT_NE(text.find("\"towers\","), std::string::npos);
  EXPECT_NE(text.find("a \\\"test\\\" fit"), std::string::npos);
  EXPECT_NE(text.find("// Data: none"), std::string::npos);
  EXPECT_NE(text.find("kClassicWeights[]"), std::string::npos);
  EXPECT_NE(text.find("//   /a/file\n"), std::string::npos);
  // A file name's newline or final backslash cannot end its comment line (code after it compiled).
  const std::string named = classic_weights_header(game, names, classic_weights(game), "s",
                                                   {"  /a\nstatic_assert(false);", "  /b\\",
                                                    "  /c\xe2\x80\xae.txt"});
  EXPECT_NE(named.find("//   /a\\x0astatic_assert(false);\n"), std::string::npos) << named;
  EXPECT_NE(named.find("//   /b\\x5c\n"), std::string::npos) << named;
  // Nor can a bidirectional control (U+202E) make the source read otherwise than it compiles.
  EXPECT_NE(named.find("//   /c\\xe2\\x80\\xae.txt\n"), std::string::npos) << named;
  // Within the project's 100 columns.
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    EXPECT_LE(end - start, 100u) << text.substr(start, end - start);
    start = end + 1;
  }
}

using test_util::random_record;  // a finished random game (tests/record_test_util.h)

std::vector<Action> actions_of(const selfplay::GameRecord& r) {
  std::vector<Action> moves;
  for (const auto& m : r.moves) moves.push_back(m.action);
  return moves;
}

// The command reads chunks and record files from a folder: what it uses is exactly what
// add_game_samples makes of the good games, and every other game is counted or warned about.
TEST(TuneCommand, ReadsSelfplayChunksAndRecordFilesAndSaysWhatItSkipped) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / "tune_command";
  fs::remove_all(root);
  fs::create_directories(root / "run" / "games");
  TuneSamples expected;
  std::vector<selfplay::GameRecord> chunk;
  for (unsigned seed = 1; seed <= 3; ++seed) {
    chunk.push_back(random_record("mg", seed));
    ASSERT_TRUE(add_game_samples(game_by_name("mg"), chunk.back().start, actions_of(chunk.back()),
                                 chunk.back().result, expected));
  }
  chunk.push_back(chunk[0]);                   // repeated
  chunk.push_back(random_record("dvonn", 4));  // another game
  selfplay::GameRecord adjudicated = random_record("mg", 5);
  adjudicated.adjudicated = true;
  chunk.push_back(adjudicated);
  selfplay::GameRecord contradicted = random_record("mg", 6);
  contradicted.result = static_cast<std::int8_t>(contradicted.result == 1 ? -1 : 1);
  chunk.push_back(contradicted);
  selfplay::GameRecord resigned = random_record("mg", 7);
  resigned.moves.resize(6);
  resigned.resigned = true;
  resigned.result = 1;
  chunk.push_back(resigned);
  ASSERT_TRUE(add_game_samples(game_by_name("mg"), resigned.start, actions_of(resigned), 1,
                               expected, true));
  selfplay::write_game_file((root / "run" / "games" / "chunk-1.bin").string(), chunk);
  std::ofstream(root / "run" / "games" / "chunk-2.bin") << "not a game file";
  // A run folder's other files are not records: not read, not counted.
  std::ofstream(root / "run" / "games" / "index.csv") << "chunk,games\nmg x 1-0 c1-c3\n";
  std::ofstream(root / "run" / "metrics.csv") << "step,loss\n1,2\n";

  // An arena record file: a finished game, one cut short (a forfeit) and one with a bad move.
  const selfplay::GameRecord played = random_record("mg", 8);
  auto line = [&](const selfplay::GameRecord& r, std::size_t plies, const std::string& result) {
    auto state = game_by_name("mg").initial_state();
    std::string text = "mg uct:sims=1 random " + result;
    for (std::size_t i = 0; i < plies; ++i) {
      text += " " + state->action_to_string(r.moves[i].action);
      state->apply(r.moves[i].action);
    }
    return text + "\n";
  };
  const std::string won = played.result > 0 ? "1-0" : "0-1";
  std::ofstream(root / "arena.txt") << line(played, played.moves.size(), won)
                                    << line(played, 4, "0-1") << "mg a b 1-0 zz9\n";
  ASSERT_TRUE(add_game_samples(game_by_name("mg"), "", actions_of(played), played.result,
                               expected));

  const auto r = test_util::run_shell(std::string(OPPIDUM_BINARY) + " tune --game mg --games " +
                                      (root / "run").string() + " " +
                                      (root / "arena.txt").string() + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("tune: " + std::to_string(expected.size()) + " positions of 5 mg games "
                       "(skipped: 1 repeated, 1 stopped before their end, 4 others)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the compiled-in weights: " + classic_weights_source(game_by_name("mg")) +
                       "\n"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(classic_weights_source(game_by_name("mg")).empty());
  EXPECT_NE(r.out.find("chunk-2.bin"), std::string::npos) << "the damaged file is named\n" << r.out;
  EXPECT_NE(r.out.find("game with seed 6: tune: the recorded result"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arena.txt:3: "), std::string::npos) << "the bad line is named\n" << r.out;

  // The header is never written over an input (a record file, a chunk of a folder read) nor over
  // a file at its temporary name (before: both were lost, and the command said nothing).
  using test_util::read_file;
  const std::string arena_text = read_file(root / "arena.txt");
  std::ofstream(root / "w.h.tmp") << "somebody's file";
  for (const auto& [out, said] : std::vector<std::pair<fs::path, std::string>>{
           {root / "arena.txt", "is the input"},
           {root / "run" / "games" / "chunk-1.bin", "is the input"},
           {root / "w.h", "w.h.tmp is there already"}}) {
    const auto refused = test_util::run_shell(
        std::string(OPPIDUM_BINARY) + " tune --game mg --games " + (root / "run").string() + " " +
        (root / "arena.txt").string() + " --out " + out.string() + " 2>&1");
    EXPECT_NE(refused.status, 0) << refused.out;
    EXPECT_NE(refused.out.find(said), std::string::npos) << refused.out;
  }
  EXPECT_EQ(read_file(root / "arena.txt"), arena_text);
  EXPECT_EQ(read_file(root / "w.h.tmp"), "somebody's file");
  EXPECT_FALSE(fs::exists(root / "w.h"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace oppidum::arena
