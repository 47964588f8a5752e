// perft, moves, apply: the rules of both games from the command line.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "games/game.h"
#include "games/perft.h"

namespace oppidum::app {
namespace {

struct PerftOptions {
  std::string game;
  int depth = 1;
  std::string position;
  std::string positions;
  bool no_bulk = false;
};

template <class P>
P parse_or_initial(const std::string& text) {
  return text.empty() ? P::initial() : P::parse(text);
}

void run_perft(const PerftOptions& o) {
  with_position_type(o.game, [&](auto tag) {
    using P = typename decltype(tag)::Position;
    if (o.positions.empty()) {
      const P pos = parse_or_initial<P>(o.position);
      for (int d = 1; d <= o.depth; ++d)
        std::cout << d << ' ' << perft(pos, d, !o.no_bulk) << std::endl;
      return;
    }
    if (o.positions != "-") throw std::runtime_error("--positions takes - (standard input)");
    std::string line;
    int line_number = 0;
    while (std::getline(std::cin, line)) {
      ++line_number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      P pos;
      try {
        pos = P::parse(line);
      } catch (const GameError& e) {
        throw GameError("standard input line " + std::to_string(line_number) + ": " + e.what());
      }
      std::cout << line;
      for (int d = 1; d <= o.depth; ++d) std::cout << ' ' << perft(pos, d, !o.no_bulk);
      std::cout << '\n';
    }
    std::cout.flush();
  });
}

std::unique_ptr<GameState> load_state(const Game& game, const std::string& position) {
  return position.empty() ? game.initial_state() : game.parse_state(position);
}

void run_moves(const std::string& game_name, const std::string& position) {
  const Game& game = game_by_name(game_name);
  const auto state = load_state(game, position);
  ActionList actions;
  state->legal_actions(actions);
  std::vector<std::string> moves;
  for (Action a : actions) moves.push_back(state->action_to_string(a));
  std::sort(moves.begin(), moves.end());
  for (const auto& m : moves) std::cout << m << '\n';
  if (moves.empty()) std::cerr << "the game is over: no legal moves\n";
}

void run_apply(const std::string& game_name, const std::string& position, const std::string& moves,
               bool pretty) {
  const Game& game = game_by_name(game_name);
  auto state = load_state(game, position);
  std::istringstream in(moves);
  std::string move;
  int index = 0;
  while (in >> move) {
    ++index;
    try {
      state->apply(state->parse_action(move));
    } catch (const GameError& e) {
      throw GameError("move " + std::to_string(index) + " (" + move + ") in " +
                      state->to_string() + ": " + e.what());
    }
  }
  std::cout << state->to_string() << '\n';
  if (pretty) std::cout << state->pretty();
}

}  // namespace

void register_rules_commands(CLI::App& app) {
  auto perft_opts = std::make_shared<PerftOptions>();
  auto* perft = app.add_subcommand(
      "perft",
      "Count leaf action sequences (perft) from a position: prints `<depth> <count>` for each depth "
      "1..N; with --positions - reads one position per line from standard input and prints the "
      "position followed by perft(1..N).");
  perft->add_option("--game", perft_opts->game, kGameOptionHelp)->required();
  perft->add_option("--depth", perft_opts->depth, "deepest depth to count")
      ->required()
      ->check(CLI::Range(0, 64));
  auto* pos_opt = perft->add_option("--position", perft_opts->position,
                                    "start position in RULES.md notation (default: the initial "
                                    "position)");
  perft->add_option("--positions", perft_opts->positions,
                    "`-`: read positions, one per line, from standard input")
      ->excludes(pos_opt);
  perft->add_flag("--no-bulk", perft_opts->no_bulk,
                  "apply every leaf action instead of counting the last ply in bulk (slower; same "
                  "counts)");
  perft->callback([perft_opts] { run_perft(*perft_opts); });

  auto moves_game = std::make_shared<std::string>();
  auto moves_pos = std::make_shared<std::string>();
  auto* moves = app.add_subcommand(
      "moves", "Print the legal moves of a position in notation, one per line, sorted.");
  moves->add_option("--game", *moves_game, kGameOptionHelp)->required();
  moves->add_option("--position", *moves_pos, "position in RULES.md notation (default: initial)");
  moves->callback([moves_game, moves_pos] { run_moves(*moves_game, *moves_pos); });

  struct ApplyOptions {
    std::string game, position, moves;
    bool pretty = false;
  };
  auto apply_opts = std::make_shared<ApplyOptions>();
  auto* apply = app.add_subcommand(
      "apply",
      "Play moves from a position and print the resulting position, or say which move is illegal "
      "and why (exit status 1).");
  apply->add_option("--game", apply_opts->game, kGameOptionHelp)->required();
  apply->add_option("--position", apply_opts->position,
                    "start position in RULES.md notation (default: initial)");
  apply->add_option("--moves", apply_opts->moves, "moves separated by spaces, e.g. \"c1-c3 f7-f5\"")
      ->required();
  apply->add_flag("--pretty", apply_opts->pretty, "also draw the resulting board");
  apply->callback([apply_opts] {
    run_apply(apply_opts->game, apply_opts->position, apply_opts->moves, apply_opts->pretty);
  });
}

}  // namespace oppidum::app
