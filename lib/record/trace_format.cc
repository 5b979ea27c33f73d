#include "record/trace_format.h"

#include "common/bytes.h"
#include "common/crc32c.h"

namespace trainmover::record {

const char* trace_op_name(uint16_t op) {
  switch (static_cast<TraceOp>(op)) {
    case TraceOp::kAllreduce:
      return "allreduce";
    case TraceOp::kReduceScatter:
      return "reduce_scatter";
    case TraceOp::kAllgather:
      return "allgather";
    case TraceOp::kBroadcast:
      return "broadcast";
    case TraceOp::kBarrier:
      return "barrier";
    case TraceOp::kSend:
      return "send";
    case TraceOp::kRecv:
      return "recv";
  }
  return "unknown";
}

std::vector<std::byte> encode_header(const HeaderFields& h) {
  std::vector<std::byte> body;
  ByteWriter w(body);
  w.u64(h.meta.job_id);
  w.blob(h.meta.api);
  w.blob(h.meta.role.canonical());
  w.i32(h.meta.slot);
  w.i32(h.meta.nslots);
  w.u32(h.iterations);
  w.u64(h.calls);
  w.u64(h.stored_body_bytes);
  w.u64(h.raw_body_bytes);

  std::vector<std::byte> out;
  ByteWriter o(out);
  o.bytes(std::as_bytes(std::span(kTraceMagic)));
  o.u16(kTraceVersion);
  o.u16(h.flags);
  o.u32(static_cast<uint32_t>(body.size()));
  o.bytes(body);
  o.u32(crc32c(out));
  return out;
}

void encode_record(const CallInfo& c, std::span<const std::byte> output, std::span<std::byte> out) {
  FixedWriter w(out);
  w.u32(c.iteration);
  w.u32(c.index);
  w.u32(c.comm);
  w.u16(c.op);
  w.u16(c.redop);
  w.u16(c.dtype);
  w.u16(c.elem_size);
  w.u64(c.count);
  w.i32(c.peer);
  w.u64(output.size());
  if (!output.empty()) w.bytes(output);  // memcpy from a null span is undefined
  w.u32(0);
}

namespace {

// Where the CRC of the record that starts `records` is, or 0 when `records`
// is too short to hold the record its length says.
size_t crc_offset(std::span<const std::byte> records) {
  if (records.size() < kRecordFixedBytes) return 0;
  uint64_t out_len = ByteReader(records.subspan(32, 8)).u64();
  if (out_len > records.size() - kRecordFixedBytes) return 0;
  return kRecordFixedBytes - 4 + out_len;
}

}  // namespace

size_t seal_record(std::span<std::byte> records) {
  size_t crc_at = crc_offset(records);
  if (crc_at == 0) return 0;
  FixedWriter(records.subspan(crc_at)).u32(crc32c(records.first(crc_at)));
  return crc_at + 4;
}

uint32_t extend_crc_over_records(uint32_t crc, std::span<const std::byte> records) {
  while (!records.empty()) {
    size_t crc_at = crc_offset(records);
    if (crc_at == 0) return crc32c(records, crc);
    auto stored = records.subspan(crc_at, 4);
    // The record's bytes have CRC `stored`; with the CRC itself appended:
    uint32_t whole = crc32c(stored, ByteReader(stored).u32());
    crc = crc32c_combine(crc, whole, crc_at + 4);
    records = records.subspan(crc_at + 4);
  }
  return crc;
}

std::string describe_call(const CallInfo& c, const std::string& api) {
  std::string op = api == kApiTrainmover ? trace_op_name(c.op) : str_cat("op ", c.op);
  if (c.redop != kNoRedop) op += str_cat("(redop ", c.redop, ")");
  std::string text = str_cat(op, " of ", c.count, " elements of dtype ", c.dtype, " (", c.elem_size,
                             " bytes each)");
  if (c.peer != kNoPeer) text += str_cat(", root/peer ", c.peer);
  if (c.comm != 0) text += str_cat(", comm ", c.comm);
  return text;
}

}  // namespace trainmover::record
