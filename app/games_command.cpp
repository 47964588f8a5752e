// `oppidum games`: lists the game records of a run (or of one chunk file) and replays one game,
// printing every position in docs/RULES.md notation. Damaged records are reported and skipped.
// Read-only: it never writes, renames or deletes anything in the run, so it can run beside `train`.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "app/commands.h"
#include "app/error_text.h"
#include "app/option_checks.h"
#include "mcts/search.h"
#include "games/quote.h"
#include "selfplay/game_record.h"
#include "selfplay/replay_store.h"
#include "trainer/config.h"

namespace oppidum::app {
namespace {

struct GamesOptions {
  std::string run;
  std::string file;
  int replay = -1;
};

const char* result_text(const selfplay::GameRecord& r) {
  if (r.adjudicated) return "draw (ply limit)";
  if (r.resigned) return r.result > 0 ? "1-0 (resigned)" : "0-1 (resigned)";
  return r.result > 0 ? "1-0" : r.result < 0 ? "0-1" : "draw";
}

// Whether the run's self-play root is Gumbel, whose records hold its improved policy (scaled)
// where a PUCT root's hold visits; unknown for a lone file or an unreadable config.
std::optional<bool> gumbel_root(const std::string& run) {
  if (run.empty()) return std::nullopt;
  try {
    const config::RunConfig c =
        config::load_config((std::filesystem::path(run) / "config.yaml").string());
    return mcts::root_policy_from_string(c.selfplay.root) == mcts::RootPolicy::kGumbel;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// One line per move: the move, the search value, the policy target (its visits with a PUCT root,
// and its largest share) and the position after it.
void print_replay(const selfplay::GameRecord& r, std::optional<bool> gumbel) {
  const auto states = selfplay::replay(r);
  std::cout << "game " << r.game << ", seed " << r.seed << ", network step " << r.network_step
            << ", result " << result_text(r) << ", scores " << r.score[0] << "-" << r.score[1]
            << "\n";
  std::cout << "policy target: "
            << (!gumbel ? "visit counts (PUCT root) or a Gumbel root's improved policy; the run's "
                          "config.yaml says which"
                : *gumbel ? "the improved policy (Gumbel root)"
                          : "visit counts (PUCT root)")
            << "\n";
  std::cout << "start  " << states.front()->to_string() << "\n";
  for (std::size_t i = 0; i < r.moves.size(); ++i) {
    const auto& m = r.moves[i];
    std::uint64_t total = 0;
    const selfplay::VisitCount* top = nullptr;
    for (const auto& v : m.visits) {
      total += v.visits;
      if (top == nullptr || v.visits > top->visits) top = &v;
    }
    std::cout << std::setw(4) << i + 1 << "  " << std::left << std::setw(6)
              << states[i]->action_to_string(m.action) << std::right << " value "
              << std::showpos << std::fixed << std::setprecision(2) << m.root_value
              << std::noshowpos;
    if (gumbel == false) std::cout << " visits " << total;
    if (top != nullptr && total > 0)
      std::cout << " top " << states[i]->action_to_string(top->action) << " "
                << std::setprecision(1) << 100.0 * static_cast<double>(top->visits) / static_cast<double>(total) << "%";
    std::cout << (m.policy_target ? " full " : " fast ") << states[i + 1]->to_string() << "\n";
  }
}

void run_games(const GamesOptions& o) {
  std::vector<std::string> files;
  int problems = 0;
  if (!o.file.empty()) {
    files.push_back(o.file);
  } else {
    const std::string folder = (std::filesystem::path(o.run) / "games").string();
    std::error_code error;
    const auto status = std::filesystem::status(folder, error);
    if (std::filesystem::exists(status) && !std::filesystem::is_directory(status))
      throw std::runtime_error(folder + ": not a folder; the run's games are kept in a folder "
                               "named games");
    if (!std::filesystem::is_directory(status))
      throw std::runtime_error(folder + ": no such folder; is " + o.run + " a run folder?");
    const selfplay::FolderReplayStore store(folder, selfplay::FolderReplayStore::Mode::kReadOnly);
    files = store.chunks();
    for (const std::string& p : store.problems()) warn(p);
    problems += static_cast<int>(store.problems().size());
  }
  int index = 0;
  for (const std::string& file : files) {
    // One record at a time: a listing takes the memory of one game, not of a chunk's.
    std::optional<selfplay::GameRecord> wanted;
    const selfplay::ReadResult read =
        selfplay::for_each_game(file, [&](selfplay::GameRecord&& r, const selfplay::RecordPlace&) {
          if (o.replay < 0) {
            // Checked as the trainer checks it (a record can pass its CRC and still be wrong): one
            // that does not replay is listed as such, said why, and counted among the problems.
            std::string wrong;
            try {
              selfplay::replay(r);
            } catch (const selfplay::RecordError& e) {
              wrong = e.what();
            }
            std::cout << std::setw(6) << index << "  "
                      << std::filesystem::path(file).filename().string() << "  "
                      << quote_input(r.game, 20) << "  " << std::setw(4) << r.moves.size()
                      << " plies  " << std::setw(16) << std::left
                      << (wrong.empty() ? result_text(r) : "does not replay") << std::right
                      << "  network step " << r.network_step << "\n";
            if (!wrong.empty()) {
              warn("game " + std::to_string(index) + " (" + file +
                   ") does not replay, training skips it: " + wrong);
              ++problems;
            }
          } else if (index == o.replay) {
            wanted = std::move(r);
            return false;
          }
          ++index;
          return true;
        });
    if (read.refused && !o.file.empty())
      throw std::runtime_error("games: " + read.problems.front());
    for (const std::string& p : read.problems) {
      warn(p);
      ++problems;
    }
    if (wanted) {
      try {
        print_replay(*wanted, gumbel_root(o.run));
      } catch (const selfplay::RecordError& e) {
        throw std::runtime_error("games: game " + std::to_string(index) + " (" + file +
                                 ") does not replay: " + e.what());
      }
      return;
    }
  }
  if (o.replay >= 0)
    throw std::runtime_error("there is no game " + std::to_string(o.replay) + " (" +
                             std::to_string(index) + " games)");
  std::cout << index << " games" << (problems ? ", " + std::to_string(problems) + " problems" : "")
            << "\n";
}

}  // namespace

void register_games_command(CLI::App& app) {
  auto o = std::make_shared<GamesOptions>();
  auto* cmd = app.add_subcommand(
      "games",
      "List the self-play games of a run (one line each: index, chunk, game, length, result, "
      "the training step of the network that played its last move), or replay one, printing "
      "every position. Damaged records, and records that do not replay, are reported and "
      "skipped.");
  auto* run = cmd->add_option("--run", o->run, "run folder (runs/<name>)")
                  ->check(non_empty("give the run folder"));
  auto* file = cmd->add_option("--file", o->file,
                               "one game file instead of a run (an error when it is not one)");
  run->excludes(file);
  cmd->add_option("--replay", o->replay, "replay game number N of the listing")
      ->check(CLI::Range(0, 2147483647));
  cmd->callback([o] {
    if (o->run.empty() && o->file.empty()) throw std::runtime_error("games: give --run or --file");
    run_games(*o);
  });
}

}  // namespace oppidum::app
