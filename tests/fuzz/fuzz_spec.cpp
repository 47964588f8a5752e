// Player specs and what reads them (arena/spec.h, arena/player.h, arena/time_control.h,
// arena/external.h) and SPRT options (arena/elo.h). Input: the spec text.
// A spec that makes a player must have a canonical spec without whitespace that makes the same
// player again; an SPRT config that parses must describe itself as text that parses back. No
// external program is started (external: specs only go through parse_external_spec).
#include <sstream>

#include "arena/elo.h"
#include "arena/external.h"
#include "arena/player.h"
#include "arena/spec.h"
#include "arena/time_control.h"
#include "common.h"
#include "games/registry.h"
#include "mcts/rollout_evaluator.h"

using namespace oppidum;
using namespace oppidum::arena;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  try {
    const SprtConfig c = parse_sprt(text);
    c.validate();
    const std::string d = c.describe();
    FUZZ_CHECK(parse_sprt(d).describe() == d, "SPRT describe/parse round trip: " + d);
    (void)sprt_bounds(c);
  } catch (const std::invalid_argument&) {
  }

  PlayerSpec spec;
  try {
    spec = parse_player_spec(text);
  } catch (const PlayerSpecError&) {
    return 0;
  }
  (void)names_budget(spec);
  // The time keys alone.
  try {
    SpecReader reader(spec, {"ms", "clock"});
    const TimeControl t = read_time_control(reader);
    (void)t.spec_suffix();
    (void)t.move_limit_seconds();
    (void)t.game_limit_seconds();
  } catch (const PlayerSpecError&) {
  }
  if (spec.name == "external") {
    try {
      (void)parse_external_spec(spec);
    } catch (const PlayerSpecError&) {
    }
    return 0;
  }
  std::istringstream human_in;
  std::ostringstream human_out;
  PlayerOptions options;
  options.human_in = &human_in;
  options.human_out = &human_out;
  options.net_factory = [](const Game&, const std::string&) {
    return std::make_shared<mcts::RolloutEvaluator>(1);
  };
  for (const Game* game : all_games()) {
    std::unique_ptr<Player> p;
    try {
      p = make_player(*game, text, options);
    } catch (const PlayerSpecError&) {
      continue;
    }
    const std::string canonical = p->spec();
    FUZZ_CHECK(canonical.find_first_of(" \t\n\r\v\f") == std::string::npos,
               "canonical spec with whitespace: \"" + canonical + "\"");
    std::unique_ptr<Player> again;
    try {
      again = make_player(*game, canonical, options);
    } catch (const PlayerSpecError& e) {
      fuzz::fail("canonical spec \"" + canonical + "\" is refused: " + e.what());
    }
    FUZZ_CHECK(again->spec() == canonical,
               "canonical spec is not stable: \"" + canonical + "\" -> \"" + again->spec() + "\"");
  }
  return 0;
}
