// ByteArena: append-only storage for a trace being recorded. Bytes never
// move once written (no reallocation copies while a job runs). Blocks are
// plain 4 KiB-page mappings: with transparent huge pages (MADV_HUGEPAGE) the
// kernel compacted memory synchronously on fault, and recorded iterations
// stalled 15-30 ms now and then (measured here); page faults are instead
// taken ahead, off the training thread, through reserve() and a Prefaulter.
//
// Move-only; not thread-safe. Allocation failure is reported (no abort).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "common/status.h"

namespace trainmover::record {

class ByteArena {
 public:
  ByteArena() = default;
  ByteArena(ByteArena&& other) noexcept;
  ByteArena& operator=(ByteArena&& other) noexcept;
  ByteArena(const ByteArena&) = delete;
  ByteArena& operator=(const ByteArena&) = delete;
  ~ByteArena();

  // `n` contiguous bytes at the end of the arena.
  Result<std::span<std::byte>> allocate(size_t n);
  // Makes room for `n` more bytes in one piece (mapping a block when the
  // last one lacks it) and returns that room, not allocated yet: the next
  // allocations, up to `n` bytes together, land in it. For prefaulting.
  Result<std::span<std::byte>> reserve(size_t n);
  // The bytes written so far, in order, as few pieces as there are blocks.
  std::vector<std::span<const std::byte>> pieces() const;
  std::vector<std::span<std::byte>> mutable_pieces();
  size_t size() const { return size_; }

 private:
  struct Block {
    std::byte* data = nullptr;  // what mmap returned
    size_t capacity = 0;
    size_t used = 0;
  };
  void release();
  Status ensure_room(size_t n);

  std::vector<Block> blocks_;
  size_t size_ = 0;
};

}  // namespace trainmover::record
