// Position notation of every game (Game::parse_state). Input: a game selector byte, then the text.
// After a successful parse: the notation must parse back to the same position; every legal action
// must print, parse back to itself, apply, and give a position whose notation round-trips; every
// symmetry must keep the number of legal actions and map legal actions to legal actions.
#include <memory>
#include <vector>

#include "common.h"
#include "games/registry.h"

using namespace oppidum;

namespace {

void check_round_trip(const Game& game, const GameState& s, const char* where) {
  const std::string text = s.to_string();
  std::unique_ptr<GameState> back;
  try {
    back = game.parse_state(text);
  } catch (const GameError& e) {
    fuzz::fail(std::string(where) + ": to_string \"" + text + "\" does not parse: " + e.what());
  }
  FUZZ_CHECK(back->to_string() == text,
             std::string(where) + ": \"" + text + "\" -> \"" + back->to_string() + "\"");
  FUZZ_CHECK(back->hash() == s.hash(),
             std::string(where) + ": hash differs after round trip of \"" + text + "\"");
  FUZZ_CHECK(back->current_player() == s.current_player(), where);
}

void exercise(const Game& game, const GameState& s) {
  std::vector<float> planes(static_cast<std::size_t>(game.input_shape().size()));
  s.encode(planes.data());
  (void)s.pretty();
  (void)s.board_view();
  (void)s.hash();
  if (s.is_terminal()) {
    (void)s.result(0);
    (void)s.score(0);
    (void)s.score(1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Game& game = fuzz::pick_game(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::unique_ptr<GameState> s;
  try {
    s = game.parse_state(text);
  } catch (const GameError&) {
    return 0;
  }
  exercise(game, *s);
  check_round_trip(game, *s, "parsed");

  ActionList legal;
  s->legal_actions(legal);
  FUZZ_CHECK(legal.empty() == s->is_terminal(), "legal_actions empty exactly when terminal");
  for (Action a : legal) {
    FUZZ_CHECK(a >= 0 && a < game.num_actions(), "action in range");
    FUZZ_CHECK(s->is_legal(a), "legal action is_legal");
    const std::string move = s->action_to_string(a);
    Action parsed = -1;
    try {
      parsed = s->parse_action(move);
    } catch (const GameError& e) {
      fuzz::fail("move \"" + move + "\" of \"" + s->to_string() + "\" does not parse: " + e.what());
    }
    FUZZ_CHECK(parsed == a,
               "move \"" + move + "\" parses to another action in \"" + s->to_string() + "\"");
    FUZZ_CHECK(game.looks_like_move(move), "looks_like_move(\"" + move + "\")");
    (void)s->action_cells(a);
    auto child = s->clone();
    child->apply(a);
    exercise(game, *child);
    check_round_trip(game, *child, "after a legal move");
  }
  for (int sym = 0; sym < game.num_symmetries(); ++sym) {
    auto t = s->transformed(sym);
    ActionList tl;
    t->legal_actions(tl);
    FUZZ_CHECK(tl.size() == legal.size(), "symmetry " + std::to_string(sym) +
                                              " changes the legal move count of \"" +
                                              s->to_string() + "\"");
    for (Action a : legal)
      FUZZ_CHECK(t->is_legal(game.transform_action(sym, a)),
                 "symmetry " + std::to_string(sym) +
                     " maps a legal action to an illegal one in \"" + s->to_string() + "\"");
    check_round_trip(game, *t, "transformed");
  }
  return 0;
}
