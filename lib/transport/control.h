// Payloads of control frames: heartbeat, abort and goodbye.
//
// Control frames travel between data frames on the same link and are handled
// by the link's owner as soon as they are read, whatever receives are posted.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"
#include "transport/frame.h"

namespace trainmover::transport {

inline constexpr size_t kMaxAbortReason = 1024;

struct ControlMessage {
  FrameKind kind = FrameKind::kHeartbeat;
  // The epoch of the frame that carried it (filled in by the receiving link;
  // not part of the payload): the owner drops messages of older epochs.
  uint64_t epoch = 0;
  // kHeartbeat: how far the sender has got, so a waiting peer can tell a
  // slot that never entered an operation from one that is itself waiting.
  uint64_t ops_entered = 0;  // operations the sender has started
  int32_t waiting_on = -1;   // slot its current operation waits for; -1 when idle
  // kAbort: the sender's communicator failed because of `failed_slot`.
  int32_t failed_slot = -1;
  uint32_t code = 0;   // a tm_result_t
  std::string reason;  // truncated to kMaxAbortReason bytes
};

using ControlPayload = std::array<std::byte, kMaxControlPayload>;

// Encodes the payload for msg.kind into `out`; returns the payload length.
size_t encode_control_payload(const ControlMessage& msg, ControlPayload& out);
Result<ControlMessage> parse_control_payload(FrameKind kind, std::span<const std::byte> payload);

}  // namespace trainmover::transport
