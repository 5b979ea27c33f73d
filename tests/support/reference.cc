#include "support/reference.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "comm/datatype.h"

namespace trainmover::testing {
namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// A value in [-1, 1) with many significant bits, or near 1 for products.
double sample(tm_redop_t op, int slot, size_t i, uint64_t salt) {
  uint64_t h = mix(salt * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(slot) * 1000003u + i);
  double unit = static_cast<double>(h % 2000003) / 1000001.5 - 1.0;
  return op == TM_PROD ? 1.0 + unit / 64.0 : unit;
}

int64_t sample_int(tm_redop_t op, int slot, size_t i, uint64_t salt) {
  uint64_t h = mix(salt * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(slot) * 1000003u + i + 17);
  return op == TM_PROD ? static_cast<int64_t>(h % 5) - 2 : static_cast<int64_t>(h % 2001) - 1000;
}

template <typename T>
T combine(tm_redop_t op, T a, T b) {
  switch (op) {
    case TM_SUM:
    case TM_AVG:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      } else {
        return a + b;
      }
    case TM_PROD:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(
            static_cast<U>(static_cast<uint64_t>(static_cast<U>(a)) * static_cast<U>(b)));
      } else {
        return a * b;
      }
    case TM_MAX:
      return a < b ? b : a;
    case TM_MIN:
      return b < a ? b : a;
  }
  return a;
}

// One element of `type` held as raw bytes; arithmetic as the type defines it.
struct Scalar {
  tm_datatype_t type;
  std::byte raw[8]{};

  template <typename T>
  T as() const {
    T v;
    std::memcpy(&v, raw, sizeof v);
    return v;
  }
  template <typename T>
  void set(T v) {
    std::memcpy(raw, &v, sizeof v);
  }
  float as_float16() const {
    return type == TM_FLOAT16 ? half_to_float(as<uint16_t>()) : bfloat16_to_float(as<uint16_t>());
  }
  void set_float16(float f) {
    set<uint16_t>(type == TM_FLOAT16 ? float_to_half(f) : float_to_bfloat16(f));
  }
};

Scalar combine(tm_redop_t op, const Scalar& a, const Scalar& b) {
  Scalar r{a.type};
  switch (a.type) {
    case TM_FLOAT32:
      r.set(combine(op, a.as<float>(), b.as<float>()));
      break;
    case TM_FLOAT64:
      r.set(combine(op, a.as<double>(), b.as<double>()));
      break;
    case TM_INT32:
      r.set(combine(op, a.as<int32_t>(), b.as<int32_t>()));
      break;
    case TM_INT64:
      r.set(combine(op, a.as<int64_t>(), b.as<int64_t>()));
      break;
    case TM_UINT8:
      r.set(combine(op, a.as<uint8_t>(), b.as<uint8_t>()));
      break;
    case TM_FLOAT16:
    case TM_BFLOAT16:
      r.set_float16(combine(op, a.as_float16(), b.as_float16()));
      break;
  }
  return r;
}

Scalar divided(const Scalar& a, int n) {
  Scalar r{a.type};
  switch (a.type) {
    case TM_FLOAT32:
      r.set(a.as<float>() / static_cast<float>(n));
      break;
    case TM_FLOAT64:
      r.set(a.as<double>() / n);
      break;
    case TM_INT32:
      r.set(static_cast<int32_t>(a.as<int32_t>() / n));
      break;
    case TM_INT64:
      r.set(static_cast<int64_t>(a.as<int64_t>() / n));
      break;
    case TM_UINT8:
      r.set(static_cast<uint8_t>(a.as<uint8_t>() / n));
      break;
    case TM_FLOAT16:
    case TM_BFLOAT16:
      r.set_float16(a.as_float16() / static_cast<float>(n));
      break;
  }
  return r;
}

Scalar element(const Bytes& b, tm_datatype_t type, size_t i) {
  Scalar s{type};
  size_t size = datatype_size(type);
  std::memcpy(s.raw, b.data() + i * size, size);
  return s;
}

void put(Bytes& b, size_t i, const Scalar& s) {
  size_t size = datatype_size(s.type);
  std::memcpy(b.data() + i * size, s.raw, size);
}

// Reduces element i (of every slot's input) in the documented order for an
// element of chunk c: x[c+1] op x[c+2] ... op x[c].
Scalar reduce_element(const std::vector<Bytes>& inputs, tm_datatype_t type, tm_redop_t op, int c,
                      size_t i) {
  const int n = static_cast<int>(inputs.size());
  Scalar acc = element(inputs[static_cast<size_t>((c + 1) % n)], type, i);
  for (int k = 2; k <= n; ++k)
    acc = combine(op, acc, element(inputs[static_cast<size_t>((c + k) % n)], type, i));
  return op == TM_AVG && n > 1 ? divided(acc, n) : acc;
}

std::vector<Bytes> all_inputs(tm_datatype_t type, tm_redop_t op, int nslots, size_t count,
                              uint64_t salt) {
  std::vector<Bytes> inputs;
  for (int s = 0; s < nslots; ++s) inputs.push_back(make_input(type, op, s, count, salt));
  return inputs;
}

}  // namespace

Bytes make_input(tm_datatype_t type, tm_redop_t op, int slot, size_t count, uint64_t salt) {
  Bytes out(count * datatype_size(type));
  for (size_t i = 0; i < count; ++i) {
    Scalar s{type};
    double d = sample(op, slot, i, salt);
    int64_t k = sample_int(op, slot, i, salt);
    switch (type) {
      case TM_FLOAT32:
        s.set(static_cast<float>(d));
        break;
      case TM_FLOAT64:
        s.set(d);
        break;
      case TM_INT32:
        s.set(static_cast<int32_t>(k));
        break;
      case TM_INT64:
        s.set(k * 1000003);
        break;
      case TM_UINT8:
        s.set(static_cast<uint8_t>(k));
        break;
      case TM_FLOAT16:
      case TM_BFLOAT16:
        s.set_float16(static_cast<float>(d));
        break;
    }
    put(out, i, s);
  }
  return out;
}

namespace {

// The chunk of each element, from the rule documented in comm/ring_plan.h
// alone (consecutive chunks in slot order, the first count % nslots of them
// one element longer), written without the library's chunk arithmetic so
// that a bug there cannot hide in the reference too.
std::vector<int> chunk_of_elements(size_t count, int nslots) {
  std::vector<int> chunk_of;
  chunk_of.reserve(count);
  const size_t n = static_cast<size_t>(nslots);
  for (size_t c = 0; c < n; ++c) {
    size_t length = count / n + (c < count % n ? 1 : 0);
    chunk_of.insert(chunk_of.end(), length, static_cast<int>(c));
  }
  return chunk_of;
}

// Element i as recursive doubling reduces it (comm/doubling_plan.h): with p
// the largest power of two <= n, v(s) = x[s] OP x[s+p] for s < n - p and x[s]
// otherwise, then the balanced tree V(a, 2m) = V(a, m) OP V(a + m, m) over
// slots 0..p-1; TM_AVG divides the result once.
Scalar doubling_element(const std::vector<Bytes>& inputs, tm_datatype_t type, tm_redop_t op,
                        size_t i) {
  const size_t n = inputs.size();
  size_t p = 1;
  while (p * 2 <= n) p *= 2;
  std::vector<Scalar> v;
  for (size_t s = 0; s < p; ++s) {
    Scalar x = element(inputs[s], type, i);
    v.push_back(s + p < n ? combine(op, x, element(inputs[s + p], type, i)) : x);
  }
  for (size_t m = 1; m < p; m *= 2) {
    for (size_t a = 0; a < p; a += 2 * m) v[a] = combine(op, v[a], v[a + m]);
  }
  return op == TM_AVG && n > 1 ? divided(v[0], static_cast<int>(n)) : v[0];
}

}  // namespace

Bytes reference_allreduce(tm_datatype_t type, tm_redop_t op, int nslots, size_t count,
                          uint64_t salt, Algorithm algorithm) {
  std::vector<Bytes> inputs = all_inputs(type, op, nslots, count, salt);
  Bytes out(count * datatype_size(type));
  // Recursive halving documents recursive doubling's order (comm/halving_plan.h).
  if (algorithm == Algorithm::kDoubling || algorithm == Algorithm::kHalving) {
    for (size_t i = 0; i < count; ++i) put(out, i, doubling_element(inputs, type, op, i));
    return out;
  }
  std::vector<int> chunk_of = chunk_of_elements(count, nslots);
  for (size_t i = 0; i < count; ++i) put(out, i, reduce_element(inputs, type, op, chunk_of[i], i));
  return out;
}

Bytes reference_reduce_scatter(tm_datatype_t type, tm_redop_t op, int nslots, int slot,
                               size_t recvcount, uint64_t salt, Algorithm algorithm) {
  // Recursive halving's reduce_scatter documents recursive doubling's order.
  if (algorithm == Algorithm::kDoubling || algorithm == Algorithm::kHalving) {
    const size_t esize = datatype_size(type);
    Bytes all = reference_allreduce(type, op, nslots, recvcount * static_cast<size_t>(nslots), salt,
                                    Algorithm::kDoubling);
    auto begin =
        all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(slot) * recvcount * esize);
    return Bytes(begin, begin + static_cast<std::ptrdiff_t>(recvcount * esize));
  }
  std::vector<Bytes> inputs =
      all_inputs(type, op, nslots, recvcount * static_cast<size_t>(nslots), salt);
  Bytes out(recvcount * datatype_size(type));
  for (size_t i = 0; i < recvcount; ++i) {
    Scalar v = reduce_element(inputs, type, op, slot, static_cast<size_t>(slot) * recvcount + i);
    put(out, i, v);
  }
  return out;
}

uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace trainmover::testing
