// Reusable host staging buffers for record mode.
//
// Pinned allocations are slow (milliseconds) and a training loop repeats
// the same sizes every iteration, so buffers are kept and reused: acquire()
// returns the smallest free buffer that fits, or allocates one. The
// allocator is a parameter: cudaHostAlloc in the interposer, malloc in
// tests. Thread-safe (acquire on application threads, release on the
// completion writer). Buffers are freed by the destructor.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <unordered_map>

#include "common/status.h"

namespace trainmover::nccl {

class HostPool {
 public:
  using Allocate = std::function<Result<void*>(size_t bytes)>;
  using Free = std::function<void(void*)>;

  HostPool(Allocate allocate, Free free) : allocate_(std::move(allocate)), free_(std::move(free)) {}
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  // A buffer of at least `bytes` (the span has exactly `bytes`).
  Result<std::span<std::byte>> acquire(size_t bytes);
  // Gives back a buffer acquire() returned.
  void release(std::span<std::byte> buffer);
  size_t bytes_held() const;

 private:
  Allocate allocate_;
  Free free_;
  mutable std::mutex mu_;
  std::multimap<size_t, std::byte*> free_list_;      // capacity -> buffer
  std::unordered_map<std::byte*, size_t> capacity_;  // every buffer we own
  size_t held_ = 0;
};

}  // namespace trainmover::nccl
