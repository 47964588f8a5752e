#include "mcts/cached_evaluator.h"

#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "games/zobrist.h"

namespace oppidum::mcts {

CachedEvaluator::CachedEvaluator(Evaluator& inner, std::size_t capacity)
    : inner_(inner),
      sets_per_shard_((capacity + kShards * kWays - 1) / (kShards * kWays)),
      shards_(kShards) {
  if (capacity == 0) throw std::invalid_argument("CachedEvaluator: capacity must be at least 1");
  for (Shard& shard : shards_) shard.entries.resize(sets_per_shard_ * kWays);
}

std::string CachedEvaluator::describe() const {
  return "cache(" + std::to_string(capacity()) + ") over " + inner_.describe();
}

double CachedEvaluator::hit_rate() const {
  const double h = static_cast<double>(hits());
  const double total = h + static_cast<double>(misses());
  return total > 0 ? h / total : 0.0;
}

void CachedEvaluator::clear() {
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (Entry& e : shard.entries) e = Entry{};
    shard.tick = 0;
  }
  hits_ = 0;
  misses_ = 0;
}

// Zobrist keys are already well mixed; mixing again keeps shard and set choice independent of
// any structure in a game's key table.
CachedEvaluator::Shard& CachedEvaluator::shard_of(std::uint64_t key) {
  return shards_[splitmix64(key) % kShards];
}

std::size_t CachedEvaluator::set_of(std::uint64_t key) const {
  return ((splitmix64(key) / kShards) % sets_per_shard_) * kWays;
}

bool CachedEvaluator::lookup(std::uint64_t key, int num_legal, EvalResult& out) {
  Shard& shard = shard_of(key);
  const std::size_t set = set_of(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  for (std::size_t w = 0; w < kWays; ++w) {
    Entry& e = shard.entries[set + w];
    if (e.last_used != 0 && e.key == key &&
        e.result.priors.size() == static_cast<std::size_t>(num_legal)) {
      e.last_used = ++shard.tick;
      out = e.result;
      return true;
    }
  }
  return false;
}

void CachedEvaluator::store(std::uint64_t key, const EvalResult& result) {
  Shard& shard = shard_of(key);
  const std::size_t set = set_of(key);
  std::lock_guard<std::mutex> lock(shard.mutex);
  Entry* victim = &shard.entries[set];
  for (std::size_t w = 0; w < kWays; ++w) {
    Entry& e = shard.entries[set + w];
    if (e.last_used != 0 && e.key == key) {  // same key (another thread, or a collision): replace
      victim = &e;
      break;
    }
    if (e.last_used < victim->last_used) victim = &e;
  }
  victim->key = key;
  victim->last_used = ++shard.tick;
  victim->result = result;
}

void CachedEvaluator::evaluate(const EvalRequest* requests, int n, EvalResult* results) {
  std::vector<EvalRequest> miss_requests;
  std::vector<int> miss_owner;  // request index of each miss
  std::vector<std::pair<int, int>> duplicates;  // (request, earlier miss with the same key)
  std::unordered_map<std::uint64_t, int> miss_of_key;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t key = requests[i].state->hash();
    if (lookup(key, requests[i].legal->size(), results[i])) {
      ++hits_;
      continue;
    }
    const auto [it, inserted] = miss_of_key.emplace(key, static_cast<int>(miss_requests.size()));
    if (!inserted && miss_requests[it->second].legal->size() == requests[i].legal->size()) {
      duplicates.emplace_back(i, it->second);
      ++hits_;
      continue;
    }
    miss_requests.push_back(requests[i]);
    miss_owner.push_back(i);
    ++misses_;
  }
  if (miss_requests.empty()) return;  // every request was a hit

  std::vector<EvalResult> miss_results(miss_requests.size());
  inner_.evaluate(miss_requests.data(), static_cast<int>(miss_requests.size()),
                  miss_results.data());
  for (std::size_t m = 0; m < miss_requests.size(); ++m) {
    store(miss_requests[m].state->hash(), miss_results[m]);
    results[miss_owner[m]] = miss_results[m];
  }
  for (const auto& [request, miss] : duplicates) results[request] = miss_results[miss];
}

}  // namespace oppidum::mcts
