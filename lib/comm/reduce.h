// Element-wise reduction kernels on host memory.
//
// reduce() computes dst[i] = a[i] OP b[i], in that operand order, so that a
// caller that fixes which operand is the running accumulation fixes the
// result bit for bit. dst may be a, b, or disjoint from both (no partial
// overlap). float16 and bfloat16 are computed in float and rounded to nearest
// even after each operation. Integer sums and products wrap; max and min of
// floats propagate NaN. TM_AVG reduces as TM_SUM; divide() then applies the
// final division by the number of slots (integer division truncates).
#pragma once

#include <cstddef>

#include "trainmover/trainmover.h"

namespace trainmover {

void reduce(tm_redop_t op, tm_datatype_t type, void* dst, const void* a, const void* b,
            size_t count);
void divide(tm_datatype_t type, void* data, size_t count, int divisor);

}  // namespace trainmover
