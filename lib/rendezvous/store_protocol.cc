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
  response.body = r.blob(kMaxValueBytes);
  if (!r.ok() || r.remaining() != 0) return error(TM_ERROR_PROTOCOL, "malformed store response");
  if (code > TM_ERROR_NOT_FOUND)
    return error(TM_ERROR_PROTOCOL, "store response with unknown code ", code);
  response.code = static_cast<tm_result_t>(code);
  return response;
}

}  // namespace trainmover::rendezvous
