// Unit tests of the wire formats: frame header, control payloads and
// handshake messages (transport/frame.h, control.h, handshake.h).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "transport/control.h"
#include "transport/frame.h"
#include "transport/handshake.h"

namespace trainmover::transport {
namespace {

constexpr uint64_t kJob = 0x1122334455667788ull;
constexpr uint64_t kEpoch = 7;
constexpr int32_t kPeer = 3;
constexpr uint64_t kMaxData = 1 << 20;

FrameLimits link_limits() {
  FrameLimits l;
  l.job_id = kJob;
  l.epoch = kEpoch;
  l.peer_slot = kPeer;
  l.max_data_length = kMaxData;
  return l;
}

FrameHeader valid_header(FrameKind kind = FrameKind::kData, uint64_t length = 1000) {
  FrameHeader h;
  h.kind = kind;
  h.job_id = kJob;
  h.epoch = kEpoch;
  h.tag = 0xABCDEF0123ull;
  h.length = length;
  h.src_slot = kPeer;
  return h;
}

// Rewrites the CRC so that only the intended field is wrong.
void reseal(FrameHeaderBytes& bytes) {
  uint32_t crc = crc32c(std::span<const std::byte>(bytes).first(44));
  for (int i = 0; i < 4; ++i) bytes[44 + i] = static_cast<std::byte>(crc >> (8 * i));
}

void put_le(FrameHeaderBytes& bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) bytes[offset + i] = static_cast<std::byte>(value >> (8 * i));
}

::testing::AssertionResult IsProtocolError(const Status& status, const std::string& text) {
  if (status.ok())
    return ::testing::AssertionFailure() << "accepted; expected an error naming '" << text << "'";
  if (status.code() != TM_ERROR_PROTOCOL) {
    return ::testing::AssertionFailure() << "code " << status.code() << ": " << status.message();
  }
  if (status.message().find(text) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "'" << status.message() << "' does not name '" << text << "'";
  }
  return ::testing::AssertionSuccess();
}

TEST(FrameHeader, RoundTripsEveryLinkKind) {
  for (FrameKind kind :
       {FrameKind::kData, FrameKind::kHeartbeat, FrameKind::kAbort, FrameKind::kGoodbye}) {
    FrameHeader h = valid_header(kind, kind == FrameKind::kData ? kMaxData : kMaxControlPayload);
    auto bytes = encode_frame_header(h);
    EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 'T');
    EXPECT_EQ(static_cast<uint8_t>(bytes[3]), '1');
    auto parsed = parse_frame_header(bytes, link_limits());
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->kind, h.kind);
    EXPECT_EQ(parsed->job_id, h.job_id);
    EXPECT_EQ(parsed->epoch, h.epoch);
    EXPECT_EQ(parsed->tag, h.tag);
    EXPECT_EQ(parsed->length, h.length);
    EXPECT_EQ(parsed->src_slot, h.src_slot);
  }
}

TEST(FrameHeader, StoreKindsOnlyWithStoreLimits) {
  FrameLimits store = link_limits();
  store.store_frames = true;
  store.peer_slot = -1;
  auto req = encode_frame_header(valid_header(FrameKind::kStoreRequest, 10));
  EXPECT_TRUE(parse_frame_header(req, store).ok());
  EXPECT_TRUE(IsProtocolError(parse_frame_header(req, link_limits()).status(), "kind 16"));
  auto data = encode_frame_header(valid_header(FrameKind::kData, 10));
  EXPECT_TRUE(IsProtocolError(parse_frame_header(data, store).status(), "kind 1"));
}

TEST(FrameHeader, AnySlotWhenLimitsSayMinusOne) {
  FrameLimits any = link_limits();
  any.peer_slot = -1;
  FrameHeader h = valid_header();
  h.src_slot = 99;
  EXPECT_TRUE(parse_frame_header(encode_frame_header(h), any).ok());
}

TEST(FrameHeader, WrongSizeIsRejected) {
  auto bytes = encode_frame_header(valid_header());
  EXPECT_TRUE(IsProtocolError(
      parse_frame_header(std::span(bytes).first(47), link_limits()).status(), "47 bytes"));
  std::vector<std::byte> longer(bytes.begin(), bytes.end());
  longer.push_back(std::byte{0});
  EXPECT_TRUE(IsProtocolError(parse_frame_header(longer, link_limits()).status(), "49 bytes"));
}

struct FieldCase {
  const char* name;
  size_t offset;
  size_t width;
  uint64_t value;
  const char* expected_text;
};

TEST(FrameHeader, EachWrongFieldIsNamed) {
  const FieldCase cases[] = {
      {"magic", 0, 4, 0x32464D54, "magic"},
      {"version", 4, 2, 2, "version 2"},
      {"kind zero", 6, 2, 0, "kind 0"},
      {"kind five", 6, 2, 5, "kind 5"},
      {"job id", 8, 8, kJob + 1, "job id"},
      {"epoch", 16, 8, kEpoch + 1, "epoch 8"},
      {"src slot", 40, 4, 4, "slot 4"},
      {"data length", 32, 8, kMaxData + 1, "exceeds the limit"},
  };
  for (const FieldCase& c : cases) {
    auto bytes = encode_frame_header(valid_header());
    put_le(bytes, c.offset, c.value, c.width);
    reseal(bytes);
    EXPECT_TRUE(IsProtocolError(parse_frame_header(bytes, link_limits()).status(), c.expected_text))
        << c.name;
  }
}

TEST(FrameHeader, ChecksumMismatchIsNamed) {
  auto bytes = encode_frame_header(valid_header());
  bytes[30] ^= std::byte{1};  // tag bit, CRC left stale
  EXPECT_TRUE(IsProtocolError(parse_frame_header(bytes, link_limits()).status(), "checksum"));
  auto bytes2 = encode_frame_header(valid_header());
  bytes2[47] ^= std::byte{0x80};
  EXPECT_TRUE(IsProtocolError(parse_frame_header(bytes2, link_limits()).status(), "checksum"));
}

TEST(FrameHeader, OversizedControlFrameIsRejected) {
  for (FrameKind kind : {FrameKind::kHeartbeat, FrameKind::kAbort, FrameKind::kGoodbye}) {
    auto bytes = encode_frame_header(valid_header(kind, kMaxControlPayload + 1));
    auto r = parse_frame_header(bytes, link_limits());
    EXPECT_TRUE(IsProtocolError(r.status(), "exceeds the limit of 2048")) << frame_kind_name(kind);
    EXPECT_TRUE(IsProtocolError(r.status(), frame_kind_name(kind)));
  }
  // The control limit holds even when data frames may be much larger.
  auto bytes = encode_frame_header(valid_header(FrameKind::kHeartbeat, 4096));
  EXPECT_FALSE(parse_frame_header(bytes, link_limits()).ok());
}

TEST(FrameHeader, HugeLengthIsRejected) {
  auto bytes = encode_frame_header(valid_header(FrameKind::kData, UINT64_MAX));
  EXPECT_TRUE(
      IsProtocolError(parse_frame_header(bytes, link_limits()).status(), "18446744073709551615"));
}

// 100k random mutations and truncations of valid headers: never a crash, and
// accepted only when the bytes are the original ones.
TEST(FrameHeader, RandomMutationsAreRejectedUnlessIdentical) {
  std::mt19937_64 rng(20261130);
  const FrameKind kinds[] = {FrameKind::kData, FrameKind::kHeartbeat, FrameKind::kAbort,
                             FrameKind::kGoodbye};
  int accepted_identical = 0;
  for (int iter = 0; iter < 100000; ++iter) {
    FrameHeader h = valid_header(kinds[rng() % 4], rng() % (kMaxControlPayload + 1));
    h.tag = rng();
    const auto original = encode_frame_header(h);
    std::vector<std::byte> mutated(original.begin(), original.end());
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      size_t pos = rng() % mutated.size();
      if (rng() % 2) {
        mutated[pos] ^= static_cast<std::byte>(1u << (rng() % 8));
      } else {
        mutated[pos] = static_cast<std::byte>(rng());
      }
    }
    if (rng() % 8 == 0) mutated.resize(rng() % mutated.size());
    auto parsed = parse_frame_header(mutated, link_limits());
    bool identical = mutated.size() == original.size() &&
                     std::equal(mutated.begin(), mutated.end(), original.begin());
    if (identical) {
      ++accepted_identical;
      ASSERT_TRUE(parsed.ok()) << "iteration " << iter;
    } else {
      ASSERT_FALSE(parsed.ok()) << "iteration " << iter << " accepted a mutated header";
      ASSERT_EQ(parsed.status().code(), TM_ERROR_PROTOCOL);
    }
  }
  // Some random byte writes restore the original value; the test saw both kinds.
  EXPECT_LT(accepted_identical, 100000);
}

// ---- control payloads -------------------------------------------------------

Result<ControlMessage> round_trip(const ControlMessage& msg) {
  ControlPayload payload{};
  size_t len = encode_control_payload(msg, payload);
  return parse_control_payload(msg.kind, std::span<const std::byte>(payload.data(), len));
}

TEST(ControlPayload, HeartbeatRoundTrips) {
  ControlMessage m;
  m.kind = FrameKind::kHeartbeat;
  m.ops_entered = 123456789012345ull;
  m.waiting_on = 5;
  auto r = round_trip(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ops_entered, m.ops_entered);
  EXPECT_EQ(r->waiting_on, 5);
}

TEST(ControlPayload, AbortRoundTripsAndTruncatesReason) {
  ControlMessage m;
  m.kind = FrameKind::kAbort;
  m.failed_slot = 2;
  m.code = TM_ERROR_PEER_FAILED;
  m.reason = "slot 2 died";
  auto r = round_trip(m);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->failed_slot, 2);
  EXPECT_EQ(r->code, static_cast<uint32_t>(TM_ERROR_PEER_FAILED));
  EXPECT_EQ(r->reason, "slot 2 died");

  m.reason = std::string(5000, 'r');
  auto long_r = round_trip(m);
  ASSERT_TRUE(long_r.ok()) << long_r.status().message();
  EXPECT_EQ(long_r->reason, std::string(kMaxAbortReason, 'r'));
}

TEST(ControlPayload, GoodbyeIsEmpty) {
  ControlMessage m;
  m.kind = FrameKind::kGoodbye;
  ControlPayload payload{};
  EXPECT_EQ(encode_control_payload(m, payload), 0u);
  EXPECT_TRUE(round_trip(m).ok());
  std::array<std::byte, 1> extra{};
  EXPECT_TRUE(
      IsProtocolError(parse_control_payload(FrameKind::kGoodbye, extra).status(), "goodbye"));
}

TEST(ControlPayload, TruncatedOrPaddedPayloadIsRejected) {
  ControlMessage m;
  m.kind = FrameKind::kAbort;
  m.reason = "why";
  ControlPayload payload{};
  size_t len = encode_control_payload(m, payload);
  for (size_t cut = 0; cut < len; ++cut) {
    std::vector<std::byte> part(payload.begin(),
                                payload.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_TRUE(IsProtocolError(parse_control_payload(FrameKind::kAbort, part).status(), "abort"))
        << cut;
  }
  EXPECT_FALSE(
      parse_control_payload(FrameKind::kAbort, std::span<const std::byte>(payload.data(), len + 1))
          .ok());
  EXPECT_FALSE(
      parse_control_payload(FrameKind::kHeartbeat, std::span<const std::byte>(payload.data(), 11))
          .ok());
  EXPECT_FALSE(
      parse_control_payload(FrameKind::kHeartbeat, std::span<const std::byte>(payload.data(), 13))
          .ok());
}

TEST(ControlPayload, OversizedReasonLengthIsRejected) {
  std::vector<std::byte> bytes;
  ByteWriter w(bytes);
  w.i32(1);
  w.u32(4);
  w.u32(kMaxAbortReason + 1);
  std::string reason(kMaxAbortReason + 1, 'x');
  w.bytes(as_bytes(reason));
  EXPECT_FALSE(parse_control_payload(FrameKind::kAbort, bytes).ok());
}

TEST(ControlPayload, NonControlKindIsRejected) {
  EXPECT_TRUE(
      IsProtocolError(parse_control_payload(FrameKind::kData, {}).status(), "not a control frame"));
}

// ---- handshake messages ------------------------------------------------------

Hello sample_hello() {
  Hello h;
  h.role = Role::kAcceptor;
  h.job_id = kJob;
  h.comm_id = 0xC0FFEE;
  h.epoch = 9;
  h.slot = 4;
  h.target_slot = -1;
  h.instance_id = 0xFEEDFACECAFEBEEFull;
  for (size_t i = 0; i < h.nonce.size(); ++i) h.nonce[i] = static_cast<std::byte>(i * 17 + 1);
  return h;
}

TEST(HandshakeMessages, HelloRoundTrips) {
  Hello h = sample_hello();
  auto bytes = encode_hello(h);
  auto r = parse_hello(bytes);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->role, h.role);
  EXPECT_EQ(r->job_id, h.job_id);
  EXPECT_EQ(r->comm_id, h.comm_id);
  EXPECT_EQ(r->epoch, h.epoch);
  EXPECT_EQ(r->slot, h.slot);
  EXPECT_EQ(r->target_slot, h.target_slot);
  EXPECT_EQ(r->instance_id, h.instance_id);
  EXPECT_EQ(r->nonce, h.nonce);
}

TEST(HandshakeMessages, MalformedHelloIsRejected) {
  auto good = encode_hello(sample_hello());
  EXPECT_TRUE(IsProtocolError(parse_hello(std::span(good).first(63)).status(), "63 bytes"));
  auto bad_magic = good;
  bad_magic[0] = std::byte{'X'};
  EXPECT_TRUE(IsProtocolError(parse_hello(bad_magic).status(), "magic"));
  auto bad_version = good;
  bad_version[4] = std::byte{2};
  EXPECT_TRUE(IsProtocolError(parse_hello(bad_version).status(), "version 2"));
  for (uint8_t role : {0, 3, 255}) {
    auto bad_role = good;
    bad_role[6] = std::byte{role};
    EXPECT_TRUE(IsProtocolError(parse_hello(bad_role).status(), "role " + std::to_string(role)));
  }
}

TEST(HandshakeMessages, VerdictRoundTripsAndRejectsGarbage) {
  for (uint32_t v = 0; v <= static_cast<uint32_t>(Verdict::kRefused); ++v) {
    auto r = parse_verdict(encode_verdict(static_cast<Verdict>(v)));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(static_cast<uint32_t>(r.value()), v);
    EXPECT_STRNE(verdict_text(r.value()), "unknown verdict");
  }
  auto unknown = encode_verdict(Verdict::kAccepted);
  unknown[4] = std::byte{8};
  EXPECT_TRUE(IsProtocolError(parse_verdict(unknown).status(), "unknown verdict 8"));
  auto bad_magic = encode_verdict(Verdict::kAccepted);
  bad_magic[1] = std::byte{0};
  EXPECT_TRUE(IsProtocolError(parse_verdict(bad_magic).status(), "malformed"));
  auto good = encode_verdict(Verdict::kAccepted);
  EXPECT_FALSE(parse_verdict(std::span(good).first(7)).ok());
  std::vector<std::byte> longer(good.begin(), good.end());
  longer.push_back(std::byte{0});
  EXPECT_FALSE(parse_verdict(longer).ok());
}

TEST(HandshakeMessages, ProofDependsOnRoleSecretAndBothHellos) {
  auto secret = JobSecret::from_hex(std::string(32, 'a')).value();
  auto other = JobSecret::from_hex(std::string(32, 'b')).value();
  auto c = encode_hello(sample_hello());
  Hello ah = sample_hello();
  ah.nonce[0] ^= std::byte{1};
  auto a = encode_hello(ah);
  Mac base = compute_proof(secret, Role::kConnector, c, a);
  EXPECT_TRUE(mac_equal(base, compute_proof(secret, Role::kConnector, c, a)));
  EXPECT_FALSE(mac_equal(base, compute_proof(secret, Role::kAcceptor, c, a)));
  EXPECT_FALSE(mac_equal(base, compute_proof(other, Role::kConnector, c, a)));
  EXPECT_FALSE(mac_equal(base, compute_proof(secret, Role::kConnector, a, c)));
}

}  // namespace
}  // namespace trainmover::transport
