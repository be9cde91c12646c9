#include "tune/markers.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "eval/compile.h"
#include "support/test_paths.h"

namespace mgk::tune {
namespace {

std::vector<std::string> texts(const Parameter& p) {
  std::vector<std::string> out;
  for (const auto& v : p.values) out.push_back(v.text);
  return out;
}

// The message of the UsageError that parsing `source` throws ("" if none).
std::string parse_error(const std::string& source) {
  try {
    parse_markers(source, "k.cu");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Markers, ExplicitValuesOfEveryKind) {
  SearchSpace s = parse_markers(
      "#include <cuda.h>\n"
      "// mgk:tune BLOCKS 8 16 32 64\n"
      "  //mgk:tune SCALE 0.5 1.25 -2 1e3\n"
      "// mgk:tune MECH kCopyEngine kTma kLdSt\n"
      "// mgk:tune LIST 1, 2,3   // a trailing comment\n");
  ASSERT_EQ(s.parameters().size(), 4u);
  const auto& blocks = s.parameters()[0];
  EXPECT_EQ(blocks.name, "BLOCKS");
  EXPECT_EQ(blocks.line, 2);
  EXPECT_EQ(texts(blocks), (std::vector<std::string>{"8", "16", "32", "64"}));
  EXPECT_TRUE(blocks.numeric());
  EXPECT_TRUE(blocks.values[0].is_integer);
  const auto& scale = s.parameters()[1];
  EXPECT_EQ(texts(scale), (std::vector<std::string>{"0.5", "1.25", "-2", "1e3"}));
  EXPECT_DOUBLE_EQ(*scale.values[3].number, 1000.0);
  EXPECT_FALSE(scale.values[0].is_integer);
  EXPECT_TRUE(scale.values[2].is_integer);
  const auto& mech = s.parameters()[2];
  EXPECT_FALSE(mech.numeric());
  EXPECT_FALSE(mech.values[1].number.has_value());
  EXPECT_EQ(texts(s.parameters()[3]), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(s.size(), 4u * 4u * 3u * 3u);
}

TEST(Markers, GeometricArithmeticAndFloatRanges) {
  SearchSpace s = parse_markers(
      "// mgk:tune CHUNK_KB range(64, 2048, *2)\n"
      "// mgk:tune UNROLL range(1, 8)\n"
      "// mgk:tune STAGES range(2, 11, +3)\n"
      "// mgk:tune F range(0.1, 0.5, +0.1)\n"
      "// mgk:tune G range(0.5, 4, *2)\n"
      "// mgk:tune H range( 3 , 9 , 3 )\n");
  const auto& p = s.parameters();
  EXPECT_EQ(texts(p[0]),
            (std::vector<std::string>{"64", "128", "256", "512", "1024", "2048"}));
  EXPECT_EQ(texts(p[1]), (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"}));
  EXPECT_EQ(texts(p[2]), (std::vector<std::string>{"2", "5", "8", "11"}));
  EXPECT_EQ(texts(p[3]), (std::vector<std::string>{"0.1", "0.2", "0.3", "0.4", "0.5"}));
  EXPECT_EQ(texts(p[4]), (std::vector<std::string>{"0.5", "1.0", "2.0", "4.0"}));
  EXPECT_FALSE(p[4].values[1].is_integer);
  EXPECT_EQ(texts(p[5]), (std::vector<std::string>{"3", "6", "9"}));
}

TEST(Markers, EndNotOnTheGridIsExcluded) {
  SearchSpace s = parse_markers("// mgk:tune X range(64, 1000, *2)\n");
  EXPECT_EQ(texts(s.parameters()[0]),
            (std::vector<std::string>{"64", "128", "256", "512"}));
}

TEST(Markers, Constraints) {
  SearchSpace s = parse_markers(
      "// mgk:tune-constraint BLOCKS * CHUNK_KB <= 4096\n"  // before the names it uses
      "// mgk:tune BLOCKS 8 16 32 64\n"
      "// mgk:tune CHUNK_KB range(64, 256, *2)\n"
      "// mgk:tune-constraint BLOCKS % 16 == 0 || CHUNK_KB == 64\n");
  ASSERT_EQ(s.constraints().size(), 2u);
  EXPECT_EQ(s.constraints()[0].text, "BLOCKS * CHUNK_KB <= 4096");
  EXPECT_EQ(s.constraints()[0].line, 1);
  EXPECT_EQ(s.constraints()[1].line, 4);
}

TEST(Markers, NoMarkersIsAnEmptySpace) {
  SearchSpace s = parse_markers("__global__ void k() {}\n// a comment about mgk:tune\n");
  EXPECT_TRUE(s.empty());
}

TEST(Markers, CrLfLineEndings) {
  SearchSpace s = parse_markers("// mgk:tune A 1 2\r\n// mgk:tune B x y\r\n");
  ASSERT_EQ(s.parameters().size(), 2u);
  EXPECT_EQ(texts(s.parameters()[1]), (std::vector<std::string>{"x", "y"}));
}

TEST(Markers, ErrorsNameTheLineAndTheProblem) {
  struct Case {
    std::string source;
    std::string expected;  // a fragment of the message
  };
  const std::vector<Case> cases = {
      {"int x;\n// mgk:tune\n", "k.cu:2: mgk:tune needs a parameter name"},
      {"// mgk:tune BLOCKS\n", "k.cu:1: mgk:tune BLOCKS has no values"},
      {"// mgk:tune 9LIVES 1 2\n", "k.cu:1: mgk:tune parameter '9LIVES' is not a C identifier"},
      {"// mgk:tune A 1 2\n\n// mgk:tune A 3\n", "k.cu:3: mgk:tune A is declared twice (first on line 1)"},
      {"// mgk:tune A 1 2 1\n", "k.cu:1: mgk:tune A: value 1 appears twice"},
      {"// mgk:tune A 1 2$ 3\n", "k.cu:1: mgk:tune A: '2$' is not a number or an identifier"},
      {"// mgk:tune A range(8, 2)\n", "k.cu:1: mgk:tune A range(8, 2): start is greater than end"},
      {"// mgk:tune A range(8)\n", "expected 2 or 3 arguments"},
      {"// mgk:tune A range(1, 8, *1)\n", "a geometric range needs a factor > 1"},
      {"// mgk:tune A range(0, 8, *2)\n", "a geometric range needs a factor > 1 and a start > 0"},
      {"// mgk:tune A range(1, 8, +0)\n", "the step must be positive"},
      {"// mgk:tune A range(1, x)\n", "end 'x' is not a number"},
      {"// mgk:tune A range(1, 8\n", "expected 'range(start, end)'"},
      {"// mgk:tune A range(1, 100000)\n", "has more than 4096 values"},
      {"// mgk:tunes A 1\n", "k.cu:1: unknown marker 'mgk:tunes'"},
      {"int x; // mgk:tune A 1 2\n", "k.cu:1: an mgk:tune marker must be a comment on its own line"},
      {"// mgk:tune-constraint\n", "k.cu:1: mgk:tune-constraint needs an expression"},
      {"// mgk:tune A 1 2\n// mgk:tune-constraint A < \n", "k.cu:2: mgk:tune-constraint: in expression"},
      {"// mgk:tune A 1 2\n// mgk:tune-constraint A * W < 4\n",
       "k.cu:2: mgk:tune-constraint uses 'W', which no mgk:tune marker declares"},
      {"// mgk:tune M kTma kLdSt\n// mgk:tune-constraint M == 1\n",
       "k.cu:2: mgk:tune-constraint uses M, whose values (line 1) are not all numbers"},
      {"// mgk:tune BLOCKS 8 16\n#include <x.h>\n  #define BLOCKS 8\n",
       "k.cu:3: #define BLOCKS has no '#ifndef BLOCKS' guard"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.source);
    std::string message = parse_error(c.source);
    EXPECT_NE(message.find(c.expected), std::string::npos) << "message: " << message;
  }
}

TEST(Markers, GuardedDefaultsAreAccepted) {
  const std::string source =
      "// mgk:tune BLOCKS 8 16\n"
      "// mgk:tune CHUNK 1 2\n"
      "// mgk:tune DEPTH 1 2\n"
      "#ifndef BLOCKS\n#define BLOCKS 8\n#endif\n"
      "#if !defined(CHUNK)\n#define CHUNK 1\n#endif\n";
  SearchSpace s = parse_markers(source);
  EXPECT_EQ(parameters_without_default(source, s), std::vector<std::string>{"DEPTH"});
}

std::filesystem::path write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path;
}

// A default may sit in a header the kernel includes with #include "...", found beside the
// including file or on the include path, at any depth; markers stay the kernel's own.
TEST(Markers, DefaultsInIncludedHeadersCount) {
  mgk::test::TempDir dir;
  const auto lib = dir.path() / "lib";
  write(dir.path() / "kernel" / "local.h", "#include \"nested/deep.h\"\n#ifndef BLOCKS\n#define BLOCKS 8\n#endif\n");
  write(dir.path() / "kernel" / "nested" / "deep.h", "#if !defined(CHUNK)\n#define CHUNK 1\n#endif\n");
  write(lib / "knobs.h", "#pragma once\n#include \"knobs.h\"\n#ifndef DEPTH\n#define DEPTH 2\n#endif\n"
                         "// mgk:tune STAGES 1 2\n");
  write(lib / "ignored.h", "#ifndef WIDTH\n#define WIDTH 4\n#endif\n");
  const std::string source =
      "// mgk:tune BLOCKS 8 16\n"
      "// mgk:tune CHUNK 1 2\n"
      "// mgk:tune DEPTH 1 2\n"
      "// mgk:tune WIDTH 4 8\n"
      "#include \"local.h\"\n"
      "  #  include \"knobs.h\"  // from the include path\n"
      "#include <ignored.h>\n"
      "// #include \"ignored.h\"\n"
      "#include \"missing.h\"\n";
  const auto kernel = write(dir.path() / "kernel" / "k.cu", source);
  SearchSpace s = parse_markers(source);
  ASSERT_EQ(s.parameters().size(), 4u);  // not STAGES: the header's markers are not the kernel's
  EXPECT_EQ(parameters_without_default(source, s),
            (std::vector<std::string>{"BLOCKS", "CHUNK", "DEPTH", "WIDTH"}));
  const std::string all = with_included_files(source, kernel, {lib});
  EXPECT_EQ(all.substr(0, source.size()), source);
  EXPECT_EQ(parameters_without_default(all, s), std::vector<std::string>{"WIDTH"});
  EXPECT_EQ(parameters_without_default(with_included_files(source, kernel, {}), s),
            (std::vector<std::string>{"DEPTH", "WIDTH"}));
}

// Every kernel shipped with mgk that declares tunables (expert solutions, examples) parses,
// and gives every tuned parameter a default, itself or in a header it includes as nvcc finds
// it (the collective experts: primitives/collective/knobs.cuh).
TEST(Markers, EveryKernelInTheRepositoryParses) {
  const std::filesystem::path root = MGK_SOURCE_ROOT;
  int with_markers = 0;
  for (const char* dir : {"problems", "primitives"}) {
    if (!std::filesystem::exists(root / dir)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / dir)) {
      const auto ext = entry.path().extension();
      if (ext != ".cu" && ext != ".cuh") continue;
      std::ifstream f(entry.path());
      std::stringstream text;
      text << f.rdbuf();
      SCOPED_TRACE(entry.path().string());
      SearchSpace space;
      EXPECT_NO_THROW(space = parse_markers(text.str(), entry.path().string()));
      if (!space.empty()) {
        ++with_markers;
        const std::string with_headers = with_included_files(
            text.str(), entry.path(), eval::mgk_header_dirs(/*is_reference=*/false));
        EXPECT_TRUE(parameters_without_default(with_headers, space).empty());
      }
    }
  }
  std::printf("%d kernels in the repository declare tunables\n", with_markers);
}

}  // namespace
}  // namespace mgk::tune
