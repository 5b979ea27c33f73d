#include "json_line.h"

#include <gtest/gtest.h>

namespace trainmover::bench {
namespace {

TEST(JsonLine, WritesKeysInOrderWithEscapes) {
  std::string line = JsonLine()
                         .add("impl", "trainmover")
                         .add("nranks", 4)
                         .add("time_s", 0.5)
                         .add("note", "a\"b\\c")
                         .str();
  EXPECT_EQ(line, R"({"impl":"trainmover","nranks":4,"time_s":0.5,"note":"a\"b\\c"})");
}

TEST(JsonLine, NonFiniteNumbersBecomeNull) {
  EXPECT_EQ(JsonLine().add("x", 1.0 / 0.0).str(), R"({"x":null})");
}

TEST(JsonObject, ParsesWhatJsonLineWrites) {
  std::string line =
      JsonLine().add("impl", "gloo").add("bytes", 4096).add("busbw_GBps", 1.25).str();
  auto object = JsonObject::parse(line + "\n");
  ASSERT_TRUE(object.ok()) << object.status().message();
  EXPECT_EQ(object->string("impl"), "gloo");
  EXPECT_EQ(object->number("bytes").value(), 4096);
  EXPECT_DOUBLE_EQ(object->number("busbw_GBps").value(), 1.25);
  EXPECT_FALSE(object->has("time_s"));
  EXPECT_FALSE(object->number("time_s").ok());
  EXPECT_FALSE(object->number("impl").ok());
}

TEST(JsonObject, StringsRoundTripWithEscapes) {
  const std::string text = "tab\there \"quoted\" back\\slash\nnew line \x01";
  auto object = JsonObject::parse(JsonLine().add("s", text).str());
  ASSERT_TRUE(object.ok()) << object.status().message();
  EXPECT_EQ(object->string("s"), text);
}

TEST(JsonObject, AcceptsSpacesAndEmptyObjects) {
  auto object = JsonObject::parse(R"( { "a" : 1 , "b" : "x y" } )");
  ASSERT_TRUE(object.ok()) << object.status().message();
  EXPECT_EQ(object->string("b"), "x y");
  EXPECT_TRUE(JsonObject::parse("{}").ok());
}

TEST(JsonObject, RejectsMalformedLinesSayingWhere) {
  for (const char* bad : {"", "[1]", "{\"a\":1", "{\"a\" 1}", "{\"a\":}", "{\"a\":1} x", "{a:1}",
                          "{\"a\":\"unterminated}"}) {
    auto object = JsonObject::parse(bad);
    EXPECT_FALSE(object.ok()) << bad;
    if (!object.ok()) {
      EXPECT_NE(object.status().message().find("column"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace trainmover::bench
