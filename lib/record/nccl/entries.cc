#include "record/nccl/entries.h"

#include "common/bytes.h"

namespace trainmover::nccl {
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

}  // namespace trainmover::nccl
