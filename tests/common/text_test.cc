#include "common/text.h"

#include <gtest/gtest.h>

namespace mgk {
namespace {

std::string pattern(size_t n) {
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + i / 26) % 26);
  return s;
}

TEST(CutMiddle, KeepsOutputsUpToTheLimitWhole) {
  EXPECT_EQ(cut_middle(""), "");
  std::string exactly = pattern(10000);
  EXPECT_EQ(cut_middle(exactly), exactly);
}

TEST(CutMiddle, KeepsFiveThousandAtEachEndAndCountsTheRest) {
  std::string text = pattern(10001);
  std::string expected =
      text.substr(0, 5000) + "\n[... 1 characters cut ...]\n" + text.substr(5001);
  EXPECT_EQ(cut_middle(text), expected);

  std::string big = pattern(123456);
  std::string cut = cut_middle(big);
  EXPECT_EQ(cut.substr(0, 5000), big.substr(0, 5000));
  EXPECT_EQ(cut.substr(cut.size() - 5000), big.substr(big.size() - 5000));
  EXPECT_NE(cut.find("[... 113456 characters cut ...]"), std::string::npos);
  EXPECT_EQ(cut.size(), 10000 + cut_marker(113456).size());
}

TEST(ValidUtf8, KeepsWellFormedTextAndReplacesBrokenBytes) {
  EXPECT_EQ(to_valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(to_valid_utf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(to_valid_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(to_valid_utf8("\xC3"), "\xEF\xBF\xBD");                // cut in the middle
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

}  // namespace
}  // namespace mgk
