// A small, fast pseudo-random generator (xoshiro256**, seeded through SplitMix64) with the few
// draws search needs. Unlike the std distributions, every draw here is specified by this file, so a
// seed gives the same numbers with every compiler and standard library. Not thread-safe: one
// generator per tree or per call.
#pragma once

#include <cmath>
#include <cstdint>

#include "games/zobrist.h"

namespace oppidum::mcts {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) word = seed = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, n), n > 0 (multiply-shift; the bias is below 2^-32 for any n we use).
  int uniform_int(int n) {
    return static_cast<int>(((next() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Standard normal (Box-Muller; one of the pair is discarded to keep no hidden state).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // Gamma(shape, 1), shape > 0 (Marsaglia and Tsang; shape < 1 through the boost
  // Gamma(a) = Gamma(a + 1) * U^(1/a)).
  double gamma(double shape) {
    if (shape < 1.0) {
      const double u = 1.0 - uniform();
      return gamma(shape + 1.0) * std::pow(u, 1.0 / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = 1.0 - uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4];
};

}  // namespace oppidum::mcts
