#include "games/dvonn/position.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "games/quote.h"
#include "games/zobrist.h"
#include "util/bits.h"
#include "util/text.h"

namespace oppidum::dvonn {
namespace {

constexpr Bitboard bit(int cell) { return Bitboard{1} << cell; }

using util::pop_lsb;
using util::popcount;

// Cells whose six neighbours all exist and are occupied (a missing neighbour reads as empty,
// since `occ` never has a bit off the board; see `neighbours`).
inline Bitboard surrounded(Bitboard occ) {
  return occ & (occ >> 1) & (occ << 1) & (occ >> 11) & (occ << 11) & (occ >> 12) & (occ << 12);
}

// A stack of height 11 or more can never land on the 5 x 11 grid.
constexpr int kMaxDistance = kCols;

// Landing cell of a stack on `cell` moving `h` spaces (h < kMaxDistance) in direction d, or -1
// when that is off the board.
constexpr auto kLanding = [] {
  std::array<std::array<std::array<std::int8_t, kMaxDistance + 1>, kNumDirections>, kGridCells> t{};
  for (int g = 0; g < kGridCells; ++g)
    for (int d = 0; d < kNumDirections; ++d)
      for (int h = 0; h <= kMaxDistance; ++h) {
        const int r = g / kCols + kDirRow[d] * h;
        const int c = g % kCols + kDirCol[d] * h;
        const bool ok = h > 0 && h < kMaxDistance && on_board(g / kCols, g % kCols) && on_board(r, c);
        t[g][d][h] = static_cast<std::int8_t>(ok ? r * kCols + c : -1);
      }
  return t;
}();

constexpr int distance_index(int height) { return height < kMaxDistance ? height : kMaxDistance; }

// Symmetry images of every grid cell. Real spaces follow the formulas in position.h; the six
// cells off the board (9, 10, 21 and 33, 44, 45) are permuted among themselves so that each map
// is an involution and symmetry 3 = symmetry 1 after symmetry 2.
constexpr auto kCellImage = [] {
  std::array<std::array<std::int8_t, kGridCells>, kNumSymmetries> t{};
  for (int g = 0; g < kGridCells; ++g) {
    const int r = g / kCols, c = g % kCols;
    t[0][g] = static_cast<std::int8_t>(g);
    t[1][g] = static_cast<std::int8_t>((4 - r) * kCols + (10 - c));
    if (on_board(r, c)) {
      t[2][g] = static_cast<std::int8_t>((4 - r) * kCols + (c - r + 2));
      t[3][g] = static_cast<std::int8_t>(r * kCols + (8 - c + r));
    }
  }
  const int pairs2[3][2] = {{9, 44}, {10, 45}, {21, 33}};
  for (const auto& p : pairs2) {
    t[2][p[0]] = static_cast<std::int8_t>(p[1]);
    t[2][p[1]] = static_cast<std::int8_t>(p[0]);
  }
  t[3][9] = 10;
  t[3][10] = 9;
  t[3][44] = 45;
  t[3][45] = 44;
  t[3][21] = 21;
  t[3][33] = 33;
  return t;
}();

// Image (dc, dr) of a direction vector under a symmetry's linear part.
constexpr int direction_of(int dc, int dr) {
  for (int d = 0; d < kNumDirections; ++d)
    if (kDirCol[d] == dc && kDirRow[d] == dr) return d;
  return -1;
}

constexpr auto kDirectionImage = [] {
  std::array<std::array<std::int8_t, kNumDirections>, kNumSymmetries> t{};
  for (int d = 0; d < kNumDirections; ++d) {
    const int dc = kDirCol[d], dr = kDirRow[d];
    t[0][d] = static_cast<std::int8_t>(d);
    t[1][d] = static_cast<std::int8_t>(direction_of(-dc, -dr));
    t[2][d] = static_cast<std::int8_t>(direction_of(dc - dr, -dr));
    t[3][d] = static_cast<std::int8_t>(direction_of(-dc + dr, dr));
  }
  return t;
}();

// Zobrist keys for (cell, top, height, holds DVONN), then the side to move and the phase.
constexpr std::uint64_t kZobristTable = 0x44564F4E;  // "DVON"
constexpr int kMaxHeight = kNumSpaces;
constexpr int stack_key_index(int cell, int top, int height, bool dvonn) {
  return ((cell * 3 + top) * (kMaxHeight + 1) + height) * 2 + (dvonn ? 1 : 0);
}
constexpr int kNumStackKeys = kGridCells * 3 * (kMaxHeight + 1) * 2;
constexpr auto kStackKeys = zobrist_keys<kNumStackKeys>(kZobristTable);
constexpr std::uint64_t kBlackToMoveKey = zobrist_key(kZobristTable, kNumStackKeys);
constexpr std::uint64_t kPlacementKey = zobrist_key(kZobristTable, kNumStackKeys + 1);

const char* const kSideName[2] = {"White", "Black"};
const char kSideLetter[2] = {'W', 'B'};

int row_of(int cell) { return cell / kCols; }
int col_of(int cell) { return cell % kCols; }

// First and last column of a row of the board.
int first_col(int row) { return row > 2 ? row - 2 : 0; }
int last_col(int row) { return row < 2 ? 8 + row : kCols - 1; }

// A printable rendering of user text for error messages, in single quotes and cut short.
std::string quoted(std::string_view text) { return "'" + quote_input(text) + "'"; }

[[noreturn]] void position_error(const std::string& what) {
  throw GameError("bad DVONN position: " + what);
}

[[noreturn]] void move_error(std::string_view move, const std::string& what) {
  throw GameError("DVONN move " + quoted(move) + ": " + what);
}

// Splits on a separator, keeping empty pieces.
std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
}

bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

// Parses "A1".."K5" (upper case) into a grid cell on the board; throws for the move `move`.
int parse_cell(std::string_view name, std::string_view move) {
  const char letter = name[0], digit = name[1];
  if (letter < 'A' || letter > 'K' || digit < '1' || digit > '5')
    move_error(move, quoted(name) +
                         " is not a space name: spaces are a column letter A..K and a row 1..5, "
                         "like D4");
  const int row = digit - '1', col = letter - 'A';
  if (!on_board(row, col))
    move_error(move, std::string(name) + " is not on the board: row " + std::to_string(row + 1) +
                         " runs from " + cell_name(row * kCols + first_col(row)) + " to " +
                         cell_name(row * kCols + last_col(row)));
  return row * kCols + col;
}

}  // namespace

std::string cell_name(int cell) {
  return {static_cast<char>('A' + col_of(cell)), static_cast<char>('1' + row_of(cell))};
}

int transform_cell(int symmetry, int row, int col) {
  return kCellImage[symmetry][row * kCols + col];
}

int transform_direction(int symmetry, int direction) {
  return kDirectionImage[symmetry][direction];
}

Action transform_action(int symmetry, Action action) {
  if (symmetry == 0 || action == kPassAction) return action;
  if (action < kMoveActionBase) return kSpaceOfCell[kCellImage[symmetry][kCellOfSpace[action]]];
  const int d = (action - kMoveActionBase) / kNumSpaces;
  const int k = (action - kMoveActionBase) % kNumSpaces;
  return move_action(kSpaceOfCell[kCellImage[symmetry][kCellOfSpace[k]]],
                     kDirectionImage[symmetry][d]);
}

// ---------------------------------------------------------------------------------------------
// Rules

Position Position::initial() { return Position(); }

int Position::landing(int cell, int direction) const {
  const int to = kLanding[cell][direction][distance_index(height_[cell])];
  return to >= 0 && (occupied() & bit(to)) ? to : -1;
}

Bitboard Position::mobile(int player) const {
  const Bitboard occ = occupied();
  Bitboard candidates = topped_by(player) & ~surrounded(occ);
  Bitboard result = 0;
  while (candidates) {
    const int cell = pop_lsb(candidates);
    const auto& targets = kLanding[cell];
    const int h = distance_index(height_[cell]);
    for (int d = 0; d < kNumDirections; ++d) {
      const int to = targets[d][h];
      if (to >= 0 && (occ & bit(to))) {
        result |= bit(cell);
        break;
      }
    }
  }
  return result;
}

void Position::legal_actions(ActionList& out) const {
  out.clear();
  const Bitboard occ = occupied();
  if (in_placement()) {
    Bitboard empty = kValid & ~occ;
    while (empty) out.push_back(placement_action(kSpaceOfCell[pop_lsb(empty)]));
    return;
  }
  const int side = side_to_move();
  const Bitboard candidates = topped_by(side) & ~surrounded(occ);
  for (int d = 0; d < kNumDirections; ++d) {
    Bitboard from = candidates;
    while (from) {
      const int cell = pop_lsb(from);
      const int to = kLanding[cell][d][distance_index(height_[cell])];
      if (to >= 0 && (occ & bit(to))) out.push_back(move_action(kSpaceOfCell[cell], d));
    }
  }
  if (out.empty() && mobile(1 - side)) out.push_back(kPassAction);
}

int Position::count_legal_actions() const {
  const Bitboard occ = occupied();
  if (in_placement()) return kNumSpaces - popcount(occ);
  const int side = side_to_move();
  Bitboard candidates = topped_by(side) & ~surrounded(occ);
  int n = 0;
  while (candidates) {
    const int cell = pop_lsb(candidates);
    const auto& targets = kLanding[cell];
    const int h = distance_index(height_[cell]);
    for (int d = 0; d < kNumDirections; ++d) {
      const int to = targets[d][h];
      n += to >= 0 && (occ & bit(to)) ? 1 : 0;
    }
  }
  if (n == 0 && mobile(1 - side)) n = 1;
  return n;
}

bool Position::is_legal(Action action) const {
  if (action < 0 || action >= kNumActions) return false;
  const Bitboard occ = occupied();
  if (in_placement()) return action < kMoveActionBase && !(occ & bit(kCellOfSpace[action]));
  if (action < kMoveActionBase) return false;
  const int side = side_to_move();
  if (action == kPassAction) return mobile(side) == 0 && mobile(1 - side) != 0;
  const int d = (action - kMoveActionBase) / kNumSpaces;
  const int cell = kCellOfSpace[(action - kMoveActionBase) % kNumSpaces];
  if (!(topped_by(side) & bit(cell))) return false;
  const Bitboard around = neighbours(bit(cell));
  if (popcount(around) == kNumDirections && (around & ~occ) == 0) return false;
  return landing(cell, d) >= 0;
}

void Position::apply(Action action) {
  assert(is_legal(action));
  const int side = side_to_move();
  if (in_placement()) {
    const int cell = kCellOfSpace[action];
    height_[cell] = 1;
    if (ply_ < kDvonnPieces) {
      red_ |= bit(cell);
      dvonn_ |= bit(cell);
    } else {
      (side == 0 ? white_ : black_) |= bit(cell);
    }
  } else {
    if (action != kPassAction) move_stack(action, side);
    // Remove every group that no DVONN piece reaches: flood fill from the DVONN stacks. After a
    // move, and after a pass too: in a set-up position a group may be cut off already.
    const Bitboard occ = occupied();
    Bitboard reached = dvonn_;
    while (true) {
      const Bitboard next = reached | (neighbours(reached) & occ);
      if (next == reached) break;
      reached = next;
    }
    Bitboard removed = occ & ~reached;
    white_ &= ~removed;
    black_ &= ~removed;
    while (removed) height_[pop_lsb(removed)] = 0;
  }
  ++ply_;
  assert(is_consistent());
}

void Position::move_stack(Action action, int side) {
  const int d = (action - kMoveActionBase) / kNumSpaces;
  const int from = kCellOfSpace[(action - kMoveActionBase) % kNumSpaces];
  const int to = kLanding[from][d][distance_index(height_[from])];
  const Bitboard from_bit = bit(from), to_bit = bit(to);
  height_[to] = static_cast<std::uint8_t>(height_[to] + height_[from]);
  height_[from] = 0;
  white_ &= ~(from_bit | to_bit);
  black_ &= ~(from_bit | to_bit);
  red_ &= ~to_bit;
  (side == 0 ? white_ : black_) |= to_bit;
  if (dvonn_ & from_bit) dvonn_ = (dvonn_ & ~from_bit) | to_bit;
}

bool Position::is_terminal() const {
  return !in_placement() && mobile(0) == 0 && mobile(1) == 0;
}

int Position::score(int player) const {
  Bitboard stacks = topped_by(player);
  int total = 0;
  while (stacks) total += height_[pop_lsb(stacks)];
  return total;
}

double Position::result(int player) const {
  const int own = score(player), other = score(1 - player);
  return own > other ? 1.0 : own < other ? -1.0 : 0.0;
}

// ---------------------------------------------------------------------------------------------
// Notation

std::string Position::token(int cell) const {
  const Bitboard b = bit(cell);
  if (!(occupied() & b)) return ".";
  std::string t(1, (white_ & b) ? 'W' : (black_ & b) ? 'B' : 'R');
  t += std::to_string(height_[cell]);
  if (dvonn_ & b) t += '*';
  return t;
}

std::string Position::to_string() const {
  std::string out;
  for (int r = 0; r < kRows; ++r) {
    if (r > 0) out += '/';
    for (int c = first_col(r); c <= last_col(r); ++c) {
      if (c > first_col(r)) out += ',';
      out += token(r * kCols + c);
    }
  }
  out += ' ';
  out += kSideLetter[side_to_move()];
  out += ' ';
  out += std::to_string(ply_);
  return out;
}

Position Position::parse(std::string_view text) {
  const auto fields = util::blank_fields(text);
  if (fields.size() != 3)
    position_error("expected three fields separated by blanks (board, side to move W or B, ply), "
                   "got " + std::to_string(fields.size()) + " in " + quoted(text));
  const auto rows = split(fields[0], '/');
  if (rows.size() != kRows)
    position_error("the board has " + std::to_string(rows.size()) +
                   " rows separated by '/', expected 5 (rows 1 to 5)");

  Position p;
  int total_height = 0;
  for (int r = 0; r < kRows; ++r) {
    const auto spaces = split(rows[r], ',');
    const int expected = last_col(r) - first_col(r) + 1;
    if (static_cast<int>(spaces.size()) != expected)
      position_error("row " + std::to_string(r + 1) + " has " + std::to_string(spaces.size()) +
                     " spaces separated by ',', expected " + std::to_string(expected) + " (" +
                     cell_name(r * kCols + first_col(r)) + ".." +
                     cell_name(r * kCols + last_col(r)) + ")");
    for (int i = 0; i < expected; ++i) {
      const int cell = r * kCols + first_col(r) + i;
      const std::string_view tok = spaces[i];
      const std::string where = "row " + std::to_string(r + 1) + ", space " +
                                std::to_string(i + 1) + " (" + cell_name(cell) + "): ";
      if (tok == ".") continue;
      if (tok.empty() || (tok[0] != 'W' && tok[0] != 'B' && tok[0] != 'R'))
        position_error(where + "bad token " + quoted(tok) +
                       ": expected '.' or W, B or R followed by a height and an optional '*'");
      std::size_t pos = 1;
      while (pos < tok.size() && is_digit(tok[pos])) ++pos;
      const std::string_view digits = tok.substr(1, pos - 1);
      if (digits.empty())
        position_error(where + "bad token " + quoted(tok) + ": a height must follow " +
                       std::string(1, tok[0]));
      int height = 0;
      if (digits.size() <= 2) height = std::atoi(std::string(digits).c_str());
      if (digits[0] == '0' || height < 1 || height > kMaxHeight)
        position_error(where + "bad height " + quoted(digits) + " in " + quoted(tok) +
                       ": heights run 1..49, without leading zeros");
      bool star = false;
      if (pos < tok.size() && tok[pos] == '*') {
        star = true;
        ++pos;
      }
      if (pos != tok.size())
        position_error(where + "bad token " + quoted(tok) + ": unexpected " +
                       quoted(tok.substr(pos, 1)) + " after the height" +
                       (star ? " and '*'" : ""));
      const Bitboard b = bit(cell);
      if (tok[0] == 'R') {
        if (height != 1)
          position_error(where + quoted(tok) +
                         ": R marks a lone DVONN piece, so its height must be 1 (a stack holding "
                         "DVONN pieces is written with its top colour and '*', like W3*)");
        p.red_ |= b;
        p.dvonn_ |= b;
      } else {
        if (star && height == 1)
          position_error(where + quoted(tok) + ": a single " +
                         (tok[0] == 'W' ? "white" : "black") +
                         " piece cannot hold a DVONN piece ('*' needs height 2 or more)");
        (tok[0] == 'W' ? p.white_ : p.black_) |= b;
        if (star) p.dvonn_ |= b;
      }
      p.height_[cell] = static_cast<std::uint8_t>(height);
      total_height += height;
    }
  }

  const std::string_view side_field = fields[1];
  if (side_field != "W" && side_field != "B")
    position_error("bad side to move " + quoted(side_field) + ": expected W or B");
  const int side = side_field == "W" ? 0 : 1;
  const std::string_view ply_field = fields[2];
  if (!std::all_of(ply_field.begin(), ply_field.end(), is_digit) || ply_field.size() > 5 ||
      (ply_field.size() > 1 && ply_field[0] == '0'))
    position_error("bad ply " + quoted(ply_field) +
                   ": expected a decimal number 0..99999 without leading zeros");
  p.ply_ = std::atoi(std::string(ply_field).c_str());

  if (side != p.side_to_move())
    position_error(std::string("at ply ") + std::to_string(p.ply_) + " " +
                   kSideName[p.side_to_move()] + " is to move, not " + kSideName[side] +
                   (p.in_placement() ? " (during placement White places at even plies)"
                                     : " (White moves first at ply 49, then every ply, passes "
                                       "included, alternates)"));

  const int stacks = popcount(p.occupied());
  const int dvonn_stacks = popcount(p.dvonn_);
  if (p.in_placement()) {
    if (total_height != stacks)
      position_error("during placement (ply " + std::to_string(p.ply_) +
                     " < 49) there are no stacks, every height must be 1");
    if (stacks != p.ply_)
      position_error("at ply " + std::to_string(p.ply_) + " of the placement phase exactly " +
                     std::to_string(p.ply_) + " pieces are on the board, found " +
                     std::to_string(stacks));
    const int reds = popcount(p.red_);
    if (reds != std::min(p.ply_, kDvonnPieces))
      position_error("after " + std::to_string(p.ply_) + " placements " +
                     std::to_string(std::min(p.ply_, kDvonnPieces)) +
                     " DVONN pieces are on the board (the first three placements), found " +
                     std::to_string(reds));
    const int own_placements = std::max(p.ply_ - kDvonnPieces, 0);
    const int blacks = (own_placements + 1) / 2, whites = own_placements / 2;
    if (popcount(p.white_) != whites || popcount(p.black_) != blacks)
      position_error("after " + std::to_string(p.ply_) + " placements White has placed " +
                     std::to_string(whites) + " and Black " + std::to_string(blacks) +
                     " of their own pieces (Black places first, at ply 3); found White " +
                     std::to_string(popcount(p.white_)) + ", Black " +
                     std::to_string(popcount(p.black_)));
  } else {
    if (total_height > kNumSpaces)
      position_error("the stacks hold " + std::to_string(total_height) +
                     " pieces in all; the game has only 49");
    if (dvonn_stacks > kDvonnPieces)
      position_error(std::to_string(dvonn_stacks) +
                     " stacks hold DVONN pieces; there are only 3 DVONN pieces");
    if (dvonn_stacks == 0)
      position_error("no stack holds a DVONN piece; after placement the DVONN pieces never leave "
                     "the board");
  }
  assert(p.is_consistent());
  return p;
}

std::string Position::action_to_string(Action action) const {
  if (action == kPassAction) return "PASS";
  if (action < 0 || action >= kNumActions) return "?" + std::to_string(action);
  if (action < kMoveActionBase) return cell_name(kCellOfSpace[action]);
  const int d = (action - kMoveActionBase) / kNumSpaces;
  const int from = kCellOfSpace[(action - kMoveActionBase) % kNumSpaces];
  // The notation names the landing space, so it needs the stack's height in this position.
  const int h = height_[from];
  const int r = row_of(from) + kDirRow[d] * h, c = col_of(from) + kDirCol[d] * h;
  if (h == 0 || !on_board(r, c)) return "?" + std::to_string(action);
  return cell_name(from) + cell_name(r * kCols + c);
}

const BoardLayout& board_layout() {
  static const BoardLayout layout = [] {
    BoardLayout l;
    l.shape = CellShape::kHexagon;
    const double row_step = std::sqrt(3.0) / 2;  // between the centres of neighbouring rows
    for (const int cell : kCellOfSpace) {
      const double x = col_of(cell) - 0.5 * row_of(cell) + 1;
      const double y = (kRows - 1 - row_of(cell)) * row_step;
      l.cells.push_back({cell_name(cell), x, y});
      l.labels.push_back({cell_name(cell), x, y});
    }
    return l;
  }();
  return layout;
}

std::vector<CellView> Position::board_view() const {
  std::vector<CellView> view(kNumSpaces);
  for (int space = 0; space < kNumSpaces; ++space) {
    const int cell = kCellOfSpace[space];
    const Bitboard b = bit(cell);
    if (!(occupied() & b)) continue;
    CellView& v = view[space];
    if (red_ & b) {
      v.pieces = {kNeutralPiece};
    } else {
      if (dvonn_ & b) v.pieces.push_back(kNeutralPiece);
      v.pieces.push_back(white_ & b ? 0 : 1);
    }
    v.label = std::to_string(height_[cell]);
  }
  return view;
}

std::vector<int> Position::action_cells(Action action) const {
  if (action == kPassAction) return {};
  if (action < kMoveActionBase) return {action};
  const int d = (action - kMoveActionBase) / kNumSpaces;
  const int space = (action - kMoveActionBase) % kNumSpaces;
  const int from = kCellOfSpace[space];
  const int h = height_[from];
  const int r = row_of(from) + kDirRow[d] * h, c = col_of(from) + kDirCol[d] * h;
  assert(h > 0 && on_board(r, c) && "action_cells of a move off the board");
  return {space, kSpaceOfCell[r * kCols + c]};
}

std::string Position::illegal_move_reason(int from, int to) const {
  const int side = side_to_move();
  const Bitboard b = bit(from);
  const std::string from_name = cell_name(from), to_name = cell_name(to);
  if (!(occupied() & b)) return "no stack on " + from_name;
  if (red_ & b) return from_name + " holds a lone DVONN piece, which never moves";
  if (!(topped_by(side) & b))
    return "the stack on " + from_name + " is topped by " + kSideName[1 - side];
  if (surrounded(occupied()) & b)
    return "the stack on " + from_name + " is surrounded on all six sides";
  if (from == to) return "a move must leave " + from_name;
  const int dc = col_of(to) - col_of(from), dr = row_of(to) - row_of(from);
  if (!(dc == 0 || dr == 0 || dc == dr))
    return from_name + " to " + to_name + " is not on one of the six axes";
  const int distance = std::max(std::abs(dc), std::abs(dr));
  const int h = height_[from];
  if (distance != h)
    return "a stack of height " + std::to_string(h) + " moves exactly " + std::to_string(h) +
           " space" + (h == 1 ? "" : "s") + "; " + from_name + " to " + to_name + " is " +
           std::to_string(distance);
  if (!(occupied() & bit(to))) return to_name + " is empty: a move must land on a piece";
  return "";
}

Action Position::parse_action(std::string_view move) const {
  std::string text;
  for (const char ch : util::trim_blanks(move))
    text += (ch >= 'a' && ch <= 'z') ? static_cast<char>(ch - 'a' + 'A') : ch;
  const bool is_pass = text == "PASS";
  if (!is_pass && text.size() != 2 && text.size() != 4)
    move_error(move, "expected a placement like D4, a move like A2A1, or PASS");
  int from = -1, to = -1;
  if (!is_pass) {
    from = parse_cell(std::string_view(text).substr(0, 2), move);
    if (text.size() == 4) to = parse_cell(std::string_view(text).substr(2, 2), move);
  }
  if (is_terminal()) move_error(move, "the game is over");
  const int side = side_to_move();
  if (in_placement()) {
    if (is_pass || to >= 0)
      move_error(move, "during placement only placements are legal (" +
                           std::string(kSideName[side]) + " places a " +
                           (ply_ < kDvonnPieces ? "DVONN" : side == 0 ? "white" : "black") +
                           " piece on an empty space, like D4)");
    if (occupied() & bit(from)) move_error(move, cell_name(from) + " is occupied");
    return placement_action(kSpaceOfCell[from]);
  }
  if (is_pass) {
    if (mobile(side)) move_error(move, std::string(kSideName[side]) +
                                           " has a legal move and may not pass");
    return kPassAction;
  }
  if (to < 0)
    move_error(move, "placement is over: move a stack, like A2A1, or PASS when no move exists");
  std::string reason = illegal_move_reason(from, to);
  if (!reason.empty()) {
    if (!mobile(side)) reason += " (" + std::string(kSideName[side]) + " has no legal move and must PASS)";
    move_error(move, reason);
  }
  const int dc = col_of(to) - col_of(from), dr = row_of(to) - row_of(from);
  const int distance = std::max(std::abs(dc), std::abs(dr));
  const int d = direction_of(dc / distance, dr / distance);
  assert(d >= 0 && kLanding[from][d][distance_index(height_[from])] == to);
  return move_action(kSpaceOfCell[from], d);
}

// ---------------------------------------------------------------------------------------------
// Hash, planes, symmetries, checks

std::uint64_t Position::hash() const {
  std::uint64_t h = 0;
  Bitboard stacks = occupied();
  while (stacks) {
    const int cell = pop_lsb(stacks);
    const Bitboard b = bit(cell);
    const int top = (white_ & b) ? kWhite : (black_ & b) ? kBlack : kRed;
    h ^= kStackKeys[stack_key_index(cell, top, height_[cell], (dvonn_ & b) != 0)];
  }
  if (side_to_move() == 1) h ^= kBlackToMoveKey;
  if (in_placement()) h ^= kPlacementKey;
  return h;
}

void Position::encode(float* planes) const {
  std::fill(planes, planes + kPlanes * kGridCells, 0.0f);
  auto plane = [planes](int p) { return planes + p * kGridCells; };
  const int side = side_to_move();
  const Bitboard occ = occupied();
  for (int g = 0; g < kGridCells; ++g) {
    const Bitboard b = bit(g);
    if (!(kValid & b)) continue;
    plane(0)[g] = 1.0f;
    if (!(occ & b)) {
      plane(1)[g] = 1.0f;
      continue;
    }
    if (red_ & b) plane(2)[g] = 1.0f;
    if (dvonn_ & b) plane(3)[g] = 1.0f;
    const int h = height_[g];
    const int base = (topped_by(side) & b) ? 4 : (topped_by(1 - side) & b) ? 10 : -1;
    if (base >= 0) {
      plane(base + std::min(h, 5) - 1)[g] = 1.0f;
      plane(base + 5)[g] = static_cast<float>(h) / 10.0f;
    }
  }
  if (in_placement()) {
    std::fill(plane(16), plane(17), 1.0f);
    if (ply_ < kDvonnPieces) std::fill(plane(17), plane(18), 1.0f);
  } else {
    for (int p = 0; p < 2; ++p) {
      Bitboard cells = mobile(p == 0 ? side : 1 - side);
      while (cells) plane(18 + p)[pop_lsb(cells)] = 1.0f;
    }
  }
}

Position Position::transformed(int symmetry) const {
  Position t;
  t.ply_ = ply_;
  Bitboard cells = occupied();
  while (cells) {
    const int g = pop_lsb(cells);
    const int image = kCellImage[symmetry][g];
    const Bitboard from = bit(g), to = bit(image);
    t.height_[image] = height_[g];
    if (white_ & from) t.white_ |= to;
    if (black_ & from) t.black_ |= to;
    if (red_ & from) t.red_ |= to;
    if (dvonn_ & from) t.dvonn_ |= to;
  }
  return t;
}

bool Position::is_consistent() const {
  const Bitboard occ = occupied();
  if ((occ | dvonn_) & ~kValid) return false;
  if ((white_ & black_) || (white_ & red_) || (black_ & red_)) return false;
  if ((dvonn_ & ~occ) || (red_ & ~dvonn_)) return false;
  if (ply_ < 0) return false;
  int total = 0;
  for (int g = 0; g < kGridCells; ++g) {
    const Bitboard b = bit(g);
    const int h = height_[g];
    if (((occ & b) != 0) != (h > 0)) return false;
    if ((red_ & b) && h != 1) return false;
    if ((dvonn_ & b) && !(red_ & b) && h < 2) return false;
    total += h;
  }
  if (total > kNumSpaces || popcount(dvonn_) > kDvonnPieces) return false;
  if (in_placement()) {
    const int own = std::max(ply_ - kDvonnPieces, 0);
    return total == ply_ && popcount(occ) == ply_ && popcount(red_) == std::min(ply_, kDvonnPieces) &&
           popcount(white_) == own / 2 && popcount(black_) == (own + 1) / 2;
  }
  return dvonn_ != 0;
}

std::string Position::pretty() const {
  const int side = side_to_move();
  std::string out = "DVONN, ply " + std::to_string(ply_) + ": ";
  if (in_placement()) {
    out += std::string(kSideName[side]) + " places a " +
           (ply_ < kDvonnPieces ? "DVONN" : side == 0 ? "white" : "black") + " piece (" +
           std::to_string(kNumSpaces - ply_) +
           (kNumSpaces - ply_ == 1 ? " placement left)" : " placements left)");
  } else if (is_terminal()) {
    const int w = score(0), b = score(1);
    out += "game over, " + std::string(w == b ? "draw" : w > b ? "White wins" : "Black wins");
  } else {
    out += std::string(kSideName[side]) + " to move" + (mobile(side) ? "" : " (must pass)");
  }
  out += "; score White " + std::to_string(score(0)) + ", Black " + std::to_string(score(1)) +
         "\n";
  // Hex layout: space (c, r) is drawn at half-step x = 2c - r + 2, 3 characters per half-step,
  // row 5 at the top; each row is labelled with its first and last space.
  for (int r = kRows - 1; r >= 0; --r) {
    const int c0 = first_col(r), c1 = last_col(r);
    std::string line(static_cast<std::size_t>((2 * c0 - r + 2) * 3), ' ');
    std::string label = cell_name(r * kCols + c0);
    line += label + std::string(4 - label.size(), ' ');
    for (int c = c0; c <= c1; ++c) {
      const std::string t = token(r * kCols + c);
      const std::size_t left = (5 - t.size()) / 2;
      line += std::string(left, ' ') + t + std::string(5 - t.size() - left, ' ');
      if (c < c1) line += ' ';
    }
    line += "  " + cell_name(r * kCols + c1);
    out += line + "\n";
  }
  out += "(W/B: top piece, then the height; '*': holds a DVONN piece; R1*: a lone DVONN piece)\n";
  return out;
}

}  // namespace oppidum::dvonn
