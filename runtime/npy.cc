#include "edgeattn/npy.hpp"

#include <cctype>
#include <cstring>
#include <limits>

#include "edgeattn/edgeattn.hpp"
#include "runtime/file_bytes.h"

namespace edgeattn {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;

// Parses the Python dict literal of an .npy header: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Only the forms numpy.save writes are accepted.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  void Parse(std::string* descr, bool* fortran_order, std::vector<std::size_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    Expect('{');
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      const std::string key = QuotedString();
      Expect(':');
      if (key == "descr") {
        *descr = QuotedString();
        have_descr = true;
      } else if (key == "fortran_order") {
        *fortran_order = Boolean();
        have_order = true;
      } else if (key == "shape") {
        *shape = Tuple();
        have_shape = true;
      } else {
        throw Fail("unexpected key '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') ++pos_;
    }
    if (!have_descr || !have_order || !have_shape) {
      throw Fail("expected the keys 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  Error Fail(const std::string& what) const {
    return Error(".npy '" + source_ + "': malformed header: " + what);
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char Peek() {
    if (pos_ >= s_.size()) throw Fail("unexpected end");
    return s_[pos_];
  }
  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) throw Fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    ++pos_;
  }
  std::string QuotedString() {
    SkipSpace();
    const char quote = Peek();
    if (quote != '\'' && quote != '"') throw Fail("expected a quoted string");
    const std::size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string::npos) throw Fail("unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool Boolean() {
    SkipSpace();
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    throw Fail("expected True or False");
  }
  std::vector<std::size_t> Tuple() {
    Expect('(');
    std::vector<std::size_t> dims;
    while (true) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return dims;
      }
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) throw Fail("expected a dimension");
      std::size_t value = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        const std::size_t digit = static_cast<std::size_t>(s_[pos_] - '0');
        if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) {
          throw Fail("dimension overflows");
        }
        value = value * 10 + digit;
        ++pos_;
      }
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
      dims.push_back(value);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        throw Fail("expected ',' or ')' after a dimension");
      }
    }
  }

  const std::string& s_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

std::string ShapeText(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

NpyArray ParseNpy(const std::vector<std::uint8_t>& bytes, const std::string& source) {
  const auto fail = [&](const std::string& what) {
    return Error(".npy '" + source + "': " + what);
  };
  if (bytes.size() < kMagicSize + 4 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    throw fail("not an .npy file (expected the magic \\x93NUMPY and a version)");
  }
  const std::uint8_t major = bytes[6];
  std::size_t header_len = 0;
  std::size_t header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | static_cast<std::size_t>(bytes[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("file too short for a version 2/3 header length");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | bytes[8 + static_cast<std::size_t>(i)];
    header_start = 12;
  } else {
    throw fail("unsupported format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - header_start) {
    throw fail("header length " + std::to_string(header_len) + " runs past the end of the " +
               std::to_string(bytes.size()) + "-byte file");
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  std::string descr;
  bool fortran_order = false;
  NpyArray array;
  HeaderParser(header, source).Parse(&descr, &fortran_order, &array.shape);
  if (descr == "|b1") {
    array.dtype = NpyDType::kBool;
  } else if (descr != "<f4") {
    throw fail("expected dtype '<f4' (float32) or '|b1' (bool), got '" + descr + "'");
  }
  const std::size_t item_bytes = array.dtype == NpyDType::kBool ? 1 : 4;
  if (fortran_order) throw fail("expected C order, got fortran_order True");
  if (array.shape.empty() || array.shape.size() > 4) {
    throw fail("expected 1 to 4 dimensions, got shape " + ShapeText(array.shape));
  }
  std::size_t count = 1;
  for (std::size_t dim : array.shape) {
    if (dim != 0 && count > std::numeric_limits<std::size_t>::max() / 4 / dim) {
      throw fail("shape " + ShapeText(array.shape) + " overflows the byte count");
    }
    count *= dim;
  }
  const std::size_t data_start = header_start + header_len;
  const std::size_t available = bytes.size() - data_start;
  if (available != count * item_bytes) {
    throw fail("shape " + ShapeText(array.shape) + " needs " + std::to_string(count * item_bytes) +
               " bytes of data, the file has " + std::to_string(available));
  }
  array.data.resize(count);
  if (array.dtype == NpyDType::kBool) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint8_t b = bytes[data_start + i];
      if (b > 1) {
        throw fail("bool element " + std::to_string(i) + ": expected byte 0 or 1, got " +
                   std::to_string(b));
      }
      array.data[i] = b;
    }
  } else if (count > 0) {
    std::memcpy(array.data.data(), bytes.data() + data_start, count * 4);
  }
  return array;
}

NpyArray ReadNpy(const std::string& path) { return ParseNpy(ReadFileBytes(path), path); }

std::vector<std::uint8_t> SerializeNpy(const NpyArray& array) {
  std::size_t count = 1;
  for (std::size_t dim : array.shape) count *= dim;
  if (array.shape.empty() || array.shape.size() > 4 || count != array.data.size()) {
    throw Error("SerializeNpy: expected 1 to 4 dimensions whose product is data.size() = " +
                std::to_string(array.data.size()) + ", got shape " + ShapeText(array.shape));
  }
  const bool is_bool = array.dtype == NpyDType::kBool;
  std::string header = std::string("{'descr': '") + (is_bool ? "|b1" : "<f4") +
                       "', 'fortran_order': False, 'shape': " + ShapeText(array.shape) + ", }";
  // Pad so that the data starts on a 64-byte boundary, ending the header with '\n'.
  const std::size_t unpadded = kMagicSize + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<std::uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<std::uint8_t>(header.size() & 0xFF));
  out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  if (is_bool) {
    for (float x : array.data) out.push_back(x != 0.0f ? 1 : 0);
    return out;
  }
  const auto* data = reinterpret_cast<const std::uint8_t*>(array.data.data());
  out.insert(out.end(), data, data + array.data.size() * 4);
  return out;
}

void WriteNpy(const std::string& path, const NpyArray& array) {
  WriteFileAtomically(path, SerializeNpy(array));
}

}  // namespace edgeattn
