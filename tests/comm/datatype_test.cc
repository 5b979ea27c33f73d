// Tests of the float16 / bfloat16 conversions (comm/datatype.h).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "comm/datatype.h"

namespace trainmover {
namespace {

bool half_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }
bool bf16_is_nan(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0; }

// The exact value of a half, computed independently of the library.
double half_reference(uint16_t h) {
  int exp = (h >> 10) & 0x1F;
  int mant = h & 0x3FF;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0x1F) return mant == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(Half, EveryValueConvertsExactlyAndRoundTrips) {
  for (uint32_t i = 0; i <= 0xFFFF; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = half_to_float(h);
    if (half_is_nan(h)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(half_is_nan(float_to_half(f))) << std::hex << h;
      ASSERT_EQ(float_to_half(f) & 0x8000, h & 0x8000) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), half_reference(h)) << std::hex << h;
    ASSERT_EQ(float_to_half(f), h) << std::hex << h;
  }
}

// Between two adjacent halves, the float midpoint rounds to the even one and
// the floats just beside it round to the nearer one: every rounding boundary.
TEST(Half, EveryMidpointRoundsToNearestEven) {
  for (uint16_t h = 0; h < 0x7BFF; ++h) {
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      uint16_t lo = static_cast<uint16_t>(h | sign), hi = static_cast<uint16_t>((h + 1) | sign);
      float mid = static_cast<float>((half_reference(lo) + half_reference(hi)) / 2);
      ASSERT_EQ(static_cast<double>(mid), (half_reference(lo) + half_reference(hi)) / 2);  // exact
      uint16_t even = (lo & 1) == 0 ? lo : hi;
      ASSERT_EQ(float_to_half(mid), even) << std::hex << lo;
      float toward_lo = std::nextafter(mid, static_cast<float>(half_reference(lo)));
      float toward_hi = std::nextafter(mid, static_cast<float>(half_reference(hi)));
      ASSERT_EQ(float_to_half(toward_lo), lo) << std::hex << lo;
      ASSERT_EQ(float_to_half(toward_hi), hi) << std::hex << lo;
    }
  }
}

TEST(Half, BoundaryValues) {
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);  // max finite
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);  // below the midpoint to 65536
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // midpoint, ties to even = infinity
  EXPECT_EQ(float_to_half(1e6f), 0x7C00);      // overflow
  EXPECT_EQ(float_to_half(-1e6f), 0xFC00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // half of it: ties to even (zero)
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 * 2^-24 ties to even 2
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000);  // underflow
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1023.5f, -24)),
            0x0400);  // subnormal rounding carries into normal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie, even below
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie, even above
  EXPECT_EQ(float_to_half(2049.0f), 0x6800);
  EXPECT_EQ(float_to_half(2051.0f), 0x6802);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(1e-30f), 0x0000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::max()), 0x7C00);
}

TEST(Half, NanStaysNanWhateverThePayload) {
  for (uint32_t bits : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7F802000u}) {
    uint16_t h = float_to_half(std::bit_cast<float>(bits));
    EXPECT_TRUE(half_is_nan(h)) << std::hex << bits << " -> " << h;
  }
}

TEST(Bfloat16, EveryValueRoundTrips) {
  for (uint32_t i = 0; i <= 0xFFFF; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float f = bfloat16_to_float(b);
    ASSERT_EQ(std::bit_cast<uint32_t>(f), i << 16);
    if (bf16_is_nan(b)) {
      ASSERT_TRUE(bf16_is_nan(float_to_bfloat16(f))) << std::hex << b;
    } else {
      ASSERT_EQ(float_to_bfloat16(f), b) << std::hex << b;
    }
  }
}

TEST(Bfloat16, EveryMidpointRoundsToNearestEven) {
  for (uint32_t b = 0; b < 0x7F7F; ++b) {
    for (uint32_t sign : {0u, 0x8000u}) {
      uint32_t lo = b | sign, hi = (b + 1) | sign;
      uint32_t mid_bits = (lo << 16) | 0x8000;  // exactly between lo and hi
      uint32_t even = (lo & 1) == 0 ? lo : hi;
      ASSERT_EQ(float_to_bfloat16(std::bit_cast<float>(mid_bits)), even) << std::hex << lo;
      ASSERT_EQ(float_to_bfloat16(std::bit_cast<float>(mid_bits - 1)), lo) << std::hex << lo;
      ASSERT_EQ(float_to_bfloat16(std::bit_cast<float>(mid_bits + 1)), hi) << std::hex << lo;
    }
  }
}

TEST(Bfloat16, BoundaryValues) {
  EXPECT_EQ(float_to_bfloat16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x7F7F7FFFu)), 0x7F7F);  // max finite
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x7F7F8000u)), 0x7F80);  // tie to even: infinity
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bfloat16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_bfloat16(-0.0f), 0x8000);
  for (uint32_t bits : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu}) {
    EXPECT_TRUE(bf16_is_nan(float_to_bfloat16(std::bit_cast<float>(bits)))) << std::hex << bits;
  }
}

TEST(Datatype, SizesAndNames) {
  EXPECT_EQ(datatype_size(TM_FLOAT32), 4u);
  EXPECT_EQ(datatype_size(TM_FLOAT64), 8u);
  EXPECT_EQ(datatype_size(TM_FLOAT16), 2u);
  EXPECT_EQ(datatype_size(TM_BFLOAT16), 2u);
  EXPECT_EQ(datatype_size(TM_INT32), 4u);
  EXPECT_EQ(datatype_size(TM_INT64), 8u);
  EXPECT_EQ(datatype_size(TM_UINT8), 1u);
  EXPECT_EQ(datatype_size(static_cast<tm_datatype_t>(7)), 0u);
  EXPECT_FALSE(check_datatype(static_cast<tm_datatype_t>(-1)).ok());
  EXPECT_FALSE(check_redop(static_cast<tm_redop_t>(5)).ok());
  EXPECT_TRUE(check_redop(TM_AVG).ok());
  EXPECT_STREQ(datatype_name(TM_BFLOAT16), "bfloat16");
  EXPECT_STREQ(redop_name(TM_MIN), "min");
}

}  // namespace
}  // namespace trainmover
