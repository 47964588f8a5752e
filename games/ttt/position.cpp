#include "games/ttt/position.h"

#include <array>
#include <cassert>
#include <sstream>
#include <stdexcept>

#include "games/quote.h"
#include "games/zobrist.h"
#include "util/text.h"

namespace oppidum::ttt {
namespace {

constexpr Cells bit(int cell) { return static_cast<Cells>(1 << cell); }

int count(Cells cells) { return __builtin_popcount(cells); }

// kImage[s][cell]: the cell that symmetry s sends `cell` to (see the table in position.h).
constexpr auto kImage = [] {
  std::array<std::array<std::int8_t, kCells>, kNumSymmetries> t{};
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      const int images[kNumSymmetries][2] = {{r, c},         {c, 2 - r}, {2 - r, 2 - c},
                                             {2 - c, r},     {r, 2 - c}, {2 - r, c},
                                             {c, r},         {2 - c, 2 - r}};
      for (int s = 0; s < kNumSymmetries; ++s)
        t[s][r * kCols + c] = static_cast<std::int8_t>(images[s][0] * kCols + images[s][1]);
    }
  return t;
}();

const char* kSideName[2] = {"X", "O"};
constexpr char kMark[2] = {'x', 'o'};

// Zobrist keys: one per (player, cell).
constexpr std::uint64_t kZobristTable = 0x545454;  // "TTT"
std::uint64_t mark_key(int player, int cell) {
  return zobrist_key(kZobristTable, player * kCells + cell);
}

void check_symmetry(int symmetry) {
  if (symmetry < 0 || symmetry >= kNumSymmetries)
    throw std::logic_error("tic-tac-toe: symmetry " + std::to_string(symmetry) +
                           " is not one of 0.." + std::to_string(kNumSymmetries - 1));
}

}  // namespace

int transform_cell(int symmetry, int row, int col) {
  check_symmetry(symmetry);
  if (row < 0 || row >= kRows || col < 0 || col >= kCols)
    throw std::logic_error("tic-tac-toe: plane cell (" + std::to_string(row) + ", " +
                           std::to_string(col) + ") is off the 3 x 3 board");
  return kImage[symmetry][row * kCols + col];
}

Action transform_action(int symmetry, Action action) {
  check_symmetry(symmetry);
  if (action < 0 || action >= kNumActions)
    throw std::logic_error("tic-tac-toe: action " + std::to_string(action) +
                           " is not one of 0.." + std::to_string(kNumActions - 1));
  return kImage[symmetry][action];
}

std::string cell_name(int cell) {
  return {static_cast<char>('a' + cell % kCols), static_cast<char>('1' + cell / kCols)};
}

int Position::winner() const {
  if (has_line(marks_[0])) return 0;
  if (has_line(marks_[1])) return 1;
  return -1;
}

void Position::legal_actions(ActionList& out) const {
  out.clear();
  if (winner() >= 0) return;
  for (Cells free = empty_cells(); free; free &= free - 1) out.push_back(__builtin_ctz(free));
}

int Position::count_legal_actions() const { return winner() >= 0 ? 0 : count(empty_cells()); }

bool Position::is_legal(Action action) const {
  return action >= 0 && action < kNumActions && (empty_cells() & bit(action)) && winner() < 0;
}

void Position::apply(Action action) {
  assert(is_legal(action));
  marks_[side_to_move()] |= bit(action);
  assert(is_consistent());
}

double Position::result(int player) const {
  const int w = winner();
  if (w < 0) return 0.0;
  return player == w ? 1.0 : -1.0;
}

int Position::score(int player) const { return winner() == player ? 1 : 0; }

std::string Position::to_string() const {
  std::string s;
  for (int r = kRows - 1; r >= 0; --r) {
    for (int c = 0; c < kCols; ++c) {
      const Cells b = bit(r * kCols + c);
      s += (marks_[0] & b) ? 'x' : (marks_[1] & b) ? 'o' : '.';
    }
    if (r > 0) s += '/';
  }
  s += ' ';
  s += kMark[side_to_move()];
  return s;
}

Position Position::parse(std::string_view text) {
  const std::string where = "tic-tac-toe position \"" + quote_input(text) + "\": ";
  const std::vector<std::string_view> fields = util::blank_fields(text);
  if (fields.size() != 2)
    throw GameError(where + "expected the board (like x.o/.x./...) and the side to move (x or o), "
                            "separated by a blank; found " + std::to_string(fields.size()) +
                    " field(s)");
  const std::string_view board = fields[0], side_text = fields[1];
  int side = -1;
  if (side_text == "x" || side_text == "X") side = 0;
  else if (side_text == "o" || side_text == "O") side = 1;
  else
    throw GameError(where + "the side to move must be x or o, not \"" + quote_input(side_text) +
                    "\"");

  Position p;
  int row = kRows - 1;
  int col = 0;
  for (std::size_t i = 0; i < board.size(); ++i) {
    const char ch = board[i];
    if (ch == '/') {
      if (col != kCols)
        throw GameError(where + "rank " + std::to_string(row + 1) + " has " + std::to_string(col) +
                        " cells; every rank has exactly 3");
      if (--row < 0) throw GameError(where + "more than 3 ranks");
      col = 0;
      continue;
    }
    if (col >= kCols)
      throw GameError(where + "rank " + std::to_string(row + 1) + " has more than 3 cells");
    const int cell = row * kCols + col;
    switch (ch) {
      case '.': break;
      case 'x': case 'X': p.marks_[0] |= bit(cell); break;
      case 'o': case 'O': p.marks_[1] |= bit(cell); break;
      default:
        throw GameError(where + "unknown character '" + quote_input(board.substr(i, 1)) +
                        "' at " + cell_name(cell) + " (character " + std::to_string(i + 1) +
                        "); use x, o or .");
    }
    ++col;
  }
  if (row != 0 || col != kCols)
    throw GameError(where + "expected 3 ranks of 3 cells, the board ends at rank " +
                    std::to_string(row + 1) + " after " + std::to_string(col) + " cells");

  const int xs = count(p.marks_[0]);
  const int os = count(p.marks_[1]);
  const std::string marks = std::to_string(xs) + " X and " + std::to_string(os) + " O marks";
  if (xs != os && xs != os + 1)
    throw GameError(where + marks + " cannot happen: X moves first, so X has as many marks as O "
                            "or one more");
  if (side != p.side_to_move())
    throw GameError(where + "with " + marks + " it is " + kSideName[p.side_to_move()] +
                    "'s turn, not " + kSideName[side] + "'s");
  const bool x_line = has_line(p.marks_[0]);
  const bool o_line = has_line(p.marks_[1]);
  if (x_line && o_line)
    throw GameError(where + "both X and O have three in a row; the game ends at the first line");
  if (x_line && side == 0)
    throw GameError(where + "X has three in a row, so the game ended before O's last mark");
  if (o_line && side == 1)
    throw GameError(where + "O has three in a row, so the game ended before X's last mark");
  assert(p.is_consistent());
  return p;
}

std::string Position::action_to_string(Action action) const {
  if (action < 0 || action >= kNumActions)
    throw std::logic_error("tic-tac-toe: action " + std::to_string(action) +
                           " is not one of 0.." + std::to_string(kNumActions - 1));
  return cell_name(action);
}

Action Position::parse_action(std::string_view move) const {
  const std::string where = "tic-tac-toe move \"" + quote_input(move) + "\": ";
  move = util::trim_blanks(move);
  if (move.size() != 2)
    throw GameError(where + "expected a cell, a file a-c and a rank 1-3, like b2");
  const char file = static_cast<char>(move[0] | 0x20);  // accept upper case
  if (file < 'a' || file > 'c')
    throw GameError(where + "'" + quote_input(move.substr(0, 1)) +
                    "' at character 1 is not a file (a..c)");
  if (move[1] < '1' || move[1] > '3')
    throw GameError(where + "'" + quote_input(move.substr(1, 1)) +
                    "' at character 2 is not a rank (1..3)");
  const int cell = (move[1] - '1') * kCols + (file - 'a');
  if (const int w = winner(); w >= 0)
    throw GameError(where + "illegal: the game is over, " + kSideName[w] + " has three in a row");
  if (empty_cells() == 0) throw GameError(where + "illegal: the game is over, the board is full");
  for (int player = 0; player < 2; ++player)
    if (marks_[player] & bit(cell))
      throw GameError(where + "illegal: " + cell_name(cell) + " already holds an " +
                      kSideName[player]);
  assert(is_legal(cell));
  return cell;
}

std::uint64_t Position::hash() const {
  std::uint64_t h = 0;
  for (int player = 0; player < 2; ++player)
    for (Cells b = marks_[player]; b; b &= b - 1) h ^= mark_key(player, __builtin_ctz(b));
  return h;
}

void Position::encode(float* planes) const {
  const int us = side_to_move();
  for (int cell = 0; cell < kCells; ++cell) {
    planes[cell] = (marks_[us] & bit(cell)) ? 1.0f : 0.0f;
    planes[kCells + cell] = (marks_[1 - us] & bit(cell)) ? 1.0f : 0.0f;
    planes[2 * kCells + cell] = 1.0f;
  }
}

Position Position::transformed(int symmetry) const {
  check_symmetry(symmetry);
  Position p;
  for (int player = 0; player < 2; ++player)
    for (Cells b = marks_[player]; b; b &= b - 1)
      p.marks_[player] |= bit(kImage[symmetry][__builtin_ctz(b)]);
  return p;
}

std::string Position::pretty() const {
  std::ostringstream out;
  out << "    a b c\n";
  for (int r = kRows - 1; r >= 0; --r) {
    out << "  " << r + 1 << ' ';
    for (int c = 0; c < kCols; ++c) {
      const Cells b = bit(r * kCols + c);
      out << ((marks_[0] & b) ? 'X' : (marks_[1] & b) ? 'O' : '.') << ' ';
    }
    out << r + 1 << '\n';
  }
  out << "    a b c\n";
  if (const int w = winner(); w >= 0)
    out << "  " << kSideName[w] << " has three in a row (ply " << ply() << ")\n";
  else if (empty_cells() == 0)
    out << "  a draw: the board is full\n";
  else
    out << "  " << kSideName[side_to_move()] << " to move, ply " << ply() << '\n';
  return out.str();
}

bool Position::is_consistent() const {
  const int xs = count(marks_[0]);
  const int os = count(marks_[1]);
  const bool x_line = has_line(marks_[0]);
  const bool o_line = has_line(marks_[1]);
  return ((marks_[0] | marks_[1]) & ~kFullBoard) == 0 && (marks_[0] & marks_[1]) == 0 &&
         (xs == os || xs == os + 1) && !(x_line && o_line) && !(x_line && xs == os) &&
         !(o_line && xs != os);
}

const BoardLayout& board_layout() {
  static const BoardLayout layout = square_board_layout(kRows, kCols, cell_name);
  return layout;
}

std::vector<CellView> Position::board_view() const {
  std::vector<CellView> view(kCells);
  for (int cell = 0; cell < kCells; ++cell)
    for (int player = 0; player < 2; ++player)
      if (marks_[player] >> cell & 1u)
        view[static_cast<std::size_t>(cell)] = {{player}, player == 0 ? "X" : "O"};
  return view;
}

}  // namespace oppidum::ttt
