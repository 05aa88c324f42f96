// JSON text for the safetensors header: a strict reader that the caller walks through the
// document it expects (skipping the rest), and string quoting for the writer. Hand-written rather
// than a JSON library's: the header is the library's only JSON, and a general library was the
// slowest of the library's sources to compile and about 80 KB of an app's aarch64 code.
#ifndef EDGEATTN_RUNTIME_JSON_TEXT_H_
#define EDGEATTN_RUNTIME_JSON_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {

// RFC 8259, with serde_json's limits (the reference implementation's parser): at most 127 nested
// arrays and objects, and a key at most once in each object. Strings pass bytes of 0x80 and up
// through unchanged: the caller checks that the text is UTF-8. Every error is fail(what), with
// the byte offset in the text where the text is not JSON. Texts up to 10^8 bytes (the safetensors
// header's limit): the exponents it saturates at 10^9 cannot then be offset by the digits.
class JsonReader {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  using FailFn = std::function<Error(const std::string&)>;

  JsonReader(const char* begin, const char* end, FailFn fail);

  Kind Peek();  // the kind of the value that starts next
  void BeginObject();
  // The next member's key, with its ':' read; false once the object's '}' is read.
  bool NextMember(std::string* key);
  void BeginArray();
  // True before each element; false once the array's ']' is read.
  bool NextElement();
  std::string ReadString();
  // Reads a number (refused if it rounds to infinity as a double, as strtod rounds; serde_json
  // refuses such numbers too, though its default parser may round otherwise right at the
  // boundary); true and *value if it is an integer from 0 to 2^64 - 1 with no sign, fraction or
  // exponent.
  bool ReadUnsigned(std::uint64_t* value);
  void Skip();       // one value of any kind, checked as every other
  void ExpectEnd();  // nothing but whitespace is left

 private:
  struct Container {
    bool first = true;           // no member or element read yet
    std::set<std::string> keys;  // an object's keys so far
  };

  // A number's text: sign, integer digits, fraction digits (none without a '.') and exponent.
  struct Number {
    bool negative = false, has_exponent = false;
    const char *integer = nullptr, *integer_end = nullptr;
    const char *fraction = nullptr, *fraction_end = nullptr;
    long long exponent = 0;  // saturated at +-10^9
    bool RoundsToInfinity() const;
  };

  [[noreturn]] void Invalid(const std::string& what) const;
  void SkipWhitespace();
  bool Take(char c);  // consumes c if it is next
  void Expect(char c, const char* what);
  void OpenContainer();
  bool NextInContainer(char close);
  const char* Digits(const char* what);
  Number ScanNumber();
  void ReadLiteral(const char* word);
  void ReadEscape(std::string* out);
  unsigned ReadHex4();

  const char* begin_;
  const char* at_;
  const char* end_;
  FailFn fail_;
  std::vector<Container> open_;
};

// Appends text as a JSON string: quotes, backslash and control characters escaped, every other
// byte as it is.
void AppendJsonString(const std::string& text, std::string* out);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_JSON_TEXT_H_
