// A cache in front of any Evaluator, keyed by GameState::hash() alone (lc0's memcache): positions
// reached again (transpositions, the same opening in many games, a re-searched subtree) skip the
// inner evaluator. Only the misses of a batch go to the inner evaluator, as one batch, and a
// position that appears several times in one batch is evaluated once.
//
// Bounded: `capacity` entries at most, held in 16 shards, each a set-associative table of 4-way
// sets with least-recently-used replacement inside a set. Thread-safe: a mutex per shard, never held
// while the inner evaluator runs (two threads missing the same position may both evaluate it).
// A stored entry whose prior count differs from the request's legal count (a hash collision between
// positions with different move counts) is treated as a miss and replaced.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "mcts/evaluator.h"

namespace oppidum::mcts {

class CachedEvaluator final : public Evaluator {
 public:
  // `inner` must outlive the cache. Throws std::invalid_argument when capacity is 0.
  CachedEvaluator(Evaluator& inner, std::size_t capacity);

  void evaluate(const EvalRequest* requests, int n, EvalResult* results) override;
  std::string describe() const override;

  std::uint64_t hits() const { return hits_.load(); }
  std::uint64_t misses() const { return misses_.load(); }
  // hits / (hits + misses), 0 before any request.
  double hit_rate() const;
  std::size_t capacity() const { return kShards * sets_per_shard_ * kWays; }
  // Empties the cache and zeroes the counters.
  void clear();

 private:
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kWays = 4;

  struct Entry {
    std::uint64_t key = 0;
    std::uint64_t last_used = 0;  // shard tick of the last hit or store; 0 = empty slot
    EvalResult result;
  };
  struct Shard {
    std::mutex mutex;
    std::uint64_t tick = 0;
    std::vector<Entry> entries;  // sets_per_shard_ sets of kWays entries
  };

  // Copies the stored result for `key` into `out` if present with `num_legal` priors.
  bool lookup(std::uint64_t key, int num_legal, EvalResult& out);
  void store(std::uint64_t key, const EvalResult& result);
  // The shard and the first entry of the set that `key` maps to.
  Shard& shard_of(std::uint64_t key);
  std::size_t set_of(std::uint64_t key) const;

  Evaluator& inner_;
  std::size_t sets_per_shard_;
  std::vector<Shard> shards_;
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
};

}  // namespace oppidum::mcts
