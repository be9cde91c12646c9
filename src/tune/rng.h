// A small deterministic random generator for the search strategies. The standard library's
// distributions are implementation-defined; these draws are the same on every platform, so
// a seed reproduces a search exactly.
#pragma once
#include <cstdint>

namespace mgk::tune {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  // splitmix64: full period over 2^64, good enough mixing for search decisions.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }

  // Uniform in [0, 1).
  double unit() { return double(next() >> 11) * 0x1.0p-53; }

  bool chance(double p) { return unit() < p; }

 private:
  std::uint64_t state_;
};

}  // namespace mgk::tune
