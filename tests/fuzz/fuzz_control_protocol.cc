// libFuzzer target: the control protocol's parser (lib/control). The first
// byte picks the input's form: odd, a payload alone; even, a frame (header
// and payload). Whatever parses must re-encode to a payload that parses to
// the same encoding; whatever does not must fail with TM_ERROR_PROTOCOL.
#include <cstring>

#include "control/control_protocol.h"

using namespace trainmover;  // NOLINT: fuzz target

namespace {

void check_payload(std::string_view payload) {
  auto m = control::parse_payload(payload);
  if (!m.ok()) {
    if (m.status().code() != TM_ERROR_PROTOCOL || m.status().message().empty()) __builtin_trap();
    return;
  }
  std::string encoded = control::encode_payload(m.value());
  auto again = control::parse_payload(encoded);
  if (!again.ok() || again->index() != m->index()) __builtin_trap();
  if (control::encode_payload(again.value()) != encoded) __builtin_trap();
}

void check_frame(std::span<const std::byte> bytes) {
  if (bytes.size() < control::kControlHeaderSize) return;
  auto length = control::parse_frame_header(bytes.first(control::kControlHeaderSize));
  if (!length.ok()) {
    if (length.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return;
  }
  if (length.value() > control::kMaxControlFrame) __builtin_trap();
  auto rest = bytes.subspan(control::kControlHeaderSize);
  if (rest.size() < length.value()) return;
  check_payload({reinterpret_cast<const char*>(rest.data()), length.value()});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] & 1) {
    check_payload({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  } else {
    check_frame(bytes);
  }
  return 0;
}
