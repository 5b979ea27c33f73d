// Element types and reduction operators: the C API's tm_datatype_t and
// tm_redop_t are the one list of both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "trainmover/trainmover.h"

namespace trainmover {

size_t datatype_size(tm_datatype_t type);  // 0 for an invalid value
const char* datatype_name(tm_datatype_t type);
const char* redop_name(tm_redop_t op);
Status check_datatype(tm_datatype_t type);
Status check_redop(tm_redop_t op);

// IEEE half precision and bfloat16 <-> float, rounding to nearest even.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

}  // namespace trainmover
