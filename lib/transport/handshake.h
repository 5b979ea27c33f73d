// The link handshake: both ends prove they hold the job secret, and agree on
// job, communicator, epoch and slots before any data frame is exchanged.
//
//   connector -> acceptor   Hello(connector)                      64 bytes
//   acceptor  -> connector  Hello(acceptor) + Proof(acceptor)     64 + 32
//   connector -> acceptor   Proof(connector)                      32
//   acceptor  -> connector  Verdict                                8
//
// Proof(role) = HMAC-SHA256(secret, label(role) | Hello(connector) | Hello(acceptor)).
// Each hello carries a fresh random nonce, so a proof cannot be replayed on
// another connection, and the role label stops a proof from being reflected.
// This file holds the message formats (pure functions, fuzzed); the
// state machine that drives them over a socket is tcp/handshake_session.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/secret.h"
#include "common/status.h"

namespace trainmover::transport {

enum class Role : uint8_t { kConnector = 1, kAcceptor = 2 };

struct Hello {
  Role role = Role::kConnector;
  uint64_t job_id = 0;
  uint64_t comm_id = 0;      // which communicator (or the store) of the job
  uint64_t epoch = 0;        // membership epoch the link belongs to
  int32_t slot = -1;         // the sender's slot; -1 for a store client
  int32_t target_slot = -1;  // connector: the slot it wants; acceptor: -1
  uint64_t instance_id = 0;  // random per process: tells apart processes serving a slot
  Nonce nonce{};
};

inline constexpr size_t kHelloSize = 64;
inline constexpr size_t kProofSize = 32;
inline constexpr size_t kVerdictSize = 8;

enum class Verdict : uint32_t {
  kAccepted = 0,
  kWrongJob = 1,
  kWrongComm = 2,
  kWrongEpoch = 3,
  kWrongSlot = 4,
  kAuthFailed = 5,
  kDuplicate = 6,  // a link with this peer exists or wins the tie-break
  kRefused = 7,    // the acceptor does not take this peer now
  // Never on the wire: the acceptor's policy cannot decide yet (a joiner of
  // an epoch this process has not prepared); the handshake waits, up to its
  // deadline, until the transport is asked to reconsider.
  kDeferred = 8,
};

const char* verdict_text(Verdict verdict);

using HelloBytes = std::array<std::byte, kHelloSize>;
using VerdictBytes = std::array<std::byte, kVerdictSize>;

HelloBytes encode_hello(const Hello& hello);
Result<Hello> parse_hello(std::span<const std::byte> bytes);

Mac compute_proof(const JobSecret& secret, Role prover, std::span<const std::byte> connector_hello,
                  std::span<const std::byte> acceptor_hello);

VerdictBytes encode_verdict(Verdict verdict);
Result<Verdict> parse_verdict(std::span<const std::byte> bytes);

}  // namespace trainmover::transport
