#include "transport/handshake.h"

#include <vector>

#include "common/bytes.h"

namespace trainmover::transport {
namespace {
constexpr uint32_t kHelloMagic = 0x31484D54;    // "TMH1"
constexpr uint32_t kVerdictMagic = 0x31564D54;  // "TMV1"
constexpr uint16_t kHandshakeVersion = 1;
}  // namespace

const char* verdict_text(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAccepted:
      return "accepted";
    case Verdict::kWrongJob:
      return "wrong job id";
    case Verdict::kWrongComm:
      return "wrong communicator";
    case Verdict::kWrongEpoch:
      return "wrong membership epoch";
    case Verdict::kWrongSlot:
      return "the acceptor does not serve the requested slot";
    case Verdict::kAuthFailed:
      return "authentication failed (wrong job secret)";
    case Verdict::kDuplicate:
      return "a link with this slot already exists";
    case Verdict::kDeferred:
      return "decision deferred";
    case Verdict::kRefused:
      return "refused by the acceptor";
  }
  return "unknown verdict";
}

HelloBytes encode_hello(const Hello& h) {
  HelloBytes out{};
  FixedWriter w(out);
  w.u32(kHelloMagic);
  w.u16(kHandshakeVersion);
  w.u8(static_cast<uint8_t>(h.role));
  w.u8(0);
  w.u64(h.job_id);
  w.u64(h.comm_id);
  w.u64(h.epoch);
  w.i32(h.slot);
  w.i32(h.target_slot);
  w.u64(h.instance_id);
  w.bytes(h.nonce);
  return out;
}

Result<Hello> parse_hello(std::span<const std::byte> bytes) {
  if (bytes.size() != kHelloSize)
    return error(TM_ERROR_PROTOCOL, "hello has ", bytes.size(), " bytes");
  ByteReader r(bytes);
  uint32_t magic = r.u32();
  uint16_t version = r.u16();
  uint8_t role = r.u8();
  r.u8();
  Hello h;
  h.job_id = r.u64();
  h.comm_id = r.u64();
  h.epoch = r.u64();
  h.slot = r.i32();
  h.target_slot = r.i32();
  h.instance_id = r.u64();
  auto nonce = r.bytes(h.nonce.size());
  if (!r.ok()) return error(TM_ERROR_PROTOCOL, "truncated hello");
  if (magic != kHelloMagic)
    return error(TM_ERROR_PROTOCOL, "not a TrainMover handshake (bad magic)");
  if (version != kHandshakeVersion)
    return error(TM_ERROR_PROTOCOL, "handshake version ", version, " not supported");
  if (role != static_cast<uint8_t>(Role::kConnector) &&
      role != static_cast<uint8_t>(Role::kAcceptor)) {
    return error(TM_ERROR_PROTOCOL, "bad handshake role ", static_cast<int>(role));
  }
  h.role = static_cast<Role>(role);
  std::copy(nonce.begin(), nonce.end(), h.nonce.begin());
  return h;
}

Mac compute_proof(const JobSecret& secret, Role prover, std::span<const std::byte> connector_hello,
                  std::span<const std::byte> acceptor_hello) {
  static constexpr std::string_view kConnectorLabel = "trainmover-link-proof-connector";
  static constexpr std::string_view kAcceptorLabel = "trainmover-link-proof-acceptor";
  std::vector<std::byte> message;
  ByteWriter w(message);
  w.bytes(as_bytes(prover == Role::kConnector ? kConnectorLabel : kAcceptorLabel));
  w.bytes(connector_hello);
  w.bytes(acceptor_hello);
  return secret.mac(message);
}

VerdictBytes encode_verdict(Verdict verdict) {
  VerdictBytes out{};
  FixedWriter w(out);
  w.u32(kVerdictMagic);
  w.u32(static_cast<uint32_t>(verdict));
  return out;
}

Result<Verdict> parse_verdict(std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  uint32_t magic = r.u32();
  uint32_t code = r.u32();
  if (!r.ok() || r.remaining() != 0 || magic != kVerdictMagic) {
    return error(TM_ERROR_PROTOCOL, "malformed handshake verdict");
  }
  if (code > static_cast<uint32_t>(Verdict::kRefused))
    return error(TM_ERROR_PROTOCOL, "unknown verdict ", code);
  return static_cast<Verdict>(code);
}

}  // namespace trainmover::transport
