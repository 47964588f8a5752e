// The registered games: one line each in OPPIDUM_GAMES below, naming the game's position type (a
// value type with the methods games/state_adapter.h names, and an `evaluate` for the alpha-beta
// player beside it, games/<game>/evaluation.h, and the classical engine's `classic_evaluate`,
// games/<game>/classic_eval.h) and the function that returns its Game object. Everything else the
// program knows about a game comes from that Game object (games/game.h): its name, display and
// side names, opening plies, score, move shape, action space and planes. Code that needs the
// concrete type for speed (perft, the benchmarks, the alpha-beta player, the classical engine)
// gets it from with_position_type. docs/ARCHITECTURE.md, "Adding a game".
#pragma once

#include <string>
#include <utility>

#include "games/dvonn/classic_eval.h"
#include "games/dvonn/evaluation.h"
#include "games/dvonn/game.h"
#include "games/dvonn/position.h"
#include "games/game.h"
#include "games/mg/classic_eval.h"
#include "games/mg/evaluation.h"
#include "games/mg/game.h"
#include "games/mg/position.h"
#include "games/quote.h"
#include "games/ttt/classic_eval.h"
#include "games/ttt/evaluation.h"
#include "games/ttt/game.h"
#include "games/ttt/position.h"

// X(position type, function returning its Game). A new game adds one line here (and its includes).
#define OPPIDUM_GAMES(X)                 \
  X(::oppidum::mg::Position, ::oppidum::mg::mg_game) \
  X(::oppidum::dvonn::Position, ::oppidum::dvonn::dvonn_game) \
  X(::oppidum::ttt::Position, ::oppidum::ttt::ttt_game)

namespace oppidum {

template <class P>
struct PositionTag {
  using Position = P;
};

// Calls f(PositionTag<P>{}) with the position type P of `game`; throws GameError for a Game that is
// not registered.
template <class F>
decltype(auto) with_position_type(const Game& game, F&& f) {
#define OPPIDUM_DISPATCH_GAME(P, game_fn) \
  if (&game == &game_fn()) return std::forward<F>(f)(PositionTag<P>{});
  OPPIDUM_GAMES(OPPIDUM_DISPATCH_GAME)
#undef OPPIDUM_DISPATCH_GAME
  throw GameError("game \"" + quote_input(game.name()) + "\" is not registered (games/registry.h)");
}

template <class F>
decltype(auto) with_position_type(std::string_view game_name, F&& f) {
  return with_position_type(game_by_name(game_name), std::forward<F>(f));
}

}  // namespace oppidum
