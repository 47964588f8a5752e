// A real random game as a game record (selfplay/game_record.h), with made-up visit counts, values
// and search kinds: it replays through the rules to its recorded result.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "games/game.h"
#include "selfplay/game_record.h"

namespace oppidum::test_util {

inline selfplay::GameRecord random_record(const std::string& game_name, std::uint64_t seed) {
  const Game& game = game_by_name(game_name);
  auto state = game.initial_state();
  selfplay::GameRecord r;
  r.game = game_name;
  r.start = state->to_string();
  r.seed = seed;
  r.network_step = static_cast<std::int64_t>(seed) * 100;
  std::mt19937_64 rng(seed);
  ActionList actions;
  for (state->legal_actions(actions); !actions.empty(); state->legal_actions(actions)) {
    selfplay::MoveRecord m;
    for (Action a : actions)
      m.visits.push_back({static_cast<std::uint16_t>(a), static_cast<std::uint32_t>(1 + rng() % 50)});
    m.action = actions[static_cast<int>(rng() % actions.size())];
    m.root_value = static_cast<float>(rng() % 200) / 100.0f - 1.0f;
    m.policy_target = rng() % 2;
    r.moves.push_back(m);
    state->apply(m.action);
  }
  r.result = static_cast<std::int8_t>(state->result(0));
  r.score[0] = static_cast<std::int16_t>(state->score(0));
  r.score[1] = static_cast<std::int16_t>(state->score(1));
  return r;
}

}  // namespace oppidum::test_util
