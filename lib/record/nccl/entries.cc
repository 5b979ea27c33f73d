#include "record/nccl/entries.h"

#include "common/bytes.h"

namespace trainmover::nccl {
namespace {

constexpr size_t kCallDescBytes = 1 + 4 + 4 + 4 + 8 + 4;

}  // namespace

std::string describe(const CommEntry& comm) {
  std::string text =
      str_cat("communicator ", comm.ordinal, " (rank ", comm.rank, " of ", comm.nranks);
  if (comm.origin == CommOrigin::kSplit)
    text += str_cat(", split from ", comm.parent, " color ", comm.color, " key ", comm.key);
  return text + ")";
}

void encode(const CommEntry& comm, std::vector<std::byte>& out) {
  ByteWriter w(out);
  w.u32(comm.ordinal);
  w.u8(static_cast<uint8_t>(comm.origin));
  w.i32(comm.nranks);
  w.i32(comm.rank);
  w.i32(comm.parent);
  w.i32(comm.color);
  w.i32(comm.key);
}

void encode(const CallEntry& call, std::vector<std::byte>& out) {
  ByteWriter w(out);
  w.u32(call.comm);
  w.u64(call.seq);
  w.u64(call.order);
  w.u64(call.output_bytes);
  encode(call.desc, out);
}

Result<CommEntry> decode_comm(std::span<const std::byte> in) {
  ByteReader r(in);
  CommEntry c;
  c.ordinal = r.u32();
  uint8_t origin = r.u8();
  c.nranks = r.i32();
  c.rank = r.i32();
  c.parent = r.i32();
  c.color = r.i32();
  c.key = r.i32();
  if (!r.ok() || r.remaining() != 0)
    return error(TM_ERROR_PROTOCOL, "NCCL communicator record has ", in.size(),
                 " bytes, expected 29");
  if (origin != static_cast<uint8_t>(CommOrigin::kInit) &&
      origin != static_cast<uint8_t>(CommOrigin::kSplit))
    return error(TM_ERROR_PROTOCOL, "NCCL communicator record: unknown origin ", int{origin});
  c.origin = static_cast<CommOrigin>(origin);
  if (c.nranks < 1 || c.rank < 0 || c.rank >= c.nranks)
    return error(TM_ERROR_PROTOCOL, "NCCL communicator record: rank ", c.rank, " of ", c.nranks);
  if (c.origin == CommOrigin::kSplit &&
      (c.parent < 0 || static_cast<uint32_t>(c.parent) >= c.ordinal))
    return error(TM_ERROR_PROTOCOL, "NCCL communicator record ", c.ordinal,
                 ": split from unknown parent ", c.parent);
  return c;
}

Result<CallEntry> decode_call_entry(std::span<const std::byte> in) {
  ByteReader r(in);
  CallEntry c;
  c.comm = r.u32();
  c.seq = r.u64();
  c.order = r.u64();
  c.output_bytes = r.u64();
  auto desc_bytes = r.bytes(kCallDescBytes);
  if (!r.ok() || r.remaining() != 0)
    return error(TM_ERROR_PROTOCOL, "NCCL call record has ", in.size(), " bytes, expected ",
                 28 + kCallDescBytes);
  TM_ASSIGN_OR_RETURN(c.desc, decode_call(desc_bytes));
  return c;
}

}  // namespace trainmover::nccl
