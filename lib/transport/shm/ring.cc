#include "transport/shm/ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace trainmover::transport::shm {
namespace {
constexpr uint64_t kRingMagic = 0x31474E524D54ull;  // "TMRNG1"
constexpr size_t kLine = 64;
constexpr size_t kHeaderBytes = 8 * kLine;
constexpr unsigned kRequiredSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

bool power_of_two(size_t n) { return n != 0 && (n & (n - 1)) == 0; }
}  // namespace

struct SharedRing::Header {
  alignas(kLine) uint64_t magic;
  uint64_t data_bytes;
  alignas(kLine) std::atomic<uint64_t> head;
  alignas(kLine) std::atomic<uint64_t> tail;
  alignas(kLine) std::atomic<uint32_t> reader_waiting;
  alignas(kLine) std::atomic<uint32_t> writer_waiting;
};

SharedRing::Header& SharedRing::header() const {
  static_assert(sizeof(Header) <= kHeaderBytes);
  return *static_cast<Header*>(map_);
}

static_assert(std::atomic<uint64_t>::is_always_lock_free, "positions are shared between processes");

Result<SharedRing> SharedRing::create(size_t data_bytes) {
  if (!power_of_two(data_bytes) || data_bytes < kMinRingBytes || data_bytes > kMaxRingBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "shared-memory ring of ", data_bytes,
                 " bytes: must be a power of two from ", kMinRingBytes, " to ", kMaxRingBytes);
  }
  UniqueFd fd(memfd_create("trainmover-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return system_error("memfd_create", errno);
  size_t map_bytes = kHeaderBytes + data_bytes;
  if (ftruncate(fd.get(), static_cast<off_t>(map_bytes)) != 0)
    return system_error("ftruncate of the ring", errno);
  if (fcntl(fd.get(), F_ADD_SEALS, kRequiredSeals) != 0)
    return system_error("sealing the ring", errno);
  void* map =
      mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (map == MAP_FAILED) return system_error("mmap of the ring", errno);
  SharedRing ring(std::move(fd), map, map_bytes);
  Header& h = ring.header();
  h.magic = kRingMagic;
  h.data_bytes = data_bytes;
  ring.data_bytes_ = data_bytes;
  ring.mask_ = data_bytes - 1;
  return ring;
}

Result<SharedRing> SharedRing::attach(UniqueFd fd) {
  int seals = fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0) return system_error("reading the seals of the peer's ring", errno);
  if ((static_cast<unsigned>(seals) & kRequiredSeals) != kRequiredSeals)
    return error(TM_ERROR_PROTOCOL, "the peer's ring is not sealed against resizing");
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return system_error("fstat of the peer's ring", errno);
  auto map_bytes = static_cast<size_t>(st.st_size);
  size_t data_bytes = map_bytes - kHeaderBytes;
  if (map_bytes <= kHeaderBytes || !power_of_two(data_bytes) || data_bytes < kMinRingBytes ||
      data_bytes > kMaxRingBytes) {
    return error(TM_ERROR_PROTOCOL, "the peer's ring has an impossible size (", map_bytes,
                 " bytes)");
  }
  void* map =
      mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
  if (map == MAP_FAILED) return system_error("mmap of the peer's ring", errno);
  SharedRing ring(UniqueFd(), map, map_bytes);  // the mapping is all we need
  fd.reset();
  const Header& h = ring.header();
  if (h.magic != kRingMagic || h.data_bytes != data_bytes)
    return error(TM_ERROR_PROTOCOL, "the peer's ring has a bad header");
  ring.data_bytes_ = data_bytes;
  ring.mask_ = data_bytes - 1;
  // The peer may have written already: start where it started, at 0.
  return ring;
}

SharedRing::SharedRing(UniqueFd fd, void* map, size_t map_bytes)
    : fd_(std::move(fd)), map_(map), map_bytes_(map_bytes) {}

SharedRing::SharedRing(SharedRing&& other) noexcept
    : fd_(std::move(other.fd_)),
      map_(std::exchange(other.map_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      data_bytes_(other.data_bytes_),
      mask_(other.mask_),
      position_(other.position_) {}

SharedRing& SharedRing::operator=(SharedRing&& other) noexcept {
  if (this == &other) return *this;
  if (map_ != nullptr) munmap(map_, map_bytes_);
  fd_ = std::move(other.fd_);
  map_ = std::exchange(other.map_, nullptr);
  map_bytes_ = std::exchange(other.map_bytes_, 0);
  data_bytes_ = other.data_bytes_;
  mask_ = other.mask_;
  position_ = other.position_;
  return *this;
}

SharedRing::~SharedRing() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
}

std::byte* SharedRing::data() const { return static_cast<std::byte*>(map_) + kHeaderBytes; }

// ---- producer ----------------------------------------------------------------

size_t SharedRing::produce(const iovec* iov, size_t count) {
  Header& h = header();
  uint64_t tail = h.tail.load(std::memory_order_acquire);
  // A consumer that claims more than was produced is broken; treat as full.
  uint64_t used = position_ - tail;
  if (used > data_bytes_) return 0;
  size_t room = data_bytes_ - used;
  size_t copied = 0;
  for (size_t i = 0; i < count && copied < room; ++i) {
    const auto* src = static_cast<const std::byte*>(iov[i].iov_base);
    size_t take = std::min(iov[i].iov_len, room - copied);
    uint64_t offset = (position_ + copied) & mask_;
    size_t first = std::min<size_t>(take, data_bytes_ - offset);
    std::memcpy(data() + offset, src, first);
    std::memcpy(data(), src + first, take - first);
    copied += take;
  }
  if (copied == 0) return 0;
  position_ += copied;
  h.head.store(position_, std::memory_order_seq_cst);
  return copied;
}

bool SharedRing::sleep_writer() {
  Header& h = header();
  h.writer_waiting.store(1, std::memory_order_seq_cst);
  uint64_t tail = h.tail.load(std::memory_order_seq_cst);
  if (position_ - tail < data_bytes_) {
    h.writer_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

bool SharedRing::writer_asleep() const {
  return header().writer_waiting.load(std::memory_order_relaxed) != 0;
}

bool SharedRing::wake_reader() {
  Header& h = header();
  return h.reader_waiting.load(std::memory_order_seq_cst) != 0 &&
         h.reader_waiting.exchange(0, std::memory_order_seq_cst) != 0;
}

// ---- consumer ----------------------------------------------------------------

Result<uint64_t> SharedRing::readable() const {
  uint64_t head = header().head.load(std::memory_order_seq_cst);
  uint64_t available = head - position_;
  if (available > data_bytes_)
    return error(TM_ERROR_PROTOCOL, "the peer's ring holds an impossible position");
  return available;
}

Result<size_t> SharedRing::consume(std::byte* dst, size_t length) {
  TM_ASSIGN_OR_RETURN(uint64_t available, readable());
  size_t take = static_cast<size_t>(std::min<uint64_t>(available, length));
  if (take == 0) return size_t{0};
  uint64_t offset = position_ & mask_;
  size_t first = std::min<size_t>(take, data_bytes_ - offset);
  std::memcpy(dst, data() + offset, first);
  std::memcpy(dst + first, data(), take - first);
  position_ += take;
  header().tail.store(position_, std::memory_order_seq_cst);
  return take;
}

Result<bool> SharedRing::sleep_reader(uint64_t seen_head) {
  Header& h = header();
  h.reader_waiting.store(1, std::memory_order_seq_cst);
  TM_ASSIGN_OR_RETURN(uint64_t available, readable());
  if (available > 0 && h.head.load(std::memory_order_seq_cst) != seen_head) {
    h.reader_waiting.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

uint64_t SharedRing::head() const { return header().head.load(std::memory_order_acquire); }
uint64_t SharedRing::tail() const { return header().tail.load(std::memory_order_acquire); }

void SharedRing::wake_reader_locally() {
  header().reader_waiting.store(0, std::memory_order_relaxed);
}

bool SharedRing::wake_writer() {
  Header& h = header();
  return h.writer_waiting.load(std::memory_order_seq_cst) != 0 &&
         h.writer_waiting.exchange(0, std::memory_order_seq_cst) != 0;
}

}  // namespace trainmover::transport::shm
