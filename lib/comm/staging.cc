#include "comm/staging.h"

namespace trainmover {

namespace {
// Slots start at multiples of 64 bytes, so every element type is aligned.
size_t stride_of(size_t slot_bytes) { return (slot_bytes + 63) / 64 * 64; }
}  // namespace

// Not zeroed: every slot is written before it is read, and zeroing 2 MiB
// (the default) touched every page when a communicator was created, about
// a millisecond on each creation, a joiner's at its promotion included.
// The pages are faulted in on first use instead.
StagingPool::StagingPool(size_t slots, size_t slot_bytes)
    : slot_bytes_(slot_bytes),
      stride_(stride_of(slot_bytes)),
      memory_(std::make_unique_for_overwrite<std::byte[]>(slots * stride_of(slot_bytes))) {
  free_.reserve(slots);
  reset();
}

int StagingPool::acquire() {
  if (free_.empty()) return -1;
  int slot = free_.back();
  free_.pop_back();
  return slot;
}

void StagingPool::release(int slot) { free_.push_back(slot); }

void StagingPool::reset() {
  free_.clear();
  for (int i = static_cast<int>(free_.capacity()) - 1; i >= 0; --i) free_.push_back(i);
}

}  // namespace trainmover
