// perft, moves, apply: the rules of both games from the command line.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/game_dispatch.h"
#include "app/option_checks.h"
#include "games/game.h"
#include "games/perft.h"
#include "games/quote.h"
#include "util/text.h"

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
    while (true) {
      ++line_number;
      try {
        if (!util::read_line(std::cin, line)) break;
      } catch (const util::LineTooLong& e) {
        throw GameError("standard input line " + std::to_string(line_number) + ": " + e.what());
      }
      if (util::trim_blanks(line).empty()) continue;
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

void run_moves(const std::string& game_name, const std::string& position, bool with_actions) {
  const Game& game = game_by_name(game_name);
  const auto state = load_state(game, position);
  ActionList actions;
  state->legal_actions(actions);
  std::vector<std::string> moves;
  for (Action a : actions)
    moves.push_back(state->action_to_string(a) + (with_actions ? " " + std::to_string(a) : ""));
  std::sort(moves.begin(), moves.end());
  for (const auto& m : moves) std::cout << m << '\n';
  if (moves.empty()) std::cerr << "the game is over: no legal moves\n";
}

// The network input of a position, one block of rows per plane, for checking another program's
// encoder against oppidum's (docs/FORMATS.md, docs/EXPORT.md).
void run_encode(const std::string& game_name, const std::string& position) {
  const Game& game = game_by_name(game_name);
  const auto state = load_state(game, position);
  const PlaneShape s = game.input_shape();
  std::vector<float> planes(static_cast<std::size_t>(s.size()));
  state->encode(planes.data());
  std::cout << "# " << game.name() << " encoding version " << game.encoding_version() << ": "
            << s.planes << " planes of " << s.height << " rows x " << s.width
            << " columns, side to move " << state->current_player() << ", position "
            << state->to_string() << "\n";
  for (int p = 0; p < s.planes; ++p) {
    std::cout << "plane " << p << "\n";
    for (int r = 0; r < s.height; ++r) {
      for (int c = 0; c < s.width; ++c)
        std::cout << (c ? " " : "")
                  << planes[static_cast<std::size_t>((p * s.height + r) * s.width + c)];
      std::cout << "\n";
    }
  }
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
      throw GameError("move " + std::to_string(index) + " (" + quote_input(move) + ") in " +
                      state->to_string() + ": " + e.what());
    }
  }
  std::cout << state->to_string() << '\n';
  if (pretty) std::cout << state->pretty();
}

}  // namespace

void register_rules_commands(CLI::App& app) {
  // `--position ''` is a mistake (an unset shell variable), not the initial position.
  const CLI::Validator kNonEmptyPosition =
      non_empty("leave the option out for the initial position");
  auto perft_opts = std::make_shared<PerftOptions>();
  auto* perft = app.add_subcommand(
      "perft",
      "Count leaf action sequences (perft) from a position: prints `<depth> <count>` for each depth "
      "1..N; with --positions - reads one position per line from standard input and prints the "
      "position followed by perft(1..N).");
  add_game_option(*perft, perft_opts->game)->required();
  perft->add_option("--depth", perft_opts->depth, "deepest depth to count")
      ->required()
      ->check(CLI::Range(0, 64));
  auto* pos_opt = perft->add_option("--position", perft_opts->position,
                                    "start position in docs/RULES.md notation (default: the initial "
                                    "position)")
      ->check(kNonEmptyPosition);
  perft->add_option("--positions", perft_opts->positions,
                    "`-`: read positions, one per line, from standard input")
      ->excludes(pos_opt);
  perft->add_flag("--no-bulk", perft_opts->no_bulk,
                  "apply every leaf action instead of counting the last ply in bulk (slower; same "
                  "counts)");
  perft->callback([perft_opts] { run_perft(*perft_opts); });

  struct MovesOptions {
    std::string game, position;
    bool actions = false;
  };
  auto moves_opts = std::make_shared<MovesOptions>();
  auto* moves = app.add_subcommand(
      "moves", "Print the legal moves of a position in notation, one per line, sorted.");
  add_game_option(*moves, moves_opts->game)->required();
  moves->add_option("--position", moves_opts->position,
                    "position in docs/RULES.md notation (default: initial)")
      ->check(kNonEmptyPosition);
  moves->add_flag("--actions", moves_opts->actions,
                  "follow each move with its action number (the network's policy index, "
                  "docs/FORMATS.md)");
  moves->callback(
      [moves_opts] { run_moves(moves_opts->game, moves_opts->position, moves_opts->actions); });

  auto encode_opts = std::make_shared<MovesOptions>();
  auto* encode = app.add_subcommand(
      "encode",
      "Print the network input planes of a position (docs/FORMATS.md): a header line, then for "
      "each plane `plane <k>` and its rows of values, row 0 first (as stored, not as drawn). "
      "For checking another program's encoder against oppidum's.");
  add_game_option(*encode, encode_opts->game)->required();
  encode->add_option("--position", encode_opts->position,
                     "position in docs/RULES.md notation (default: initial)")
      ->check(kNonEmptyPosition);
  encode->callback([encode_opts] { run_encode(encode_opts->game, encode_opts->position); });

  struct ApplyOptions {
    std::string game, position, moves;
    bool pretty = false;
  };
  auto apply_opts = std::make_shared<ApplyOptions>();
  auto* apply = app.add_subcommand(
      "apply",
      "Play moves from a position and print the resulting position, or say which move is illegal "
      "and why (exit status 1).");
  add_game_option(*apply, apply_opts->game)->required();
  apply->add_option("--position", apply_opts->position,
                    "start position in docs/RULES.md notation (default: initial)")
      ->check(kNonEmptyPosition);
  apply->add_option("--moves", apply_opts->moves, "moves separated by spaces, e.g. \"c1-c3 f7-f5\"")
      ->required();
  apply->add_flag("--pretty", apply_opts->pretty, "also draw the resulting board");
  apply->callback([apply_opts] {
    run_apply(apply_opts->game, apply_opts->position, apply_opts->moves, apply_opts->pretty);
  });
}

}  // namespace oppidum::app
