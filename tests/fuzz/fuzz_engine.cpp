// The engine line protocol (arena/engine.h): run_engine over the input lines with a random player
// (no search, so every input runs fast). Input: a game selector byte, then the lines. Checks: the
// engine refuses input only with EngineError, and every line it writes looks like a move.
#include <sstream>

#include "arena/engine.h"
#include "arena/player.h"
#include "common.h"
#include "games/registry.h"

using namespace oppidum;
using namespace oppidum::arena;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const Game& game = fuzz::pick_game(data[0]);
  static std::vector<std::unique_ptr<Player>> players;
  if (players.empty())
    for (const Game* g : all_games()) players.push_back(make_player(*g, "random"));
  Player& player = *players[data[0] % players.size()];
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  std::ostringstream out;
  try {
    run_engine(game, player, in, out, /*seed=*/data[0]);
  } catch (const EngineError&) {
  }
  // Every line written must be a move in notation.
  std::istringstream written(out.str());
  for (std::string line; std::getline(written, line);)
    FUZZ_CHECK(game.looks_like_move(line), "engine wrote \"" + line + "\"");
  return 0;
}
