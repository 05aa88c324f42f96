#include "runtime/text_checks.h"

#include <cmath>
#include <cstdio>

namespace edgeattn {

std::string FloatStr(float value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return std::to_string(value);
}

std::string FloatDigits(float value) {
  if (!std::isfinite(value)) return FloatStr(value);
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(value));
  return text;
}

std::string Printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out.push_back(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02X", byte);
      out += escaped;
    }
  }
  return out;
}

std::string ShapeText(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool IsUtf8(const std::uint8_t* bytes, std::size_t size, std::size_t* bad_offset) {
  std::size_t i = 0;
  while (i < size) {
    const std::uint8_t lead = bytes[i];
    std::size_t extra;
    std::uint32_t code, min;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      extra = 1, code = lead & 0x1F, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      extra = 2, code = lead & 0x0F, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      extra = 3, code = lead & 0x07, min = 0x10000;
    } else {
      *bad_offset = i;
      return false;
    }
    bool ok = size - i > extra;
    for (std::size_t k = 1; ok && k <= extra; ++k) {
      ok = (bytes[i + k] & 0xC0) == 0x80;
      code = code << 6 | (bytes[i + k] & 0x3F);
    }
    if (!ok || code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      *bad_offset = i;
      return false;
    }
    i += extra + 1;
  }
  return true;
}

bool ParseDecimal(const std::string& text, std::size_t max, std::size_t* value) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  std::size_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::size_t>(c - '0');
    if (digit > max || v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  return true;
}

}  // namespace edgeattn
