// One intact game file of 3 tic-tac-toe games (27 positions at most), for fuzz_replay_index and
// its seeds (fuzz_seeds.cpp).
#pragma once
#include <string>
#include <vector>

#include "common.h"
#include "games/registry.h"
#include "selfplay/game_record.h"
#include "util/file_io.h"

namespace fuzz {

inline const std::string& ttt_chunk() {
  static std::string bytes;
  if (bytes.empty()) {
    using namespace oppidum;
    const Game& game = game_by_name("ttt");
    std::vector<selfplay::GameRecord> records;
    for (int g = 0; g < 3; ++g) {
      selfplay::GameRecord r;
      r.game = game.name();
      r.start = game.initial_state()->to_string();
      auto s = game.initial_state();
      for (int ply = 0; !s->is_terminal(); ++ply) {
        ActionList legal;
        s->legal_actions(legal);
        selfplay::MoveRecord m;
        m.action = static_cast<std::uint16_t>(legal[(ply + g) % legal.size()]);
        m.visits.push_back({m.action, 1});
        r.moves.push_back(m);
        s->apply(m.action);
      }
      r.result = static_cast<std::int8_t>(s->result(0));
      r.score[0] = static_cast<std::int16_t>(s->score(0));
      r.score[1] = static_cast<std::int16_t>(s->score(1));
      records.push_back(r);
    }
    const std::string tmp = scratch_dir() + "/chunk.bin";
    selfplay::write_game_file(tmp, records);
    bytes = util::read_regular_file(tmp);
  }
  return bytes;
}

}  // namespace fuzz
