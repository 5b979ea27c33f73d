// libFuzzer target: parse_frame_header() on arbitrary bytes. The first byte
// says whether to fix the header's CRC first (to reach the checks behind it).
// Whatever the parser accepts must re-encode to exactly the bytes it parsed.
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "transport/frame.h"

using namespace trainmover;  // NOLINT: fuzz target

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> input(data + 1, data + size);
  if ((data[0] & 1) && input.size() == transport::kFrameHeaderSize) fuzz::reseal_header(input, 0);
  data = input.data();
  size = input.size();
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  for (const auto& limits : {fuzz::link_limits(), fuzz::store_limits()}) {
    auto header = transport::parse_frame_header(bytes, limits);
    if (!header.ok()) {
      if (header.status().code() != TM_ERROR_PROTOCOL || header.status().message().empty())
        __builtin_trap();
      continue;
    }
    auto again = transport::encode_frame_header(header.value());
    if (size != again.size() || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  }
  return 0;
}
