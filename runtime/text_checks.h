// Checks and escapes for text that comes from files (header encodings, numbers written as
// text, names echoed in error messages) and the pieces of error messages.
#ifndef EDGEATTN_RUNTIME_TEXT_CHECKS_H_
#define EDGEATTN_RUNTIME_TEXT_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace edgeattn {

// The text with every byte outside printable ASCII (0x20-0x7E) written as \xNN, so that a NUL,
// an escape sequence or a stray newline in a file cannot garble or hide an error message.
std::string Printable(const std::string& text);

// A count in error messages.
inline std::string Str(std::size_t value) { return std::to_string(value); }

// A float in error messages: NaN, inf and -inf by name.
std::string FloatStr(float value);
// The same to 9 significant digits (every float told apart), for values far below 1.
std::string FloatDigits(float value);

// "[2, 3]": a tensor shape in error messages.
std::string ShapeText(const std::vector<std::size_t>& shape);

// Whether bytes[0, size) is well-formed UTF-8 (no overlong forms, surrogates or code points
// past U+10FFFF); on failure *bad_offset is the first byte of the bad sequence.
bool IsUtf8(const std::uint8_t* bytes, std::size_t size, std::size_t* bad_offset);

// Parses a decimal whole number in [0, max]: digits only, no sign, spaces, exponent, suffix or
// leading zero ("0" itself is fine). Returns false for anything else, including overflow.
bool ParseDecimal(const std::string& text, std::size_t max, std::size_t* value);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_TEXT_CHECKS_H_
