#include "agent/reply_parser.h"

#include <gtest/gtest.h>

namespace mgk::agent {
namespace {

TEST(FencedBlocks, FindsBlocksWithTheirLanguage) {
  auto blocks = fenced_blocks("intro\n```CUDA\nint x;\n```\ntext\n````bash extra\necho ```\n````\n");
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].lang, "cuda");
  EXPECT_EQ(blocks[0].body, "int x;\n");
  EXPECT_EQ(blocks[1].lang, "bash");
  EXPECT_EQ(blocks[1].body, "echo ```\n");  // a shorter or tagged fence does not close it
  EXPECT_TRUE(blocks[1].closed);
}

TEST(KernelReply, TakesTheOneCudaBlockWhole) {
  ParsedReply p = parse_kernel_reply(
      "Design: one-shot pull.\n\n```cuda\n#include \"mgk/solution.h\"\n\nint f() { return 1; }\n```\n"
      "```text\nnotes\n```\n");
  ASSERT_TRUE(p.ok) << p.problem;
  EXPECT_EQ(p.code, "#include \"mgk/solution.h\"\n\nint f() { return 1; }\n");
  EXPECT_TRUE(parse_kernel_reply("```c++\nint a;\n```").ok);
  EXPECT_TRUE(parse_kernel_reply("```cpp\r\nint a;\r\n```\r\n").ok);
}

TEST(KernelReply, SaysWhatIsWrongOtherwise) {
  EXPECT_EQ(parse_kernel_reply("I would use TMA here.").problem, "it holds no fenced code block.");
  EXPECT_NE(parse_kernel_reply("```python\nx = 1\n```").problem.find("no code block tagged cuda"),
            std::string::npos);
  EXPECT_NE(parse_kernel_reply("```cuda\na\n```\n```cuda\nb\n```").problem.find("2 cuda code blocks"),
            std::string::npos);
  EXPECT_NE(parse_kernel_reply("```cuda\nint a;\n").problem.find("never closed"), std::string::npos);
  EXPECT_NE(parse_kernel_reply("```cuda\n\n```").problem.find("empty"), std::string::npos);
}

TEST(ShellReply, TakesExactlyOneBashBlock) {
  ParsedReply p = parse_shell_reply("Let me look.\n```bash\nls -la\n```");
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.code, "ls -la\n");
  EXPECT_EQ(parse_shell_reply("no block").problem, "it holds no fenced code block.");
  EXPECT_NE(parse_shell_reply("```bash\nls\n```\n```bash\npwd\n```").problem.find("2 code blocks"),
            std::string::npos);
  EXPECT_NE(parse_shell_reply("```cuda\nint a;\n```").problem.find("not bash"), std::string::npos);
}

}  // namespace
}  // namespace mgk::agent
