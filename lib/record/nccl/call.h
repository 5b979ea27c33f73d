// What one NCCL data call asked for, without CUDA or NCCL headers.
//
// The codes are NCCL's own (ncclDataType_t, ncclRedOp_t), stored as plain
// integers so the trace logic builds and is tested everywhere; the CUDA layer
// static_asserts that they equal nccl.h's values. A trace stores these
// descriptors, and replay answers a call only when the program asks for
// exactly what was recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace trainmover::nccl {

// NCCL's ncclDataType_t values (2.28).
enum class DataType : int32_t {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFloat8e4m3 = 10,
  kFloat8e5m2 = 11,
};
inline constexpr int32_t kNumDataTypes = 12;

// NCCL's built-in ncclRedOp_t values; other values are user-created ops.
enum class RedOp : int32_t { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
inline constexpr int32_t kNumBuiltinOps = 5;

// The data calls the interposer records and replays, numbered as NCCL's
// own ncclFunc_t (src/include/device.h), which traces of api "nccl" store.
enum class CallKind : uint8_t {
  kBroadcast = 0,
  kReduce = 1,
  kAllGather = 2,
  kReduceScatter = 3,
  kAllReduce = 4,
  kSend = 6,
  kRecv = 7,
};
// Whether `code` is one of the CallKind values.
bool valid_kind(uint32_t code);

const char* kind_name(CallKind kind);
// Bytes per element of an NCCL datatype code; an error for unknown codes.
Result<uint32_t> element_size(int32_t datatype);
const char* datatype_name(int32_t datatype);

// One call as the program issued it. `count` is NCCL's count argument
// (per-rank for allgather, the output count for reduce-scatter). `peer` is
// the root (broadcast, reduce) or the peer (send, recv), else -1. `op` is
// the reduction, else -1.
struct CallDesc {
  CallKind kind = CallKind::kAllReduce;
  int32_t datatype = 0;
  int32_t op = -1;
  int32_t peer = -1;
  uint64_t count = 0;
  uint32_t elem_size = 0;  // recorded so a trace is self-describing

  bool operator==(const CallDesc&) const = default;
};

// Builds a descriptor, checking the datatype and reduction codes.
Result<CallDesc> make_call(CallKind kind, int32_t datatype, int32_t op, int32_t peer,
                           uint64_t count);

// Bytes this rank's call writes into its receive buffer, given the rank and
// size of its communicator: what a trace stores and replay copies back.
uint64_t output_bytes(const CallDesc& call, int rank, int nranks);

// "ncclAllReduce(count=1024, float32, op=sum)".
std::string describe(const CallDesc& call);

}  // namespace trainmover::nccl
