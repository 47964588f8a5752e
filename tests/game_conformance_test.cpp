// One conformance suite run against every game through the game contract: random playouts checking
// the contract's invariants, notation and action round-trips, and symmetry consistency of legal
// actions and of the input encoding.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "games/game.h"
#include "games/quote.h"

namespace oppidum {
namespace {

std::set<Action> legal_set(const GameState& s) {
  ActionList actions;
  s.legal_actions(actions);
  return {actions.begin(), actions.end()};
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  const Game& game() const { return game_by_name(GetParam()); }

  // Visits every position of `games` seeded random games (capped at the game's length bound; the
  // position reached at the bound is visited too: tic-tac-toe's bound is its longest game).
  template <class F>
  void for_random_positions(int games, F&& visit) const {
    std::mt19937_64 rng(12345);
    for (int g = 0; g < games; ++g) {
      auto state = game().initial_state();
      ActionList actions;
      for (int ply = 0; ply <= game().max_game_length(); ++ply) {
        visit(*state);
        state->legal_actions(actions);
        if (actions.empty() || ply == game().max_game_length()) break;
        state->apply(actions[std::uniform_int_distribution<int>(0, actions.size() - 1)(rng)]);
      }
    }
  }
};

TEST_P(ConformanceTest, PlayoutsKeepTheContract) {
  int terminal_games = 0;
  for_random_positions(200, [&](const GameState& s) {
    ActionList actions;
    s.legal_actions(actions);
    ASSERT_EQ(actions.empty(), s.is_terminal()) << s.to_string();
    std::set<Action> seen;
    for (Action a : actions) {
      ASSERT_GE(a, 0);
      ASSERT_LT(a, game().num_actions());
      ASSERT_TRUE(s.is_legal(a)) << s.to_string() << " action " << a;
      ASSERT_TRUE(seen.insert(a).second) << "duplicate action " << a;
      auto next = s.clone();
      next->apply(a);
      ASSERT_EQ(next->ply(), s.ply() + 1);
    }
    if (s.is_terminal()) {
      ++terminal_games;
      const double r0 = s.result(0), r1 = s.result(1);
      ASSERT_EQ(r0, -r1);
      ASSERT_TRUE(r0 == 1.0 || r0 == 0.0 || r0 == -1.0);
      ASSERT_EQ(r0 > 0, s.score(0) > s.score(1)) << s.to_string();
      ASSERT_FALSE(s.is_legal(0));
    }
  });
  EXPECT_GT(terminal_games, 150) << "most random games should end within the length bound";
}

TEST_P(ConformanceTest, IllegalActionsAreRefused) {
  for_random_positions(20, [&](const GameState& s) {
    const auto legal = legal_set(s);
    for (Action a = -1; a <= game().num_actions(); ++a) {
      if (legal.count(a)) continue;
      ASSERT_FALSE(s.is_legal(a)) << s.to_string() << " action " << a;
    }
    if (!legal.empty()) {
      Action illegal = 0;
      while (legal.count(illegal)) ++illegal;
      auto copy = s.clone();
      EXPECT_THROW(copy->apply(illegal), std::logic_error);
      EXPECT_EQ(copy->to_string(), s.to_string()) << "a refused action must not change the state";
    }
  });
}

TEST_P(ConformanceTest, NotationRoundTrips) {
  for_random_positions(100, [&](const GameState& s) {
    const std::string text = s.to_string();
    const auto parsed = game().parse_state(text);
    ASSERT_EQ(parsed->to_string(), text);
    ASSERT_EQ(parsed->hash(), s.hash()) << text;
    ASSERT_EQ(parsed->current_player(), s.current_player());
    ASSERT_EQ(legal_set(*parsed), legal_set(s)) << text;
    ActionList actions;
    s.legal_actions(actions);
    std::set<std::string> names;
    for (Action a : actions) {
      const std::string move = s.action_to_string(a);
      ASSERT_EQ(s.parse_action(move), a) << text << " move " << move;
      ASSERT_TRUE(names.insert(move).second) << "two actions print as " << move;
    }
  });
}

// One whitespace rule for every game (docs/RULES.md): blanks (spaces, tabs, line ends) separate a
// position's fields, any number of them, and blanks at the ends of a position or a move are
// ignored; a field more or less is refused.
TEST_P(ConformanceTest, BlanksSeparateFieldsTheSameWayInEveryGame) {
  for_random_positions(20, [&](const GameState& s) {
    const std::string text = s.to_string();
    std::string spread = " \t";
    for (const char ch : text) spread += ch == ' ' ? std::string(" \t  ") : std::string(1, ch);
    spread += "\r\n";
    ASSERT_EQ(game().parse_state(spread)->to_string(), text) << spread;
    EXPECT_THROW(game().parse_state(text + " extra"), GameError) << text;
    EXPECT_THROW(game().parse_state(text.substr(0, text.rfind(' '))), GameError) << text;
    ActionList actions;
    s.legal_actions(actions);
    for (Action a : actions)
      ASSERT_EQ(s.parse_action("\t " + s.action_to_string(a) + " \r\n"), a) << text;
  });
}

TEST_P(ConformanceTest, HashFollowsThePosition) {
  std::set<std::string> texts;
  std::set<std::uint64_t> hashes;
  for_random_positions(50, [&](const GameState& s) {
    const std::string text = s.to_string();
    // The ply is not part of Murus Gallicus notation; strip DVONN's ply field to compare boards.
    texts.insert(text.substr(0, text.find(' ', text.find(' ') + 1)));
    hashes.insert(s.hash());
  });
  EXPECT_EQ(hashes.size(), texts.size()) << "distinct positions should have distinct hashes";
}

TEST_P(ConformanceTest, EncodingHasTheDeclaredShape) {
  const PlaneShape shape = game().input_shape();
  std::vector<float> planes(shape.size() + 1, -7.0f);
  for_random_positions(20, [&](const GameState& s) {
    std::fill(planes.begin(), planes.end(), -7.0f);
    s.encode(planes.data());
    for (int i = 0; i < shape.size(); ++i) ASSERT_TRUE(std::isfinite(planes[i]) && planes[i] != -7.0f);
    ASSERT_EQ(planes.back(), -7.0f) << "encode wrote past its shape";
  });
}

TEST_P(ConformanceTest, SymmetriesTransformActionsAndPlanes) {
  const PlaneShape shape = game().input_shape();
  std::vector<float> original(shape.size()), transformed(shape.size()), expected(shape.size());
  ASSERT_GE(game().num_symmetries(), 2);
  // The symmetries form a group: each has an inverse among them (its own for Murus Gallicus and
  // DVONN; tic-tac-toe's quarter turns undo each other), found from the action maps.
  std::vector<int> inverse(game().num_symmetries(), -1);
  for (int sym = 0; sym < game().num_symmetries(); ++sym) {
    for (int inv = 0; inv < game().num_symmetries() && inverse[sym] < 0; ++inv) {
      bool undoes = true;
      for (Action a = 0; a < game().num_actions() && undoes; ++a)
        undoes = game().transform_action(inv, game().transform_action(sym, a)) == a;
      if (undoes) inverse[sym] = inv;
    }
    ASSERT_GE(inverse[sym], 0) << "symmetry " << sym << " has no inverse";
  }
  for_random_positions(40, [&](const GameState& s) {
    s.encode(original.data());
    for (int sym = 0; sym < game().num_symmetries(); ++sym) {
      const auto t = s.transformed(sym);
      std::set<Action> mapped;
      for (Action a : legal_set(s)) mapped.insert(game().transform_action(sym, a));
      ASSERT_EQ(legal_set(*t), mapped) << s.to_string() << " symmetry " << sym;
      ASSERT_EQ(t->is_terminal(), s.is_terminal());
      ASSERT_EQ(t->current_player(), s.current_player());
      t->encode(transformed.data());
      const int cells = shape.height * shape.width;
      for (int p = 0; p < shape.planes; ++p)
        for (int r = 0; r < shape.height; ++r)
          for (int c = 0; c < shape.width; ++c)
            expected[p * cells + game().transform_cell(sym, r, c)] =
                original[p * cells + r * shape.width + c];
      ASSERT_EQ(transformed, expected) << s.to_string() << " symmetry " << sym;
      ASSERT_EQ(t->transformed(inverse[sym])->to_string(), s.to_string());
    }
  });
}

TEST_P(ConformanceTest, BadPositionStringsAreErrorsNotCrashes) {
  const std::string start = game().initial_state()->to_string();
  std::mt19937_64 rng(99);
  const std::string alphabet = "./,* 0123456789WBRTtwLDx-";
  for (int i = 0; i < 3000; ++i) {
    std::string text = start;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(at, 1); break;
        default: text.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    try {
      const auto s = game().parse_state(text);
      ActionList actions;
      s->legal_actions(actions);  // an accepted position must be usable
      EXPECT_EQ(game().parse_state(s->to_string())->to_string(), s->to_string());
    } catch (const GameError& e) {
      EXPECT_GT(std::string(e.what()).size(), 10u);
    }
  }
  EXPECT_THROW(game().parse_state(""), GameError);
  EXPECT_THROW(game().parse_state("garbage"), GameError);
}

TEST_P(ConformanceTest, BadMoveStringsAreErrorsNotCrashes) {
  const auto s = game().initial_state();
  for (const char* move : {"", " ", "x", "a0-a2", "z9z9", "PASSS", "A1A1A1", "\xff\xfe", "-", "99"}) {
    EXPECT_THROW(s->parse_action(move), GameError) << move;
  }
}

// Error messages quote at most about 100 bytes of the bad input, however large it is: a 1 MB
// position or move gives a message of one short line (not 1 MB of standard error).
TEST_P(ConformanceTest, HugeBadInputIsQuotedShort) {
  const std::size_t n = 1 << 20;
  const std::string start = game().initial_state()->to_string();
  const std::vector<std::string> positions = {
      std::string(n, 'x'),                                   // no fields at all
      std::string(n, 'Z') + start,                           // a huge bad token on the board
      start + " " + std::string(n, 'Q'),                     // a huge extra field
      start.substr(0, start.find(' ')) + " " + std::string(n, '\x01'),  // a huge side to move
      std::string(n / 2, '.') + "\n\t\x7f" + std::string(n / 2, '/'),
  };
  for (const std::string& text : positions) {
    try {
      game().parse_state(text);
      ADD_FAILURE() << "accepted a bad position of " << text.size() << " bytes";
    } catch (const GameError& e) {
      const std::string message = e.what();
      EXPECT_LT(message.size(), 400u) << message.substr(0, 1000);
      EXPECT_TRUE(std::all_of(message.begin(), message.end(),
                              [](char ch) { return ch >= 32 && ch < 127; }))
          << "the message is printable: " << message.substr(0, 1000);
    }
  }
  const auto s = game().initial_state();
  for (const std::string& move : {std::string(n, 'a'), "A1" + std::string(n, '-'),
                                  std::string(n, '\xff'), "c1-c3 " + std::string(n, 'x')}) {
    try {
      s->parse_action(move);
      ADD_FAILURE() << "accepted a bad move of " << move.size() << " bytes";
    } catch (const GameError& e) {
      const std::string message = e.what();
      EXPECT_LT(message.size(), 400u) << message.substr(0, 1000);
      EXPECT_NE(message.find("(" + std::to_string(move.size()) + " bytes)"), std::string::npos)
          << "the message gives the size of what it cut: " << message;
    }
  }
  try {
    game_by_name(std::string(n, 'g'));
    ADD_FAILURE() << "accepted a game name of 1 MB";
  } catch (const GameError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u);
  }
}

TEST(QuoteInput, KeepsShortPrintableTextAndCutsTheRest) {
  EXPECT_EQ(quote_input("c1-c3"), "c1-c3");
  EXPECT_EQ(quote_input(""), "");
  EXPECT_EQ(quote_input(std::string(100, 'a')), std::string(100, 'a'));
  EXPECT_EQ(quote_input(std::string(101, 'a')), std::string(100, 'a') + "... (101 bytes)");
  EXPECT_EQ(quote_input(std::string(104857600, 'a')),
            std::string(100, 'a') + "... (104857600 bytes)");
  EXPECT_EQ(quote_input("abcdef", 3), "abc... (6 bytes)");
  EXPECT_EQ(quote_input("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(quote_input(std::string("\x00\x1f\x7f\xc3\xa9", 5)), "\\x00\\x1f\\x7f\\xc3\\xa9");
  // An escape is never cut in half: "\x01" does not fit in the last 2 bytes.
  EXPECT_EQ(quote_input(std::string(98, 'a') + "\x01"), std::string(98, 'a') + "... (99 bytes)");
}

// What main prints of an error: UTF-8 text and its lines as they are, nothing a terminal would
// take for a command (C0 and C1 controls, C1's in UTF-8 too) and no byte that is not UTF-8.
TEST(PrintableText, KeepsTextAndLinesAndEscapesControls) {
  EXPECT_EQ(printable_text("g\xc3\xa9n\xc3\xa9ral \xe2\x82\xac \xf0\x9f\x98\x80"),
            "g\xc3\xa9n\xc3\xa9ral \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable_text("two\nlines\tand a tab"), "two\nlines\tand a tab");
  EXPECT_EQ(printable_text("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(printable_text("\r\x7f"), "\\x0d\\x7f");
  EXPECT_EQ(printable_text("\xc2\x9b" "2J"), "\\xc2\\x9b2J") << "U+009B, CSI";
  EXPECT_EQ(printable_text("\x9b" "2J"), "\\x9b2J") << "a lone continuation byte";
  EXPECT_EQ(printable_text("\xc0\x80"), "\\xc0\\x80") << "an overlong NUL";
  EXPECT_EQ(printable_text("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a surrogate";
  EXPECT_EQ(printable_text("\xe2\x82"), "\\xe2\\x82") << "cut short";
  EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable_text(printable_text("\x1b")), "\\x1b") << "once is enough";
  // Cut short: never inside a letter or an escape, and the whole's size said.
  EXPECT_EQ(printable_text("abc\xc3\xa9", 4), "abc... (5 bytes)");
  EXPECT_EQ(printable_text("ab\x1b", 4), "ab... (3 bytes)");
  EXPECT_EQ(printable_text("a\nb", 3), "a\nb") << "it fits";
  EXPECT_EQ(printable_text(std::string(400, 'a'), 300), std::string(300, 'a') + "... (400 bytes)");
}

// Text that shows other than it holds: a bidirectional control reorders what follows it (a
// player named "\u202e..." printed its rating row backwards), a line separator breaks a line to
// some readers. They are escaped; the letters of right-to-left scripts are not.
TEST(PrintableText, EscapesBidirectionalControlsAndSeparators) {
  EXPECT_EQ(printable_text("a\xe2\x80\xae" "b"), "a\\xe2\\x80\\xaeb") << "U+202E, RLO";
  EXPECT_EQ(printable_text("\xe2\x81\xa6x\xe2\x81\xa9"), "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9")
      << "U+2066 LRI and U+2069 PDI";
  EXPECT_EQ(printable_text("\xe2\x80\x8f"), "\\xe2\\x80\\x8f") << "U+200F, RLM";
  EXPECT_EQ(printable_text("\xd8\x9c"), "\\xd8\\x9c") << "U+061C, ALM";
  EXPECT_EQ(printable_text("\xe2\x80\xa8"), "\\xe2\\x80\\xa8") << "U+2028";
  EXPECT_EQ(printable_text("\xe2\x80\xaf"), "\xe2\x80\xaf") << "U+202F, a narrow space";
  EXPECT_EQ(printable_text("\xe2\x80\x8d"), "\xe2\x80\x8d") << "U+200D, ZWJ (emoji)";
  EXPECT_EQ(printable_text("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xd8\xb3\xd9\x84\xd8\xa7\xd9\x85"),
            "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xd8\xb3\xd9\x84\xd8\xa7\xd9\x85")
      << "Hebrew and Arabic letters";
}

// A message of one line (CLI11's) keeps to one line: no argument starts a line of its own.
TEST(PrintableText, OneLineEscapesLineBreaks) {
  EXPECT_EQ(printable_line("1\nerror: forged\tx", 300), "1\\x0aerror: forged\\x09x");
  EXPECT_EQ(printable_line("g\xc3\xa9n\x1b", 300), "g\xc3\xa9n\\x1b");
  EXPECT_EQ(printable_line("ab\ncd", 4), "ab... (5 bytes)");
}

// The facts the rest of the program reads from a game: names, sides, openings, the move shape the
// referee checks (every legal move has it; garbage has not), and the registry's lookups.
TEST_P(ConformanceTest, GameFactsAreComplete) {
  const Game& g = game();
  EXPECT_EQ(&game_by_name(g.name()), &g);
  EXPECT_FALSE(g.display_name().empty());
  EXPECT_FALSE(g.side_name(0).empty());
  EXPECT_FALSE(g.side_name(1).empty());
  EXPECT_NE(g.side_name(0), g.side_name(1));
  EXPECT_GE(g.default_opening_plies(), 0);
  EXPECT_LE(g.default_opening_plies(), 20);
  int checked = 0;
  for_random_positions(20, [&](const GameState& s) {
    ActionList actions;
    s.legal_actions(actions);
    for (int i = 0; i < actions.size(); ++i) {
      const std::string move = s.action_to_string(actions[i]);
      ++checked;
      EXPECT_TRUE(g.looks_like_move(move)) << move;
      std::string upper = move;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      EXPECT_TRUE(g.looks_like_move(upper)) << upper;
    }
  });
  EXPECT_GT(checked, 100);
  for (const char* garbage : {"", " ", "hello", "0", "--", "a1-", "zz99", "\x01"})
    EXPECT_FALSE(g.looks_like_move(garbage)) << "'" << garbage << "'";
  EXPECT_NE(game_names().find(g.name()), std::string::npos);
}

// The board the web page draws: a layout whose cells do not overlap, a view with one entry per cell,
// and moves that clicks tell apart: every move's cells are cells, no two legal moves have the same
// clicks, and none's clicks are the start of another's (so at most one move, a pass, has none).
TEST_P(ConformanceTest, BoardDescriptionDrawsEveryPositionAndTellsMovesApart) {
  const BoardLayout& layout = game().board_layout();
  const int cells = static_cast<int>(layout.cells.size());
  ASSERT_GT(cells, 0);
  std::set<std::string> names;
  for (int i = 0; i < cells; ++i) {
    const BoardCell& c = layout.cells[static_cast<std::size_t>(i)];
    EXPECT_FALSE(c.name.empty()) << "cell " << i;
    EXPECT_TRUE(names.insert(c.name).second) << "two cells are named " << c.name;
    EXPECT_TRUE(std::isfinite(c.x) && std::isfinite(c.y)) << c.name;
    for (int j = 0; j < i; ++j) {
      const BoardCell& d = layout.cells[static_cast<std::size_t>(j)];
      EXPECT_GE(std::hypot(c.x - d.x, c.y - d.y), 0.99) << c.name << " overlaps " << d.name;
    }
  }
  for (const BoardLabel& l : layout.labels) {
    EXPECT_FALSE(l.text.empty());
    EXPECT_TRUE(std::isfinite(l.x) && std::isfinite(l.y)) << l.text;
  }
  EXPECT_EQ(&layout, &game().board_layout()) << "one layout per game, made once";

  int moves = 0, occupied = 0;
  for_random_positions(100, [&](const GameState& s) {
    const std::vector<CellView> view = s.board_view();
    ASSERT_EQ(static_cast<int>(view.size()), cells) << s.to_string();
    for (const CellView& v : view) {
      occupied += !v.pieces.empty();
      for (const int owner : v.pieces)
        ASSERT_TRUE(owner == 0 || owner == 1 || owner == kNeutralPiece) << s.to_string();
      ASSERT_LE(v.label.size(), 4u) << "a label is short: " << v.label;
      ASSERT_TRUE(v.label.empty() || !v.pieces.empty()) << "a label on an empty cell";
    }
    const std::vector<CellView> reparsed = game().parse_state(s.to_string())->board_view();
    for (int i = 0; i < cells; ++i) {
      ASSERT_EQ(reparsed[static_cast<std::size_t>(i)].pieces,
                view[static_cast<std::size_t>(i)].pieces) << s.to_string();
      ASSERT_EQ(reparsed[static_cast<std::size_t>(i)].label,
                view[static_cast<std::size_t>(i)].label) << s.to_string();
    }

    ActionList actions;
    s.legal_actions(actions);
    std::set<std::vector<int>> clicks;
    for (const Action a : actions) {
      const std::vector<int> c = s.action_cells(a);
      for (const int cell : c) ASSERT_TRUE(cell >= 0 && cell < cells) << s.to_string() << " " << a;
      ASSERT_TRUE(clicks.insert(c).second)
          << s.to_string() << ": two moves are clicked the same, one is " << s.action_to_string(a);
      ++moves;
    }
    // A sequence and the next one in order share their start; a proper prefix sorts just before
    // a sequence it starts, so checking neighbours finds every prefix.
    for (auto it = clicks.begin(); it != clicks.end() && std::next(it) != clicks.end(); ++it) {
      const std::vector<int>& a = *it;
      const std::vector<int>& b = *std::next(it);
      ASSERT_FALSE(a.size() < b.size() && std::equal(a.begin(), a.end(), b.begin()))
          << s.to_string() << ": the clicks of one move start another's";
    }
  });
  EXPECT_GT(moves, 1000);
  EXPECT_GT(occupied, 0) << "the views show no piece at all";
  EXPECT_THROW(game().initial_state()->action_cells(game().num_actions()), std::logic_error);
}

std::vector<std::string> registered_game_names() {
  std::vector<std::string> names;
  for (const Game* g : all_games()) names.push_back(g->name());
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllGames, ConformanceTest, ::testing::ValuesIn(registered_game_names()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace oppidum

#ifndef NDEBUG
// Debug builds (the tests' sanitizer build) catch an overflowing or misindexed action list.
TEST(ActionListDeathTest, PushBeyondCapacityAndBadIndexAreCaught) {
  EXPECT_DEATH(
      {
        oppidum::ActionList list;
        for (int i = 0; i <= oppidum::kMaxLegalActions; ++i) list.push_back(i);
      },
      "ActionList full");
  EXPECT_DEATH(
      {
        oppidum::ActionList list;
        list.push_back(3);
        (void)list[1];
      },
      "index out of range");
}
#endif
