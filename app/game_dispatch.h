// Calls a generic callable with the concrete position type of a game, so commands that need speed
// (perft, benchmarks) run on the value types directly instead of through the virtual contract.
#pragma once

#include <string>

#include "games/dvonn/position.h"
#include "games/game.h"
#include "games/mg/position.h"

namespace oppidum::app {

template <class P>
struct PositionTag {
  using Position = P;
};

// `f` receives PositionTag<mg::Position> or PositionTag<dvonn::Position>.
template <class F>
decltype(auto) with_position_type(const std::string& game_name, F&& f) {
  const std::string name = game_by_name(game_name).name();  // validates the name
  if (name == "mg") return f(PositionTag<mg::Position>{});
  return f(PositionTag<dvonn::Position>{});
}

inline const char* kGameOptionHelp = "game: mg (Murus Gallicus) or dvonn";

}  // namespace oppidum::app
