// SharedRing: one direction of a shared-memory link. A byte ring in a memfd
// segment that the producer creates and the consumer maps from the
// descriptor it was passed (SCM_RIGHTS): a memfd has no name, so nothing is
// left behind by a process that dies and no other process can open it.
//
// Layout (positions count bytes ever moved; offsets are position & mask):
//   line 0: magic, data size (written once by the producer)
//   line 1: head, the producer's position   line 2: tail, the consumer's
//   line 3: reader_waiting                   line 4: writer_waiting
//   then the data, a power of two of bytes.
//
// Contract
//  - One producer process and one consumer process, one thread each.
//  - Sleeping without losing a wake-up: a side that finds nothing to do sets
//    its waiting flag and looks again (sleep_reader/sleep_writer); the other
//    side, after moving its position, takes the flag (wake_*) and, when it
//    was set, rings the doorbell (a byte on the link's socket). All four
//    accesses are sequentially consistent, so one side always sees the other.
//  - Both sides map the segment with MAP_POPULATE: a page touched for the
//    first time inside an operation costs a fault in each process, and the
//    first laps of a ring would pay them on every message.
//  - The consumer trusts nothing it reads from the segment: positions that
//    do not fit the ring are a protocol error, and the size is sealed
//    (F_SEAL_SHRINK, F_SEAL_GROW) before the descriptor is passed, so the
//    peer cannot cut the mapping under us.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/status.h"
#include "common/unique_fd.h"

namespace trainmover::transport::shm {

inline constexpr size_t kMinRingBytes = size_t{4} << 10;
inline constexpr size_t kMaxRingBytes = size_t{1} << 30;

class SharedRing {
 public:
  // A new segment with `data_bytes` (a power of two within the limits).
  static Result<SharedRing> create(size_t data_bytes);
  // Maps a segment a peer created; checks its seals, size and header.
  static Result<SharedRing> attach(UniqueFd fd);

  SharedRing(SharedRing&& other) noexcept;
  SharedRing& operator=(SharedRing&& other) noexcept;
  SharedRing(const SharedRing&) = delete;
  SharedRing& operator=(const SharedRing&) = delete;
  ~SharedRing();

  // The segment's descriptor, until it has been passed to the peer: the
  // mapping outlives it, so a link holds one descriptor (its socket).
  int fd() const { return fd_.get(); }
  void close_fd() { fd_.reset(); }
  size_t capacity() const { return data_bytes_; }

  // Producer: copies what fits from `iov`; returns the bytes copied (0: full).
  size_t produce(const iovec* iov, size_t count);
  // Producer: the ring is full; true when it still is after the writer's flag
  // is set (sleep until the doorbell), false when room appeared.
  bool sleep_writer();
  // Producer, after produce(): true when the reader was asleep (ring it).
  bool wake_reader();
  // Producer: it slept on a full ring and has not been woken yet.
  bool writer_asleep() const;

  // Consumer: copies up to `length` bytes; 0 when empty. Fails when the
  // positions in the segment are impossible (a corrupt or hostile peer).
  Result<size_t> consume(std::byte* dst, size_t length);
  // Consumer: like sleep_writer, for a ring with nothing written past
  // `seen_head` (a head() the caller has already dealt with: bytes it left
  // for later must not keep it awake). Returns false, awake, when new bytes
  // are there.
  Result<bool> sleep_reader(uint64_t seen_head);
  // Consumer: awake again; the producer need not ring.
  void wake_reader_locally();
  // Consumer, after consume(): true when the writer was asleep.
  bool wake_writer();
  // The positions as they are now, for polling (not checked: consume()
  // checks what it uses).
  uint64_t head() const;
  uint64_t tail() const;

 private:
  struct Header;
  SharedRing(UniqueFd fd, void* map, size_t map_bytes);
  Header& header() const;
  std::byte* data() const;
  Result<uint64_t> readable() const;

  UniqueFd fd_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  size_t data_bytes_ = 0;
  uint64_t mask_ = 0;
  uint64_t position_ = 0;  // this side's own position (head or tail), kept locally
};

}  // namespace trainmover::transport::shm
