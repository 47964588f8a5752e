// Move notation of every game (GameState::parse_action) against the initial position and a few
// positions reached by legal moves. Input: a game selector byte, a position selector byte, then the
// move text. A move that parses must be legal, print back to a move that parses to the same action,
// and apply.
#include <cctype>
#include <memory>
#include <vector>

#include "common.h"
#include "games/registry.h"

using namespace oppidum;

namespace {

// Positions of one game: the initial one and those after 1, 2, 4, ..., 128 plies of the first
// (or a middle) legal move, so that every game phase has a representative.
const std::vector<std::unique_ptr<GameState>>& positions(const Game& game) {
  static std::vector<std::vector<std::unique_ptr<GameState>>> all(all_games().size());
  for (std::size_t g = 0; g < all_games().size(); ++g) {
    if (all_games()[g] != &game) continue;
    auto& list = all[g];
    if (list.empty()) {
      auto s = game.initial_state();
      list.push_back(s->clone());
      for (int ply = 1; ply <= 128 && !s->is_terminal(); ++ply) {
        ActionList legal;
        s->legal_actions(legal);
        s->apply(legal[(ply * 7) % legal.size()]);
        if ((ply & (ply - 1)) == 0 || s->is_terminal()) list.push_back(s->clone());
      }
    }
    return list;
  }
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const Game& game = fuzz::pick_game(data[0]);
  const auto& list = positions(game);
  const GameState& s = *list[data[1] % list.size()];
  const std::string_view move(reinterpret_cast<const char*>(data + 2), size - 2);
  // parse_action ignores surrounding whitespace; looks_like_move takes the text already trimmed
  // (as the engine protocol's referee does).
  std::string_view trimmed = move;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.front())))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  const bool looks = game.looks_like_move(trimmed);
  Action a = -1;
  try {
    a = s.parse_action(move);
  } catch (const GameError&) {
    return 0;
  }
  FUZZ_CHECK(looks, "a move that parses must look like a move: \"" + std::string(move) + "\"");
  FUZZ_CHECK(a >= 0 && a < game.num_actions(), "action in range");
  FUZZ_CHECK(s.is_legal(a),
             "parse_action returned an illegal action for \"" + std::string(move) + "\"");
  const std::string printed = s.action_to_string(a);
  FUZZ_CHECK(s.parse_action(printed) == a, "\"" + printed + "\" does not parse back");
  auto child = s.clone();
  child->apply(a);
  (void)child->to_string();
  return 0;
}
