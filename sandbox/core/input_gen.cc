#include "input_gen.h"

namespace mgk::sandbox {
namespace {

mgk_dist to_dist(wire::Dist d) {
  switch (d) {
    case wire::Dist::kNormal: return MGK_DIST_NORMAL;
    case wire::Dist::kUniform: return MGK_DIST_UNIFORM;
    case wire::Dist::kRandint: return MGK_DIST_RANDINT;
    case wire::Dist::kZipf: return MGK_DIST_ZIPF;
  }
  return MGK_DIST_NORMAL;
}

}  // namespace

mgk_input_gen input_gen(const wire::InputInit& init, mgk_dtype dtype, uint64_t seed) {
  mgk_input_gen g{};
  g.seed = seed;
  g.dist = to_dist(init.dist);
  g.a = init.a;
  g.b = init.b;
  g.exponent = init.exponent;
  g.dtype = dtype;
  g.row = init.row;
  g.zero_every = init.zero_every;
  g.tiny_every = init.tiny_every;
  g.tiny = init.tiny;
  g.massive_every = init.massive_every;
  g.massive = init.massive;
  return g;
}

}  // namespace mgk::sandbox
