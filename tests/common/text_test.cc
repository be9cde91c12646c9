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

// gcc quotes with ‘ ’ (three bytes each): a cut at a fixed byte count can land inside one.
TEST(CutMiddle, NeverCutsInsideAUtf8Character) {
  const std::string quote = "\xE2\x80\x98";  // ‘
  for (size_t at : {3998u, 3999u, 4000u}) {
    SCOPED_TRACE(at);
    const std::string text = std::string(at, 'a') + quote + std::string(3000, 'b') + quote + std::string(at, 'c');
    const std::string cut = cut_middle(text, 8000, 4000);
    EXPECT_EQ(cut, to_valid_utf8(cut)) << "a character was cut in two";
    const size_t marker = cut.find("\n[... ");
    ASSERT_NE(marker, std::string::npos);
    const size_t left_out = text.size() - (cut.size() - (cut.find("...]\n", marker) + 5 - marker));
    EXPECT_NE(cut.find("[... " + std::to_string(left_out) + " characters cut ...]"), std::string::npos) << cut.substr(marker, 40);
    EXPECT_LE(cut.size() - (cut.find("...]\n", marker) + 5 - marker), 8000u) << "kept more than asked";
  }
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
