// The compile cache's fast path without nvcc: what a preprocessed unit says it read, and
// when a build's manifest still holds for a kernel's folder.
#include "eval/compile_cache.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/hash.h"
#include "support/test_paths.h"

namespace mgk::eval {
namespace {

namespace fs = std::filesystem;

TEST(CompileCache, TheFilesAUnitReadAreItsLineMarkersOnceEachWithoutPseudoFiles) {
  const std::string ii = "# 0 \"kernel.cu\"\n# 0 \"<built-in>\"\n# 1 \"/usr/include/stdio.h\" 1 3 4\nint x;\n"
                         "#pragma GCC diagnostic ignored \"-Wfoo\"\n#line 4 \"/a/b \\\"q\\\".h\"\n# 2 \"kernel.cu\" 2\nchar* s = \"# 1 \\\"not/a/file.h\\\"\";\n";
  EXPECT_EQ(included_files(ii), (std::vector<std::string>{"kernel.cu", "/usr/include/stdio.h", "/a/b \"q\".h"}));
}

class ManifestTest : public ::testing::Test {
 protected:
  fs::path write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  test::TempDir kernel_dir_{"mgk-kernel"}, other_dir_{"mgk-other"}, system_{"mgk-system"};
};

TEST_F(ManifestTest, HoldsWhileEveryHeaderHasItsContentAndNothingInTheKernelsFolderCouldStandForOne) {
  const fs::path local = write(kernel_dir_.path() / "detail/helper.h", "int helper();\n");
  const fs::path shared = write(other_dir_.path() / "mgk/solution.h", "// mgk\n");
  const fs::path sys = write(system_.path() / "bits/types.h", "// system\n");
  auto m = make_manifest("#include \"detail/helper.h\"\n", {"kernel.cu", local.string(), shared.string(), sys.string()},
                         kernel_dir_.path(), {system_.path()});
  ASSERT_TRUE(m);
  ASSERT_EQ(m->files.size(), 2u);
  EXPECT_EQ(m->files[0].path, "detail/helper.h");
  EXPECT_TRUE(m->files[0].local);
  EXPECT_EQ(m->files[0].sha256, sha256_hex("int helper();\n"));
  EXPECT_EQ(m->others, std::vector<std::string>{sys.string()}) << "the toolchain's headers are not hashed";
  EXPECT_TRUE(manifest_holds(*m, kernel_dir_.path()));

  // The same kernel in another folder: its own header must be there, with the same bytes.
  test::TempDir moved("mgk-moved");
  EXPECT_FALSE(manifest_holds(*m, moved.path()));
  write(moved.path() / "detail/helper.h", "int helper();\n");
  EXPECT_TRUE(manifest_holds(*m, moved.path()));
  write(moved.path() / "detail/helper.h", "int helper(int);\n");
  EXPECT_FALSE(manifest_holds(*m, moved.path()));
  write(moved.path() / "detail/helper.h", "int helper();\n");

  // A file there named like a tail of a header read elsewhere could be found instead.
  write(moved.path() / "types.h", "");
  EXPECT_FALSE(manifest_holds(*m, moved.path())) << "bits/types.h could be found as types.h";
  fs::remove(moved.path() / "types.h");
  write(moved.path() / "mgk/solution.h", "");
  EXPECT_FALSE(manifest_holds(*m, moved.path()));
  fs::remove_all(moved.path() / "mgk");
  EXPECT_TRUE(manifest_holds(*m, moved.path()));

  write(shared, "// mgk, edited\n");
  EXPECT_FALSE(manifest_holds(*m, moved.path())) << "a header outside the toolchain is checked by content";
}

TEST_F(ManifestTest, NoFastPathForAKernelOrAHeaderOfItsOwnThatAsksHasInclude) {
  const fs::path local = write(kernel_dir_.path() / "helper.h", "#if __has_include(\"tuned.h\")\n#endif\n");
  EXPECT_FALSE(make_manifest("#if __has_include(\"tuned.h\")\n#endif\n", {"kernel.cu"}, kernel_dir_.path(), {}));
  EXPECT_FALSE(make_manifest("#include \"helper.h\"\n", {"kernel.cu", local.string()}, kernel_dir_.path(), {}));
  EXPECT_FALSE(make_manifest("", {"kernel.cu", "relative/x.h"}, kernel_dir_.path(), {}))
      << "a file nvcc did not name by an absolute path";
}

// `../common.h` beside another parent folder is another file: a kernel whose names climb is
// found only in its own folder, and a file in a folder above it can stand for a header.
TEST_F(ManifestTest, AKernelThatIncludesUpwardsHoldsOnlyInItsOwnFolder) {
  const fs::path kernel_dir = kernel_dir_.path() / "tp";
  const fs::path common = write(kernel_dir_.path() / "common.h", "// common\n");
  const fs::path sys = write(system_.path() / "bits/types.h", "// system\n");
  const fs::path climbs = write(kernel_dir / "climbs.h", "  #  include <../../x.h>\n");
  auto m = make_manifest("#include \"../common.h\"\n", {"kernel.cu", common.string(), sys.string()}, kernel_dir,
                         {system_.path()});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->climb, 1);
  EXPECT_TRUE(manifest_holds(*m, kernel_dir));
  test::TempDir moved("mgk-moved");
  fs::create_directories(moved.path() / "tp");
  write(moved.path() / "common.h", "// common\n");
  EXPECT_FALSE(manifest_holds(*m, moved.path() / "tp")) << "found from another folder";
  write(kernel_dir_.path() / "types.h", "");
  EXPECT_FALSE(manifest_holds(*m, kernel_dir)) << "../types.h could be found for bits/types.h";
  auto deeper = make_manifest("#include \"climbs.h\"\n", {"kernel.cu", climbs.string()}, kernel_dir, {});
  ASSERT_TRUE(deeper);
  EXPECT_EQ(deeper->climb, 2) << "a header of its own climbs too";
  auto none = make_manifest("// see ../README.md\n#include \"mgk/solution.h\"\n", {"kernel.cu"}, kernel_dir, {});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->climb, 0) << "only what an #include names counts";
}

}  // namespace
}  // namespace mgk::eval
