// Reference results for collectives, computed serially in one process with
// the documented reduction order, for comparison with what the processes of
// a multi-process test computed.
//
// Inputs are deterministic functions of (slot, index), chosen so that the
// order of floating-point operations matters: a result equal to the
// reference bit for bit shows the order is the documented one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/algorithm.h"
#include "trainmover/trainmover.h"

namespace trainmover::testing {

using Bytes = std::vector<std::byte>;

// `count` elements of slot `slot`'s input for a reduction with `op`.
Bytes make_input(tm_datatype_t type, tm_redop_t op, int slot, size_t count, uint64_t salt = 0);

// What every slot's output of an allreduce run with `algorithm` must be:
// the order documented in comm/ring_plan.h or comm/doubling_plan.h.
Bytes reference_allreduce(tm_datatype_t type, tm_redop_t op, int nslots, size_t count,
                          uint64_t salt = 0, Algorithm algorithm = Algorithm::kRing);
// What slot `slot` receives from reduce_scatter of recvcount elements each:
// on the ring, the order documented in comm/ring_plan.h; with recursive
// doubling, its block of the doubling allreduce (comm/algorithm.h).
Bytes reference_reduce_scatter(tm_datatype_t type, tm_redop_t op, int nslots, int slot,
                               size_t recvcount, uint64_t salt = 0,
                               Algorithm algorithm = Algorithm::kRing);

// 64-bit FNV-1a of a byte range.
uint64_t fnv1a(const void* data, size_t bytes);

}  // namespace trainmover::testing
