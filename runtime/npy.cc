#include "edgeattn/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <limits>

#include "edgeattn/edgeattn.hpp"
#include "runtime/file_bytes.h"
#include "runtime/mapped_file.h"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// numpy's _MAX_HEADER_SIZE: np.load refuses longer headers (counted in characters).
constexpr std::size_t kMaxHeaderChars = 10000;

// Parses the Python dict literal of an .npy header: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. It accepts a subset of what numpy's ast.literal_eval accepts (what
// numpy.save writes, with any key order, quoting and spacing) and nothing numpy rejects:
// entries separated by commas, a one-element shape written (n,), no escapes inside strings,
// only whitespace and line ends after the closing brace.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, bool long_suffix, const std::string& source)
      : s_(text), long_suffix_(long_suffix), source_(source) {}

  void Parse(std::string* descr, bool* fortran_order, std::vector<std::size_t>* shape) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    if (Peek() != '{') throw Fail("expected '{' at offset " + std::to_string(pos_));
    ++pos_;
    std::vector<std::string> seen;
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      const std::string key = QuotedString();
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        throw Fail("the key '" + Printable(key) + "' appears twice");
      }
      seen.push_back(key);
      Expect(':');
      if (key == "descr") {
        *descr = QuotedString();
      } else if (key == "fortran_order") {
        *fortran_order = Boolean();
      } else if (key == "shape") {
        *shape = Tuple();
      } else {
        throw Fail("unexpected key '" + Printable(key) + "'");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        throw Fail("expected ',' or '}' at offset " + std::to_string(pos_));
      }
    }
    ++pos_;
    CheckTail();
    if (seen.size() != 3) throw Fail("expected the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  Error Fail(const std::string& what) const {
    return Error(".npy '" + source_ + "': malformed header: " + what);
  }
  static bool IsSpace(char c) {
    return c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r';
  }
  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }
  // numpy pads with spaces and ends with a newline; Python allows no other text after the
  // dict (a line of only spaces after a newline is an IndentationError there).
  void CheckTail() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\f')) ++pos_;
    while (pos_ < s_.size() && (s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    if (pos_ != s_.size()) {
      throw Fail("unexpected '" + Printable(s_.substr(pos_, 16)) + "' after the closing '}'");
    }
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
    if (out.find_first_of("\\\n\r") != std::string::npos) {
      throw Fail("a string holds a backslash or line break: '" + Printable(out) + "'");
    }
    pos_ = end + 1;
    return out;
  }
  bool Word(const char* word) {
    const std::size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    const std::size_t after = pos_ + n;
    if (after < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[after])) || s_[after] == '_')) {
      return false;  // a longer name such as Falsey
    }
    pos_ = after;
    return true;
  }
  bool Boolean() {
    SkipSpace();
    if (Word("True")) return true;
    if (Word("False")) return false;
    throw Fail("expected True or False");
  }
  std::size_t Dimension() {
    if (!std::isdigit(static_cast<unsigned char>(Peek()))) throw Fail("expected a dimension");
    const std::size_t first = pos_;
    std::size_t value = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const std::size_t digit = static_cast<std::size_t>(s_[pos_] - '0');
      if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) {
        throw Fail("dimension overflows");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    if (s_[first] == '0' && pos_ - first > 1) throw Fail("a dimension has a leading zero");
    // Python 2 wrote longs as 2L; numpy drops the L for format versions 1.0 and 2.0 only.
    if (long_suffix_ && pos_ < s_.size() && s_[pos_] == 'L') ++pos_;
    return value;
  }
  std::vector<std::size_t> Tuple() {
    Expect('(');
    std::vector<std::size_t> dims;
    bool trailing_comma = false;
    while (true) {
      SkipSpace();
      if (Peek() == ')') break;
      dims.push_back(Dimension());
      SkipSpace();
      trailing_comma = Peek() == ',';
      if (trailing_comma) {
        ++pos_;
      } else if (Peek() != ')') {
        throw Fail("expected ',' or ')' after a dimension");
      }
    }
    ++pos_;
    // (5) is the number 5 in Python, not a tuple: numpy rejects it as a shape.
    if (dims.size() == 1 && !trailing_comma) throw Fail("a one-element shape needs a comma: (n,)");
    return dims;
  }

  const std::string& s_;
  const bool long_suffix_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

// The header's length in characters as numpy counts them: latin-1 bytes for versions 1.0 and
// 2.0, UTF-8 code points for 3.0.
std::size_t HeaderChars(const std::string& header, std::uint8_t major, const std::string& source) {
  if (header.find('\0') != std::string::npos) {
    throw Error(".npy '" + source + "': malformed header: it holds a NUL byte");
  }
  if (major != 3) return header.size();
  std::size_t bad = 0;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(header.data());
  if (!IsUtf8(bytes, header.size(), &bad)) {
    throw Error(".npy '" + source + "': malformed header: not UTF-8 (offset " +
                std::to_string(bad) + ")");
  }
  std::size_t chars = 0;
  for (const char c : header) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return chars;
}

std::string TupleText(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

using FailFn = std::function<Error(const std::string&)>;

// Where the header and the data lie, from the magic string, version and header length.
struct Layout {
  std::uint8_t major;
  std::size_t header_start, header_len;
};

Layout ReadPreamble(const std::uint8_t* bytes, std::size_t size, const FailFn& fail) {
  if (size < kMagicSize + 4 || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    throw fail("not an .npy file (expected the magic \\x93NUMPY and a version)");
  }
  const std::uint8_t major = bytes[6];
  const std::uint8_t minor = bytes[7];
  if (minor != 0 || major < 1 || major > 3) {
    throw fail("unsupported format version " + std::to_string(major) + "." +
               std::to_string(minor) + " (numpy reads 1.0, 2.0 and 3.0)");
  }
  Layout layout{major, major == 1 ? 10u : 12u, 0};
  if (size < layout.header_start) throw fail("file too short for a version 2/3 header length");
  for (std::size_t i = layout.header_start; i-- > 8;) {
    layout.header_len = layout.header_len << 8 | bytes[i];
  }
  if (layout.header_len > size - layout.header_start) {
    throw fail("header length " + std::to_string(layout.header_len) +
               " runs past the end of the " + std::to_string(size) + "-byte file");
  }
  return layout;
}

// The array's dtype and shape from the header; checks what edgeattn reads.
NpyArray ReadHeader(const std::string& header, std::uint8_t major, const std::string& source,
                    const FailFn& fail) {
  const std::size_t chars = HeaderChars(header, major, source);
  if (chars > kMaxHeaderChars) {
    throw fail("the header has " + std::to_string(chars) + " characters, over numpy's limit of " +
               std::to_string(kMaxHeaderChars));
  }
  std::string descr;
  bool fortran_order = false;
  NpyArray array;
  HeaderParser(header, major < 3, source).Parse(&descr, &fortran_order, &array.shape);
  if (descr == "|b1") {
    array.dtype = NpyDType::kBool;
  } else if (descr != "<f4") {
    throw fail("expected dtype '<f4' (float32) or '|b1' (bool), got '" + Printable(descr) + "'");
  }
  if (fortran_order) throw fail("expected C order, got fortran_order True");
  if (array.shape.empty() || array.shape.size() > 4) {
    throw fail("expected 1 to 4 dimensions, got shape " + TupleText(array.shape));
  }
  return array;
}

// *count = the product of shape; false where its byte count (4 a float) overflows size_t.
bool CountElements(const std::vector<std::size_t>& shape, std::size_t* count) {
  *count = 1;
  for (std::size_t dim : shape) {
    if (dim != 0 && *count > std::numeric_limits<std::size_t>::max() / 4 / dim) return false;
    *count *= dim;
  }
  return true;
}

void ReadData(const std::uint8_t* data, std::size_t available, NpyArray* array,
              const FailFn& fail) {
  std::size_t count = 0;
  if (!CountElements(array->shape, &count)) {
    throw fail("shape " + TupleText(array->shape) + " overflows the byte count");
  }
  const std::size_t item_bytes = array->dtype == NpyDType::kBool ? 1 : 4;
  if (available != count * item_bytes) {
    throw fail("shape " + TupleText(array->shape) + " needs " +
               std::to_string(count * item_bytes) + " bytes of data, the file has " +
               std::to_string(available));
  }
  array->data.resize(count);
  if (array->dtype == NpyDType::kBool) {
    for (std::size_t i = 0; i < count; ++i) {
      if (data[i] > 1) {
        throw fail("bool element " + std::to_string(i) + ": expected byte 0 or 1, got " +
                   std::to_string(data[i]));
      }
      array->data[i] = data[i];
    }
  } else if (count > 0) {
    std::memcpy(array->data.data(), data, count * 4);
  }
}

NpyArray ParseBytes(const std::uint8_t* bytes, std::size_t size, const std::string& source) {
  const FailFn fail = [&](const std::string& what) {
    return Error(".npy '" + source + "': " + what);
  };
  const Layout layout = ReadPreamble(bytes, size, fail);
  const std::string header(reinterpret_cast<const char*>(bytes + layout.header_start),
                           layout.header_len);
  NpyArray array = ReadHeader(header, layout.major, source, fail);
  const std::size_t data_start = layout.header_start + layout.header_len;
  ReadData(bytes + data_start, size - data_start, &array, fail);
  return array;
}

}  // namespace

NpyArray ParseNpy(const std::vector<std::uint8_t>& bytes, const std::string& source) {
  return ParseBytes(bytes.data(), bytes.size(), source);
}

NpyArray ReadNpy(const std::string& path) {
  const MappedFile file(path);
  return ParseBytes(file.data(), file.size(), path);
}

std::vector<std::uint8_t> SerializeNpy(const NpyArray& array) {
  // The product checked as ReadNpy checks it, so that a shape whose product wraps (to
  // data.size(), say 0) cannot be written to a file that then fails to read.
  std::size_t count = 0;
  if (!CountElements(array.shape, &count)) {
    throw Error("SerializeNpy: shape " + TupleText(array.shape) + " overflows the byte count");
  }
  if (array.shape.empty() || array.shape.size() > 4 || count != array.data.size()) {
    throw Error("SerializeNpy: expected 1 to 4 dimensions whose product is data.size() = " +
                std::to_string(array.data.size()) + ", got shape " + TupleText(array.shape));
  }
  const bool is_bool = array.dtype == NpyDType::kBool;
  std::string header = std::string("{'descr': '") + (is_bool ? "|b1" : "<f4") +
                       "', 'fortran_order': False, 'shape': " + TupleText(array.shape) + ", }";
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
