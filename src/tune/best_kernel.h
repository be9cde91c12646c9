// The tuner's output: the kernel source with the chosen configuration baked in as defaults,
// so `mgk eval PROBLEM best.cu` measures exactly the winning configuration.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tune/space.h"

namespace mgk::tune {

// `source` with a marked block at the top holding, per parameter,
//   #ifndef NAME / #define NAME VALUE / #endif
// preceded by `notes` as comment lines. The guards keep -DNAME=... overriding it, and the
// markers stay in place, so the result can be tuned again; a block from an earlier run at
// the top of `source` is replaced, not stacked.
std::string bake_configuration(std::string_view source, const SearchSpace& space,
                               const Config& config, const std::vector<std::string>& notes);

// `source` without a block that bake_configuration put at its top.
std::string_view strip_baked_block(std::string_view source);

}  // namespace mgk::tune
