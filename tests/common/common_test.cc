// Unit tests of lib/common: parsing, hex and secrets, CRC-32C, ByteReader
// bounds and BoundedQueue.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/bounded_queue.h"
#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/parse.h"
#include "common/secret.h"

namespace trainmover {
namespace {

::testing::AssertionResult FailsNaming(const Status& status, const std::string& text) {
  if (status.ok())
    return ::testing::AssertionFailure() << "succeeded; expected an error naming '" << text << "'";
  if (status.code() != TM_ERROR_INVALID_ARGUMENT) {
    return ::testing::AssertionFailure() << "code " << status.code() << ": " << status.message();
  }
  if (status.message().find(text) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "message '" << status.message() << "' does not name '" << text << "'";
  }
  return ::testing::AssertionSuccess();
}

TEST(ParseSize, AcceptsPlainAndBinaryUnits) {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  const Case cases[] = {
      {"0", 0},      {"4096", 4096},  {"4K", 4096},       {"4KiB", 4096},
      {"4kb", 4096}, {"1M", 1 << 20}, {"16MB", 16 << 20}, {"1G", uint64_t{1} << 30},
      {"0.5K", 512}, {"7b", 7}};
  for (const Case& c : cases) {
    auto r = parse_size(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().message();
    EXPECT_EQ(r.value(), c.bytes) << c.text;
  }
}

TEST(ParseSize, RejectsBadInputNamingIt) {
  for (const char* text :
       {"", "K", "abc", "12Q", "1.5", "-4", "4 K", "1e3", "1..2K", "99999999999G"}) {
    EXPECT_TRUE(FailsNaming(parse_size(text).status(), std::string("'") + text + "'"))
        << "input: " << text;
  }
}

TEST(ParseSizeList, ParsesEachField) {
  auto r = parse_size_list("4K,1M,16M");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value(), (std::vector<uint64_t>{4096, 1 << 20, 16 << 20}));
}

TEST(ParseSizeList, RejectsBadFieldNamingIt) {
  EXPECT_TRUE(FailsNaming(parse_size_list("4K,bogus,1M").status(), "bogus"));
  EXPECT_FALSE(parse_size_list("4K,,1M").ok());
}

TEST(ParseInt, AcceptsWithinRange) {
  EXPECT_EQ(parse_int("42", 0, 100).value(), 42);
  EXPECT_EQ(parse_int("-7", -10, 10).value(), -7);
  EXPECT_EQ(parse_int("100", 0, 100).value(), 100);
}

TEST(ParseInt, RejectsBadInputNamingIt) {
  EXPECT_TRUE(FailsNaming(parse_int("12x", 0, 100).status(), "12x"));
  EXPECT_TRUE(FailsNaming(parse_int("101", 0, 100).status(), "101"));
  EXPECT_TRUE(FailsNaming(parse_int("-1", 0, 100).status(), "-1"));
  EXPECT_TRUE(
      FailsNaming(parse_int("99999999999999999999", 0, 100).status(), "99999999999999999999"));
  EXPECT_FALSE(parse_int("", 0, 100).ok());
  EXPECT_FALSE(parse_int("5 ", 0, 100).ok());
}

TEST(ParseSeconds, AcceptsUnits) {
  EXPECT_DOUBLE_EQ(parse_seconds("5").value(), 5.0);
  EXPECT_DOUBLE_EQ(parse_seconds("0.5").value(), 0.5);
  EXPECT_DOUBLE_EQ(parse_seconds("250ms").value(), 0.25);
  EXPECT_DOUBLE_EQ(parse_seconds("2s").value(), 2.0);
  EXPECT_DOUBLE_EQ(parse_seconds("1m").value(), 60.0);
}

TEST(ParseSeconds, RejectsBadInputNamingIt) {
  for (const char* text : {"", "fast", "5h", "-1", "1.2.3", "ms"}) {
    EXPECT_TRUE(FailsNaming(parse_seconds(text).status(), std::string("'") + text + "'"))
        << "input: " << text;
  }
}

TEST(Hex, RoundTripsEveryByteValue) {
  std::vector<std::byte> all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<std::byte>(i));
  std::string hex = to_hex(all);
  ASSERT_EQ(hex.size(), 512u);
  EXPECT_EQ(hex.substr(0, 6), "000102");
  EXPECT_EQ(hex.substr(506), "fdfeff");
  auto back = from_hex(hex);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back.value().size(), 256u);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(static_cast<uint8_t>(back.value()[i]), i);
  EXPECT_EQ(from_hex("ABcd").value(), std::string("\xab\xcd"));
}

TEST(Hex, RejectsOddLengthAndBadDigits) {
  EXPECT_TRUE(FailsNaming(from_hex("abc").status(), "odd"));
  EXPECT_TRUE(FailsNaming(from_hex("zz").status(), "position 0"));
  EXPECT_TRUE(FailsNaming(from_hex("0g").status(), "position 1"));
  EXPECT_TRUE(FailsNaming(from_hex("00 1").status(), "position 2"));
  EXPECT_TRUE(FailsNaming(from_hex("0011-2").status(), "position 4"));
}

const std::string kSecretA(32, 'a');
const std::string kSecretB = std::string(31, 'a') + "b";

TEST(JobSecret, RequiresAtLeast32HexDigits) {
  EXPECT_TRUE(FailsNaming(JobSecret::from_hex(std::string(30, 'a')).status(), "30 hex digits"));
  EXPECT_TRUE(FailsNaming(JobSecret::from_hex("").status(), "0 hex digits"));
  EXPECT_TRUE(FailsNaming(JobSecret::from_hex(std::string(33, 'a')).status(), "job secret"));
  EXPECT_TRUE(FailsNaming(JobSecret::from_hex(std::string(31, 'a') + "x").status(), "job secret"));
  auto ok = JobSecret::from_hex(kSecretA);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().to_hex(), kSecretA);
}

TEST(JobSecret, GeneratedSecretsDiffer) {
  auto a = JobSecret::generate();
  auto b = JobSecret::generate();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().to_hex().size(), 64u);
  EXPECT_NE(a.value().to_hex(), b.value().to_hex());
}

TEST(JobSecret, MacIsDeterministicAndKeyed) {
  auto a = JobSecret::from_hex(kSecretA).value();
  auto a2 = JobSecret::from_hex(kSecretA).value();
  auto b = JobSecret::from_hex(kSecretB).value();
  auto msg = as_bytes("hello trainmover");
  EXPECT_TRUE(mac_equal(a.mac(msg), a2.mac(msg)));
  EXPECT_FALSE(mac_equal(a.mac(msg), b.mac(msg)));
  EXPECT_FALSE(mac_equal(a.mac(msg), a.mac(as_bytes("hello trainmoveR"))));
}

TEST(JobSecret, MacMatchesRfc4231Vector) {
  // RFC 4231 test case 1: key 0x0b * 20, data "Hi There".
  auto key = JobSecret::from_hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
  ASSERT_TRUE(key.ok());
  Mac mac = key.value().mac(as_bytes("Hi There"));
  EXPECT_EQ(to_hex(mac), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(Crc32c, MatchesKnownVectors) {
  EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(as_bytes("")), 0u);
  std::array<std::byte, 32> zeros{};
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);  // RFC 3720 B.4
}

TEST(Crc32c, CombineEqualsTheCrcOfTheConcatenation) {
  std::vector<std::byte> data(100000);
  uint32_t x = 12345;
  for (auto& b : data) b = static_cast<std::byte>((x = x * 1103515245u + 12345u) >> 24);
  std::span<const std::byte> all(data);
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{65537}, data.size()}) {
    uint32_t a = crc32c(all.first(split)), b = crc32c(all.subspan(split));
    EXPECT_EQ(crc32c_combine(a, b, data.size() - split), crc32c(all)) << split;
  }
  // Chained, as a trace's file checksum is built from its records'.
  uint32_t chained = crc32c(all.first(10));
  for (size_t at = 10; at < data.size(); at += 9999) {
    auto piece = all.subspan(at, std::min<size_t>(9999, data.size() - at));
    chained = crc32c_combine(chained, crc32c(piece), piece.size());
  }
  EXPECT_EQ(chained, crc32c(all));
}

// Bit at a time, straight from the definition: independent of the table,
// the crc32 instruction and the three-lane split used for large inputs.
uint32_t crc32c_bitwise(std::span<const std::byte> data, uint32_t seed) {
  uint32_t c = ~seed;
  for (std::byte b : data) {
    c ^= static_cast<uint8_t>(b);
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

TEST(Crc32c, LargeInputsMatchTheDefinition) {
  std::vector<std::byte> data(3 * 4096 * 3 + 77);
  uint32_t x = 999;
  for (auto& b : data) b = static_cast<std::byte>((x = x * 1103515245u + 12345u) >> 24);
  std::span<const std::byte> all(data);
  for (size_t size :
       {size_t{12287}, size_t{12288}, size_t{12289}, size_t{24576 + 5}, data.size()}) {
    for (size_t offset : {size_t{0}, size_t{3}}) {  // unaligned starts too
      auto part = all.subspan(offset, size - offset);
      EXPECT_EQ(crc32c(part, 0x1234u), crc32c_bitwise(part, 0x1234u)) << size << "+" << offset;
    }
  }
}

TEST(Crc32c, SeedChainsIncrementalComputation) {
  auto all = as_bytes("123456789");
  uint32_t part = crc32c(all.first(4));
  EXPECT_EQ(crc32c(all.subspan(4), part), 0xE3069283u);
}

TEST(ByteReader, RoundTripsWriterFields) {
  std::vector<std::byte> buf;
  ByteWriter w(buf);
  w.u8(0xAB);
  w.u16(0xBEEF);
  w.u32(0xDEADBEEF);
  w.u64(0x0123456789ABCDEFull);
  w.i32(-5);
  w.blob("key");
  ByteReader r(buf);
  EXPECT_EQ(r.u8(), 0xAB);
  EXPECT_EQ(r.u16(), 0xBEEF);
  EXPECT_EQ(r.u32(), 0xDEADBEEFu);
  EXPECT_EQ(r.u64(), 0x0123456789ABCDEFull);
  EXPECT_EQ(r.i32(), -5);
  EXPECT_EQ(r.blob(16), "key");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(static_cast<uint8_t>(buf[1]), 0xEF);  // little-endian
}

TEST(ByteReader, EveryTruncationFailsWithoutReadingPastTheEnd) {
  std::vector<std::byte> buf;
  ByteWriter w(buf);
  w.u32(7);
  w.u64(9);
  w.blob("payload");
  for (size_t len = 0; len < buf.size(); ++len) {
    // A heap copy of exactly `len` bytes: ASan reports any over-read.
    std::vector<std::byte> cut(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len));
    ByteReader r(cut);
    r.u32();
    r.u64();
    std::string s = r.blob(100);
    EXPECT_FALSE(r.ok()) << "len " << len;
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_TRUE(s.empty());
    EXPECT_EQ(r.u64(), 0u);  // reads after failure return zero
  }
}

TEST(ByteReader, BlobLongerThanLimitOrDataFails) {
  std::vector<std::byte> buf;
  ByteWriter w(buf);
  w.blob("abcdef");
  ByteReader limited(buf);
  EXPECT_TRUE(limited.blob(5).empty());
  EXPECT_FALSE(limited.ok());

  std::vector<std::byte> lying;
  ByteWriter lw(lying);
  lw.u32(0xFFFFFFFF);
  lw.u8(1);
  ByteReader r(lying);
  EXPECT_TRUE(r.blob(SIZE_MAX).empty());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.bytes(1).empty());
}

TEST(ByteReader, BytesOfHugeLengthFails) {
  std::array<std::byte, 4> buf{};
  ByteReader r(buf);
  r.u8();
  EXPECT_TRUE(r.bytes(SIZE_MAX).empty());
  EXPECT_FALSE(r.ok());
}

TEST(FixedWriter, StopsAtTheEndOfItsBuffer) {
  std::array<std::byte, 6> buf{};
  FixedWriter w(std::span<std::byte>(buf).first(5));
  w.u32(0x01020304);
  w.u16(0xFFFF);  // does not fit: dropped
  EXPECT_EQ(w.size(), 4u);
  EXPECT_EQ(buf[4], std::byte{0});
  EXPECT_EQ(buf[5], std::byte{0});
}

TEST(BoundedQueue, FifoWithWrapAround) {
  BoundedQueue<int> q(3);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.capacity(), 3u);
  for (int round = 0; round < 5; ++round) {
    EXPECT_TRUE(q.push(round * 10));
    EXPECT_TRUE(q.push(round * 10 + 1));
    EXPECT_EQ(q.size(), 2u);
    EXPECT_EQ(q.front(), round * 10);
    EXPECT_EQ(q.back(), round * 10 + 1);
    EXPECT_EQ(q.at(1), round * 10 + 1);
    q.pop();
    q.pop();
    EXPECT_TRUE(q.empty());
  }
}

TEST(BoundedQueue, RefusesPushWhenFullAndClears) {
  BoundedQueue<std::string> q(2);
  EXPECT_TRUE(q.push("a"));
  EXPECT_TRUE(q.push("b"));
  EXPECT_TRUE(q.full());
  EXPECT_FALSE(q.push("c"));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.back(), "b");
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.push("d"));
  EXPECT_EQ(q.front(), "d");
}

}  // namespace
}  // namespace trainmover
