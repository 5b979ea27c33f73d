// Tests of the reduction kernels (comm/reduce.h) against scalar references.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "comm/datatype.h"
#include "comm/reduce.h"

namespace trainmover {
namespace {

constexpr tm_redop_t kOps[] = {TM_SUM, TM_PROD, TM_MAX, TM_MIN, TM_AVG};
constexpr size_t kCount = 1003;  // not a multiple of any vector width

template <typename T>
T ref_native(tm_redop_t op, T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case TM_SUM:
      case TM_AVG:
        return static_cast<T>(static_cast<U>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)));
      case TM_PROD:
        return static_cast<T>(static_cast<U>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)));
      case TM_MAX:
        return x > y ? x : y;
      case TM_MIN:
        return x < y ? x : y;
    }
  } else {
    switch (op) {
      case TM_SUM:
      case TM_AVG:
        return x + y;
      case TM_PROD:
        return x * y;
      case TM_MAX:
        return std::isnan(x) ? x : std::isnan(y) ? y : (x > y ? x : y);
      case TM_MIN:
        return std::isnan(x) ? x : std::isnan(y) ? y : (x < y ? x : y);
    }
  }
  return T{};
}

// One element: its bytes, and the reference for `op` over two of them.
struct Codec {
  tm_datatype_t type;
  size_t size;
  std::function<void(std::mt19937_64&, std::byte*)> random;
  std::function<void(tm_redop_t, const std::byte*, const std::byte*, std::byte*)> ref;
};

template <typename T>
Codec native_codec(tm_datatype_t type) {
  Codec c{type, sizeof(T), nullptr, nullptr};
  c.random = [](std::mt19937_64& rng, std::byte* out) {
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(rng());  // full range: sums and products wrap
    } else {
      v = static_cast<T>(std::uniform_real_distribution<double>(-1e3, 1e3)(rng));
    }
    std::memcpy(out, &v, sizeof v);
  };
  c.ref = [](tm_redop_t op, const std::byte* a, const std::byte* b, std::byte* out) {
    T x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    T r = ref_native<T>(op, x, y);
    std::memcpy(out, &r, sizeof r);
  };
  return c;
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
Codec half_codec(tm_datatype_t type) {
  Codec c{type, 2, nullptr, nullptr};
  c.random = [](std::mt19937_64& rng, std::byte* out) {
    uint16_t v =
        FromFloat(static_cast<float>(std::uniform_real_distribution<double>(-100, 100)(rng)));
    std::memcpy(out, &v, 2);
  };
  c.ref = [](tm_redop_t op, const std::byte* a, const std::byte* b, std::byte* out) {
    uint16_t x, y;
    std::memcpy(&x, a, 2);
    std::memcpy(&y, b, 2);
    uint16_t r = FromFloat(ref_native<float>(op, ToFloat(x), ToFloat(y)));
    std::memcpy(out, &r, 2);
  };
  return c;
}

std::vector<Codec> all_codecs() {
  return {native_codec<float>(TM_FLOAT32),
          native_codec<double>(TM_FLOAT64),
          native_codec<int32_t>(TM_INT32),
          native_codec<int64_t>(TM_INT64),
          native_codec<uint8_t>(TM_UINT8),
          half_codec<half_to_float, float_to_half>(TM_FLOAT16),
          half_codec<bfloat16_to_float, float_to_bfloat16>(TM_BFLOAT16)};
}

std::vector<std::byte> random_buffer(const Codec& c, std::mt19937_64& rng) {
  std::vector<std::byte> v(kCount * c.size);
  for (size_t i = 0; i < kCount; ++i) c.random(rng, v.data() + i * c.size);
  return v;
}

std::vector<std::byte> reference(const Codec& c, tm_redop_t op, const std::vector<std::byte>& a,
                                 const std::vector<std::byte>& b) {
  std::vector<std::byte> out(a.size());
  for (size_t i = 0; i < kCount; ++i) c.ref(op, &a[i * c.size], &b[i * c.size], &out[i * c.size]);
  return out;
}

TEST(Reduce, EveryOpAndTypeMatchesReferenceForAllAliasings) {
  std::mt19937_64 rng(7);
  for (const Codec& c : all_codecs()) {
    for (tm_redop_t op : kOps) {
      SCOPED_TRACE(std::string(datatype_name(c.type)) + " " + redop_name(op));
      const auto a = random_buffer(c, rng);
      const auto b = random_buffer(c, rng);
      const auto want = reference(c, op, a, b);

      std::vector<std::byte> dst(a.size(), std::byte{0x77});
      reduce(op, c.type, dst.data(), a.data(), b.data(), kCount);
      EXPECT_EQ(dst, want) << "disjoint";

      auto acc = a;  // dst == a
      reduce(op, c.type, acc.data(), acc.data(), b.data(), kCount);
      EXPECT_EQ(acc, want) << "dst == a";

      auto acc_b = b;  // dst == b: a stays the left operand
      reduce(op, c.type, acc_b.data(), a.data(), acc_b.data(), kCount);
      EXPECT_EQ(acc_b, want) << "dst == b";
    }
  }
}

TEST(Reduce, FloatSumsAreNotReassociated) {
  // The ring fixes the association of each chunk's sum; reduce() must apply
  // exactly the one pairwise operation it is given.
  std::vector<float> x = {1e8f}, y = {-1e8f}, z = {1.0f};
  std::vector<float> t(1);
  reduce(TM_SUM, TM_FLOAT32, t.data(), x.data(), y.data(), 1);
  reduce(TM_SUM, TM_FLOAT32, t.data(), t.data(), z.data(), 1);
  EXPECT_EQ(t[0], 1.0f);  // (x + y) + z
  reduce(TM_SUM, TM_FLOAT32, t.data(), y.data(), z.data(), 1);
  reduce(TM_SUM, TM_FLOAT32, t.data(), x.data(), t.data(), 1);
  EXPECT_EQ(t[0], 0.0f);  // x + (y + z)
}

TEST(Reduce, IntegersWrapAround) {
  int32_t i32a[] = {INT32_MAX, INT32_MIN, 65536}, i32b[] = {1, -1, 65536}, i32d[3];
  reduce(TM_SUM, TM_INT32, i32d, i32a, i32b, 2);
  EXPECT_EQ(i32d[0], INT32_MIN);
  EXPECT_EQ(i32d[1], INT32_MAX);
  reduce(TM_PROD, TM_INT32, i32d, i32a + 2, i32b + 2, 1);
  EXPECT_EQ(i32d[0], 0);
  int64_t i64a[] = {INT64_MAX}, i64b[] = {2}, i64d[1];
  reduce(TM_SUM, TM_INT64, i64d, i64a, i64b, 1);
  EXPECT_EQ(i64d[0], INT64_MIN + 1);
  reduce(TM_PROD, TM_INT64, i64d, i64a, i64b, 1);
  EXPECT_EQ(i64d[0], -2);
  uint8_t u8a[] = {250, 16, 200}, u8b[] = {10, 16, 3}, u8d[3];
  reduce(TM_SUM, TM_UINT8, u8d, u8a, u8b, 3);
  EXPECT_EQ(u8d[0], 4);
  reduce(TM_PROD, TM_UINT8, u8d, u8a, u8b, 3);
  EXPECT_EQ(u8d[1], 0);
  EXPECT_EQ(u8d[2], 88);  // 600 mod 256
  reduce(TM_MAX, TM_UINT8, u8d, u8a, u8b, 3);
  EXPECT_EQ(u8d[0], 250);  // unsigned comparison
}

template <typename T>
void expect_nan_propagates(tm_datatype_t type, T nan, T one) {
  for (tm_redop_t op : {TM_MAX, TM_MIN, TM_SUM}) {
    T a[] = {nan, one, nan}, b[] = {one, nan, nan}, d[3];
    reduce(op, type, d, a, b, 3);
    for (int i = 0; i < 3; ++i) {
      T v = d[i];
      bool is_nan;
      if constexpr (std::is_same_v<T, uint16_t>) {
        is_nan =
            type == TM_FLOAT16 ? std::isnan(half_to_float(v)) : std::isnan(bfloat16_to_float(v));
      } else {
        is_nan = std::isnan(v);
      }
      EXPECT_TRUE(is_nan) << datatype_name(type) << " " << redop_name(op) << " element " << i;
    }
  }
}

TEST(Reduce, MaxAndMinPropagateNan) {
  expect_nan_propagates<float>(TM_FLOAT32, std::numeric_limits<float>::quiet_NaN(), 1.0f);
  expect_nan_propagates<double>(TM_FLOAT64, std::numeric_limits<double>::quiet_NaN(), 1.0);
  expect_nan_propagates<uint16_t>(TM_FLOAT16, 0x7E00, 0x3C00);
  expect_nan_propagates<uint16_t>(TM_BFLOAT16, 0x7FC0, 0x3F80);
}

TEST(Reduce, MaxMinOfSignedZeroAndInfinity) {
  float inf = std::numeric_limits<float>::infinity();
  float a[] = {-inf, 3.0f}, b[] = {-1.0f, inf}, d[2];
  reduce(TM_MAX, TM_FLOAT32, d, a, b, 2);
  EXPECT_EQ(d[0], -1.0f);
  EXPECT_EQ(d[1], inf);
  reduce(TM_MIN, TM_FLOAT32, d, a, b, 2);
  EXPECT_EQ(d[0], -inf);
  EXPECT_EQ(d[1], 3.0f);
}

TEST(Divide, IntegersTruncateTowardZero) {
  int32_t i32[] = {7, -7, 10, INT32_MIN};
  divide(TM_INT32, i32, 4, 2);
  EXPECT_EQ(i32[0], 3);
  EXPECT_EQ(i32[1], -3);
  EXPECT_EQ(i32[2], 5);
  EXPECT_EQ(i32[3], INT32_MIN / 2);
  int64_t i64[] = {INT64_MAX, -10};
  divide(TM_INT64, i64, 2, 3);
  EXPECT_EQ(i64[0], INT64_MAX / 3);
  EXPECT_EQ(i64[1], -3);
}

TEST(Divide, Uint8WithLargeDivisor) {
  uint8_t u8[] = {255, 200, 9};
  divide(TM_UINT8, u8, 3, 2);
  EXPECT_EQ(u8[0], 127);
  EXPECT_EQ(u8[1], 100);
  EXPECT_EQ(u8[2], 4);
  uint8_t big[] = {255, 255};
  divide(TM_UINT8, big, 2, 300);  // a divisor that does not fit in uint8
  EXPECT_EQ(big[0], 0);
  uint8_t exact[] = {255};
  divide(TM_UINT8, exact, 1, 255);
  EXPECT_EQ(exact[0], 1);
  divide(TM_UINT8, exact, 1, 256);
  EXPECT_EQ(exact[0], 0);
}

TEST(Divide, FloatsAndSixteenBitFloats) {
  float f[] = {1.0f, -3.0f};
  divide(TM_FLOAT32, f, 2, 4);
  EXPECT_EQ(f[0], 0.25f);
  EXPECT_EQ(f[1], -0.75f);
  double d[] = {1.0};
  divide(TM_FLOAT64, d, 1, 3);
  EXPECT_EQ(d[0], 1.0 / 3);
  uint16_t h[] = {float_to_half(3.0f), float_to_half(1.0f)};
  divide(TM_FLOAT16, h, 2, 2);
  EXPECT_EQ(half_to_float(h[0]), 1.5f);
  EXPECT_EQ(h[1], float_to_half(1.0f / 2));
  uint16_t b[] = {float_to_bfloat16(10.0f)};
  divide(TM_BFLOAT16, b, 1, 1000);
  EXPECT_EQ(b[0], float_to_bfloat16(10.0f / 1000));
}

TEST(Reduce, ZeroCountTouchesNothing) {
  float a[] = {1}, b[] = {2}, d[] = {5};
  reduce(TM_SUM, TM_FLOAT32, d, a, b, 0);
  EXPECT_EQ(d[0], 5.0f);
}

}  // namespace
}  // namespace trainmover
