// Seeds for every random stream of a run. One run seed fixes everything: a stream (what the numbers
// are for: a search tree, a rollout evaluator, an opening picker, ...) and an index (a game, a
// worker, a request) select an independent, well-mixed 64-bit seed, so a run with fixed settings
// can be replayed exactly and no two streams share a sequence (KataGo's makeSeed).
#pragma once

#include <cstdint>

#include "games/zobrist.h"

namespace oppidum::mcts {

// Stream numbers used by this module; other modules pick their own (any value other than these).
inline constexpr std::uint64_t kSearchStream = 0x5345415243480000ULL;   // + agent index: trees
inline constexpr std::uint64_t kRolloutStream = 0x524F4C4C4F555400ULL;  // rollout playouts

// The seed of item `index` of stream `stream` under `run_seed`. Distinct (stream, index) pairs
// give unrelated seeds; the same triple always gives the same seed.
constexpr std::uint64_t derive_seed(std::uint64_t run_seed, std::uint64_t stream,
                                    std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(run_seed) ^ stream) + index);
}

}  // namespace oppidum::mcts
