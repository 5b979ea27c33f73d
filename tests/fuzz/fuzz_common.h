// Constants shared by the libFuzzer targets and the seed generator, so that
// the seeds are valid inputs for the limits each target applies.
#pragma once

#include <cstdint>

#include <span>
#include <vector>

#include "common/crc32c.h"
#include "transport/frame.h"

namespace trainmover::fuzz {

inline constexpr uint64_t kJob = 0x46555A5A;  // "FUZZ"
inline constexpr uint64_t kEpoch = 3;
inline constexpr int32_t kPeerSlot = 0;  // the slot the fuzzed link talks to
inline constexpr int32_t kLocalSlot = 1;
inline constexpr uint64_t kMaxData = 1 << 16;

inline transport::FrameLimits link_limits() {
  transport::FrameLimits l;
  l.job_id = kJob;
  l.epoch = kEpoch;
  l.peer_slot = kPeerSlot;
  l.max_data_length = kMaxData;
  return l;
}

inline transport::FrameLimits store_limits() {
  transport::FrameLimits l = link_limits();
  l.peer_slot = -1;
  l.store_frames = true;
  return l;
}

// fuzz_link_stream input: a 3-byte prologue, then the peer's byte stream.
//   [0] receive length / 4   [1] receive tag   [2] flags
inline constexpr size_t kLinkPrologue = 3;
inline constexpr uint8_t kFlagCancel = 1;      // cancel_pending() after the first pass
inline constexpr uint8_t kFlagSecondRecv = 2;  // post a second receive of the same shape
inline constexpr uint8_t kFlagReseal = 4;      // fix the CRC of every frame header in the stream

// Rewrites the CRC of the frame header at `at`, so mutations of the other
// fields get past the checksum and reach the checks behind it.
inline void reseal_header(std::vector<uint8_t>& bytes, size_t at) {
  constexpr size_t kCrcOffset = transport::kFrameHeaderSize - 4;
  uint32_t crc = crc32c(std::span<const std::byte>(
      reinterpret_cast<const std::byte*>(bytes.data() + at), kCrcOffset));
  for (size_t i = 0; i < 4; ++i) bytes[at + kCrcOffset + i] = static_cast<uint8_t>(crc >> (8 * i));
}

// Reseals every header of a stream of frames (header, then `length` bytes).
inline void reseal_stream(std::vector<uint8_t>& bytes, size_t from) {
  size_t at = from;
  while (bytes.size() - at >= transport::kFrameHeaderSize) {
    reseal_header(bytes, at);
    uint64_t length = 0;
    for (size_t i = 0; i < 8; ++i) length |= static_cast<uint64_t>(bytes[at + 32 + i]) << (8 * i);
    at += transport::kFrameHeaderSize;
    if (length > bytes.size() - at) break;
    at += length;
  }
}

}  // namespace trainmover::fuzz
