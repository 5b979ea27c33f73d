#include "rendezvous/store_protocol.h"

#include "common/bytes.h"
#include "rendezvous/store.h"

namespace trainmover::rendezvous {

std::vector<std::byte> encode_request(const StoreRequest& request) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.u8(static_cast<uint8_t>(request.op));
  w.blob(request.key);
  switch (request.op) {
    case StoreOp::kSet:
      w.blob(request.value);
      break;
    case StoreOp::kAdd:
      w.u64(static_cast<uint64_t>(request.delta));
      break;
    case StoreOp::kGet:
      w.u32(request.timeout_ms);
      break;
    case StoreOp::kCompareSet:
      w.u8(request.expected ? 1 : 0);
      if (request.expected) w.blob(*request.expected);
      w.blob(request.value);
      break;
  }
  return out;
}

Result<StoreRequest> parse_request(std::span<const std::byte> payload) {
  ByteReader r(payload);
  StoreRequest request;
  uint8_t op = r.u8();
  request.key = r.blob(kMaxKeyBytes);
  switch (op) {
    case static_cast<uint8_t>(StoreOp::kSet):
      request.value = r.blob(kMaxValueBytes);
      break;
    case static_cast<uint8_t>(StoreOp::kAdd):
      request.delta = static_cast<int64_t>(r.u64());
      break;
    case static_cast<uint8_t>(StoreOp::kGet):
      request.timeout_ms = r.u32();
      break;
    case static_cast<uint8_t>(StoreOp::kCompareSet): {
      uint8_t has_expected = r.u8();
      if (has_expected > 1)
        return error(TM_ERROR_PROTOCOL, "compare-and-set with a bad expected-value flag ",
                     static_cast<int>(has_expected));
      if (has_expected == 1) request.expected = r.blob(kMaxValueBytes);
      request.value = r.blob(kMaxValueBytes);
      break;
    }
    default:
      return error(TM_ERROR_PROTOCOL, "unknown store operation ", static_cast<int>(op));
  }
  if (!r.ok() || r.remaining() != 0) return error(TM_ERROR_PROTOCOL, "malformed store request");
  if (request.key.empty()) return error(TM_ERROR_PROTOCOL, "store request with an empty key");
  request.op = static_cast<StoreOp>(op);
  return request;
}

std::vector<std::byte> encode_response(const StoreResponse& response) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.u32(static_cast<uint32_t>(response.code));
  w.blob(response.body);
  return out;
}

Result<StoreResponse> parse_response(std::span<const std::byte> payload) {
  ByteReader r(payload);
  StoreResponse response;
  uint32_t code = r.u32();
  response.body = r.blob(kMaxReplyBody);
  if (!r.ok() || r.remaining() != 0) return error(TM_ERROR_PROTOCOL, "malformed store response");
  if (code > TM_ERROR_NOT_FOUND)
    return error(TM_ERROR_PROTOCOL, "store response with unknown code ", code);
  response.code = static_cast<tm_result_t>(code);
  return response;
}

std::string encode_compare_set_reply(const Store::CompareSetResult& reply) {
  std::vector<std::byte> out;
  ByteWriter w(out);
  w.u8(reply.won ? 1 : 0);
  w.u8(reply.current ? 1 : 0);
  if (reply.current) w.blob(*reply.current);
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

Result<Store::CompareSetResult> parse_compare_set_reply(std::string_view body) {
  ByteReader r(std::as_bytes(std::span(body.data(), body.size())));
  Store::CompareSetResult reply;
  uint8_t won = r.u8();
  uint8_t has_current = r.u8();
  if (won > 1 || has_current > 1)
    return error(TM_ERROR_PROTOCOL, "malformed compare-and-set reply flags");
  if (has_current == 1) reply.current = r.blob(kMaxValueBytes);
  if (!r.ok() || r.remaining() != 0)
    return error(TM_ERROR_PROTOCOL, "malformed compare-and-set reply");
  if (won == 1 && !reply.current)
    return error(TM_ERROR_PROTOCOL, "compare-and-set reply: won but no value");
  reply.won = won == 1;
  return reply;
}

}  // namespace trainmover::rendezvous
