// The `// mgk:tune` markers in a kernel's source (the format is documented in README.md):
//   // mgk:tune BLOCKS 8 16 32 64              explicit values: ints, floats or identifiers
//   // mgk:tune CHUNK_KB range(64, 2048, *2)    geometric, inclusive end
//   // mgk:tune UNROLL range(1, 8)              arithmetic, step 1 (or +k), inclusive end
//   // mgk:tune-constraint BLOCKS * CHUNK_KB <= 4096
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "tune/space.h"

namespace mgk::tune {

// Parses every marker of `source`. Errors are UsageErrors that start with "LABEL:LINE:" and
// say what is wrong: malformed values or ranges, duplicate parameters or values, a
// constraint with a syntax error or naming something that is not a numeric parameter, and a
// parameter the source #defines unconditionally (a -D would then be silently overridden).
// A source without markers gives an empty space.
SearchSpace parse_markers(std::string_view source, const std::string& label = "kernel");

// Parameters the source gives no default (no `#ifndef NAME`/`defined(NAME)` guard), so the
// default configuration, the one compiled with no defines, would not build. For warnings.
std::vector<std::string> parameters_without_default(std::string_view source,
                                                    const SearchSpace& space);

}  // namespace mgk::tune
