#include "transport/control.h"

#include "common/bytes.h"

namespace trainmover::transport {

size_t encode_control_payload(const ControlMessage& msg, ControlPayload& out) {
  FixedWriter w(out);
  switch (msg.kind) {
    case FrameKind::kHeartbeat:
      w.u64(msg.ops_entered);
      w.i32(msg.waiting_on);
      break;
    case FrameKind::kAbort: {
      std::string_view reason(msg.reason);
      if (reason.size() > kMaxAbortReason) reason = reason.substr(0, kMaxAbortReason);
      w.i32(msg.failed_slot);
      w.u32(msg.code);
      w.u32(static_cast<uint32_t>(reason.size()));
      w.bytes(as_bytes(reason));
      break;
    }
    default:
      break;
  }
  return w.size();
}

Result<ControlMessage> parse_control_payload(FrameKind kind, std::span<const std::byte> payload) {
  ControlMessage msg;
  msg.kind = kind;
  ByteReader r(payload);
  switch (kind) {
    case FrameKind::kHeartbeat:
      msg.ops_entered = r.u64();
      msg.waiting_on = r.i32();
      break;
    case FrameKind::kAbort:
      msg.failed_slot = r.i32();
      msg.code = r.u32();
      msg.reason = r.blob(kMaxAbortReason);
      break;
    case FrameKind::kGoodbye:
      break;
    default:
      return error(TM_ERROR_PROTOCOL, "frame kind ", static_cast<int>(kind),
                   " is not a control frame");
  }
  if (!r.ok() || r.remaining() != 0) {
    return error(TM_ERROR_PROTOCOL, "malformed ", frame_kind_name(kind), " payload of ",
                 payload.size(), " bytes");
  }
  return msg;
}

}  // namespace trainmover::transport
