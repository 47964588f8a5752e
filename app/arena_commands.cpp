// arena, gauntlet, ratings, play: matches between players, one player against a list, the rating
// table, a person against a program.
//
// `arena` on SIGINT or SIGTERM: the first signal kills every external program at once (with
// every process it started) and stops the match; the report of the counted games is printed with a line
// saying so, and the process exits with 128 + the signal (130, 143). A second signal kills the
// programs again and exits at once.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/commands.h"
#include "app/stop_signal.h"
#include "app/game_dispatch.h"
#include "app/option_checks.h"
#include "arena/game_record.h"
#include "arena/elo.h"
#include "arena/external.h"
#include "arena/match.h"
#include "arena/play.h"
#include "arena/player.h"
#include "arena/players.h"
#include "arena/ratings.h"
#include "arena/spec.h"
#include "games/game.h"
#include "trainer/output_file.h"
#include "util/file_io.h"
#include "util/progress.h"

namespace oppidum::app {
namespace {

// "mg 4, dvonn 6, ..." from the registry.
std::string opening_plies_text() {
  std::string text;
  for (const Game* g : all_games())
    text += (text.empty() ? "" : ", ") + g->name() + " " + std::to_string(g->default_opening_plies());
  return text;
}

const std::string kSpecHelp = std::string("player spec: ") + arena::kPlayerList;

// What the arena's signal handler touches: lock-free atomics only.
std::atomic<bool> g_arena_stop{false};  // MatchHooks::stop
std::atomic<int> g_arena_signal{0};     // the first signal received, 0: none
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

void write_stderr(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

const char* signal_name(int signo) {
  return signo == SIGINT ? "SIGINT" : signo == SIGHUP ? "SIGHUP" : "SIGTERM";
}

// The stop flag is set before the programs die, so that the match, seeing one end, asks no other.
extern "C" void on_arena_signal(int signo) {
  const bool again = g_arena_signal.exchange(signo) != 0;
  g_arena_stop.store(true);
  arena::kill_all_external_engines();
  if (again) {
    util::remove_temporary_files();
    std::_Exit(128 + signo);
  }
  write_stderr(signo == SIGINT    ? "\n[arena] SIGINT: stopping the match (again: exit at once)\n"
               : signo == SIGHUP ? "\n[arena] SIGHUP: stopping the match (again: exit at once)\n"
                                 : "\n[arena] SIGTERM: stopping the match (again: exit at once)\n");
}

void install_arena_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_arena_signal;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGHUP);
  action.sa_flags = SA_RESTART;  // the other threads' writes and waits go on; poll() still wakes
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);  // a closed terminal
}

// A match whose results line the file would refuse (a player against itself) is not played.
void check_results_players(const std::string& a, const std::string& b) {
  try {
    arena::check_result_players(a, b);
  } catch (const arena::ResultsFileError& e) {
    throw std::invalid_argument("--results: " + std::string(e.what()) +
                                " (it rates nothing); leave --results out for such a match");
  }
}

// A match whose game lines the record file could not hold (a player spec with a blank, such as a
// checkpoint path with a space: its lines were written, and every reader refused them) is not
// recorded.
void check_record_players(const std::vector<std::string>& specs) {
  for (const std::string& spec : specs) {
    try {
      arena::check_record_player(spec);
    } catch (const arena::ResultsFileError& e) {
      throw std::invalid_argument("--record: " + std::string(e.what()) +
                                  "; leave --record out for such a match");
    }
  }
}

// The file that a write to `path` reaches: its links followed (a dangling one to the name it
// names), made absolute, so that `x`, `./x` and `/dir/x` are one file before x exists.
std::filesystem::path file_written(std::filesystem::path path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (int links = 0; links < 40 && fs::is_symlink(fs::symlink_status(path, ec)); ++links) {
    const fs::path target = fs::read_symlink(path, ec);
    if (ec) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? path : fs::weakly_canonical(absolute, ec);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return file_written(a) == file_written(b) || std::filesystem::equivalent(a, b, ec);
}

// The files a command appends to (--results, --record) are the user's: never one of a run
// folder's own (a record appended as games/chunk-N.bin was damaged data to every session after,
// a results file named checkpoints/gen-N.ckpt was written over at generation N), and never one
// file for both (the match's result was lost after its games, and the file held both kinds of
// line).
void check_appended_files(const std::string& results, const std::string& record) {
  if (!results.empty()) trainer::check_output_file(results, "--results");
  if (!record.empty()) trainer::check_output_file(record, "--record");
  if (!results.empty() && !record.empty() && same_file(results, record))
    throw std::invalid_argument("--results and --record name the same file, " + results +
                                ": a results file holds match totals, a record file games");
}

// Nor one the file could not take: a path that cannot be appended to (a directory, /dev/full), a
// file of another game than its own or one that is no results file.
void check_results_file(const std::string& path, const Game& game) {
  util::append_to_file(path, "");
  try {
    arena::check_results_game(path, game.name());
  } catch (const arena::ResultsFileError& e) {
    throw std::invalid_argument("--results: " + std::string(e.what()));
  }
}

struct ArenaOptions {
  std::string game, a, b, sprt, results, record;
  arena::MatchConfig match;  // its defaults are the command's (--sprt is parsed into it)
  double progress_seconds = 10.0;
};

// A timed player's move waits for a core on its own clock: with more match threads than cores a
// `net` player on a clock of 0.5 s lost 18 of 32 games on time at 64 threads on 2 cores (none at
// 1 to 8), without a word.
void warn_timed_threads(const std::vector<const arena::Player*>& players, int threads) {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores == 0 || threads <= static_cast<int>(cores)) return;
  for (const arena::Player* p : players)
    if (p->time_control().timed()) {
      std::cerr << "warning: --threads " << threads << " is more than this machine's " << cores
                << " cores: the moves of " << p->spec()
                << " wait for a core on its clock, and may lose on time\n";
      return;
    }
}

void run_arena(const ArenaOptions& o, const arena::NetEvaluatorFactory& net_factory) {
  const Game& game = game_by_name(o.game);
  arena::PlayerOptions player_options;
  player_options.net_factory = net_factory;
  auto a = arena::make_player(game, o.a, player_options);
  auto b = arena::make_player(game, o.b, player_options);
  arena::MatchConfig config = o.match;
  if (!o.sprt.empty()) config.sprt = arena::parse_sprt(o.sprt);

  // A match that cannot be played, a results file that cannot take the line (a directory,
  // /dev/full), or a line it would refuse, is refused before the match and before a results or
  // record file is made (a refused match left both behind, empty).
  arena::plan_match(game, *a, *b, config);
  warn_timed_threads({a.get(), b.get()}, config.threads);
  check_appended_files(o.results, o.record);
  if (!o.results.empty()) {
    check_results_players(a->spec(), b->spec());
    check_results_file(o.results, game);
  }
  if (!o.record.empty()) check_record_players({a->spec(), b->spec()});
  std::unique_ptr<arena::RecordWriter> record;
  if (!o.record.empty()) record = std::make_unique<arena::RecordWriter>(o.record);
  arena::MatchHooks hooks;
  hooks.stop = &g_arena_stop;
  using Clock = std::chrono::steady_clock;
  auto last_progress = Clock::now();
  // On a terminal, one line updated in place after every counted pair; otherwise a log line
  // every --progress-seconds.
  util::ProgressLine progress;
  hooks.on_progress = [&](const arena::MatchStatus& status) {
    if (progress.terminal()) return progress.update("[arena] " + arena::format_progress(status));
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_progress).count() < o.progress_seconds &&
        !status.finished)
      return;
    last_progress = now;
    std::cerr << "[arena] " << arena::format_progress(status) << std::endl;
  };
  if (record) {
    hooks.on_game = [&](const arena::GameRecord& g) {
      const std::array<std::string, 2> specs = g.a_first
                                                   ? std::array<std::string, 2>{a->spec(), b->spec()}
                                                   : std::array<std::string, 2>{b->spec(), a->spec()};
      record->write(arena::format_game_line(game, specs, g.moves, g.result, g.forfeit));
    };
  }
  std::cerr << "[arena] " << a->spec() << " vs " << b->spec() << " on " << game.name() << ", up to "
            << 2 * ((o.match.games + 1) / 2) << " games, " << o.match.threads << " thread(s)"
            << std::endl;
  const arena::MatchStatus status = arena::run_match(game, *a, *b, config, hooks);
  progress.done();
  std::cout << arena::format_match_report(status);
  const int signo = g_arena_signal.load();
  if (signo != 0) {
    // The games the match counted before the signal are in the report (and the record file), but
    // a stopped match is not a result to rate.
    std::cout << "stopped by a signal (" << signal_name(signo) << ") after "
              << status.games_counted << " games"
              << (o.results.empty() ? "" : "; nothing appended to " + o.results) << std::endl;
    throw CLI::RuntimeError(128 + signo);
  }
  if (!o.results.empty()) {
    const arena::MatchLine line{status.a, status.b, status.wins, status.draws, status.losses,
                                status.pairs};
    arena::append_result(o.results, line, game.name());
    std::cout << "appended to " << o.results << ": " << arena::format_result_line(line) << '\n';
  }
}

struct GauntletOptions {
  std::string game, player, results, record;
  std::vector<std::string> opponents;
  double clock = 0;
  arena::MatchConfig match = [] {  // a match's defaults, but 100 games an opponent
    arena::MatchConfig m;
    m.games = 100;
    return m;
  }();
};

// One player against each opponent in turn, then one table (arena::format_gauntlet_table).
void run_gauntlet(const GauntletOptions& o, const arena::NetEvaluatorFactory& net_factory) {
  const Game& game = game_by_name(o.game);
  // --clock reaches the specs that name no budget of their own (arena::names_budget).
  auto make = [&](const std::string& spec) {
    arena::PlayerOptions options;
    options.net_factory = net_factory;
    if (!arena::names_budget(arena::parse_player_spec(spec)))
      options.default_time.clock_seconds = o.clock;
    return arena::make_player(game, spec, options);
  };
  auto player = make(o.player);
  std::vector<std::unique_ptr<arena::Player>> opponents;
  for (const auto& spec : o.opponents) opponents.push_back(make(spec));
  // Every match playable before any file is made for them (as `arena`).
  for (const auto& opponent : opponents) arena::plan_match(game, *player, *opponent, o.match);
  std::vector<const arena::Player*> all = {player.get()};
  for (const auto& opponent : opponents) all.push_back(opponent.get());
  warn_timed_threads(all, o.match.threads);
  check_appended_files(o.results, o.record);
  if (!o.results.empty()) {
    for (const auto& opponent : opponents) check_results_players(player->spec(), opponent->spec());
    check_results_file(o.results, game);
  }
  if (!o.record.empty()) {
    std::vector<std::string> specs = {player->spec()};
    for (const auto& opponent : opponents) specs.push_back(opponent->spec());
    check_record_players(specs);
  }
  std::unique_ptr<arena::RecordWriter> record;
  if (!o.record.empty()) record = std::make_unique<arena::RecordWriter>(o.record);
  const arena::MatchConfig config = o.match;
  std::vector<arena::MatchStatus> done;
  for (auto& opponent : opponents) {
    if (g_arena_stop.load()) break;
    arena::MatchHooks hooks;
    hooks.stop = &g_arena_stop;
    if (record) {
      hooks.on_game = [&](const arena::GameRecord& g) {
        std::array<std::string, 2> specs = {player->spec(), opponent->spec()};
        if (!g.a_first) std::swap(specs[0], specs[1]);
        record->write(arena::format_game_line(game, specs, g.moves, g.result, g.forfeit));
      };
    }
    std::cerr << "[gauntlet] " << player->spec() << " vs " << opponent->spec() << ", up to "
              << 2 * ((o.match.games + 1) / 2) << " games" << std::endl;
    done.push_back(arena::run_match(game, *player, *opponent, config, hooks));
    const arena::MatchStatus& status = done.back();
    std::cerr << "[gauntlet] " << arena::format_progress(status) << std::endl;
    if (!o.results.empty() && !status.stopped)
      arena::append_result(
          o.results,
          {status.a, status.b, status.wins, status.draws, status.losses, status.pairs},
          game.name());
  }
  std::cout << arena::format_gauntlet_table(done);
  const int signo = g_arena_signal.load();
  if (signo != 0) {
    std::cout << "stopped by a signal (" << signal_name(signo)
              << "); the last match is marked (stopped) and was not appended to any results file"
              << std::endl;
    throw CLI::RuntimeError(128 + signo);
  }
}

void run_ratings(const std::string& path, arena::RatingOptions options) {
  util::ProgressLine progress;
  progress.update("[ratings] reading " + path);
  const auto matches = arena::read_results_file(path);
  options.on_progress = [&](const std::string& text) { progress.update("[ratings] " + text); };
  const auto ratings = arena::fit_ratings(matches, options);
  progress.done();
  std::cout << arena::format_ratings(ratings, options);
}

struct PlayOptions {
  std::string game, opponent, color = "first", record;
  std::uint64_t seed = 0;
  bool seed_given = false;
};

void run_play(const PlayOptions& o, const arena::NetEvaluatorFactory& net_factory) {
  const Game& game = game_by_name(o.game);
  arena::PlayerOptions player_options;
  player_options.net_factory = net_factory;
  auto opponent = arena::make_player(game, o.opponent, player_options);
  if (opponent->interactive()) throw std::runtime_error("play: the opponent must be a program");
  // A record file that cannot take the game is refused before it is played, not after.
  check_appended_files("", o.record);
  arena::HumanPlayer human(std::cin, std::cout);
  if (!o.record.empty()) check_record_players({human.spec(), opponent->spec()});
  std::unique_ptr<arena::RecordWriter> record;
  if (!o.record.empty()) record = std::make_unique<arena::RecordWriter>(o.record);
  const int human_side = o.color == "first" ? 0 : 1;
  std::array<arena::Player*, 2> players = {&human, opponent.get()};
  if (human_side == 1) std::swap(players[0], players[1]);
  const std::uint64_t seed = o.seed_given ? o.seed : std::random_device{}();
  std::cout << "You play " << (human_side == 0 ? "first" : "second") << " against "
            << opponent->spec() << ". Moves in docs/RULES.md notation.\n";
  const auto start = game.initial_state();
  arena::PlayedGame played;
  try {
    played = arena::play_game(*start, players, seed, 0, [&](const GameState& before, Action action) {
      if (before.current_player() != human_side)
        std::cout << opponent->spec() << " plays " << before.action_to_string(action) << '\n';
    });
  } catch (const arena::QuitGame&) {
    std::cout << "\nGame abandoned.\n";
    return;
  } catch (const arena::Forfeit& forfeit) {
    std::cout << '\n' << forfeit.what() << "\nYou win.\n";  // "SPEC forfeits: WHY" (choose_in_game)
    return;
  }
  std::cout << '\n' << played.final_state->pretty();
  const double mine = human_side == 0 ? played.result : -played.result;
  std::cout << (played.adjudicated ? "Draw by the ply limit."
                : mine > 0         ? "You win."
                : mine < 0         ? "You lose."
                                   : "Draw.");
  if (game.has_score())
    std::cout << " Score " << played.final_state->score(human_side) << " to "
              << played.final_state->score(1 - human_side) << '.';
  std::cout << '\n';
  if (record) {
    std::array<std::string, 2> specs = {"human", opponent->spec()};
    if (human_side == 1) std::swap(specs[0], specs[1]);
    record->write(arena::format_game_line(game, specs, played.moves, played.result));
  }
}

}  // namespace

void register_arena_commands(CLI::App& app, arena::NetEvaluatorFactory net_factory) {
  auto o = std::make_shared<ArenaOptions>();
  auto* arena_cmd = app.add_subcommand(
      "arena",
      "Play a match of paired games (each random opening twice, colours swapped) between players A "
      "and B; print W/D/L from A's view, the score, the Elo difference with a 95% interval and, "
      "with --sprt, the sequential test's verdict.");
  add_game_option(*arena_cmd, o->game)->required();
  arena_cmd->add_option("--a", o->a, "player A: " + kSpecHelp)->required();
  arena_cmd->add_option("--b", o->b, "player B: " + kSpecHelp)->required();
  arena_cmd
      ->add_option("--games", o->match.games, "most games to play (rounded up to whole pairs)")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  arena_cmd->add_option("--threads", o->match.threads, "worker threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  arena_cmd->add_option("--sprt", o->sprt,
                        "stop early by the SPRT: elo0=E0,elo1=E1[,alpha=" +
                            arena::format_number(arena::SprtConfig{}.alpha) + ",beta=" +
                            arena::format_number(arena::SprtConfig{}.beta) + "]")
      ->check(non_empty("leave --sprt out for a match of --games games"));
  arena_cmd->add_option("--seed", o->match.seed, "seed of the openings and every random choice")
      ->check(unsigned_whole_number())
      ->capture_default_str();
  arena_cmd->add_option("--openings-plies", o->match.opening_plies,
                        "random plies of each opening (default: the game's, " + opening_plies_text() +
                        "; 0 with an external player that lacks openings=1)")
      ->check(CLI::Range(0, 1000));
  arena_cmd->add_option("--max-plies", o->match.max_plies,
                        "adjudicate a draw at this ply (default: the game's bound)")
      ->check(CLI::Range(1, 100000));
  arena_cmd->add_option("--results", o->results,
                        "append `A B wins draws losses` to this results file (for `ratings`; a "
                        "new file starts with `# game: NAME`, and a match of another game is "
                        "refused)");
  arena_cmd->add_option("--record", o->record,
                        "append every counted game to this file, one per line: `<game> <first "
                        "spec> <second spec> <result> <moves...>`");
  arena_cmd->add_option("--progress-seconds", o->progress_seconds,
                        "seconds between progress lines on standard error when it is not a "
                        "terminal (0: after every counted pair); a terminal gets one line "
                        "updated in place")
      ->check(non_negative_number())
      ->capture_default_str();
  arena_cmd->callback([o, net_factory] {
    install_arena_signal_handlers();
    run_arena(*o, net_factory);
  });

  auto g = std::make_shared<GauntletOptions>();
  auto* gauntlet_cmd = app.add_subcommand(
      "gauntlet",
      "Play one player against a list of opponents, a paired match each (as `arena`, the player "
      "being A), and print one table: games, W/D/L, score and Elo with a 95% interval from the "
      "player's view and the pair counts it comes from, the time per move of both sides (mean "
      "and longest), forfeits (on time among them) and distinct games; under it, what a reader of "
      "an Elo must know (the prior's share in it, repeated pairs). With "
      "--clock every searching player whose spec names no budget plays on that clock: an "
      "equal-time table.");
  add_game_option(*gauntlet_cmd, g->game)->required();
  gauntlet_cmd->add_option("--player", g->player, "the player: " + kSpecHelp)->required();
  gauntlet_cmd
      ->add_option("--opponent", g->opponents, "an opponent (repeat the option): " + kSpecHelp)
      ->required();
  gauntlet_cmd->add_option("--clock", g->clock,
                           "seconds per game for every uct, net, alphabeta and classic player "
                           "whose spec names no budget (no sims=, depth=, nodes=, ms= or clock=; "
                           "0: none)")
      ->check(zero_or_number_in(arena::kMinClockSeconds, arena::kMaxClockSeconds));
  gauntlet_cmd->add_option("--games", g->match.games, "most games per opponent (whole pairs)")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  gauntlet_cmd->add_option("--threads", g->match.threads, "worker threads of each match")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  gauntlet_cmd
      ->add_option("--seed", g->match.seed, "seed of the openings and every random choice")
      ->check(unsigned_whole_number())
      ->capture_default_str();
  gauntlet_cmd->add_option("--openings-plies", g->match.opening_plies,
                           "random plies of each opening (default: the game's, " +
                               opening_plies_text() + ")")
      ->check(CLI::Range(0, 1000));
  gauntlet_cmd->add_option("--max-plies", g->match.max_plies,
                           "adjudicate a draw at this ply (default: the game's bound)")
      ->check(CLI::Range(1, 100000));
  gauntlet_cmd->add_option("--results", g->results,
                           "append each finished match's `A B wins draws losses` to this file");
  gauntlet_cmd->add_option("--record", g->record, "append every counted game to this file");
  gauntlet_cmd->callback([g, net_factory] {
    install_arena_signal_handlers();
    run_gauntlet(*g, net_factory);
  });

  auto results = std::make_shared<std::string>();
  auto rating_options = std::make_shared<arena::RatingOptions>();
  auto* ratings_cmd = app.add_subcommand(
      "ratings",
      "Fit Bradley-Terry ratings (Elo scale, 95% intervals) to every match in a results file and "
      "print them as a table, strongest first.");
  ratings_cmd->add_option("--results", *results, "results file written by `arena --results`")
      ->required();
  ratings_cmd->add_option("--anchor", rating_options->anchor, "the player rated 0")
      ->capture_default_str();
  ratings_cmd->add_option("--prior-draws", rating_options->prior_draws,
                          "virtual draws added to every pair that met (keeps perfect scores "
                          "finite; 0: none; else at least 0.01, since a smaller prior only "
                          "makes a perfect score's Elo and interval as large as floats go)")
      ->check(zero_or_number_in(0.01, 1e6))
      ->capture_default_str();
  ratings_cmd->callback([results, rating_options] { run_ratings(*results, *rating_options); });

  auto p = std::make_shared<PlayOptions>();
  auto* play_cmd = app.add_subcommand(
      "play", "Play a game against a program in the terminal (moves in docs/RULES.md notation).");
  add_game_option(*play_cmd, p->game)->required();
  play_cmd->add_option("--opponent", p->opponent,
                       std::string("the program: ") + arena::kProgramList)
      ->required();
  play_cmd->add_option("--color", p->color, "first (the game's side 0: Light, White, X) or second")
      ->check(CLI::IsMember({"first", "second"}))
      ->capture_default_str();
  play_cmd->add_option("--record", p->record, "append the finished game to this record file");
  auto* seed_opt = play_cmd->add_option("--seed", p->seed, "seed of the program's random choices")
                       ->check(unsigned_whole_number());
  play_cmd->callback([p, seed_opt, net_factory] {
    install_exit_signals();
    p->seed_given = seed_opt->count() > 0;
    run_play(*p, net_factory);
  });
}

}  // namespace oppidum::app
