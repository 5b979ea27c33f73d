#include "record/nccl/call.h"

namespace trainmover::nccl {
namespace {

struct TypeInfo {
  const char* name;
  uint32_t size;
};

constexpr TypeInfo kTypes[kNumDataTypes] = {
    {"int8", 1},    {"uint8", 1},    {"int32", 4},      {"uint32", 4},
    {"int64", 8},   {"uint64", 8},   {"float16", 2},    {"float32", 4},
    {"float64", 8}, {"bfloat16", 2}, {"float8e4m3", 1}, {"float8e5m2", 1},
};

constexpr const char* kOpNames[kNumBuiltinOps] = {"sum", "prod", "max", "min", "avg"};

bool has_op(CallKind kind) {
  return kind == CallKind::kAllReduce || kind == CallKind::kReduceScatter ||
         kind == CallKind::kReduce;
}

bool has_peer(CallKind kind) {
  return kind == CallKind::kBroadcast || kind == CallKind::kSend || kind == CallKind::kRecv ||
         kind == CallKind::kReduce;
}

}  // namespace

bool valid_kind(uint32_t code) { return code <= 7 && code != 5; }  // 5 is ncclFuncSendRecv

const char* kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce:
      return "ncclAllReduce";
    case CallKind::kAllGather:
      return "ncclAllGather";
    case CallKind::kReduceScatter:
      return "ncclReduceScatter";
    case CallKind::kBroadcast:
      return "ncclBroadcast";
    case CallKind::kSend:
      return "ncclSend";
    case CallKind::kRecv:
      return "ncclRecv";
    case CallKind::kReduce:
      return "ncclReduce";
  }
  return "unknown call";
}

Result<uint32_t> element_size(int32_t datatype) {
  if (datatype < 0 || datatype >= kNumDataTypes)
    return error(TM_ERROR_INVALID_ARGUMENT, "unknown NCCL datatype code ", datatype);
  return kTypes[datatype].size;
}

const char* datatype_name(int32_t datatype) {
  if (datatype < 0 || datatype >= kNumDataTypes) return "unknown-datatype";
  return kTypes[datatype].name;
}

Result<CallDesc> make_call(CallKind kind, int32_t datatype, int32_t op, int32_t peer,
                           uint64_t count) {
  TM_ASSIGN_OR_RETURN(uint32_t size, element_size(datatype));
  if (has_op(kind) && op < 0)
    return error(TM_ERROR_INVALID_ARGUMENT, kind_name(kind), ": invalid reduction op ", op);
  if (has_peer(kind) && peer < 0)
    return error(TM_ERROR_INVALID_ARGUMENT, kind_name(kind), ": invalid root/peer ", peer);
  CallDesc call;
  call.kind = kind;
  call.datatype = datatype;
  call.op = has_op(kind) ? op : -1;
  call.peer = has_peer(kind) ? peer : -1;
  call.count = count;
  call.elem_size = size;
  return call;
}

uint64_t output_bytes(const CallDesc& call, int rank, int nranks) {
  uint64_t bytes = call.count * call.elem_size;
  switch (call.kind) {
    case CallKind::kAllGather:
      return bytes * static_cast<uint64_t>(nranks);
    case CallKind::kSend:
      return 0;
    case CallKind::kReduce:
      return rank == call.peer ? bytes : 0;
    case CallKind::kAllReduce:
    case CallKind::kReduceScatter:
    case CallKind::kBroadcast:
    case CallKind::kRecv:
      return bytes;
  }
  return 0;
}

std::string describe(const CallDesc& call) {
  std::string text =
      str_cat(kind_name(call.kind), "(count=", call.count, ", ", datatype_name(call.datatype));
  if (call.op >= 0) {
    text +=
        call.op < kNumBuiltinOps ? str_cat(", op=", kOpNames[call.op]) : str_cat(", op=", call.op);
  }
  if (call.kind == CallKind::kSend || call.kind == CallKind::kRecv)
    text += str_cat(", peer=", call.peer);
  else if (call.peer >= 0)
    text += str_cat(", root=", call.peer);
  return text + ")";
}

}  // namespace trainmover::nccl
