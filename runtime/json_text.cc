#include "runtime/json_text.h"

#include <utility>

#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

// serde_json's recursion limit of 128, counting as it does.
constexpr std::size_t kMaxOpenContainers = 127;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(unsigned code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | code_point >> 6));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | code_point >> 12));
    out->push_back(static_cast<char>(0x80 | (code_point >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | code_point >> 18));
    out->push_back(static_cast<char>(0x80 | (code_point >> 12 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point >> 6 & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace

JsonReader::JsonReader(const char* begin, const char* end, FailFn fail)
    : begin_(begin), at_(begin), end_(end), fail_(std::move(fail)) {}

void JsonReader::Invalid(const std::string& what) const {
  throw fail_("the header is not valid JSON at byte " + std::to_string(at_ - begin_) + ": " + what);
}

void JsonReader::SkipWhitespace() {
  while (at_ != end_ && (*at_ == ' ' || *at_ == '\t' || *at_ == '\n' || *at_ == '\r')) ++at_;
}

bool JsonReader::Take(char c) {
  if (at_ == end_ || *at_ != c) return false;
  ++at_;
  return true;
}

void JsonReader::Expect(char c, const char* what) {
  SkipWhitespace();
  if (!Take(c)) Invalid(std::string("expected ") + what);
}

JsonReader::Kind JsonReader::Peek() {
  SkipWhitespace();
  if (at_ == end_) Invalid("expected a value, got the end");
  switch (*at_) {
    case '{':
      return Kind::kObject;
    case '[':
      return Kind::kArray;
    case '"':
      return Kind::kString;
    case 't':
    case 'f':
      return Kind::kBool;
    case 'n':
      return Kind::kNull;
    default:
      if (*at_ == '-' || IsDigit(*at_)) return Kind::kNumber;
      Invalid("expected a value");
  }
}

void JsonReader::OpenContainer() {
  if (open_.size() >= kMaxOpenContainers) {
    throw fail_("the header nests more than " + std::to_string(kMaxOpenContainers) +
                " arrays and objects");
  }
  open_.emplace_back();
}

void JsonReader::BeginObject() {
  Expect('{', "'{'");
  OpenContainer();
}

void JsonReader::BeginArray() {
  Expect('[', "'['");
  OpenContainer();
}

// Reads the container's closing character (then closes it) or the separator before its next
// item (none before the first).
bool JsonReader::NextInContainer(char close) {
  SkipWhitespace();
  Container& open = open_.back();
  if (Take(close)) {
    // JSON allows no ',' before the closing character: only an empty container closes first.
    open_.pop_back();
    return false;
  }
  if (!open.first && !Take(',')) Invalid(std::string("expected ',' or '") + close + "'");
  open.first = false;
  return true;
}

bool JsonReader::NextMember(std::string* key) {
  const bool first = open_.back().first;
  if (!NextInContainer('}')) return false;
  SkipWhitespace();
  if (at_ == end_ || *at_ != '"') Invalid(first ? "expected a key or '}'" : "expected a key");
  *key = ReadString();
  if (!open_.back().keys.insert(*key).second) {
    throw fail_("the header repeats the key '" + Printable(*key) + "'");
  }
  Expect(':', "':'");
  return true;
}

bool JsonReader::NextElement() { return NextInContainer(']'); }

unsigned JsonReader::ReadHex4() {
  unsigned value = 0;
  for (int i = 0; i < 4; ++i, ++at_) {
    if (at_ == end_) Invalid("unterminated \\u escape");
    const char c = *at_;
    const unsigned digit = IsDigit(c)             ? c - '0'
                           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                  : 16;
    if (digit == 16) Invalid("expected four hexadecimal digits after \\u");
    value = value << 4 | digit;
  }
  return value;
}

void JsonReader::ReadEscape(std::string* out) {
  if (at_ == end_) Invalid("unterminated string");
  const char c = *at_++;
  switch (c) {
    case '"':
    case '\\':
    case '/':
      out->push_back(c);
      return;
    case 'b':
      out->push_back('\b');
      return;
    case 'f':
      out->push_back('\f');
      return;
    case 'n':
      out->push_back('\n');
      return;
    case 'r':
      out->push_back('\r');
      return;
    case 't':
      out->push_back('\t');
      return;
    case 'u':
      break;
    default:
      --at_;
      Invalid("invalid escape");
  }
  unsigned code_point = ReadHex4();
  if (code_point >= 0xDC00 && code_point <= 0xDFFF) Invalid("a low surrogate without a high one");
  if (code_point >= 0xD800 && code_point <= 0xDBFF) {
    // UTF-16's pair for a code point past U+FFFF: the low half must follow at once.
    if (!Take('\\') || !Take('u')) Invalid("a high surrogate without a low one");
    const unsigned low = ReadHex4();
    if (low < 0xDC00 || low > 0xDFFF) Invalid("a high surrogate without a low one");
    code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
  }
  AppendUtf8(code_point, out);
}

std::string JsonReader::ReadString() {
  Expect('"', "a string");
  std::string out;
  while (true) {
    if (at_ == end_) Invalid("unterminated string");
    const char c = *at_++;
    if (c == '"') return out;
    if (c == '\\') {
      ReadEscape(&out);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      --at_;
      Invalid("a control character in a string");
    } else {
      out.push_back(c);
    }
  }
}

// Scans a run of one or more digits; returns its end.
const char* JsonReader::Digits(const char* what) {
  if (at_ == end_ || !IsDigit(*at_)) Invalid(std::string("expected a digit ") + what);
  while (at_ != end_ && IsDigit(*at_)) ++at_;
  return at_;
}

JsonReader::Number JsonReader::ScanNumber() {
  if (Peek() != Kind::kNumber) Invalid("expected a number");
  Number n;
  n.negative = Take('-');
  n.integer = at_;
  // No leading zeros: a 0 ends the integer part.
  n.integer_end = Take('0') ? at_ : Digits("after '-'");
  n.fraction = n.fraction_end = at_;
  if (Take('.')) {
    n.fraction = at_;
    n.fraction_end = Digits("after '.'");
  }
  if (Take('e') || Take('E')) {
    n.has_exponent = true;
    const bool negative = Take('-');
    if (!negative) Take('+');
    const char* digits = at_;
    Digits("in the exponent");
    // Saturated: beyond a billion the value is 0 or infinite whatever the digits.
    for (; digits != at_; ++digits) {
      if (n.exponent < 1000000000) n.exponent = n.exponent * 10 + (*digits - '0');
    }
    if (negative) n.exponent = -n.exponent;
  }
  return n;
}

// Whether a number rounds to infinity in binary64, as strtod rounds: the value is
// 0.d1d2... x 10^point with its significant digits d, compared with 2^1024 - 2^970, the midpoint
// between DBL_MAX and 2^1024 (which rounds to even: infinity).
bool JsonReader::Number::RoundsToInfinity() const {
  static const char kMidpoint[] =
      "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017"
      "977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273"
      "854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704"
      "342711559699508093042880177904174497792";
  constexpr std::size_t kMidpointDigits = sizeof(kMidpoint) - 1;
  static_assert(kMidpointDigits == 309, "2^1024 has 309 decimal digits");
  std::string digits;  // the first significant digits: as many as the midpoint has
  long long point = (integer_end - integer) + exponent;
  for (const char* part : {integer, fraction}) {
    const char* part_end = part == integer ? integer_end : fraction_end;
    for (const char* c = part; c != part_end && digits.size() < kMidpointDigits; ++c) {
      if (digits.empty() && *c == '0') {
        --point;
      } else {
        digits.push_back(*c);
      }
    }
  }
  if (digits.empty()) return false;  // zero
  if (point != static_cast<long long>(kMidpointDigits)) {
    return point > static_cast<long long>(kMidpointDigits);
  }
  const int order = digits.compare(0, digits.size(), kMidpoint, digits.size());
  // Equal to the midpoint's leading digits: at or past it only if as long as the midpoint.
  return order != 0 ? order > 0 : digits.size() == kMidpointDigits;
}

bool JsonReader::ReadUnsigned(std::uint64_t* value) {
  const Number n = ScanNumber();
  if (n.RoundsToInfinity()) Invalid("a number beyond the range of a double");
  std::uint64_t v = 0;
  bool fits = true;
  for (const char* c = n.integer; c != n.integer_end; ++c) {
    const unsigned digit = static_cast<unsigned>(*c - '0');
    fits = fits && v <= (UINT64_MAX - digit) / 10;
    v = v * 10 + digit;
  }
  *value = v;
  const bool integer = n.fraction == n.fraction_end && !n.has_exponent;
  return integer && !n.negative && fits;
}

void JsonReader::ReadLiteral(const char* word) {
  for (const char* c = word; *c != '\0'; ++c) {
    if (!Take(*c)) Invalid(std::string("expected ") + word);
  }
}

void JsonReader::Skip() {
  std::string key;
  std::uint64_t number = 0;
  switch (Peek()) {
    case Kind::kObject:
      BeginObject();
      while (NextMember(&key)) Skip();
      return;
    case Kind::kArray:
      BeginArray();
      while (NextElement()) Skip();
      return;
    case Kind::kString:
      ReadString();
      return;
    case Kind::kNumber:
      ReadUnsigned(&number);
      return;
    case Kind::kBool:
      ReadLiteral(*at_ == 't' ? "true" : "false");
      return;
    case Kind::kNull:
      ReadLiteral("null");
      return;
  }
}

void JsonReader::ExpectEnd() {
  SkipWhitespace();
  if (at_ != end_) Invalid("expected nothing but whitespace after the header's object");
}

void AppendJsonString(const std::string& text, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          *out += "\\u00";
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace edgeattn
