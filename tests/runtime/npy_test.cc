// .npy round trips and every malformed-file error.
#include "edgeattn/npy.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"

namespace edgeattn {
namespace {

using testing_support::ExpectError;

std::vector<std::uint8_t> NpyWithHeader(const std::string& dict, std::size_t data_bytes,
                                        std::uint8_t major = 1) {
  std::vector<std::uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  const std::size_t len = dict.size();
  out.push_back(len & 0xFF);
  out.push_back((len >> 8) & 0xFF);
  if (major != 1) {
    out.push_back((len >> 16) & 0xFF);
    out.push_back((len >> 24) & 0xFF);
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

void ExpectParseError(const std::vector<std::uint8_t>& bytes, const std::string& fragment) {
  try {
    ParseNpy(bytes, "x.npy");
    ADD_FAILURE() << "parsed a malformed file; expected '" << fragment << "'";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("x.npy"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(NpyTest, RoundTripRanks1To4) {
  const std::vector<std::vector<std::size_t>> shapes = {{5}, {2, 3}, {2, 1, 4}, {2, 3, 1, 2}};
  for (const auto& shape : shapes) {
    NpyArray a;
    a.shape = shape;
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    for (std::size_t i = 0; i < n; ++i) a.data.push_back(0.5f * float(i) - 1.0f);
    const std::string path = ::testing::TempDir() + "a.npy";
    WriteNpy(path, a);
    const NpyArray b = ReadNpy(path);
    EXPECT_EQ(b.shape, a.shape);
    EXPECT_EQ(b.data, a.data);
    std::remove(path.c_str());
  }
}

// Masks come as bool arrays: numpy.save(np.array([[True, False, True]])) writes these bytes.
TEST(NpyTest, ReadsAndWritesBoolMasks) {
  std::vector<std::uint8_t> bytes =
      NpyWithHeader("{'descr': '|b1', 'fortran_order': False, 'shape': (1, 3), }", 0);
  bytes.insert(bytes.end(), {1, 0, 1});
  const NpyArray a = ParseNpy(bytes, "mask.npy");
  EXPECT_EQ(a.dtype, NpyDType::kBool);
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(a.data, (std::vector<float>{1.0f, 0.0f, 1.0f}));
  const NpyArray b = ParseNpy(SerializeNpy(a), "again.npy");
  EXPECT_EQ(b.dtype, NpyDType::kBool);
  EXPECT_EQ(b.data, a.data);
}

TEST(NpyTest, ReadsVersion2AndNumpyStyleHeaders) {
  const NpyArray a = ParseNpy(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }        \n", 8, 2),
      "x.npy");
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2}));
  const NpyArray b =
      ParseNpy(NpyWithHeader("{\"shape\": (1, 2), \"fortran_order\": False, \"descr\": \"<f4\"}", 8),
               "x.npy");
  EXPECT_EQ(b.shape, (std::vector<std::size_t>{1, 2}));
}

TEST(NpyTest, MalformedFiles) {
  ExpectParseError({'P', 'K', 3, 4, 5, 6, 7, 8, 9, 10}, "not an .npy file");
  ExpectParseError(NpyWithHeader("{}", 0, 9), "version 9.0");
  std::vector<std::uint8_t> past_end = NpyWithHeader("{}", 0);
  past_end[8] = 0xFF;
  ExpectParseError(past_end, "runs past the end");
  ExpectParseError(NpyWithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16),
                   "expected dtype '<f4' (float32) or '|b1' (bool), got '<f8'");
  ExpectParseError(NpyWithHeader("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 3),
                   "needs 2 bytes of data, the file has 3");
  std::vector<std::uint8_t> not_bool =
      NpyWithHeader("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2);
  not_bool.back() = 2;
  ExpectParseError(not_bool, "bool element 1: expected byte 0 or 1, got 2");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8),
                   "C order");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4),
                   "1 to 4 dimensions");
  ExpectParseError(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1), }", 4),
      "1 to 4 dimensions");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8),
                   "needs 12 bytes of data, the file has 8");
  ExpectParseError(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }",
                    8),
      "overflows");
  ExpectParseError(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
                    8),
      "dimension overflows");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'shape': (2,), }", 8), "'fortran_order'");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': Maybe}", 8), "True or False");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 8),
                   "unexpected end");
  ExpectParseError(NpyWithHeader("{'descr: '<f4'}", 8), "malformed header");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'what': 1}", 8), "unexpected key 'what'");
  ExpectParseError(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }", 24),
      "expected ',' or ')'");
  EXPECT_THROW(ReadNpy("/nonexistent/x.npy"), Error);
}

// numpy's own reader (numpy/lib/format.py: read_magic, _read_array_header, _filter_header and
// ast.literal_eval) rejects each of these; so does ParseNpy.
TEST(NpyTest, RejectsWhatNumpyRejects) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_NO_THROW(ParseNpy(NpyWithHeader(ok + "   \n", 8), "x.npy"));
  EXPECT_NO_THROW(ParseNpy(NpyWithHeader(ok + " \r\n\n", 8), "x.npy"));
  EXPECT_NO_THROW(ParseNpy(NpyWithHeader("{\n 'descr' : '<f4' ,\n 'fortran_order':False,"
                                         "'shape':(2,)}", 8),
                           "x.npy"));
  EXPECT_NO_THROW(ParseNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                                         "'shape': (2L, 1L), }", 8),
                           "x.npy"));  // Python 2 longs, versions 1.0 and 2.0 only
  // Commas between entries are required.
  ExpectParseError(NpyWithHeader("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8),
                   "expected ',' or '}'");
  ExpectParseError(NpyWithHeader("{'descr': '<f4',, 'fortran_order': False, 'shape': (2,)}", 8),
                   "expected a quoted string");
  // Nothing but spaces and line ends after the dict.
  ExpectParseError(NpyWithHeader(ok + " junk", 8), "unexpected 'junk' after the closing '}'");
  ExpectParseError(NpyWithHeader(ok + "\n  ", 8), "after the closing '}'");
  ExpectParseError(NpyWithHeader(ok + "}", 8), "after the closing '}'");
  // Over numpy's 10000-character limit, even when well formed.
  ExpectParseError(NpyWithHeader(ok + std::string(10000, ' ') + "\n", 8),
                   "over numpy's limit of 10000");
  // (2) is the number 2 in Python, not a shape.
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", 8),
                   "a one-element shape needs a comma");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (02,)}", 8),
                   "leading zero");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,)}", 8),
                   "True or False");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (2,)}", 8),
                   "'descr' appears twice");
  ExpectParseError(NpyWithHeader("{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (2,)}", 8),
                   "backslash");
  ExpectParseError(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2L,)}", 8, 3),
                   "expected ',' or ')'");  // no L in version 3.0
  ExpectParseError(NpyWithHeader(ok + std::string(1, '\0'), 8), "NUL byte");
  ExpectParseError(NpyWithHeader("{'descr': '<f\xff', 'fortran_order': False, 'shape': (2,)}",
                                 8, 3),
                   "not UTF-8");
  std::vector<std::uint8_t> minor = NpyWithHeader(ok, 8);
  minor[7] = 1;
  ExpectParseError(minor, "unsupported format version 1.1");
}

// A descr with a NUL or an escape sequence is shown escaped, not echoed raw.
TEST(NpyTest, ErrorsEscapeTheDescr) {
  ExpectParseError(NpyWithHeader(std::string("{'descr': '<f") + '\0' +
                                     "', 'fortran_order': False, 'shape': (2,)}",
                                 8, 3),
                   "malformed header: it holds a NUL byte");
  ExpectParseError(
      NpyWithHeader("{'descr': '<f\x1b[2J', 'fortran_order': False, 'shape': (2,)}", 8),
      "got '<f\\x1B[2J'");
}

// Found by the fuzzer: an empty array (a zero dimension) once passed a null pointer to memcpy.
TEST(NpyTest, EmptyArray) {
  const NpyArray a =
      ParseNpy(NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 8), }", 0),
               "x.npy");
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{0, 8}));
  EXPECT_TRUE(a.data.empty());
}

TEST(NpyTest, WriteRejectsInconsistentShape) {
  NpyArray a;
  a.shape = {2, 2};
  a.data = {1, 2, 3};
  EXPECT_THROW(SerializeNpy(a), Error);
  // Products that wrap around to the data's size (0 here) are refused, not written.
  a.data.clear();
  for (const std::vector<std::size_t>& shape :
       {std::vector<std::size_t>{std::size_t{1} << 32, std::size_t{1} << 32},
        std::vector<std::size_t>{3, std::size_t{1} << 63, 2}}) {
    a.shape = shape;
    ExpectError([&] { SerializeNpy(a); }, {"SerializeNpy: shape (", "overflows the byte count"});
  }
  a.shape = {0, std::size_t{1} << 63};  // empty, as ReadNpy reads it
  EXPECT_EQ(ParseNpy(SerializeNpy(a), "empty.npy").shape, a.shape);
}

// The preamble's own bounds: a version 2.0 file cut inside its 4-byte length, a length one byte
// past the end, and a version numpy never wrote (0.0).
TEST(NpyTest, PreambleBounds) {
  ExpectParseError({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x10, 0x00},
                   "file too short for a version 2/3 header length");
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::vector<std::uint8_t> one_past = NpyWithHeader(ok, 0);
  one_past[8] = static_cast<std::uint8_t>(ok.size() + 1);
  ExpectParseError(one_past, "runs past the end");
  ExpectParseError(NpyWithHeader(ok, 8, 0), "unsupported format version 0.0");
}

// numpy refuses a header longer than 10000 characters, not one of exactly 10000; in version 3.0
// it counts characters, not UTF-8 bytes, so a long non-ASCII descr is refused as a dtype.
TEST(NpyTest, HeaderLimitIsInclusiveAndCountsCharacters) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string at_limit = ok + std::string(10000 - ok.size() - 1, ' ') + "\n";
  ASSERT_EQ(at_limit.size(), 10000u);
  EXPECT_NO_THROW(ParseNpy(NpyWithHeader(at_limit, 8), "x.npy"));
  EXPECT_NO_THROW(ParseNpy(NpyWithHeader(at_limit, 8, 3), "x.npy"));
  std::string e_acute;
  for (int i = 0; i < 4000; ++i) e_acute += "\xc3\xa9";  // 8000 bytes, 4000 characters
  const std::string wide = "{'descr': '" + e_acute + "', 'fortran_order': False, 'shape': (2,)}" +
                           std::string(2500, ' ');
  ExpectParseError(NpyWithHeader(wide, 8, 3), "expected dtype '<f4'");
}

// A shape whose element count fits size_t but whose byte count (4 per float) does not is an
// overflow, not a wrapped byte count that an empty data section could match.
TEST(NpyTest, ShapeWhoseByteCountOverflows) {
  ExpectParseError(
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }",
                    0),
      "overflows the byte count");
}

// As numpy.save: the data starts on a 64-byte boundary, after a header ending in '\n'.
TEST(NpyTest, WrittenDataIsAligned) {
  for (std::size_t n = 1; n <= 70; ++n) {
    NpyArray a;
    a.shape = {n, 1};
    a.data.assign(n, 1.0f);
    const std::vector<std::uint8_t> bytes = SerializeNpy(a);
    const std::size_t data_start = 10 + (bytes[8] | bytes[9] << 8);
    EXPECT_EQ(data_start % 64, 0u) << n;
    EXPECT_EQ(bytes[data_start - 1], '\n') << n;
    EXPECT_EQ(bytes.size(), data_start + 4 * n) << n;
  }
}

// The mask helpers the CLI and the golden tests use: NpyBools reads 1 / 0 as true / false;
// BoolMaskToAdditive makes a bool mask 0 / -inf and marks it float32 (a float32 mask is
// additive already, so a second call, or one on a float mask, leaves the values alone).
TEST(NpyTest, MaskHelpers) {
  NpyArray mask{{1, 3}, {1.0f, 0.0f, 1.0f}, NpyDType::kBool};
  const std::unique_ptr<bool[]> bools = NpyBools(mask);
  EXPECT_TRUE(bools[0]);
  EXPECT_FALSE(bools[1]);
  EXPECT_TRUE(bools[2]);
  const float inf = std::numeric_limits<float>::infinity();
  BoolMaskToAdditive(&mask);
  EXPECT_EQ(mask.dtype, NpyDType::kFloat32);
  EXPECT_EQ(mask.data, (std::vector<float>{-inf, 0.0f, -inf}));
  NpyArray additive{{2}, {0.5f, -2.0f}, NpyDType::kFloat32};
  BoolMaskToAdditive(&additive);
  EXPECT_EQ(additive.dtype, NpyDType::kFloat32);
  EXPECT_EQ(additive.data, (std::vector<float>{0.5f, -2.0f}));
}

}  // namespace
}  // namespace edgeattn
