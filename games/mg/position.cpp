#include "games/mg/position.h"

#include <array>
#include <cassert>
#include <sstream>

#include "games/quote.h"
#include "games/zobrist.h"
#include "util/bits.h"
#include "util/text.h"

namespace oppidum::mg {
namespace {

constexpr Bitboard kColA = 0x0101010101010101ULL & kBoard;
constexpr Bitboard kColH = kColA << 7;
constexpr Bitboard kRow1 = 0xFFULL;
constexpr Bitboard kRow7 = kRow1 << (kCols * (kRows - 1));
constexpr Bitboard kHomeRow[2] = {kRow1, kRow7};

constexpr Bitboard bit(int sq) { return Bitboard{1} << sq; }

// Every stone moved one step in direction d; stones leaving the board vanish.
constexpr Bitboard shift(Bitboard b, int d) {
  if (kDirCol[d] == 1) b &= ~kColH;
  if (kDirCol[d] == -1) b &= ~kColA;
  const int delta = kDirRow[d] * kCols + kDirCol[d];
  return (delta > 0 ? b << delta : b >> -delta) & kBoard;
}

constexpr int opposite(int d) { return (d + 4) % kDirections; }

using util::pop_lsb;
using util::popcount;

// Square index step of each direction (row * 8 + col).
constexpr int kDelta[kDirections] = {8, 9, 1, -7, -8, -9, -1, 7};

// What apply needs of an action of each side, decoded once: the absolute square of the tower,
// the square step of the direction and the kind (one byte each).
struct Decoded {
  std::int8_t from;
  std::int8_t delta;
  std::uint8_t kind;
  std::uint8_t unused;  // four bytes: one aligned load (three made GCC go through the stack)
};
alignas(64) constexpr auto kDecoded = [] {
  std::array<std::array<Decoded, kNumActions>, 2> t{};
  for (int side = 0; side < 2; ++side)
    for (int a = 0; a < kNumActions; ++a) {
      const int plane = a / kSquares;
      int d = plane % kDirections;
      int from = a % kSquares;
      if (side == 1) {
        d = flip_direction(d);
        from = flip_square(from);
      }
      t[side][a] = {static_cast<std::int8_t>(from), static_cast<std::int8_t>(kDelta[d]),
                    static_cast<std::uint8_t>(plane / kDirections), 0};
    }
  return t;
}();

// Towers that can distribute in direction D (the next two squares free: empty or an own wall),
// and towers that can sacrifice against an enemy wall in direction D; `free` excludes towers and
// enemy walls. D is a template argument so that every shift folds to constants.
template <int D>
OPPIDUM_ALWAYS_INLINE Bitboard distributors_in(Bitboard towers, Bitboard free) {
  const Bitboard s1_ok = shift(free, opposite(D));  // squares whose D-neighbour is free
  return towers & s1_ok & shift(s1_ok, opposite(D));
}
template <int D>
OPPIDUM_ALWAYS_INLINE Bitboard sacrificers_in(Bitboard towers, Bitboard enemy_walls) {
  return towers & shift(enemy_walls, opposite(D));
}
template <int D>
OPPIDUM_ALWAYS_INLINE int count_in(Bitboard towers, Bitboard free, Bitboard enemy_walls) {
  return popcount(distributors_in<D>(towers, free)) + popcount(sacrificers_in<D>(towers, enemy_walls));
}

// The number of legal actions (broken_through aside), with the POPCNT instruction where the CPU
// has it (util/bits.h): bulk counting is several times faster.
OPPIDUM_POPCNT_CLONES int count_actions(Bitboard towers, Bitboard free, Bitboard ew) {
  return count_in<0>(towers, free, ew) + count_in<1>(towers, free, ew) +
         count_in<2>(towers, free, ew) + count_in<3>(towers, free, ew) +
         count_in<4>(towers, free, ew) + count_in<5>(towers, free, ew) +
         count_in<6>(towers, free, ew) + count_in<7>(towers, free, ew);
}

// Appends the actions of `movers` (absolute squares, ascending) of one kind and direction D, in
// the side to move's frame.
template <int D>
inline void push_actions(Bitboard movers, Kind kind, bool flip, ActionList& out) {
  if (flip) {
    const int base = (kind * kDirections + flip_direction(D)) * kSquares;
    while (movers) out.push_back(base + flip_square(pop_lsb(movers)));
  } else {
    const int base = (kind * kDirections + D) * kSquares;
    while (movers) out.push_back(base + pop_lsb(movers));
  }
}

// Square one step from sq in direction d, or -1 off the board.
int step(int sq, int d) {
  const int c = sq % kCols + kDirCol[d];
  const int r = sq / kCols + kDirRow[d];
  if (c < 0 || c >= kCols || r < 0 || r >= kRows) return -1;
  return r * kCols + c;
}

std::string square_name(int sq) {
  return {static_cast<char>('a' + sq % kCols), static_cast<char>('1' + sq / kCols)};
}

const char* kSideName[2] = {"Light", "Dark"};

// Zobrist tables: 4 stone kinds x 56 squares, then the side to move.
constexpr std::uint64_t kZobristTable = 0x4D47;  // "MG"
constexpr auto kPieceKeys = zobrist_keys<4 * kSquares>(kZobristTable);
std::uint64_t piece_key(int kind, int sq) { return kPieceKeys[kind * kSquares + sq]; }
constexpr std::uint64_t kSideKey = zobrist_key(kZobristTable, 4 * kSquares);

}  // namespace

Action transform_action(int symmetry, Action action) {
  if (symmetry == 0) return action;
  const int sq = action % kSquares;
  const int plane = action / kSquares;
  const int kind = plane / kDirections;
  const int d = plane % kDirections;
  return (kind * kDirections + mirror_direction(d)) * kSquares + mirror_square(sq);
}

int transform_cell(int symmetry, int row, int col) {
  return row * kCols + (symmetry == 0 ? col : kCols - 1 - col);
}

Position Position::initial() {
  Position p;
  p.towers_[0] = kRow1;
  p.towers_[1] = kRow7;
  return p;
}

int Position::stones(int player) const {
  return 2 * popcount(towers_[player]) + popcount(walls_[player]);
}

bool Position::broken_through() const {
  const int them = 1 - side_;
  return ((towers_[them] | walls_[them]) & kHomeRow[side_]) != 0;
}

Bitboard Position::distributors(int d) const {
  const int us = side_;
  const Bitboard free = kBoard & ~(towers_[0] | towers_[1] | walls_[1 - us]);
  const int back = opposite(d);
  const Bitboard s1_ok = shift(free, back);  // squares whose d-neighbour is free
  return towers_[us] & s1_ok & shift(s1_ok, back);
}

Bitboard Position::sacrificers(int d) const {
  return towers_[side_] & shift(walls_[1 - side_], opposite(d));
}

void Position::legal_actions(ActionList& out) const {
  out.clear();
  if (broken_through()) return;
  const bool flip = side_ == 1;
  const Bitboard towers = towers_[side_];
  const Bitboard free = kBoard & ~(towers_[0] | towers_[1] | walls_[1 - side_]);
  const Bitboard enemy_walls = walls_[1 - side_];
  // Kind, then direction, then square: the order of the action list is part of the behaviour
  // (seeded playouts and searches depend on it).
  push_actions<0>(distributors_in<0>(towers, free), kDistribute, flip, out);
  push_actions<1>(distributors_in<1>(towers, free), kDistribute, flip, out);
  push_actions<2>(distributors_in<2>(towers, free), kDistribute, flip, out);
  push_actions<3>(distributors_in<3>(towers, free), kDistribute, flip, out);
  push_actions<4>(distributors_in<4>(towers, free), kDistribute, flip, out);
  push_actions<5>(distributors_in<5>(towers, free), kDistribute, flip, out);
  push_actions<6>(distributors_in<6>(towers, free), kDistribute, flip, out);
  push_actions<7>(distributors_in<7>(towers, free), kDistribute, flip, out);
  if (!enemy_walls) return;
  push_actions<0>(sacrificers_in<0>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<1>(sacrificers_in<1>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<2>(sacrificers_in<2>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<3>(sacrificers_in<3>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<4>(sacrificers_in<4>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<5>(sacrificers_in<5>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<6>(sacrificers_in<6>(towers, enemy_walls), kSacrifice, flip, out);
  push_actions<7>(sacrificers_in<7>(towers, enemy_walls), kSacrifice, flip, out);
}

int Position::count_legal_actions() const {
  if (broken_through()) return 0;
  const Bitboard towers = towers_[side_];
  const Bitboard free = kBoard & ~(towers_[0] | towers_[1] | walls_[1 - side_]);
  return count_actions(towers, free, walls_[1 - side_]);
}

void Position::decode(Action action, Kind& kind, int& direction, int& from) const {
  const int plane = action / kSquares;
  kind = static_cast<Kind>(plane / kDirections);
  direction = plane % kDirections;
  from = action % kSquares;
  if (side_ == 1) {
    direction = flip_direction(direction);
    from = flip_square(from);
  }
}

bool Position::is_legal(Action action) const {
  if (action < 0 || action >= kNumActions || broken_through()) return false;
  Kind kind;
  int d, from;
  decode(action, kind, d, from);
  const Bitboard b = kind == kDistribute ? distributors(d) : sacrificers(d);
  return (b & bit(from)) != 0;
}

void Position::apply(Action action) {
  assert(is_legal(action));
  const Decoded m = kDecoded[side_][action];
  const int us = side_;
  const int them = 1 - us;
  towers_[us] &= ~bit(m.from);
  if (m.kind == kDistribute) {
    // Each of the two squares gets a stone: an own wall becomes a tower, an empty square a wall.
    for (const Bitboard b : {bit(m.from + m.delta), bit(m.from + 2 * m.delta)}) {
      towers_[us] |= walls_[us] & b;
      walls_[us] ^= b;
    }
  } else {
    walls_[us] |= bit(m.from);
    walls_[them] &= ~bit(m.from + m.delta);
  }
  side_ = them;
  ++ply_;
  assert(is_consistent());
}

bool Position::is_terminal() const { return count_legal_actions() == 0; }

double Position::result(int player) const {
  if (!is_terminal()) return 0.0;
  return player == side_ ? -1.0 : 1.0;
}

int Position::score(int player) const { return is_terminal() && player != side_ ? 1 : 0; }

std::string Position::to_string() const {
  std::string s;
  for (int r = kRows - 1; r >= 0; --r) {
    for (int c = 0; c < kCols; ++c) {
      const Bitboard b = bit(r * kCols + c);
      char ch = '.';
      if (towers_[0] & b) ch = 'T';
      else if (walls_[0] & b) ch = 'W';
      else if (towers_[1] & b) ch = 't';
      else if (walls_[1] & b) ch = 'w';
      s += ch;
    }
    if (r > 0) s += '/';
  }
  s += side_ == 0 ? " L" : " D";
  return s;
}

Position Position::parse(std::string_view text) {
  const std::string where = "Murus Gallicus position \"" + quote_input(text) + "\": ";
  const std::vector<std::string_view> fields = util::blank_fields(text);
  if (fields.size() != 2)
    throw GameError(where + "expected the board and the side to move (L or D), separated by a "
                            "blank; found " + std::to_string(fields.size()) + " field(s)");
  const std::string_view board = fields[0], side = fields[1];
  Position p;
  if (side == "L") p.side_ = 0;
  else if (side == "D") p.side_ = 1;
  else
    throw GameError(where + "the side to move must be L or D, not \"" + quote_input(side) + "\"");

  int row = kRows - 1;
  int col = 0;
  for (std::size_t i = 0; i < board.size(); ++i) {
    const char ch = board[i];
    if (ch == '/') {
      if (col != kCols)
        throw GameError(where + "row " + std::to_string(row + 1) + " has " + std::to_string(col) +
                        " squares; every row has exactly 8");
      if (--row < 0) throw GameError(where + "more than 7 rows");
      col = 0;
      continue;
    }
    if (col >= kCols)
      throw GameError(where + "row " + std::to_string(row + 1) + " has more than 8 squares");
    const Bitboard b = bit(row * kCols + col);
    switch (ch) {
      case '.': break;
      case 'T': p.towers_[0] |= b; break;
      case 'W': p.walls_[0] |= b; break;
      case 't': p.towers_[1] |= b; break;
      case 'w': p.walls_[1] |= b; break;
      default:
        throw GameError(where + "unknown character '" + quote_input(board.substr(i, 1)) +
                        "' at " + square_name(row * kCols + col) + " (character " +
                        std::to_string(i + 1) + "); use . T W t w");
    }
    ++col;
  }
  if (row != 0 || col != kCols)
    throw GameError(where + "expected 7 rows of 8 squares, the board ends at row " +
                    std::to_string(row + 1) + " after " + std::to_string(col) + " squares");
  for (int pl = 0; pl < 2; ++pl)
    if (p.stones(pl) > kStonesPerSide)
      throw GameError(where + kSideName[pl] + " has " + std::to_string(p.stones(pl)) +
                      " stones; each side has 16");
  const int us = p.side_;
  if ((p.towers_[us] | p.walls_[us]) & kHomeRow[1 - us])
    throw GameError(where + kSideName[us] + " already stands on " + kSideName[1 - us] +
                    "'s home row, so the game ended before " + kSideName[us] + " could move");
  // The ply is not part of the notation; count it from the side to move.
  p.ply_ = us;
  assert(p.is_consistent());
  return p;
}

std::string Position::action_to_string(Action action) const {
  Kind kind;
  int d, from;
  decode(action, kind, d, from);
  const int s1 = step(from, d);
  if (kind == kDistribute) {
    const int s2 = s1 < 0 ? -1 : step(s1, d);
    return square_name(from) + "-" + (s2 < 0 ? std::string("off") : square_name(s2));
  }
  return square_name(from) + "x" + (s1 < 0 ? std::string("off") : square_name(s1));
}

std::string Position::illegal_reason(Kind kind, int from, int d, int target) const {
  const int us = side_;
  const int them = 1 - us;
  const Bitboard b_from = bit(from);
  if (broken_through())
    return std::string("the game is over: ") + kSideName[them] + " has reached " + kSideName[us] +
           "'s home row";
  if (count_legal_actions() == 0)
    return std::string("the game is over: ") + kSideName[us] + " has no legal action";
  if (!(towers_[us] & b_from)) {
    std::string what = (walls_[us] & b_from) ? "a wall, which cannot move"
                       : ((towers_[them] | walls_[them]) & b_from) ? "an enemy stone"
                                                                   : "empty";
    return square_name(from) + " holds no " + kSideName[us] + " tower (it is " + what + ")";
  }
  if (kind == kDistribute) {
    const int s1 = step(from, d);
    for (int s : {s1, target}) {
      const Bitboard b = bit(s);
      if (towers_[them] & b || walls_[them] & b)
        return "the distribution is blocked: " + square_name(s) + " holds an enemy stone";
      if (towers_[us] & b)
        return "the distribution is blocked: " + square_name(s) + " holds a tower";
    }
    return "";
  }
  const Bitboard t = bit(target);
  if (walls_[them] & t) return "";
  if (towers_[them] & t)
    return "a sacrifice can only remove a wall; " + square_name(target) + " holds an enemy tower";
  return "a sacrifice needs an enemy wall to remove; " + square_name(target) + " holds none";
}

Action Position::parse_action(std::string_view move) const {
  const std::string where = "move \"" + quote_input(move) + "\": ";
  move = util::trim_blanks(move);
  auto parse_square = [&](std::size_t at) {
    if (at + 2 > move.size()) throw GameError(where + "expected a square at character " + std::to_string(at + 1));
    const char c = static_cast<char>(move[at] | 0x20);  // accept upper case
    const char r = move[at + 1];
    if (c < 'a' || c > 'h')
      throw GameError(where + "'" + quote_input(move.substr(at, 1)) + "' at character " +
                      std::to_string(at + 1) + " is not a column (a..h)");
    if (r < '1' || r > '7')
      throw GameError(where + "'" + quote_input(move.substr(at + 1, 1)) + "' at character " +
                      std::to_string(at + 2) + " is not a row (1..7)");
    return (r - '1') * kCols + (c - 'a');
  };
  if (move.size() != 5 || (move[2] != '-' && move[2] != 'x' && move[2] != 'X'))
    throw GameError(where + "expected a distribution like c1-c3 or a sacrifice like d5xe6");
  const int from = parse_square(0);
  const int to = parse_square(3);
  const Kind kind = move[2] == '-' ? kDistribute : kSacrifice;
  const int dc = to % kCols - from % kCols;
  const int dr = to / kCols - from / kCols;
  const int dist = kind == kDistribute ? 2 : 1;
  int d = -1;
  for (int i = 0; i < kDirections; ++i)
    if (kDirCol[i] * dist == dc && kDirRow[i] * dist == dr) d = i;
  if (d < 0)
    throw GameError(where + (kind == kDistribute
                                 ? "a distribution ends two squares away on a straight line"
                                 : "a sacrifice targets an adjacent square"));
  if (const std::string why = illegal_reason(kind, from, d, to); !why.empty())
    throw GameError(where + "illegal: " + why);
  const int frame_d = side_ == 1 ? flip_direction(d) : d;
  const int frame_sq = side_ == 1 ? flip_square(from) : from;
  const Action a = make_action(kind, frame_d, frame_sq);
  assert(is_legal(a));
  return a;
}

std::uint64_t Position::hash() const {
  std::uint64_t h = side_ ? kSideKey : 0;
  const Bitboard sets[4] = {towers_[0], walls_[0], towers_[1], walls_[1]};
  for (int k = 0; k < 4; ++k)
    for (Bitboard b = sets[k]; b;) h ^= piece_key(k, pop_lsb(b));
  return h;
}

void Position::encode(float* planes) const {
  const int us = side_;
  const Bitboard sets[4] = {towers_[us], walls_[us], towers_[1 - us], walls_[1 - us]};
  for (int k = 0; k < 4; ++k) {
    float* plane = planes + k * kSquares;
    for (int sq = 0; sq < kSquares; ++sq) {
      const int abs_sq = us == 1 ? flip_square(sq) : sq;
      plane[sq] = (sets[k] >> abs_sq) & 1 ? 1.0f : 0.0f;
    }
  }
  float* ones = planes + 4 * kSquares;
  for (int sq = 0; sq < kSquares; ++sq) ones[sq] = 1.0f;
}

Position Position::transformed(int symmetry) const {
  if (symmetry == 0) return *this;
  Position p = *this;
  for (int pl = 0; pl < 2; ++pl) {
    p.towers_[pl] = p.walls_[pl] = 0;
    for (Bitboard b = towers_[pl]; b;) p.towers_[pl] |= bit(mirror_square(pop_lsb(b)));
    for (Bitboard b = walls_[pl]; b;) p.walls_[pl] |= bit(mirror_square(pop_lsb(b)));
  }
  return p;
}

std::string Position::pretty() const {
  std::ostringstream out;
  out << "    a b c d e f g h\n";
  for (int r = kRows - 1; r >= 0; --r) {
    out << "  " << r + 1 << ' ';
    for (int c = 0; c < kCols; ++c) {
      const Bitboard b = bit(r * kCols + c);
      char ch = '.';
      if (towers_[0] & b) ch = 'T';
      else if (walls_[0] & b) ch = 'W';
      else if (towers_[1] & b) ch = 't';
      else if (walls_[1] & b) ch = 'w';
      out << ch << ' ';
    }
    out << r + 1;
    if (r == kRows - 1) out << "   Dark (t tower, w wall): " << stones(1) << " stones";
    if (r == 0) out << "   Light (T tower, W wall): " << stones(0) << " stones";
    out << '\n';
  }
  out << "    a b c d e f g h\n";
  const int them = 1 - side_;
  if (broken_through())
    out << "  game over, ply " << ply_ << ": " << kSideName[them] << " wins (reached "
        << kSideName[side_] << "'s home row)\n";
  else if (count_legal_actions() == 0)
    out << "  game over, ply " << ply_ << ": " << kSideName[them] << " wins (" << kSideName[side_]
        << " has no legal action)\n";
  else
    out << "  " << kSideName[side_] << " to move, ply " << ply_ << '\n';
  return out.str();
}

const BoardLayout& board_layout() {
  static const BoardLayout layout = square_board_layout(kRows, kCols, square_name);
  return layout;
}

std::vector<CellView> Position::board_view() const {
  std::vector<CellView> view(kSquares);
  for (int player = 0; player < 2; ++player) {
    for (Bitboard b = towers_[player]; b;) view[pop_lsb(b)].pieces = {player, player};
    for (Bitboard b = walls_[player]; b;) view[pop_lsb(b)].pieces = {player};
  }
  return view;
}

std::vector<int> Position::action_cells(Action action) const {
  Kind kind;
  int d, from;
  decode(action, kind, d, from);
  const int s1 = step(from, d);
  const int to = kind == kDistribute && s1 >= 0 ? step(s1, d) : s1;
  assert(to >= 0 && "action_cells of an action that leaves the board");
  return {from, to};
}

bool Position::is_consistent() const {
  const Bitboard all[4] = {towers_[0], walls_[0], towers_[1], walls_[1]};
  for (int i = 0; i < 4; ++i) {
    if (all[i] & ~kBoard) return false;
    for (int j = i + 1; j < 4; ++j)
      if (all[i] & all[j]) return false;
  }
  return stones(0) <= kStonesPerSide && stones(1) <= kStonesPerSide && (side_ == 0 || side_ == 1) &&
         ply_ >= 0;
}

}  // namespace oppidum::mg
