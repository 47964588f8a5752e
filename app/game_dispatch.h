// The concrete position type of a game for commands that need speed (perft, benchmarks): the
// registry's with_position_type (games/registry.h), and the help text of every --game option.
#pragma once

#include <string>

#include "games/registry.h"

namespace oppidum::app {

using oppidum::PositionTag;
using oppidum::with_position_type;

inline const char* kGameOptionHelp = "game: mg (Murus Gallicus) or dvonn";

}  // namespace oppidum::app
