// Store: the key/value rendezvous through which the processes of a job find
// each other's endpoints. TcpStore (a client of the TcpStoreServer that the
// job embeds) and PmixStore (PMIx put/commit/fence/get, pmix/pmix_store.h)
// implement it; store_factory.h picks one from TRAINMOVER_STORE.
//
// Contract: keys and values are byte strings (keys up to kMaxKeyBytes, values
// up to kMaxValueBytes). Every call is bounded in time. Implementations are
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
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

  // Atomic compare-and-set: sets `key` to `value` only if its current value
  // equals `*expected`, or, when `expected` is nullopt, only if `key` is
  // absent. Of several writers racing on one key exactly one wins (set()s
  // of the same key are not fenced: use one or the other per key). Returns
  // whether this call won and the key's value after it (`value` when it won;
  // the value that beat it, or nothing when the key is absent, when it lost).
  // A win answers every get() waiting for the key.
  struct CompareSetResult {
    bool won = false;
    std::optional<std::string> current;
  };
  virtual Result<CompareSetResult> compare_set(const std::string& key,
                                               const std::optional<std::string>& expected,
                                               const std::string& value) = 0;

  // Makes the set()s of this process visible to the other processes of the
  // job and theirs to it. A no-op for stores where each set() is visible at
  // once (TCP); collective where it is not (PMIx: a fence of every process
  // of the job, so every process must call it once, standbys included).
  virtual Status sync(Duration /*timeout*/) { return Status::Ok(); }

  // This process's rank and the job's size when the store knows them (a
  // PMIx store does: the PMIx server told it); nullopt otherwise.
  struct Identity {
    int rank = -1;
    int size = 0;
  };
  virtual std::optional<Identity> identity() const { return std::nullopt; }
};

// A store server the job embeds (TcpStoreServer); clients reach it at
// address(), "host:port". Destroying it stops it.
class StoreServer {
 public:
  virtual ~StoreServer() = default;
  virtual const std::string& address() const = 0;
};

}  // namespace trainmover::rendezvous
