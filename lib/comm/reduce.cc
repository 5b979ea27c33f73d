#include "comm/reduce.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "comm/datatype.h"

namespace trainmover {
namespace {

// The three aliasing patterns get their own loop each, so the compiler can
// vectorise all of them without runtime overlap checks.
template <typename T, typename Op>
void apply(T* dst, const T* a, const T* b, size_t n, Op op) {
  if (dst == a) {
    T* __restrict d = dst;
    const T* __restrict y = b;
    for (size_t i = 0; i < n; ++i) d[i] = op(d[i], y[i]);
  } else if (dst == b) {
    T* __restrict d = dst;
    const T* __restrict x = a;
    for (size_t i = 0; i < n; ++i) d[i] = op(x[i], d[i]);
  } else {
    T* __restrict d = dst;
    const T* __restrict x = a;
    const T* __restrict y = b;
    for (size_t i = 0; i < n; ++i) d[i] = op(x[i], y[i]);
  }
}

template <typename T>
T wrap_add(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return x + y;
  }
}

template <typename T>
T wrap_mul(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote uint8/uint16 past int so the product cannot overflow a signed type.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(
        static_cast<U>(static_cast<W>(static_cast<U>(x)) * static_cast<W>(static_cast<U>(y))));
  } else {
    return x * y;
  }
}

template <typename T>
T max_of(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
  }
  return x < y ? y : x;
}

template <typename T>
T min_of(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
  }
  return y < x ? y : x;
}

template <typename T>
void reduce_native(tm_redop_t op, void* dst, const void* a, const void* b, size_t n) {
  auto* d = static_cast<T*>(dst);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  switch (op) {
    case TM_SUM:
    // Lambdas, not function pointers: the loop body must inline to vectorise.
    case TM_AVG:
      return apply(d, x, y, n, [](T p, T q) { return wrap_add(p, q); });
    case TM_PROD:
      return apply(d, x, y, n, [](T p, T q) { return wrap_mul(p, q); });
    case TM_MAX:
      return apply(d, x, y, n, [](T p, T q) { return max_of(p, q); });
    case TM_MIN:
      return apply(d, x, y, n, [](T p, T q) { return min_of(p, q); });
  }
}

// 16-bit floats: widen, operate in float, round back.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void reduce_16(tm_redop_t op, void* dst, const void* a, const void* b, size_t n) {
  auto* d = static_cast<uint16_t*>(dst);
  auto* x = static_cast<const uint16_t*>(a);
  auto* y = static_cast<const uint16_t*>(b);
  auto run = [&](auto fop) {
    apply(d, x, y, n,
          [fop](uint16_t p, uint16_t q) { return FromFloat(fop(ToFloat(p), ToFloat(q))); });
  };
  switch (op) {
    case TM_SUM:
    case TM_AVG:
      return run([](float p, float q) { return p + q; });
    case TM_PROD:
      return run([](float p, float q) { return p * q; });
    case TM_MAX:
      return run([](float p, float q) { return max_of(p, q); });
    case TM_MIN:
      return run([](float p, float q) { return min_of(p, q); });
  }
}

template <typename T>
void divide_native(void* data, size_t n, int divisor) {
  auto* p = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      p[i] = static_cast<T>(static_cast<int64_t>(p[i]) / divisor);  // the divisor may not fit in T
    } else {
      p[i] = p[i] / static_cast<T>(divisor);
    }
  }
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void divide_16(void* data, size_t n, int divisor) {
  auto* p = static_cast<uint16_t*>(data);
  for (size_t i = 0; i < n; ++i) p[i] = FromFloat(ToFloat(p[i]) / static_cast<float>(divisor));
}

}  // namespace

void reduce(tm_redop_t op, tm_datatype_t type, void* dst, const void* a, const void* b,
            size_t count) {
  switch (type) {
    case TM_FLOAT32:
      return reduce_native<float>(op, dst, a, b, count);
    case TM_FLOAT64:
      return reduce_native<double>(op, dst, a, b, count);
    case TM_INT32:
      return reduce_native<int32_t>(op, dst, a, b, count);
    case TM_INT64:
      return reduce_native<int64_t>(op, dst, a, b, count);
    case TM_UINT8:
      return reduce_native<uint8_t>(op, dst, a, b, count);
    case TM_FLOAT16:
      return reduce_16<half_to_float, float_to_half>(op, dst, a, b, count);
    case TM_BFLOAT16:
      return reduce_16<bfloat16_to_float, float_to_bfloat16>(op, dst, a, b, count);
  }
}

void divide(tm_datatype_t type, void* data, size_t count, int divisor) {
  switch (type) {
    case TM_FLOAT32:
      return divide_native<float>(data, count, divisor);
    case TM_FLOAT64:
      return divide_native<double>(data, count, divisor);
    case TM_INT32:
      return divide_native<int32_t>(data, count, divisor);
    case TM_INT64:
      return divide_native<int64_t>(data, count, divisor);
    case TM_UINT8:
      return divide_native<uint8_t>(data, count, divisor);
    case TM_FLOAT16:
      return divide_16<half_to_float, float_to_half>(data, count, divisor);
    case TM_BFLOAT16:
      return divide_16<bfloat16_to_float, float_to_bfloat16>(data, count, divisor);
  }
}

}  // namespace trainmover
