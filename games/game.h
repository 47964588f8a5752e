// The game contract: the small interface that search, self-play, the arena and the network
// encoder use without naming a game. A `Game` describes one game (its action space, its input
// planes, its board symmetries) and makes states; a `GameState` is one position with the calls
// search needs. Concrete games (games/mg, games/dvonn) are plain value types with fast inline
// methods; `StateAdapter` in games/state_adapter.h wraps them behind this interface.
//
// Conventions every game follows:
// - Players are 0 (the first player: Murus Gallicus Light, DVONN White) and 1.
// - `legal_actions` is empty exactly when the state is terminal.
// - Actions are indices into a fixed per-game action space [0, num_actions); the layout of each
//   game is in docs/FORMATS.md. Murus Gallicus actions are expressed in the side to move's frame,
//   the same frame the input planes use, so the policy head needs no remapping.
// - `encode` writes planes (C x H x W, row-major) from the side to move's point of view into a
//   buffer the caller owns.
// - Bad user input (a position or move string) throws `GameError` with what was wrong and where.
//   Misuse of the API (applying an illegal action) throws `std::logic_error` in every build.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace oppidum {

using Action = int;

// Large enough for every game: DVONN has 49 + 49*6 + 1 = 344 actions in all.
inline constexpr int kMaxLegalActions = 352;

// A fixed-capacity list of actions that lives on the stack (no allocation in move generation).
// Debug builds check every push and index (the tests and sanitizer builds run in Debug).
class ActionList {
 public:
  void push_back(Action a) {
    assert(size_ < kMaxLegalActions && "ActionList full");
    assert(a >= 0 && a <= 0xFFFF && "action out of range");
    data_[size_++] = static_cast<std::uint16_t>(a);
  }
  void clear() { size_ = 0; }
  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Action operator[](int i) const {
    assert(i >= 0 && i < size_ && "ActionList index out of range");
    return data_[i];
  }
  const std::uint16_t* begin() const { return data_.data(); }
  const std::uint16_t* end() const { return data_.data() + size_; }
  bool contains(Action a) const {
    for (int i = 0; i < size_; ++i)
      if (data_[i] == a) return true;
    return false;
  }

 private:
  std::array<std::uint16_t, kMaxLegalActions> data_;
  int size_ = 0;
};

// Bad user input: a malformed or impossible position string, a malformed or illegal move.
class GameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shape of the network input for one position: planes x height x width floats.
struct PlaneShape {
  int planes = 0;
  int height = 0;
  int width = 0;
  int size() const { return planes * height * width; }
};

// How the web page draws a game and turns clicks into moves: plain data that web/ turns into JSON.
// A board is a set of cells named in the game's notation ("c3", "A1"), each with its centre; a
// position says what stands on each cell; a move is the cells it is clicked on, in order.
enum class CellShape { kSquare, kHexagon };

// Positions are in layout units: neighbouring cells' centres are 1 apart, x grows to the right and
// y downwards (as the board is shown).
struct BoardCell {
  std::string name;  // in the game's notation
  double x = 0;
  double y = 0;
};

// A coordinate, drawn faintly under the pieces: a file letter beside the board, or a cell's name in
// the cell.
struct BoardLabel {
  std::string text;
  double x = 0;
  double y = 0;
};

struct BoardLayout {
  // A square is 1 unit wide; a hexagon has a corner at the top and is 1 unit across its flat sides.
  CellShape shape = CellShape::kSquare;
  std::vector<BoardCell> cells;  // GameState::board_view and action_cells index this list
  std::vector<BoardLabel> labels;
};

// Each game's static evaluation for the alpha-beta player (games/<game>/evaluation.h, found by
// argument-dependent lookup as `int evaluate(const Position&)`) scores a non-terminal position for
// its side to move within +-kMaxEvaluation, far below the search's proven results, so a proven
// result always outranks a heuristic one; kWinNextMove is a leaf whose mover wins with its next
// action (not proven by the search, but as good as won).
inline constexpr int kMaxEvaluation = 100'000;
inline constexpr int kWinNextMove = 50'000;

// A rectangular board of `rows` x `cols` squares: cell = row * cols + col with row 0 at the bottom
// (drawn at the top is the last row), named `name(cell)`, files a, b, ... below and ranks 1, 2, ...
// to the left.
template <class Name>
BoardLayout square_board_layout(int rows, int cols, Name name) {
  BoardLayout l;
  l.shape = CellShape::kSquare;
  for (int cell = 0; cell < rows * cols; ++cell)
    l.cells.push_back({name(cell), static_cast<double>(cell % cols),
                       static_cast<double>(rows - 1 - cell / cols)});
  for (int c = 0; c < cols; ++c)
    l.labels.push_back({std::string(1, static_cast<char>('a' + c)), static_cast<double>(c),
                        rows - 0.2});
  for (int r = 0; r < rows; ++r)
    l.labels.push_back({std::to_string(r + 1), -0.8, static_cast<double>(rows - 1 - r)});
  return l;
}

// The owner of a piece that belongs to neither player (DVONN's red pieces).
inline constexpr int kNeutralPiece = 2;

// What stands on one cell.
struct CellView {
  // The pieces to draw, bottom to top: 0 or 1 (the owner) or kNeutralPiece; empty for an empty
  // cell. A game that keeps no stack's full make-up shows a summary (DVONN: a DVONN piece under
  // the top piece when the stack holds one, and the height as the label).
  std::vector<int> pieces;
  std::string label;  // a short text drawn on the top piece; may be empty
};

class Game;

class GameState {
 public:
  virtual ~GameState() = default;

  virtual std::unique_ptr<GameState> clone() const = 0;
  // Makes this state a copy of `other`, which must be the same concrete type (a state of the same
  // game), without allocating: the search's per-simulation copy.
  virtual void copy_from(const GameState& other) = 0;
  virtual const Game& game() const = 0;

  virtual int current_player() const = 0;
  virtual int ply() const = 0;
  virtual void legal_actions(ActionList& out) const = 0;
  virtual bool is_legal(Action action) const = 0;
  // Throws std::logic_error if the action is not legal here.
  virtual void apply(Action action) = 0;
  virtual bool is_terminal() const = 0;
  // Result from `player`'s point of view: +1 win, 0 draw, -1 loss. Only valid when terminal.
  virtual double result(int player) const = 0;
  // Game score of `player` (DVONN: total height of the stacks it tops; Murus Gallicus: 1 for the
  // winner, 0 otherwise). Meaningful when terminal.
  virtual int score(int player) const = 0;

  // Notation of docs/RULES.md.
  virtual std::string to_string() const = 0;
  virtual std::string action_to_string(Action action) const = 0;
  // Parses a move in notation and checks it is legal here; throws GameError saying why not.
  virtual Action parse_action(std::string_view move) const = 0;

  virtual std::uint64_t hash() const = 0;
  // Writes game().input_shape().size() floats.
  virtual void encode(float* planes) const = 0;

  // The position transformed by board symmetry `symmetry` (0 is the identity); actions map with
  // Game::transform_action.
  virtual std::unique_ptr<GameState> transformed(int symmetry) const = 0;

  // Multi-line board drawing for people (the terminal player, `oppidum apply`).
  virtual std::string pretty() const = 0;

  // What stands on each cell: one entry per cell of game().board_layout(), in its order.
  virtual std::vector<CellView> board_view() const = 0;
  // The cells a legal action is clicked on, in click order, as indices into
  // game().board_layout().cells; empty for an action with no cell (a pass, shown as a button).
  // No two legal actions of a position have the same cells, and none's cells are the start of
  // another's, so a click sequence that matches a legal action is that action.
  virtual std::vector<int> action_cells(Action action) const = 0;
};

class Game {
 public:
  virtual ~Game() = default;
  virtual std::string name() const = 0;  // "mg" or "dvonn"
  virtual int num_actions() const = 0;
  virtual PlaneShape input_shape() const = 0;
  // Version of the input-plane encoding and action layout; stored with every checkpoint.
  virtual int encoding_version() const = 0;
  virtual int num_symmetries() const = 0;
  // Where symmetry `symmetry` sends plane cell (row, col); used to transform encoded planes and
  // policy targets without a state. Returns row * width + col of the image.
  virtual int transform_cell(int symmetry, int row, int col) const = 0;
  // Image of an action under a symmetry (the same for both sides to move, in both games).
  virtual Action transform_action(int symmetry, Action action) const = 0;
  virtual std::unique_ptr<GameState> initial_state() const = 0;
  // Throws GameError with what was wrong and where.
  virtual std::unique_ptr<GameState> parse_state(std::string_view text) const = 0;
  // A generous bound on game length in plies, for buffers and draw adjudication.
  virtual int max_game_length() const = 0;
  // What a game clock's time management needs (arena/time_control.h): about how many plies a
  // game between good players lasts, and the ply where a phase starts whose first moves deserve
  // more thought (-1: none; DVONN: 49, White's first move after the placement).
  struct ClockFacts {
    int typical_plies = 60;
    int phase_start_ply = -1;
  };
  virtual ClockFacts clock_facts() const = 0;

  // What the rest of the program says about a game, from the game itself (never from its name):
  // for people, "Murus Gallicus", "DVONN".
  virtual std::string display_name() const = 0;
  // Player 0's or player 1's name in the game's rules: "Light"/"Dark", "White"/"Black".
  virtual std::string side_name(int player) const = 0;
  // Random plies that make each paired opening of a match (the arena's default): enough for
  // openings to differ, few enough to stay balanced.
  virtual int default_opening_plies() const = 0;
  // Whether a finished game has a score beyond its result that people read (GameState::score;
  // DVONN: the pieces in the stacks each player controls).
  virtual bool has_score() const = 0;
  // Whether `text` has the shape of a move in this game's notation, legal or not, in any case:
  // how the engine protocol's referee tells an illegal move from garbage.
  virtual bool looks_like_move(std::string_view text) const = 0;
  // The positions `oppidum bench rules` counts perft from, with their depths: a fixed signature
  // of the rules (an empty position is the initial one).
  struct PerftBenchmark {
    std::string label;     // e.g. "mg start"
    std::string position;  // notation of parse_state; empty: the initial position
    int depth = 1;
  };
  virtual std::vector<PerftBenchmark> perft_benchmarks() const = 0;
  // The input planes and the action layout of encoding_version(), in words (as docs/FORMATS.md
  // says them): what an exported network carries (docs/EXPORT.md).
  virtual std::string planes_description() const = 0;
  virtual std::string actions_description() const = 0;
  // The board as the web page draws it (see BoardLayout).
  virtual const BoardLayout& board_layout() const = 0;
};

// A registered game by its name (games/registry.h; "murus-gallicus" is also "mg"); throws
// GameError naming the games for an unknown name.
const Game& game_by_name(std::string_view name);
// Every registered game, in registration order.
const std::vector<const Game*>& all_games();
// The registered names, "mg|dvonn|...", for messages and config checks.
std::string game_names(const char* separator = "|");

}  // namespace oppidum
