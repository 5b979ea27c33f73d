// ByteArena: append-only storage for a trace being recorded. Bytes never
// move once written (no reallocation copies while a job runs).
//
// Pages: kSmall (4 KiB) for an arena written on the training thread. With
// transparent huge pages (MADV_HUGEPAGE) the kernel compacted memory
// synchronously on fault, and recorded iterations stalled 15-30 ms now and
// then (measured here); the C API recorder takes its faults ahead instead,
// where no training step is timed, through reserve() and populate()
// (record/prefault.h). kHuge for an
// arena written off the training path (the NCCL interposer's completion
// writer), where ten times fewer faults matter more than a rare stall.
//
// Move-only; not thread-safe. Allocation failure is reported (no abort).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "common/status.h"

namespace trainmover::record {

enum class ArenaPages { kSmall, kHuge };

class ByteArena {
 public:
  // The smallest block mapped: the first allocation maps at least this much.
  static constexpr size_t kMinBlockBytes = size_t{8} << 20;

  explicit ByteArena(ArenaPages pages = ArenaPages::kSmall) : pages_(pages) {}
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
  // Gives back the pages of the bytes written so far, which are forgotten
  // (size() becomes 0). Room mapped after them is kept until the arena
  // goes: a reserve faulted in ahead and never written would cost CPU to
  // free now (about 0.3 ms per 4 MiB of 4 KiB pages here), and costs memory
  // only up to the reserve's size.
  void free_written();

 private:
  struct Block {
    void* map = nullptr;  // what mmap returned
    size_t map_bytes = 0;
    std::byte* data = nullptr;  // inside the mapping; 2 MiB-aligned for kHuge
    size_t capacity = 0;
    size_t used = 0;
  };
  void release();
  Status ensure_room(size_t n);

  ArenaPages pages_;
  std::vector<Block> blocks_;
  size_t size_ = 0;
};

}  // namespace trainmover::record
