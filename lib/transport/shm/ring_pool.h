// RingPool: shared-memory rings made before the links that will use them.
// A new 1 MiB ring costs its creator about 0.3 ms of CPU on this project's
// hosts (allocating and zeroing 256 pages, MAP_POPULATE); a recovery opens
// several links on its critical path (the joiner of a 16-slot job 9, each
// neighbour of the leaver one or two), so a standby makes them while it
// waits and an active rank keeps a few spare (docs/shm-transport.md).
//
// A pooled ring was never passed to any process: taking one is exactly like
// creating it (its positions are 0, nobody else maps it).
//
// Threading: every method is thread-safe (one mutex; fill() creates outside
// it). Shared by the owners of the transports that draw on it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status.h"
#include "transport/shm/ring.h"

namespace trainmover::transport::shm {

class RingPool {
 public:
  // Rings of `ring_bytes` (SharedRing's limits); none made yet.
  explicit RingPool(size_t ring_bytes) : ring_bytes_(ring_bytes) {}
  RingPool(const RingPool&) = delete;
  RingPool& operator=(const RingPool&) = delete;

  size_t ring_bytes() const { return ring_bytes_; }
  // Makes rings until `count` are spare; fails as SharedRing::create does
  // (the ones made before the failure stay).
  Status fill(size_t count);
  // Each owner that wants `more` spare rings of its own raises the pool's
  // target by that many, and the pool is filled to it: links opened
  // meanwhile (another owner's first ones) may have taken spares.
  Status grow(size_t more);
  // A spare ring of `data_bytes`; none when the pool is empty or its rings
  // have another size (the caller then creates one).
  std::optional<SharedRing> take(size_t data_bytes);
  size_t spare() const;

 private:
  const size_t ring_bytes_;
  mutable std::mutex mutex_;
  std::vector<SharedRing> spare_;  // guarded by mutex_
  size_t target_ = 0;              // guarded by mutex_
};

}  // namespace trainmover::transport::shm
