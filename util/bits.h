// Bit counting and bit scanning for the games' bitboards, fast on the CPU that runs it.
//
// The build targets Debian's baseline x86-64, where __builtin_popcountll is a call into libgcc
// (it was a fifth of the classical engine's time in Murus Gallicus). A function marked
// OPPIDUM_POPCNT_CLONES is compiled twice, for baseline x86-64 and for the POPCNT instruction
// (every x86-64 CPU since about 2008), and the loader picks the copy this CPU can run (GCC's
// target_clones, an ifunc). What it calls gets the instruction only when inlined into it: mark
// such helpers OPPIDUM_ALWAYS_INLINE. Elsewhere (another CPU or compiler, -march=native, the
// sanitizer builds) the macro is empty and popcount is the builtin.
#pragma once

#include <cstdint>

#define OPPIDUM_ALWAYS_INLINE inline __attribute__((always_inline))

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__POPCNT__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define OPPIDUM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define OPPIDUM_POPCNT_CLONES
#endif

namespace oppidum::util {

OPPIDUM_ALWAYS_INLINE int popcount(std::uint64_t b) { return __builtin_popcountll(b); }

// The index of the lowest set bit of a non-empty `b`, which it clears.
OPPIDUM_ALWAYS_INLINE int pop_lsb(std::uint64_t& b) {
  const int index = __builtin_ctzll(b);
  b &= b - 1;
  return index;
}

}  // namespace oppidum::util
