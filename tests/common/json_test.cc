// JSON as the tools write and read it (common/json.h): keys in order,
// strings that round-trip whatever they hold (control characters, \r,
// quotes, non-ASCII), non-finite numbers written as null and refused as
// figures, and malformed lines refused saying where.
#include "common/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace trainmover {
namespace {

TEST(JsonLine, WritesKeysInInsertionOrderOnOneLine) {
  const Json line = {{"impl", "trainmover"}, {"nranks", 4}, {"time_s", 0.5}, {"bytes", 4096u}};
  EXPECT_EQ(json_line(line), R"({"impl":"trainmover","nranks":4,"time_s":0.5,"bytes":4096})");
}

TEST(JsonLine, NonFiniteNumbersAreWrittenAsNull) {
  const Json line = {{"inf", std::numeric_limits<double>::infinity()},
                     {"minus_inf", -std::numeric_limits<double>::infinity()},
                     {"nan", std::nan("")}};
  const std::string text = json_line(line);
  EXPECT_EQ(text, R"({"inf":null,"minus_inf":null,"nan":null})");
  auto back = parse_json_object(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  auto figure = json_number(back.value(), "inf");
  ASSERT_FALSE(figure.ok());
  EXPECT_NE(figure.status().message().find("'inf' is null"), std::string::npos)
      << figure.status().message();
}

TEST(JsonLine, StringsRoundTripWhateverTheyHold) {
  const std::string text =
      "tab\there \"quoted\" back\\slash\nnew line\r\n\x01\x1f control, caf\xc3\xa9, /slash";
  const std::string line = json_line(Json{{"s", text}});
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(line.find('\r'), std::string::npos) << "one line";
  auto back = parse_json_object(line);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(json_string(back.value(), "s"), text);
}

TEST(JsonLine, TextThatIsNotUtf8IsReplacedNotThrown) {
  const std::string line = json_line(Json{{"s", std::string("bad \xff byte")}});
  auto back = parse_json_object(line);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(json_string(back.value(), "s"), "bad \xef\xbf\xbd byte");  // U+FFFD
}

TEST(ParseJsonObject, ReadsEscapesOfEveryForm) {
  auto object = parse_json_object(R"( { "a" : "\u0041\u00e9\t\r\/" , "n" : 1e3 } )"
                                  "\r\n");
  ASSERT_TRUE(object.ok()) << object.status().message();
  EXPECT_EQ(json_string(object.value(), "a"), "A\xc3\xa9\t\r/");
  EXPECT_EQ(json_number(object.value(), "n").value(), 1000);
}

TEST(ParseJsonObject, LookupsNameTheKey) {
  auto object = parse_json_object(R"({"impl":"gloo","bytes":4096})");
  ASSERT_TRUE(object.ok());
  EXPECT_EQ(json_number(object.value(), "bytes").value(), 4096);
  auto missing = json_number(object.value(), "time_s");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'time_s' missing"), std::string::npos);
  auto text = json_number(object.value(), "impl");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("'impl' is not a number"), std::string::npos);
  EXPECT_EQ(json_string(object.value(), "bytes"), std::nullopt);
  EXPECT_EQ(json_string(object.value(), "nothing"), std::nullopt);
}

TEST(ParseJsonObject, RejectsMalformedLinesSayingWhere) {
  for (const char* bad : {"", "{\"a\":1", "{\"a\" 1}", "{\"a\":}", "{\"a\":1} x", "{a:1}",
                          "{\"a\":\"unterminated}", "{\"a\":inf}", "{\"a\":nan}"}) {
    auto object = parse_json_object(bad);
    ASSERT_FALSE(object.ok()) << bad;
    EXPECT_EQ(object.status().code(), TM_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(object.status().message().find("column"), std::string::npos)
        << object.status().message();
  }
  auto array = parse_json_object("[1]");
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.status().message().find("not an object"), std::string::npos);
}

}  // namespace
}  // namespace trainmover
