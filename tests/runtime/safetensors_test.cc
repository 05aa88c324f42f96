// safetensors round trips and every malformed-file error.
#include "edgeattn/safetensors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"
#include "tests/expect_error.h"

namespace edgeattn {
namespace {

std::vector<std::uint8_t> FileWithHeader(const std::string& json, std::size_t data_bytes) {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back((json.size() >> (8 * i)) & 0xFF);
  out.insert(out.end(), json.begin(), json.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

void ExpectRejected(const std::vector<std::uint8_t>& bytes, const std::string& fragment) {
  try {
    SafetensorsFile::Parse(bytes, "test.safetensors");
    ADD_FAILURE() << "parsed a malformed file; expected '" << fragment << "'";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test.safetensors"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(SafetensorsTest, RoundTripF32I8AndMetadata) {
  const std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, 1e-20f, -7.0f};
  const std::vector<std::int8_t> q = {-128, 0, 127};
  SafetensorsWriter writer;
  writer.Add("w", DType::kF32, {2, 3}, w.data());
  writer.Add("q", DType::kI8, {3}, q.data());
  writer.SetMetadata("num_heads", "4");
  const std::string path = ::testing::TempDir() + "roundtrip.safetensors";
  writer.Write(path);
  const SafetensorsFile file = SafetensorsFile::Read(path);
  EXPECT_EQ(file.metadata().at("num_heads"), "4");
  EXPECT_EQ(file.ReadFloat("w", {2, 3}), w);
  EXPECT_EQ(file.Info("q").dtype, DType::kI8);
  EXPECT_EQ(0, std::memcmp(file.Data("q"), q.data(), 3));
  std::remove(path.c_str());
}

TEST(SafetensorsTest, ConvertsHalfBfloatAndDouble) {
  // 1.0, -2.5, 65504 (max half), 2^-24 (smallest subnormal half), +inf.
  const std::uint16_t half[] = {0x3C00, 0xC100, 0x7BFF, 0x0001, 0x7C00};
  const std::uint16_t bf16[] = {0x3F80, 0xC020};  // 1.0, -2.5
  const double f64[] = {0.1, -3.0};
  SafetensorsWriter writer;
  writer.Add("h", DType::kF16, {5}, half);
  writer.Add("b", DType::kBF16, {2}, bf16);
  writer.Add("d", DType::kF64, {2}, f64);
  const SafetensorsFile file = SafetensorsFile::Parse(writer.Serialize(), "mem");
  EXPECT_EQ(file.ReadFloat("h"), (std::vector<float>{1.0f, -2.5f, 65504.0f, 5.9604645e-8f,
                                                     std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(file.ReadFloat("b"), (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(file.ReadFloat("d"), (std::vector<float>{0.1f, -3.0f}));
}

TEST(SafetensorsTest, LookupErrors) {
  const std::vector<std::int32_t> ints = {1, 2};
  SafetensorsWriter writer;
  writer.Add("i", DType::kI32, {2}, ints.data());
  const SafetensorsFile file = SafetensorsFile::Parse(writer.Serialize(), "mem");
  EXPECT_THROW(file.Info("missing"), Error);
  EXPECT_THROW(file.ReadFloat("i"), Error);  // I32 is not a float dtype
  try {
    writer.Add("f", DType::kF32, {2}, ints.data());
    SafetensorsFile::Parse(writer.Serialize(), "mem").ReadFloat("f", {3});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected shape [3], got [2]"), std::string::npos);
  }
  EXPECT_THROW(SafetensorsFile::Read("/nonexistent/dir/x.safetensors"), Error);
}

TEST(SafetensorsTest, MalformedFiles) {
  ExpectRejected({1, 2, 3}, "at least 8 bytes");
  std::vector<std::uint8_t> past_end = FileWithHeader("{}", 0);
  past_end[0] = 200;
  ExpectRejected(past_end, "runs past the end");
  std::vector<std::uint8_t> huge = FileWithHeader("{}", 0);
  for (int i = 0; i < 8; ++i) huge[i] = 0xFF;
  ExpectRejected(huge, "exceeds the format's limit of 100000000 bytes");
  ExpectRejected(FileWithHeader("{\"a\": ", 0), "not valid JSON");
  ExpectRejected(FileWithHeader("[1, 2]", 0), "start with '{'");
  ExpectRejected(FileWithHeader(R"({"a": 5})", 0), "expected an object");
  ExpectRejected(FileWithHeader(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4),
                 "missing dtype");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 4]}})", 4),
      "unknown dtype 'Q7'");
  ExpectRejected(FileWithHeader(R"({"a": {"dtype": "F32", "data_offsets": [0, 4]}})", 4),
                 "missing shape");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4),
      "negative");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4),
      "non-integer");
  ExpectRejected(FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1]}})", 4),
                 "tensor 'a': expected data_offsets [begin, end] of two integers, got none");
  // Each malformed data_offsets says what came.
  const auto offsets = [](const std::string& value) {
    return FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": )" + value +
                              "}}",
                          4);
  };
  ExpectRejected(offsets("\"0, 4\""), "of two integers, got no array");
  ExpectRejected(offsets("[4]"), "of two integers, got 1 value");
  ExpectRejected(offsets("[0, 4, 8]"), "of two integers, got 3 values");
  for (const char* bad : {"[-1, 4]", "[0, 4.5]", "[99999999999999999999999, 4]", "[0, \"4\"]"}) {
    ExpectRejected(offsets(bad), "got a value that is not an integer in [0, 2^64)");
  }
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4),
      "the tensors need 8 bytes of data, the file has 4");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4),
      "end before they begin");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4),
      "needs 8 bytes, data_offsets give 4");
  ExpectRejected(FileWithHeader(R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296],
                             "data_offsets": [0, 4]}})",
                                4),
                 "overflows");
  ExpectRejected(FileWithHeader(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                      "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                                8),
                 "overlap");
  ExpectRejected(FileWithHeader(R"({"__metadata__": {"k": 5}})", 0), "not a string");
  ExpectRejected(FileWithHeader(R"({"__metadata__": [1]})", 0), "__metadata__");
}

std::vector<std::uint8_t> Padded(std::vector<std::uint8_t> bytes, std::size_t extra) {
  bytes.resize(bytes.size() + extra, 0);
  return bytes;
}

// The rules of huggingface/safetensors' reader (safetensors/src/tensor.rs, read_metadata and
// Metadata::validate) and of its format description (README "Format").
TEST(SafetensorsTest, ReferenceRules) {
  // Accepted: an empty tensor sharing its offset with the next one, in any header order, as
  // safetensors' own writer lays them out; JSON whitespace after the header; unknown fields;
  // a null __metadata__; every dtype of the reference, including 8-bit floats and complex.
  const SafetensorsFile shared = SafetensorsFile::Parse(
      FileWithHeader(R"({"b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "a": {"dtype": "F32", "shape": [0, 3], "data_offsets": [0, 0]},
                         "c": {"dtype": "I8", "shape": [0], "data_offsets": [4, 4], "x": 1},
                         "__metadata__": null})"
                     "\r\n\t  ",
                     4),
      "test.safetensors");
  EXPECT_EQ(shared.tensors().size(), 3u);
  EXPECT_TRUE(shared.ReadFloat("a").empty());
  const SafetensorsFile f8 = SafetensorsFile::Parse(
      FileWithHeader(R"({"q": {"dtype": "F8_E4M3", "shape": [3], "data_offsets": [0, 3]},
                         "c": {"dtype": "C64", "shape": [1], "data_offsets": [3, 11]},
                         "f": {"dtype": "F4", "shape": [2, 3], "data_offsets": [11, 14]}})",
                     14),
      "test.safetensors");
  EXPECT_EQ(f8.Info("q").dtype, DType::kF8E4M3);
  EXPECT_EQ(f8.Info("f").bytes, 3u);
  EXPECT_THROW(f8.ReadFloat("q"), Error);  // parsed, but not a float edgeattn converts
  // Rejected: holes, trailing bytes, overlaps, a tensor past the data.
  const std::string two = R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                              "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})";
  ExpectRejected(FileWithHeader(two, 12), "tensor 'b' leaves a gap of 4 bytes after 'a'");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8),
      "gap of 4 bytes after the start of the data");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 5),
      "1 bytes follow the last tensor's data");
  ExpectRejected(FileWithHeader("{}", 1), "1 bytes follow the last tensor's data");
  ExpectRejected(FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                      "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                                8),
                 "overlaps");
  // Rejected: the header's own rules.
  ExpectRejected(FileWithHeader(" {}", 0), "start with '{'");
  ExpectRejected(FileWithHeader("", 0), "start with '{'");
  ExpectRejected(FileWithHeader(std::string("{}\0", 3), 0), "NUL byte at offset 2");
  ExpectRejected(FileWithHeader(std::string("{\"a\0\": 1}", 9), 0), "NUL byte at offset 3");
  ExpectRejected(FileWithHeader("{\"\xff\": 1}", 0), "not UTF-8 (offset 2)");
  ExpectRejected(FileWithHeader("{\"\xed\xa0\x80\": 1}", 0), "not UTF-8");  // a surrogate
  ExpectRejected(FileWithHeader("{} x", 0), "not valid JSON");
  // The header is JSON before its tensors are read: the text's fault is named, not a tensor's.
  ExpectRejected(FileWithHeader(R"({"a": 5)", 0), "not valid JSON");
  ExpectRejected(FileWithHeader(R"({"a": nul})", 0), "not valid JSON");
  ExpectRejected(FileWithHeader(R"({"a": 5, "a": 6})", 0), "repeats the key 'a'");
  ExpectRejected(FileWithHeader(R"({"a": 5, "x": 1e400})", 0), "beyond the range of a double");
  ExpectRejected(FileWithHeader(R"({"__metadata__": {}, "__metadata__": {}})", 0),
                 "repeats the key '__metadata__'");
  ExpectRejected(
      FileWithHeader(
          R"({"a": {"dtype": "F32", "dtype": "F32", "shape": [0], "data_offsets": [0, 0]}})", 0),
      "repeats the key 'dtype'");
  ExpectRejected(
      FileWithHeader(R"({"f": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", 2),
      "does not fill a whole number of bytes");
  // serde_json's recursion limit: 127 nested arrays and objects, counting the header's own.
  const auto nested = [](int arrays) {
    return R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0], "x": )" +
           std::string(arrays, '[') + std::string(arrays, ']') + "}}";
  };
  EXPECT_NO_THROW(SafetensorsFile::Parse(FileWithHeader(nested(125), 0), "deep"));
  ExpectRejected(FileWithHeader(nested(126), 0), "nests more than 127");
  ExpectRejected(FileWithHeader(nested(100000), 0), "nests more than 127");
  ExpectRejected(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", 4),
      "data_offsets [begin, end]");
  // The size limit is checked before the length is compared with the file.
  std::vector<std::uint8_t> over_limit = FileWithHeader("{}", 0);
  const std::uint64_t limit_plus_one = 100000001;
  for (int i = 0; i < 8; ++i) over_limit[i] = (limit_plus_one >> (8 * i)) & 0xFF;
  ExpectRejected(Padded(over_limit, 100000001), "exceeds the format's limit");
  std::vector<std::uint8_t> at_limit = FileWithHeader("{}", 0);
  const std::uint64_t limit = 100000000;
  for (int i = 0; i < 8; ++i) at_limit[i] = (limit >> (8 * i)) & 0xFF;
  std::vector<std::uint8_t> spaces = Padded(at_limit, limit - 2);
  std::fill(spaces.begin() + 10, spaces.end(), ' ');
  EXPECT_NO_THROW(SafetensorsFile::Parse(std::move(spaces), "at_limit"));
}

// Names echoed in errors cannot carry control characters to a terminal.
TEST(SafetensorsTest, ErrorsEscapeNames) {
  ExpectRejected(
      FileWithHeader(R"({"a\u001b[31m": {"dtype": "Q", "shape": [1], "data_offsets": [0, 4]}})", 4),
      "tensor 'a\\x1B[31m': unknown dtype 'Q'");
}

// A file in memory is validated in place: no copy, and the same rules.
TEST(SafetensorsTest, ViewsABufferWithoutCopying) {
  const std::vector<float> w = {1.0f, 2.0f};
  SafetensorsWriter writer;
  writer.Add("w", DType::kF32, {2}, w.data());
  const std::vector<std::uint8_t> bytes = writer.Serialize();
  const SafetensorsFile file = SafetensorsFile::View(bytes.data(), bytes.size(), "buffer");
  EXPECT_EQ(file.Data("w"), bytes.data() + bytes.size() - 8);
  EXPECT_EQ(file.ReadFloat("w"), w);
  EXPECT_THROW(SafetensorsFile::View(nullptr, 16, "null"), Error);
  EXPECT_THROW(SafetensorsFile::View(bytes.data(), bytes.size() - 1, "short"), Error);
}

// The writer lays tensors out as safetensors' writer does: largest elements first, so that
// every tensor is aligned to its element size (here the I8 tensor would misalign the F32 one).
TEST(SafetensorsTest, WriterAlignsTensors) {
  const std::vector<std::int8_t> q = {1, 2, 3};
  const std::vector<float> s = {0.5f};
  const std::vector<double> d = {0.25};
  SafetensorsWriter writer;
  writer.Add("a.int8", DType::kI8, {3}, q.data());
  writer.Add("b.scale", DType::kF32, {1}, s.data());
  writer.Add("c.f64", DType::kF64, {1}, d.data());
  const std::vector<std::uint8_t> bytes = writer.Serialize();
  const SafetensorsFile file = SafetensorsFile::View(bytes.data(), bytes.size(), "aligned");
  EXPECT_EQ(file.Info("c.f64").offset, 0u);
  EXPECT_EQ(file.Info("b.scale").offset, 8u);
  EXPECT_EQ(file.Info("a.int8").offset, 12u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(file.Data("b.scale")) % 4, 0u);
  EXPECT_THROW(writer.Add("bad\xff", DType::kI8, {1}, q.data()), Error);
  EXPECT_THROW(writer.SetMetadata("k", "\xc3"), Error);
}

// The writer's header is what nlohmann/json's dump() makes of the same entries: keys in byte
// order, no whitespace, the same escapes; then spaces to a multiple of 8.
TEST(SafetensorsTest, WriterHeaderIsCompactJson) {
  const std::vector<float> f(6, 1.0f);
  const std::vector<std::int8_t> q(1, 1);
  SafetensorsWriter writer;
  writer.Add("b.weight", DType::kF32, {2, 3}, f.data());
  writer.Add("A", DType::kI8, {1}, q.data());
  writer.Add("empty", DType::kF32, {0, 4}, nullptr);
  writer.Add("_\u00e9\"\\\x01\x1f\x7f", DType::kBF16, {}, f.data());
  writer.SetMetadata("format", "pt");
  writer.SetMetadata("\t\n", "\xc3\xa9\"\b\f\r");
  const std::vector<std::uint8_t> bytes = writer.Serialize();
  nlohmann::json header = nlohmann::json::object();
  header["b.weight"] = {{"dtype", "F32"}, {"shape", {2, 3}}, {"data_offsets", {0, 24}}};
  header["empty"] = {{"dtype", "F32"}, {"shape", {0, 4}}, {"data_offsets", {24, 24}}};
  header["_\u00e9\"\\\x01\x1f\x7f"] = {
      {"dtype", "BF16"}, {"shape", nlohmann::json::array()}, {"data_offsets", {24, 26}}};
  header["A"] = {{"dtype", "I8"}, {"shape", {1}}, {"data_offsets", {26, 27}}};
  header["__metadata__"] = {{"format", "pt"}, {"\t\n", "\xc3\xa9\"\b\f\r"}};
  std::string want = header.dump();
  want.append((8 - want.size() % 8) % 8, ' ');
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = length << 8 | bytes[static_cast<std::size_t>(i)];
  ASSERT_EQ(length, want.size());
  EXPECT_EQ(std::string(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(length)),
            want);
}

// A model file whose tensors have the wrong dtype or shape is rejected by name.
TEST(SafetensorsTest, LoadRejectsWrongWeights) {
  const std::string path = ::testing::TempDir() + "bad_model.safetensors";
  const std::vector<float> w(8 * 8, 0.1f), in_w(24 * 8, 0.1f), short_in(23 * 8, 0.1f);
  const std::vector<std::int32_t> ints(24 * 8, 1);
  const auto expect_load_error = [&](const SafetensorsWriter& writer, const char* fragment) {
    writer.Write(path);
    try {
      MultiheadAttention::Load(path, 2);
      ADD_FAILURE() << "loaded; expected '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  SafetensorsWriter missing;
  missing.Add("in_proj_weight", DType::kF32, {24, 8}, in_w.data());
  expect_load_error(missing, "missing 'out_proj.weight' of a PyTorch nn.MultiheadAttention");
  SafetensorsWriter wrong_shape;
  wrong_shape.Add("in_proj_weight", DType::kF32, {23, 8}, short_in.data());
  wrong_shape.Add("out_proj.weight", DType::kF32, {8, 8}, w.data());
  expect_load_error(wrong_shape, "expected shape [24, 8], got [23, 8]");
  SafetensorsWriter wrong_dtype;
  wrong_dtype.Add("in_proj_weight", DType::kI32, {24, 8}, ints.data());
  wrong_dtype.Add("out_proj.weight", DType::kF32, {8, 8}, w.data());
  expect_load_error(wrong_dtype, "expected dtype F32, F16, BF16 or F64, got I32");
  SafetensorsWriter not_square;
  not_square.Add("in_proj_weight", DType::kF32, {24, 8}, in_w.data());
  not_square.Add("out_proj.weight", DType::kF32, {8, 4}, w.data());
  expect_load_error(not_square, "square");
  std::remove(path.c_str());
}

// A write that fails leaves nothing behind: no file, no temporary.
TEST(SafetensorsTest, FailedWriteLeavesNothing) {
  SafetensorsWriter writer;
  const float one = 1.0f;
  writer.Add("x", DType::kF32, {1}, &one);
  EXPECT_THROW(writer.Write("/nonexistent-dir/m.safetensors"), Error);
  const std::string dir_path = ::testing::TempDir();  // a directory cannot be replaced by a file
  EXPECT_THROW(writer.Write(dir_path), Error);
}

TEST(SafetensorsTest, TruncatedFileIsRejected) {
  const std::vector<float> w(64, 1.0f);
  SafetensorsWriter writer;
  writer.Add("w", DType::kF32, {64}, w.data());
  std::vector<std::uint8_t> bytes = writer.Serialize();
  for (std::size_t cut : {bytes.size() - 1, bytes.size() - 200, std::size_t{20}, std::size_t{4}}) {
    std::vector<std::uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    EXPECT_THROW(SafetensorsFile::Parse(truncated, "t"), Error) << cut;
  }
}

// A length field only a few bytes past the end is caught as surely as a huge one: the header
// must fit in what follows the 8-byte prefix, not in the file as a whole.
TEST(SafetensorsTest, HeaderLengthJustPastTheEnd) {
  for (std::uint64_t over : {1, 8}) {
    std::vector<std::uint8_t> bytes = FileWithHeader("{}", 0);
    const std::uint64_t length = 2 + over;
    for (int i = 0; i < 8; ++i) bytes[i] = (length >> (8 * i)) & 0xFF;
    ExpectRejected(bytes, "runs past the end of the 10-byte file");
  }
}

// An empty tensor at the offset where a non-empty one starts is before it, whichever name sorts
// first: the tiling orders by (offset, size), not by offset alone.
TEST(SafetensorsTest, EmptyTensorAtAnOccupiedOffsetInEitherNameOrder) {
  const SafetensorsFile file = SafetensorsFile::Parse(
      FileWithHeader(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "b": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]},
                         "c": {"dtype": "F32", "shape": [2, 0], "data_offsets": [4, 4]}})",
                     4),
      "test.safetensors");
  EXPECT_EQ(file.tensors().size(), 3u);
  EXPECT_EQ(file.Info("b").bytes, 0u);
}

// "__metadata__" is the header's own key: a tensor of that name would make a file no reader
// (this one included) can read.
TEST(SafetensorsTest, WriterRefusesReservedAndEmptyNames) {
  const float one = 1.0f;
  SafetensorsWriter writer;
  EXPECT_THROW(writer.Add("__metadata__", DType::kF32, {1}, &one), Error);
  EXPECT_THROW(writer.Add("", DType::kF32, {1}, &one), Error);
  writer.Add("x", DType::kF32, {1}, &one);
  writer.SetMetadata("k", "v");
  const SafetensorsFile file = SafetensorsFile::Parse(writer.Serialize(), "mem");
  EXPECT_EQ(file.tensors().size(), 1u);
  EXPECT_EQ(file.metadata().at("k"), "v");
}

// A dimension that is not a number (a string, null, an array) is refused as one that is a
// negative or a fraction is: it is not read as 0.
TEST(SafetensorsTest, ShapeOfNonNumbersIsRejected) {
  for (const char* dim : {"\"4\"", "null", "[1]", "true"}) {
    ExpectRejected(FileWithHeader(std::string(R"({"a": {"dtype": "F32", "shape": [)") + dim +
                                      R"(], "data_offsets": [0, 0]}})",
                                  0),
                   "shape holds a non-integer or negative");
  }
}

// The dtype facts the header declares (DTypeSize refuses the sub-byte dtypes, naming them), and
// a file's lookups: Contains, source() and a tensor's element count (1 for a scalar's shape []).
TEST(SafetensorsTest, DTypeFactsAndLookups) {
  EXPECT_STREQ(DTypeName(DType::kF8E4M3), "F8_E4M3");
  EXPECT_STREQ(DTypeName(DType::kBF16), "BF16");
  EXPECT_EQ(DTypeBits(DType::kF4), 4u);
  EXPECT_EQ(DTypeBits(DType::kF6E3M2), 6u);
  EXPECT_EQ(DTypeBits(DType::kC64), 64u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kC64), 8u);
  testing_support::ExpectError([] { DTypeSize(DType::kF4); }, {"DTypeSize: F4", "4 bits"});
  testing_support::ExpectError([] { DTypeSize(DType::kF6E2M3); }, {"DTypeSize: F6_E2M3", "6 bits"});
  const float values[6] = {1, 2, 3, 4, 5, 6};
  SafetensorsWriter writer;
  writer.Add("m", DType::kF32, {2, 3}, values);
  writer.Add("s", DType::kF32, {}, values);
  const SafetensorsFile file = SafetensorsFile::Parse(writer.Serialize(), "facts.safetensors");
  EXPECT_EQ(file.source(), "facts.safetensors");
  EXPECT_TRUE(file.Contains("m"));
  EXPECT_FALSE(file.Contains("M"));
  EXPECT_EQ(file.Info("m").elements(), 6u);
  EXPECT_EQ(file.Info("s").elements(), 1u);
}

}  // namespace
}  // namespace edgeattn
