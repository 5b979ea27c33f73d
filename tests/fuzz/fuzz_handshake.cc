// libFuzzer target: parse_hello() and parse_verdict(). The first byte picks
// the message. Accepted messages must re-encode to the same bytes (a hello's
// reserved byte aside, which the parser ignores).
#include <cstring>

#include "fuzz_common.h"
#include "transport/handshake.h"

using namespace trainmover;  // NOLINT: fuzz target

namespace {

void check_hello(std::span<const std::byte> bytes) {
  auto hello = transport::parse_hello(bytes);
  if (!hello.ok()) {
    if (hello.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return;
  }
  if (bytes.size() != transport::kHelloSize) __builtin_trap();
  auto again = transport::encode_hello(hello.value());
  again[7] = bytes[7];  // reserved
  if (std::memcmp(again.data(), bytes.data(), again.size()) != 0) __builtin_trap();
  static const JobSecret secret = JobSecret::from_hex("000102030405060708090a0b0c0d0e0f").value();
  (void)transport::compute_proof(secret, hello->role, bytes, again);
}

void check_verdict(std::span<const std::byte> bytes) {
  auto verdict = transport::parse_verdict(bytes);
  if (!verdict.ok()) {
    if (verdict.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return;
  }
  auto again = transport::encode_verdict(verdict.value());
  if (bytes.size() != again.size() || std::memcmp(again.data(), bytes.data(), again.size()) != 0)
    __builtin_trap();
  if (transport::verdict_text(verdict.value()) == nullptr) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] & 1) {
    check_verdict(bytes);
  } else {
    check_hello(bytes);
  }
  return 0;
}
