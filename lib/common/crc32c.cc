#include "common/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace trainmover {
namespace {

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

uint32_t crc32c_table(std::span<const std::byte> data, uint32_t crc) {
  for (std::byte b : data) crc = kTable[(crc ^ static_cast<uint8_t>(b)) & 0xFF] ^ (crc >> 8);
  return crc;
}

// Polynomials over GF(2) modulo the CRC's, in the reflected bit order
// (bit 31 holds the coefficient of x^0): a * b mod P.
constexpr uint32_t multiply_mod_p(uint32_t a, uint32_t b) {
  constexpr uint32_t kReflectedPoly = 0x82F63B78u;
  uint32_t product = 0;
  for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
    if ((a & bit) != 0) product ^= b;
    b = (b & 1) != 0 ? (b >> 1) ^ kReflectedPoly : b >> 1;  // b * x
  }
  return product;
}

// x^(2^k) mod P for k = 0..66: enough for 64-bit byte counts (k = 3 + bit).
constexpr std::array<uint32_t, 67> make_powers() {
  std::array<uint32_t, 67> powers{};
  powers[0] = 1u << 30;  // x^1
  for (size_t k = 1; k < powers.size(); ++k)
    powers[k] = multiply_mod_p(powers[k - 1], powers[k - 1]);
  return powers;
}

constexpr std::array<uint32_t, 67> kPowers = make_powers();

// x^(8 * bytes) mod P: what appending `bytes` zero bytes multiplies by.
constexpr uint32_t shift_for(uint64_t bytes) {
  uint32_t result = 1u << 31;  // x^0
  for (size_t k = 3; bytes != 0; bytes >>= 1, ++k) {
    if ((bytes & 1) != 0) result = multiply_mod_p(kPowers[k], result);
  }
  return result;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes the same (reflected Castagnoli) CRC
// about 10x faster than the table: traces checksum every recorded output.
// One chain of crc32 instructions waits on each result (3 cycles each), so
// large inputs run three lanes at once and join them with the shift above:
// crc(A||B) = crc(A) * x^(8|B|) + crc(B, from 0). Three times faster again,
// which matters because the trace's save competes with training for CPU.
__attribute__((target("sse4.2"))) inline uint64_t crc32c_step(uint64_t crc, const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return _mm_crc32_u64(crc, v);
}

constexpr size_t kLaneBytes = 4096;
constexpr uint32_t kLaneShift = shift_for(kLaneBytes);

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(std::span<const std::byte> data,
                                                        uint32_t crc) {
  const std::byte* p = data.data();
  size_t n = data.size();
  for (; n >= 3 * kLaneBytes; n -= 3 * kLaneBytes, p += 3 * kLaneBytes) {
    uint64_t a = crc, b = 0, c = 0;
    for (size_t i = 0; i < kLaneBytes; i += 8) {
      a = crc32c_step(a, p + i);
      b = crc32c_step(b, p + kLaneBytes + i);
      c = crc32c_step(c, p + 2 * kLaneBytes + i);
    }
    uint32_t ab = multiply_mod_p(kLaneShift, static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
    crc = multiply_mod_p(kLaneShift, ab) ^ static_cast<uint32_t>(c);
  }
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) c = crc32c_step(c, p);
  crc = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) crc = _mm_crc32_u8(crc, static_cast<uint8_t>(*p));
  return crc;
}
#endif

}  // namespace

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return multiply_mod_p(shift_for(length_b), crc_a) ^ crc_b;
}

uint32_t crc32c(std::span<const std::byte> data, uint32_t seed) {
#if defined(__x86_64__)
  static const bool have_sse42 = __builtin_cpu_supports("sse4.2");
  if (have_sse42) return ~crc32c_sse42(data, ~seed);
#endif
  return ~crc32c_table(data, ~seed);
}

}  // namespace trainmover
