// Seeds derived from a bind's seed: per node and run (the randomness kernels draw) and per
// name (SimpleBind's Gaussian fill), so results depend on neither order nor schedule.
// Internal to executor/.
#pragma once
#include <cstdint>

namespace symbind {

// splitmix64 of a combined value: well-spread seeds.
inline uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace symbind
