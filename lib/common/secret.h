// The per-job secret and the primitives that prove knowledge of it.
//
// Every process of a job holds the same secret (passed by the launcher in
// TRAINMOVER_JOB_SECRET, readable only by the job's user). Links and the
// rendezvous store accept a peer only after it proves it holds the secret
// with an HMAC over fresh nonces, so a process of another user or another job
// on the same host cannot join or inject data.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainmover {

using Mac = std::array<std::byte, 32>;  // HMAC-SHA256
using Nonce = std::array<std::byte, 16>;

class JobSecret {
 public:
  static constexpr size_t kMinBytes = 16;

  // Parses a hex string of at least 2*kMinBytes digits.
  static Result<JobSecret> from_hex(std::string_view hex);
  // A fresh random secret (for launchers).
  static Result<JobSecret> generate();

  std::string to_hex() const;
  // HMAC-SHA256 of `message` under this secret.
  Mac mac(std::span<const std::byte> message) const;

 private:
  explicit JobSecret(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

// Constant-time comparison, so a timing side channel does not leak the MAC.
bool mac_equal(const Mac& a, const Mac& b);

// Fills `out` from the kernel's random source.
Status random_bytes(std::span<std::byte> out);
Result<uint64_t> random_u64();

std::string to_hex(std::span<const std::byte> bytes);
// Decodes hex; fails on odd length or a non-hex digit.
Result<std::string> from_hex(std::string_view hex);

}  // namespace trainmover
