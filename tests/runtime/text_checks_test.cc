// The text checks behind every file format: strict decimal numbers, UTF-8, escaped names.
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

bool Utf8(const std::string& s, std::size_t* bad) {
  return IsUtf8(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), bad);
}

TEST(TextChecksTest, ParseDecimal) {
  std::size_t v = 7;
  EXPECT_TRUE(ParseDecimal("0", 10, &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseDecimal("64", 64, &v));
  EXPECT_EQ(v, 64u);
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  EXPECT_TRUE(ParseDecimal(std::to_string(max), max, &v));
  EXPECT_EQ(v, max);
  for (const char* bad : {"", "4x", "64abc", "1e2", "-4", "+4", " 4", "4 ", "04", "0x10", "1.0",
                          "١"}) {
    EXPECT_FALSE(ParseDecimal(bad, max, &v)) << bad;
  }
  EXPECT_FALSE(ParseDecimal("65", 64, &v));
  EXPECT_FALSE(ParseDecimal("7", 5, &v));
  EXPECT_FALSE(ParseDecimal("18446744073709551616", max, &v));
}

TEST(TextChecksTest, Utf8) {
  std::size_t bad = 0;
  EXPECT_TRUE(Utf8("plain ascii", &bad));
  EXPECT_TRUE(Utf8("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", &bad));  // é € 😀
  const std::pair<std::string, std::size_t> cases[] = {
      {"a\xff", 1},          {"ab\xc3", 2},          {"\xc0\xaf", 0},  // truncated, overlong
      {"x\xed\xa0\x80", 1},  {"\xf4\x90\x80\x80", 0}, {"\x80", 0},     // surrogate, > U+10FFFF
  };
  for (const auto& [text, offset] : cases) {
    EXPECT_FALSE(Utf8(text, &bad)) << text;
    EXPECT_EQ(bad, offset) << text;
  }
}

TEST(TextChecksTest, Printable) {
  EXPECT_EQ(Printable("in_proj_bias"), "in_proj_bias");
  EXPECT_EQ(Printable(std::string("<f\0\x1b[2J\n", 8)), "<f\\x00\\x1B[2J\\x0A");
  EXPECT_EQ(Printable("\xc3\xa9"), "\\xC3\\xA9");
}

TEST(TextChecksTest, ShapeText) {
  EXPECT_EQ(ShapeText({}), "[]");
  EXPECT_EQ(ShapeText({3, 4}), "[3, 4]");
}

// A sequence cut short by the end of the buffer is bad even when the byte after the buffer would
// complete it, and every length's overlong forms are refused, not only the 2-byte ones.
TEST(TextChecksTest, Utf8BoundsAndOverlongForms) {
  std::size_t bad = 9;
  const std::uint8_t cut[] = {'a', 'b', 0xC3, 0xA9};
  EXPECT_FALSE(IsUtf8(cut, 3, &bad));
  EXPECT_EQ(bad, 2u);
  const std::uint8_t cut3[] = {0xE2, 0x82, 0xAC};
  EXPECT_FALSE(IsUtf8(cut3, 2, &bad));
  EXPECT_TRUE(IsUtf8(cut3, 3, &bad));
  for (const char* overlong : {"\xe0\x80\xaf", "\xe0\x9f\xbf", "\xf0\x80\x80\xaf",
                               "\xf0\x8f\xbf\xbf"}) {
    EXPECT_FALSE(Utf8(overlong, &bad)) << overlong;
    EXPECT_EQ(bad, 0u);
  }
  EXPECT_TRUE(Utf8("\xe0\xa0\x80\xf0\x90\x80\x80", &bad));  // U+0800 and U+10000
}

// DEL is a control character too: escaped, as everything outside printable ASCII.
TEST(TextChecksTest, PrintableEscapesDel) {
  EXPECT_EQ(Printable("a\x7f~"), "a\\x7F~");
}

}  // namespace
}  // namespace edgeattn
