// The safetensors header's JSON reader and string quoting: RFC 8259's edge cases one by one, and
// the reader against nlohmann/json on random documents and their mutations (same verdict, same
// strings and integers).
#include "runtime/json_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace edgeattn {
namespace {

JsonReader::FailFn Fail() {
  return [](const std::string& what) { return Error(what); };
}

// Reads text as one document, walking every value: the DOM nlohmann/json would build, with
// numbers that are not unsigned integers as null (the reader gives only those).
nlohmann::json ReadValue(JsonReader& json) {
  switch (json.Peek()) {
    case JsonReader::Kind::kObject: {
      nlohmann::json object = nlohmann::json::object();
      json.BeginObject();
      std::string key;
      while (json.NextMember(&key)) object[key] = ReadValue(json);
      return object;
    }
    case JsonReader::Kind::kArray: {
      nlohmann::json array = nlohmann::json::array();
      json.BeginArray();
      while (json.NextElement()) array.push_back(ReadValue(json));
      return array;
    }
    case JsonReader::Kind::kString:
      return json.ReadString();
    case JsonReader::Kind::kNumber: {
      std::uint64_t value = 0;
      return json.ReadUnsigned(&value) ? nlohmann::json(value) : nlohmann::json();
    }
    default:
      json.Skip();
      return nlohmann::json();  // literals: checked by the verdict only
  }
}

nlohmann::json Read(const std::string& text) {
  JsonReader json(text.data(), text.data() + text.size(), Fail());
  nlohmann::json value = ReadValue(json);
  json.ExpectEnd();
  return value;
}

std::string ErrorOf(const std::string& text) {
  try {
    Read(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// nlohmann's DOM with the same simplifications as ReadValue.
nlohmann::json Simplified(const nlohmann::json& value) {
  if (value.is_object() || value.is_array()) {
    nlohmann::json out = value.is_object() ? nlohmann::json::object() : nlohmann::json::array();
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (value.is_object())
        out[it.key()] = Simplified(it.value());
      else
        out.push_back(Simplified(it.value()));
    }
    return out;
  }
  if (value.is_string() || value.is_number_unsigned()) return value;
  return nlohmann::json();
}

TEST(JsonTextTest, ReadsStringsAndEscapes) {
  EXPECT_EQ(Read(R"("a\"\\\/\b\f\n\r\t")"), "a\"\\/\b\f\n\r\t");
  EXPECT_EQ(Read(R"("\u00e9\u20AC")"), "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(Read(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");  // a surrogate pair: U+1F600
  EXPECT_EQ(Read(R"("\u0000")"), std::string(1, '\0'));
  EXPECT_EQ(Read("\"\xc3\xa9\""), "\xc3\xa9");  // bytes of 0x80 and up pass through
  // Each UTF-8 length's first and last code point, as nlohmann/json decodes them.
  for (const char* escaped : {R"("\u007f")", R"("\u0080")", R"("\u07ff")", R"("\u0800")",
                              R"("\uffff")", R"("\ud800\udc00")", R"("\udbff\udfff")"}) {
    EXPECT_EQ(Read(escaped), nlohmann::json::parse(escaped)) << escaped;
  }
  EXPECT_NE(ErrorOf(R"("\ud83d")"), "");        // a high surrogate alone
  EXPECT_NE(ErrorOf(R"("\ud83d\u0041")"), "");  // followed by no low one
  EXPECT_NE(ErrorOf(R"("\ude00")"), "");        // a low surrogate alone
  EXPECT_NE(ErrorOf(R"("\x")"), "");
  EXPECT_NE(ErrorOf(R"("\u12g4")"), "");
  EXPECT_NE(ErrorOf(R"("\u12")"), "");
  EXPECT_NE(ErrorOf("\"a\nb\""), "");  // a raw control character
  EXPECT_NE(ErrorOf("\"abc"), "");
}

TEST(JsonTextTest, ReadsUnsignedIntegersOnly) {
  EXPECT_EQ(Read("0"), 0u);
  EXPECT_EQ(Read("18446744073709551615"), UINT64_MAX);
  for (const char* not_unsigned :
       {"18446744073709551616", "-0", "-1", "1.0", "1e3", "1E+3", "0.5e-1"}) {
    EXPECT_TRUE(Read(not_unsigned).is_null()) << not_unsigned;
  }
  for (const char* invalid : {"01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "--1"}) {
    EXPECT_NE(ErrorOf(invalid), "") << invalid;
  }
}

// As serde_json (and strtod, and nlohmann/json): a number that rounds to infinity as a double is
// refused; one that underflows is not. 2^1024 - 2^970 is the first that rounds to infinity.
TEST(JsonTextTest, RefusesNumbersBeyondADouble) {
  const std::string midpoint =
      "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797"
      "75872070963302864166928879109465555478519404026306574886715058206819089020007083836762738548"
      "45817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711"
      "559699508093042880177904174497792";
  const std::string below =
      "17976931348623158079372897140530341507993413271003782693617377898044496829276475094664901797"
      "75872070963302864166928879109465555478519404026306574886715058206819089020007083836762738548"
      "45817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711"
      "559699508093042880177904174497791";
  for (const std::string& number :
       {std::string("1.7976931348623157e308"), std::string("1.797693134862315807e308"),
        std::string("-1.797693134862315807e308"), std::string("1e-400"), std::string("0e999999"),
        std::string("0.000e99999999999999999999"), std::string("1e308"), below,
        "0.0" + below + "e-2", "0.0" + below + "e310", below + "999e-3"}) {
    EXPECT_EQ(ErrorOf(number), "") << number;
    EXPECT_TRUE(nlohmann::json::accept(number)) << number;
  }
  for (const std::string& number :
       {std::string("1e309"), std::string("-1e400"), std::string("1.797693134862315808e308"),
        std::string("1.7976931348623159e308"), std::string("184e6744073709551616"), midpoint,
        midpoint + "0e-1", "0.0" + midpoint + "e311", "-" + midpoint + ".5"}) {
    EXPECT_NE(ErrorOf(number).find("beyond the range of a double"), std::string::npos) << number;
    EXPECT_FALSE(nlohmann::json::accept(number)) << number;
  }
}

TEST(JsonTextTest, RefusesWhatIsNotJson) {
  for (const char* invalid : {"",     " ",          "{",       "}",         "[1,]",
                              "[,1]", "{\"a\":1,}", "{\"a\"}", "{\"a\" 1}", "{1:2}",
                              "tru",  "nul",        "falsey",  "[1 2]",     "{} {}",
                              "[1]]", "\v1",        "'a'",     "[\"a\",]",  "{\"a\":1 \"b\":2}"}) {
    const std::string error = ErrorOf(invalid);
    EXPECT_NE(error.find("not valid JSON at byte"), std::string::npos) << invalid << ": " << error;
  }
  EXPECT_EQ(ErrorOf(" \t\r\n{ \"a\" : [ true , false , null ] } \n"), "");
}

TEST(JsonTextTest, KeysOnceAndNestingBounded) {
  EXPECT_NE(ErrorOf(R"({"a": 1, "b": {"c": 1, "c": 2}})").find("repeats the key 'c'"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 1}]})"), "");
  EXPECT_EQ(ErrorOf(std::string(127, '[') + std::string(127, ']')), "");
  EXPECT_NE(ErrorOf(std::string(128, '[') + std::string(128, ']')).find("nests more than 127"),
            std::string::npos);
  // Deep input fails at the limit, not on the stack.
  EXPECT_NE(ErrorOf(std::string(1000000, '[')).find("nests more than 127"), std::string::npos);
}

TEST(JsonTextTest, QuotedStringsReadBack) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int length = static_cast<int>(rng() % 12);
    for (int i = 0; i < length; ++i) {
      // ASCII with every control character, and two-byte UTF-8.
      const unsigned c = rng() % 160;
      if (c < 128) {
        text.push_back(static_cast<char>(c));
      } else {
        text += "\xc3";
        text.push_back(static_cast<char>(0x80 + c - 128));
      }
    }
    std::string quoted;
    AppendJsonString(text, &quoted);
    EXPECT_EQ(Read(quoted), text);
    EXPECT_EQ(nlohmann::json::parse(quoted), text);
    EXPECT_EQ(quoted, nlohmann::json(text).dump());
  }
}

// A random document of nesting depth at most `depth`, as text.
std::string RandomDocument(std::mt19937& rng, int depth) {
  static const char* const kScalars[] = {"0",
                                         "7",
                                         "18446744073709551615",
                                         "18446744073709551616",
                                         "1.5e308",
                                         "1e309",
                                         "-3",
                                         "2.5",
                                         "1e2",
                                         "true",
                                         "false",
                                         "null",
                                         "\"\"",
                                         "\"k\"",
                                         "\"\\u00e9\"",
                                         "\"\\ud83d\\ude00\"",
                                         "\"a\\nb\""};
  const unsigned pick = rng() % (depth > 0 ? 6 : 4);
  if (pick < 4) return kScalars[rng() % (sizeof(kScalars) / sizeof(kScalars[0]))];
  const bool object = pick == 4;
  std::string text(1, object ? '{' : '[');
  const int count = static_cast<int>(rng() % 4);
  for (int i = 0; i < count; ++i) {
    if (i > 0) text += rng() % 2 ? "," : " , ";
    if (object) text += "\"k" + std::to_string(i) + "\":";
    text += RandomDocument(rng, depth - 1);
  }
  return text + (object ? '}' : ']');
}

// Byte edits with JSON's own characters: most make the text invalid, some keep it valid.
std::string Mutated(std::string text, std::mt19937& rng) {
  static const char kAlphabet[] = "{}[],:\"\\ 0123456789-+.eEtrufalsn u";
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = text.empty() ? 0 : rng() % (text.size() + 1);
    const char c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    switch (rng() % 3) {
      case 0:
        text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
        break;
      case 1:
        if (at < text.size()) text.erase(at, 1);
        break;
      default:
        if (at < text.size()) text[at] = c;
    }
  }
  return text;
}

TEST(JsonTextTest, AgreesWithNlohmannJson) {
  std::mt19937 rng(2026);
  int valid = 0, invalid = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string document = RandomDocument(rng, 4);
    const std::string text = trial % 4 == 0 ? document : Mutated(document, rng);
    const std::string error = ErrorOf(text);
    // nlohmann/json lets a key repeat (the last one wins); the reader refuses it. The documents
    // themselves have no key twice: only a mutation can make one.
    if (error.find("repeats the key") != std::string::npos) {
      ASSERT_NE(text, document) << error;
      continue;
    }
    const bool accepted = nlohmann::json::accept(text);
    ASSERT_EQ(error.empty(), accepted) << text << ": " << error;
    if (accepted) {
      EXPECT_EQ(Read(text), Simplified(nlohmann::json::parse(text))) << text;
      ++valid;
    } else {
      ++invalid;
    }
  }
  // Both verdicts are exercised in earnest.
  EXPECT_GT(valid, 4000);
  EXPECT_GT(invalid, 4000);
}

// Every raw control character (U+0000 to U+001F) is refused inside a string, as RFC 8259 says;
// DEL (U+007F) is not a control character there.
TEST(JsonTextTest, RefusesEveryRawControlCharacter) {
  for (int c = 0; c < 0x20; ++c) {
    const std::string text = "\"a" + std::string(1, static_cast<char>(c)) + "\"";
    EXPECT_NE(ErrorOf(text).find("a control character in a string"), std::string::npos) << c;
    EXPECT_FALSE(nlohmann::json::accept(text)) << c;
  }
  EXPECT_EQ(Read("\"a\x7f\""), "a\x7f");
}

// A high surrogate must be followed by a low one (U+DC00 to U+DFFF): not by a code unit below
// that range, nor by one above it.
TEST(JsonTextTest, HighSurrogateNeedsALowOne) {
  for (const char* text : {R"("\ud83d\udbff")", R"("\ud83d\ue000")", R"("\ud83d\uffff")",
                           R"("\ud83d\\")", R"("\ud83dx")"}) {
    EXPECT_NE(ErrorOf(text).find("a high surrogate without a low one"), std::string::npos)
        << text;
    EXPECT_FALSE(nlohmann::json::accept(text)) << text;
  }
}

}  // namespace
}  // namespace edgeattn
