// StagingPool: the fixed set of buffers a communicator receives reduced data
// into. Allocated once when the communicator is created and never grown, so
// a collective (or a change of links) allocates no data memory.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace trainmover {

class StagingPool {
 public:
  StagingPool(size_t slots, size_t slot_bytes);

  size_t slot_bytes() const { return slot_bytes_; }
  size_t slots() const { return free_.capacity(); }
  // A free slot index, or -1 when all are in use.
  int acquire();
  void release(int slot);
  std::byte* data(int slot) { return memory_.get() + static_cast<size_t>(slot) * stride_; }
  // Marks every slot free (after an operation is abandoned).
  void reset();

 private:
  size_t slot_bytes_;
  size_t stride_;
  std::unique_ptr<std::byte[]> memory_;
  std::vector<int> free_;
};

}  // namespace trainmover
