// libFuzzer target: the store's parse_request() and parse_response() (and,
// inside a response, parse_compare_set_reply()). The first byte picks which;
// accepted messages must re-encode to the same bytes.
#include <cstring>

#include "fuzz_common.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

using namespace trainmover;  // NOLINT: fuzz target

namespace {

bool same(const std::vector<std::byte>& a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

void check_request(std::span<const std::byte> bytes) {
  auto request = rendezvous::parse_request(bytes);
  if (!request.ok()) {
    if (request.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return;
  }
  if (request->key.empty() || request->key.size() > rendezvous::kMaxKeyBytes) __builtin_trap();
  if (request->value.size() > rendezvous::kMaxValueBytes) __builtin_trap();
  if (request->expected && request->expected->size() > rendezvous::kMaxValueBytes) __builtin_trap();
  if (request->expected && request->op != rendezvous::StoreOp::kCompareSet) __builtin_trap();
  if (!same(rendezvous::encode_request(request.value()), bytes)) __builtin_trap();
}

void check_response(std::span<const std::byte> bytes) {
  auto response = rendezvous::parse_response(bytes);
  if (!response.ok()) {
    if (response.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return;
  }
  if (!same(rendezvous::encode_response(response.value()), bytes)) __builtin_trap();
  auto reply = rendezvous::parse_compare_set_reply(response->body);
  if (!reply.ok()) {
    if (reply.status().code() != TM_ERROR_PROTOCOL) __builtin_trap();
    return;
  }
  if (reply->won && !reply->current) __builtin_trap();
  if (rendezvous::encode_compare_set_reply(reply.value()) != response->body) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] & 1) {
    check_response(bytes);
  } else {
    check_request(bytes);
  }
  return 0;
}
