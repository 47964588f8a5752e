// `oppidum tune`: fits the classical engine's evaluation weights to the results of recorded games
// (arena/tune.h) and writes them as games/<game>/classic_weights.h, which the engine compiles in.
// Reads self-play game files (`*.bin`: a run folder's games/chunk-*.bin, selfplay/game_record.h)
// and arena record files (any other file named: one game per line, arena/game_record.h); a folder
// (a run folder, its games/) is searched for self-play files only, so that its index, metrics and
// checkpoints are not read as records. Games of other games, repeated games and games that stop
// before their end (the ply limit, a forfeit; not a self-play resignation) are skipped; a damaged
// record or line, an illegal move or a result the game contradicts is reported
// (arena::add_game_samples).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "app/commands.h"
#include "app/error_text.h"
#include "app/game_dispatch.h"
#include "arena/game_record.h"
#include "app/option_checks.h"
#include "arena/tune.h"
#include "selfplay/game_record.h"
#include "trainer/output_file.h"
#include "util/text.h"
#include "util/file_io.h"

namespace oppidum::app {
namespace {

struct TuneCommandOptions {
  std::string game;
  std::vector<std::string> inputs;
  std::string out;
  int holdout_every = arena::TuneOptions{}.holdout_every;
  double k = 0;
};

struct Reading {
  arena::TuneSamples samples;
  std::size_t skipped = 0;     // games of another game, adjudicated games, damaged lines
  std::size_t unfinished = 0;  // games that stop before their end (a forfeit, the ply limit)
  std::size_t duplicates = 0;  // games already read (two deterministic players replay a game
                               // with the colours swapped when they are the same program)
  std::unordered_set<std::string> seen;  // start position and moves of every game read

  // False (and counted) when the same game was read before.
  bool first_time(const std::string& start, const std::vector<Action>& moves) {
    std::string key = start + "|";
    for (Action a : moves) key += std::to_string(a) + " ";
    if (seen.insert(std::move(key)).second) return true;
    ++duplicates;
    return false;
  }
};

void read_selfplay_file(const Game& game, const std::string& path, Reading& r) {
  const selfplay::ReadResult read = selfplay::for_each_game(
      path, [&](selfplay::GameRecord&& record, const selfplay::RecordPlace&) {
        if (record.game != game.name() || record.adjudicated) {
          ++r.skipped;
          return true;
        }
        std::vector<Action> moves;
        for (const auto& m : record.moves) moves.push_back(m.action);
        if (!r.first_time(record.start, moves)) return true;
        try {
          if (!arena::add_game_samples(game, record.start, moves, record.result, r.samples,
                                       record.resigned))
            ++r.unfinished;
        } catch (const std::exception& e) {
          warn(path + ": game with seed " + std::to_string(record.seed) + ": " + e.what());
          ++r.skipped;
        }
        return true;
      });
  for (const std::string& p : read.problems) warn(p);
}

// One arena record line: <game> <spec> <spec> <result> <move>...
// Read a line at a time (util::for_each_line): the memory of a line, not of the file.
void read_arena_file(const Game& game, const std::string& path, Reading& r) {
  const auto visit = [&](const util::FileLine& l) {
    const std::uint64_t number = l.number;
    if (l.too_long) {
      warn(path + ":" + std::to_string(number) + ": a line longer than " +
           std::to_string(arena::kMaxRecordLineBytes) +
           " bytes, longer than any game; line skipped");
      ++r.skipped;
      return;
    }
    const std::optional<arena::GameLine> g = arena::split_game_line(l.text);
    if (!g && util::trim_blanks(std::string(l.text)).empty()) return;
    if (g && g->game != &game) {
      ++r.skipped;
      return;
    }
    if (!g) {
      warn(path + ":" + std::to_string(number) +
           ": not a game (no result 1-0, 0-1 or 1/2-1/2 in the fourth field, a player with a "
           "control character, or more or longer moves than any game has); line skipped");
      ++r.skipped;
      return;
    }
    const int result_first = arena::result_of_notation(g->result);
    std::vector<Action> moves;
    try {
      auto state = game.initial_state();
      for (const std::string& move : g->moves) {
        const Action a = state->parse_action(move);
        moves.push_back(a);
        state->apply(a);
      }
      if (!r.first_time("", moves)) return;
      if (!arena::add_game_samples(game, "", moves, result_first, r.samples)) ++r.unfinished;
    } catch (const std::exception& e) {
      warn(path + ":" + std::to_string(number) + ": " + e.what() + "; line skipped");
      ++r.skipped;
    }
  };
  util::for_each_line(path, arena::kMaxRecordFileBytes, arena::kMaxRecordLineBytes, 0, visit);
}

// The files an input names: itself, or a folder's self-play game files (*.bin), sorted.
std::vector<std::string> input_files(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(path)) {
    if (!fs::exists(path)) throw std::runtime_error("tune: " + path + ": no such file or folder");
    return {path};
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(path))
    if (entry.is_regular_file() && entry.path().extension() == ".bin")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

void read_input(const Game& game, const std::string& file, Reading& r) {
  if (std::filesystem::path(file).extension() == ".bin") read_selfplay_file(game, file, r);
  else read_arena_file(game, file, r);
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

void run_tune(const TuneCommandOptions& o) {
  const Game& game = game_by_name(o.game);
  std::vector<std::string> files;
  for (const std::string& path : o.inputs)
    for (std::string& file : input_files(path)) files.push_back(std::move(file));
  // The header goes where nothing of value is: not a run folder's own file, not an input.
  if (!o.out.empty()) {
    trainer::check_output_file(o.out, "tune --out");
    for (const std::string& file : files) {
      std::error_code ec;
      if (std::filesystem::equivalent(file, o.out, ec))
        throw std::runtime_error("tune: --out " + o.out + " is the input " + file +
                                 "; refusing to write over it");
    }
  }
  Reading r;
  for (const std::string& file : files) read_input(game, file, r);
  std::cout << "tune: " << r.samples.size() << " positions of " << r.samples.games << " "
            << game.name() << " games (skipped: " << r.duplicates << " repeated, "
            << r.unfinished << " stopped before their end, " << r.skipped << " others)\n";
  const std::vector<std::string> names = arena::classic_feature_names(game);
  arena::TuneOptions options;
  options.holdout_every = o.holdout_every;
  options.fixed_k = o.k;
  const arena::TuneResult fit = arena::tune_weights(r.samples, arena::classic_weights(game),
                                                    options);
  const std::vector<double> before = arena::classic_weights(game);
  // The held-out losses, or what stands for them when nothing was held out (a loss of 0.00000
  // was printed: a perfect score).
  const std::string held_out = fit.test_samples == 0
                                   ? std::string("none (nothing held out)")
                                   : format("%.5f", fit.test_loss_before) + " -> " +
                                         format("%.5f", fit.test_loss_after);
  // A K at an end of its search is no fit, and the weights fitted with it mean nothing.
  const std::string k_warning =
      fit.k_at_bound
          ? "; at an end of the range it is fitted in (" + format("%g", arena::kMinFittedK) +
                " to " + format("%g", arena::kMaxFittedK) +
                "): the data do not determine it (too few games, or results the features "
                "separate), so this fit means nothing; give more games or --k"
          : "";
  // Results the features separate perfectly: the weights mean nothing (they were written, +-35
  // from one game with --k 1, +-3.6e5 with --k 0.0001).
  const std::string separated_warning =
      fit.separated ? "the features separate the training results perfectly (a log loss of " +
                      format("%.5f", fit.train_loss_after) +
                      "): the weights grow without end, so this fit means nothing; give more "
                      "games\n"
                : "";
  std::cout << "the compiled-in weights: " << arena::classic_weights_source(game) << "\n"
            << "K " << format("%.6g", fit.k) << k_warning << ", " << fit.iterations
            << " Newton steps\n"
            << "log loss, training (" << fit.train_samples << " positions): "
            << format("%.5f", fit.train_loss_before) << " -> "
            << format("%.5f", fit.train_loss_after) << "\n"
            << "log loss, held out (" << fit.test_samples << " positions): " << held_out << "\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    std::cout << "  " << names[i] << " " << format("%.4g", before[i]) << " -> "
              << format("%.4g", fit.weights[i]) << "\n";
  std::cout << separated_warning;
  if (o.out.empty()) return;
  if (fit.separated)
    throw std::runtime_error("tune: the features separate the training results perfectly, no "
                             "fit: nothing written to " + o.out + " (give more games)");
  if (fit.k_at_bound)
    throw std::runtime_error("tune: K " + format("%.6g", fit.k) +
                             " is at an end of its range, no fit: nothing written to " + o.out +
                             " (give more games, or --k)");
  const std::string source =
      "oppidum tune: " + std::to_string(r.samples.size()) + " positions of " +
      std::to_string(r.samples.games) + " games, K " + format("%.6g", fit.k) +
      ", held-out log loss " + held_out;
  std::vector<std::string> comment = {"Data: " + std::to_string(r.samples.size()) +
                                      " positions of " + std::to_string(r.samples.games) +
                                      " games from:"};
  for (const std::string& path : o.inputs) comment.push_back("  " + path);
  comment.push_back("K " + format("%.6g", fit.k) + "; log loss on the training split " +
                    format("%.5f", fit.train_loss_before) + " -> " +
                    format("%.5f", fit.train_loss_after) + ", held out" +
                    (o.holdout_every > 0
                         ? " (every " + std::to_string(o.holdout_every) + "th game) "
                         : " ") +
                    held_out + ".");
  util::write_file_atomically(o.out,
                              arena::classic_weights_header(game, names, fit.weights, source,
                                                            comment));
  std::cout << "wrote " << o.out << " (rebuild to use the weights)\n";
}

}  // namespace

void register_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCommandOptions>();
  auto* cmd = app.add_subcommand(
      "tune",
      "Fit the classical engine's evaluation weights (classic: players) to recorded game results "
      "by logistic regression (Texel tuning: K first, then the weights; docs/BASELINES.md), and "
      "write them as a header the engine compiles in (games/<game>/classic_weights.h).");
  add_game_option(*cmd, o->game)->required();
  cmd->add_option("--games", o->inputs,
                  "game files: self-play chunks (*.bin, e.g. runs/x/games/), arena record files "
                  "(`arena --record`), or folders searched for self-play chunks (a run folder)")
      ->required();
  cmd->add_option("--out", o->out,
                  "write the weights here (games/<game>/classic_weights.h); without it only print "
                  "the fit")
      ->check(non_empty("give a file's name"));
  cmd->add_option("--holdout-every", o->holdout_every,
                  "hold out every N-th game to score the fit (0: none)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--k", o->k, "use this scale K instead of fitting it (0.0001..100)")
      ->check(number_in(1e-4, 100.0));
  cmd->callback([o] { run_tune(*o); });
}

}  // namespace oppidum::app
