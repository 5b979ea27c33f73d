// The wire frame: a fixed 48-byte header followed by `length` payload bytes.
//
//   off  size  field
//     0     4  magic "TMF1"
//     4     2  wire version
//     6     2  kind (FrameKind)
//     8     8  job id        - must equal the receiver's job id
//    16     8  epoch         - membership epoch: a link drops older, holds newer
//    24     8  tag           - data frames: must equal the posted receive's tag
//    32     8  length        - payload bytes; bounded by the receiver
//    40     4  sender's slot - must equal the slot the link was opened with
//    44     4  CRC-32C of bytes 0..43
//
// All integers are little-endian. parse_frame_header() checks everything the
// header alone can tell; the link then checks tag and length against the
// receive it is matched with.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/status.h"

namespace trainmover::transport {

enum class FrameKind : uint16_t {
  kData = 1,       // payload of a posted send
  kHeartbeat = 2,  // liveness and progress of the sender (ControlMessage)
  kAbort = 3,      // the sender's communicator failed; names the slot at fault
  kGoodbye = 4,    // the sender closes the link cleanly; no more frames follow
  kStoreRequest = 16,
  kStoreResponse = 17,
};

const char* frame_kind_name(FrameKind kind);

inline constexpr size_t kFrameHeaderSize = 48;
inline constexpr uint32_t kFrameMagic = 0x31464D54;  // "TMF1"
inline constexpr uint16_t kWireVersion = 1;
// Control frames (heartbeat, abort, goodbye) carry at most this much payload.
inline constexpr uint64_t kMaxControlPayload = 2048;

using FrameHeaderBytes = std::array<std::byte, kFrameHeaderSize>;

struct FrameHeader {
  FrameKind kind = FrameKind::kData;
  uint64_t job_id = 0;
  uint64_t epoch = 0;
  uint64_t tag = 0;
  uint64_t length = 0;
  int32_t src_slot = -1;
};

// What a receiver accepts.
struct FrameLimits {
  uint64_t job_id = 0;
  // When set, frames of any other epoch are rejected. Links leave it unset:
  // they sort frames by epoch themselves (older: dropped, newer: held).
  std::optional<uint64_t> epoch;
  int32_t peer_slot = -1;        // the slot the link was opened with
  uint64_t max_data_length = 0;  // data/store frames longer than this are rejected
  bool store_frames = false;     // store kinds instead of link kinds
};

FrameHeaderBytes encode_frame_header(const FrameHeader& header);

// Parses exactly kFrameHeaderSize bytes. Fails with TM_ERROR_PROTOCOL naming
// the first field that is wrong.
Result<FrameHeader> parse_frame_header(std::span<const std::byte> bytes, const FrameLimits& limits);

}  // namespace trainmover::transport
