// libFuzzer target: parse_control_payload(). The first byte picks the frame
// kind; what is accepted must re-encode to the same payload.
#include <cstring>

#include "fuzz_common.h"
#include "transport/control.h"

using namespace trainmover;  // NOLINT: fuzz target

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr transport::FrameKind kKinds[] = {
      transport::FrameKind::kHeartbeat, transport::FrameKind::kAbort,
      transport::FrameKind::kGoodbye, transport::FrameKind::kData};
  transport::FrameKind kind = kKinds[data[0] % 4];
  std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  auto msg = transport::parse_control_payload(kind, payload);
  if (!msg.ok()) {
    if (msg.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return 0;
  }
  if (kind == transport::FrameKind::kData) __builtin_trap();  // never a control payload
  transport::ControlPayload out{};
  size_t len = transport::encode_control_payload(msg.value(), out);
  if (len != payload.size() || std::memcmp(out.data(), payload.data(), len) != 0) __builtin_trap();
  return 0;
}
