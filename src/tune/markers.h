// The `// mgk:tune` markers in a kernel's source (the format is documented in README.md):
//   // mgk:tune BLOCKS 8 16 32 64              explicit values: ints, floats or identifiers
//   // mgk:tune CHUNK_KB range(64, 2048, *2)    geometric, inclusive end
//   // mgk:tune UNROLL range(1, 8)              arithmetic, step 1 (or +k), inclusive end
//   // mgk:tune-constraint BLOCKS * CHUNK_KB <= 4096
#pragma once
#include <filesystem>
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
// For a kernel that keeps defaults in a header, pass with_included_files(...) as `source`.
std::vector<std::string> parameters_without_default(std::string_view source,
                                                    const SearchSpace& space);

// `source`, the text of the kernel file `path`, followed by the text of every file it
// includes with `#include "NAME"`, and of those files' own, each once. NAME is looked for as
// the compiler looks for it: beside the including file, then in `include_dirs` in order. A
// file not found (the compiler will say so) or over 4 MiB is left out. What
// parameters_without_default reads, so that a default a header gives counts (the experts
// problems/collectives/*/expert.cu take most of theirs from primitives/collective/knobs.cuh).
// The markers themselves are the kernel's own: parse_markers reads `source` alone.
std::string with_included_files(std::string_view source, const std::filesystem::path& path,
                                const std::vector<std::filesystem::path>& include_dirs);

}  // namespace mgk::tune
