// Wire format of the rendezvous store. Requests and responses travel as
// frames (transport/frame.h) of kind kStoreRequest / kStoreResponse whose tag
// is the request id, after the same authenticated handshake as links.
//
//   request  = op:u8 key:blob [value:blob | delta:u64 | timeout_ms:u32
//                               | has_expected:u8 [expected:blob] value:blob]
//   response = code:u32 (tm_result_t) body:blob   (value, decimal sum, or error text)
//
// The compare-and-set (kCompareSet) request carries has_expected 0 (set only
// if absent) or 1 (set only if the value is `expected`); its reply body is
// won:u8 has_current:u8 [current:blob] (encode_compare_set_reply).
//
// blob = length:u32 bytes. Parsers reject anything over the store's limits.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "rendezvous/store.h"

namespace trainmover::rendezvous {

// The comm id that store connections present in their handshake.
inline constexpr uint64_t kStoreCommId = 0x53544F5245;  // "STORE"
inline constexpr uint64_t kMaxStoreFrame = (1 << 20) + 1024;
// A reply body: a value, or a compare-and-set reply around one.
inline constexpr size_t kMaxReplyBody = kMaxValueBytes + 16;

enum class StoreOp : uint8_t { kSet = 1, kGet = 2, kAdd = 3, kCompareSet = 4 };

struct StoreRequest {
  StoreOp op = StoreOp::kGet;
  std::string key;
  std::string value;                                   // kSet, kCompareSet
  int64_t delta = 0;                                   // kAdd
  uint32_t timeout_ms = 0;                             // kGet
  std::optional<std::string> expected = std::nullopt;  // kCompareSet: nullopt = only if absent
};

struct StoreResponse {
  tm_result_t code = TM_SUCCESS;
  std::string body;
};

std::vector<std::byte> encode_request(const StoreRequest& request);
Result<StoreRequest> parse_request(std::span<const std::byte> payload);
std::vector<std::byte> encode_response(const StoreResponse& response);
Result<StoreResponse> parse_response(std::span<const std::byte> payload);

// The body of a compare-and-set reply.
std::string encode_compare_set_reply(const Store::CompareSetResult& reply);
Result<Store::CompareSetResult> parse_compare_set_reply(std::string_view body);

}  // namespace trainmover::rendezvous
