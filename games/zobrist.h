// Deterministic 64-bit keys for Zobrist hashing: the same keys in every build and run, so hashes
// can be stored and compared across processes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace oppidum {

// SplitMix64 step: a well-mixed 64-bit value for each input; used to derive fixed key tables.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Key number `index` of the table named by `table` (a per-game constant).
constexpr std::uint64_t zobrist_key(std::uint64_t table, std::uint64_t index) {
  return splitmix64(table * 0x100000001B3ULL + index);
}

// Keys 0..N-1 of the table named by `table`, computed at compile time when the result is constexpr
// (a hash then looks its keys up instead of deriving each one).
template <std::size_t N>
constexpr std::array<std::uint64_t, N> zobrist_keys(std::uint64_t table) {
  std::array<std::uint64_t, N> keys{};
  for (std::size_t i = 0; i < N; ++i) keys[i] = zobrist_key(table, i);
  return keys;
}

}  // namespace oppidum
