#include "transport/frame.h"

#include "common/bytes.h"
#include "common/crc32c.h"

namespace trainmover::transport {

const char* frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::kData:
      return "data";
    case FrameKind::kHeartbeat:
      return "heartbeat";
    case FrameKind::kAbort:
      return "abort";
    case FrameKind::kGoodbye:
      return "goodbye";
    case FrameKind::kStoreRequest:
      return "store-request";
    case FrameKind::kStoreResponse:
      return "store-response";
  }
  return "unknown";
}

namespace {
constexpr size_t kCrcOffset = 44;

bool is_link_kind(uint16_t kind) {
  return kind >= static_cast<uint16_t>(FrameKind::kData) &&
         kind <= static_cast<uint16_t>(FrameKind::kGoodbye);
}
bool is_store_kind(uint16_t kind) {
  return kind == static_cast<uint16_t>(FrameKind::kStoreRequest) ||
         kind == static_cast<uint16_t>(FrameKind::kStoreResponse);
}
}  // namespace

FrameHeaderBytes encode_frame_header(const FrameHeader& h) {
  FrameHeaderBytes out{};
  FixedWriter w(out);
  w.u32(kFrameMagic);
  w.u16(kWireVersion);
  w.u16(static_cast<uint16_t>(h.kind));
  w.u64(h.job_id);
  w.u64(h.epoch);
  w.u64(h.tag);
  w.u64(h.length);
  w.i32(h.src_slot);
  w.u32(crc32c(std::span<const std::byte>(out).first(kCrcOffset)));
  return out;
}

Result<FrameHeader> parse_frame_header(std::span<const std::byte> bytes,
                                       const FrameLimits& limits) {
  if (bytes.size() != kFrameHeaderSize) {
    return error(TM_ERROR_PROTOCOL, "frame header has ", bytes.size(), " bytes, expected ",
                 kFrameHeaderSize);
  }
  ByteReader r(bytes);
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint16_t kind = r.u16();
  FrameHeader h;
  h.job_id = r.u64();
  h.epoch = r.u64();
  h.tag = r.u64();
  h.length = r.u64();
  h.src_slot = r.i32();
  uint32_t crc = r.u32();
  if (magic != kFrameMagic) return error(TM_ERROR_PROTOCOL, "bad frame magic 0x", std::hex, magic);
  if (version != kWireVersion) {
    return error(TM_ERROR_PROTOCOL, "wire version ", version, " is not supported (expected ",
                 kWireVersion, ")");
  }
  if (crc != crc32c(bytes.first(kCrcOffset)))
    return error(TM_ERROR_PROTOCOL, "frame header checksum mismatch");
  bool kind_ok = limits.store_frames ? is_store_kind(kind) : is_link_kind(kind);
  if (!kind_ok) return error(TM_ERROR_PROTOCOL, "unexpected frame kind ", kind);
  h.kind = static_cast<FrameKind>(kind);
  if (h.job_id != limits.job_id) {
    return error(TM_ERROR_PROTOCOL, "frame carries job id ", h.job_id, ", expected ",
                 limits.job_id);
  }
  if (limits.epoch && h.epoch != *limits.epoch) {
    return error(TM_ERROR_PROTOCOL, "frame carries epoch ", h.epoch, ", expected ", *limits.epoch);
  }
  if (limits.peer_slot >= 0 && h.src_slot != limits.peer_slot) {
    return error(TM_ERROR_PROTOCOL, "frame claims to come from slot ", h.src_slot,
                 " on the link of slot ", limits.peer_slot);
  }
  bool control = h.kind == FrameKind::kHeartbeat || h.kind == FrameKind::kAbort ||
                 h.kind == FrameKind::kGoodbye;
  uint64_t max = control ? kMaxControlPayload : limits.max_data_length;
  if (h.length > max) {
    return error(TM_ERROR_PROTOCOL, frame_kind_name(h.kind), " frame of ", h.length,
                 " bytes exceeds the limit of ", max);
  }
  return h;
}

}  // namespace trainmover::transport
