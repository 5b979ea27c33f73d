// Store: the key/value rendezvous through which the processes of a job find
// each other's endpoints. TcpStore (a client of the TcpStoreServer that the
// job embeds) implements it; a PMIx-backed store will implement it too.
//
// Contract: keys and values are byte strings (keys up to kMaxKeyBytes, values
// up to kMaxValueBytes). Every call is bounded in time. Implementations are
// thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace trainmover::rendezvous {

inline constexpr size_t kMaxKeyBytes = 512;
inline constexpr size_t kMaxValueBytes = 1 << 20;

class Store {
 public:
  virtual ~Store() = default;

  // Sets `key` to `value`, replacing an earlier value.
  virtual Status set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting up to `timeout` for it to be set; fails with
  // TM_ERROR_TIMEOUT naming the key when it is not.
  virtual Result<std::string> get(const std::string& key, Duration timeout) = 0;
  // Adds `delta` to the integer counter `key` (created at 0); returns the sum.
  virtual Result<int64_t> add(const std::string& key, int64_t delta) = 0;
};

}  // namespace trainmover::rendezvous
