#include "tune/best_kernel.h"

#include <gtest/gtest.h>

#include "tune/markers.h"

namespace mgk::tune {
namespace {

const char* kKernel =
    "// all_reduce with tunable blocks and chunk size\n"
    "// mgk:tune BLOCKS 8 16 32\n"
    "// mgk:tune CHUNK_KB range(64, 256, *2)\n"
    "// mgk:tune MECH kTma kLdSt\n"
    "// mgk:tune-constraint BLOCKS * CHUNK_KB <= 4096\n"
    "#ifndef BLOCKS\n#define BLOCKS 8\n#endif\n"
    "#ifndef CHUNK_KB\n#define CHUNK_KB 64\n#endif\n"
    "#ifndef MECH\n#define MECH kTma\n#endif\n"
    "__global__ void k() {}\n";

TEST(BestKernel, BakesTheConfigurationAsOverridableDefaultsAtTheTop) {
  SearchSpace space = parse_markers(kKernel);
  const Config best{2, 1, 1};  // BLOCKS=32 CHUNK_KB=128 MECH=kLdSt
  std::string baked =
      bake_configuration(kKernel, space, best, {"Tuned by mgk: 41.20 us", "second\nline\\"});
  EXPECT_EQ(baked.substr(0, baked.find("__global__")),
            "// ---- mgk tune: chosen configuration (begin) ----\n"
            "// Tuned by mgk: 41.20 us\n"
            "// second\n"
            "// line\n"
            "#ifndef BLOCKS\n#define BLOCKS 32\n#endif\n"
            "#ifndef CHUNK_KB\n#define CHUNK_KB 128\n#endif\n"
            "#ifndef MECH\n#define MECH kLdSt\n#endif\n"
            "// ---- mgk tune: chosen configuration (end) ----\n" +
                std::string(kKernel).substr(0, std::string(kKernel).find("__global__")));
  EXPECT_EQ(strip_baked_block(baked), kKernel);
}

TEST(BestKernel, TheBakedFileParsesToTheSameSpaceAndCanBeBakedAgain) {
  SearchSpace space = parse_markers(kKernel);
  std::string baked = bake_configuration(kKernel, space, Config{1, 0, 0}, {"first"});
  SearchSpace again = parse_markers(baked, "best.cu");
  ASSERT_EQ(again.parameters().size(), space.parameters().size());
  for (size_t i = 0; i < space.parameters().size(); ++i) {
    EXPECT_EQ(again.parameters()[i].name, space.parameters()[i].name);
    EXPECT_EQ(again.parameters()[i].values.size(), space.parameters()[i].values.size());
  }
  EXPECT_EQ(again.constraints().size(), 1u);
  // Re-tuning the baked file replaces the block instead of stacking another.
  std::string rebaked = bake_configuration(baked, again, Config{0, 2, 1}, {"second"});
  EXPECT_EQ(rebaked.find("first"), std::string::npos);
  EXPECT_NE(rebaked.find("#define BLOCKS 8\n"), std::string::npos);
  EXPECT_NE(rebaked.find("#define MECH kLdSt\n#endif\n// ---- mgk tune"), std::string::npos);
  EXPECT_EQ(strip_baked_block(rebaked), kKernel);
}

}  // namespace
}  // namespace mgk::tune
