#include "comm/datatype.h"

#include <bit>

namespace trainmover {

size_t datatype_size(tm_datatype_t type) {
  switch (type) {
    case TM_FLOAT32:
      return 4;
    case TM_FLOAT64:
      return 8;
    case TM_FLOAT16:
      return 2;
    case TM_BFLOAT16:
      return 2;
    case TM_INT32:
      return 4;
    case TM_INT64:
      return 8;
    case TM_UINT8:
      return 1;
  }
  return 0;
}

const char* datatype_name(tm_datatype_t type) {
  switch (type) {
    case TM_FLOAT32:
      return "float32";
    case TM_FLOAT64:
      return "float64";
    case TM_FLOAT16:
      return "float16";
    case TM_BFLOAT16:
      return "bfloat16";
    case TM_INT32:
      return "int32";
    case TM_INT64:
      return "int64";
    case TM_UINT8:
      return "uint8";
  }
  return "invalid";
}

const char* redop_name(tm_redop_t op) {
  switch (op) {
    case TM_SUM:
      return "sum";
    case TM_PROD:
      return "prod";
    case TM_MAX:
      return "max";
    case TM_MIN:
      return "min";
    case TM_AVG:
      return "avg";
  }
  return "invalid";
}

Status check_datatype(tm_datatype_t type) {
  if (datatype_size(type) == 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "invalid datatype ", static_cast<int>(type));
  return Status::Ok();
}

Status check_redop(tm_redop_t op) {
  if (op < TM_SUM || op > TM_AVG)
    return error(TM_ERROR_INVALID_ARGUMENT, "invalid reduction operator ", static_cast<int>(op));
  return Status::Ok();
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000 | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int shift = 0;
      while ((mant & 0x400) == 0) {
        mant <<= 1;
        ++shift;
      }
      mant &= 0x3FF;
      bits = sign | static_cast<uint32_t>(113 - shift) << 23 | (mant << 13);
    }
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xFF;
  uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF)
    return static_cast<uint16_t>(sign | 0x7C00 | (mant != 0 ? 0x200 | (mant >> 13) : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | static_cast<uint32_t>(e) << 10 | (mant >> 13);
  uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;  // a carry rounds up into the exponent
  return static_cast<uint16_t>(half);
}

float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bfloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7F800000) == 0x7F800000 && (x & 0x7FFFFF) != 0)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7FFF + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace trainmover
