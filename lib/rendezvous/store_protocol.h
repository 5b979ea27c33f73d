// Wire format of the rendezvous store. Requests and responses travel as
// frames (transport/frame.h) of kind kStoreRequest / kStoreResponse whose tag
// is the request id, after the same authenticated handshake as links.
//
//   request  = op:u8 key:blob [value:blob | delta:u64 | timeout_ms:u32]
//   response = code:u32 (tm_result_t) body:blob   (value, decimal sum, or error text)
//
// blob = length:u32 bytes. Parsers reject anything over the store's limits.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainmover::rendezvous {

// The comm id that store connections present in their handshake.
inline constexpr uint64_t kStoreCommId = 0x53544F5245;  // "STORE"
inline constexpr uint64_t kMaxStoreFrame = (1 << 20) + 1024;

enum class StoreOp : uint8_t { kSet = 1, kGet = 2, kAdd = 3 };

struct StoreRequest {
  StoreOp op = StoreOp::kGet;
  std::string key;
  std::string value;        // kSet
  int64_t delta = 0;        // kAdd
  uint32_t timeout_ms = 0;  // kGet
};

struct StoreResponse {
  tm_result_t code = TM_SUCCESS;
  std::string body;
};

std::vector<std::byte> encode_request(const StoreRequest& request);
Result<StoreRequest> parse_request(std::span<const std::byte> payload);
std::vector<std::byte> encode_response(const StoreResponse& response);
Result<StoreResponse> parse_response(std::span<const std::byte> payload);

}  // namespace trainmover::rendezvous
