#include "record/arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

namespace trainmover::record {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

ByteArena::ByteArena(ByteArena&& other) noexcept
    : pages_(other.pages_),
      blocks_(std::move(other.blocks_)),
      size_(std::exchange(other.size_, 0)) {
  other.blocks_.clear();
}

ByteArena& ByteArena::operator=(ByteArena&& other) noexcept {
  if (this != &other) {
    release();
    pages_ = other.pages_;
    blocks_ = std::move(other.blocks_);
    other.blocks_.clear();
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

ByteArena::~ByteArena() { release(); }

void ByteArena::release() {
  for (Block& b : blocks_) ::munmap(b.map, b.map_bytes);
  blocks_.clear();
  size_ = 0;
}

void ByteArena::free_written() {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::vector<Block> kept;
  for (Block& b : blocks_) {
    auto map = reinterpret_cast<uintptr_t>(b.map);
    auto data_end = reinterpret_cast<uintptr_t>(b.data) + b.capacity;
    // Whole pages from the mapping's start through the last written byte.
    uintptr_t cut = round_up(reinterpret_cast<uintptr_t>(b.data) + b.used, page);
    if (cut >= data_end) {
      ::munmap(b.map, b.map_bytes);
      continue;
    }
    if (cut == map) {  // nothing written in this block
      kept.push_back(b);
      continue;
    }
    ::munmap(b.map, cut - map);
    b.map_bytes -= cut - map;
    b.map = reinterpret_cast<void*>(cut);
    b.capacity = data_end - cut;
    b.data = reinterpret_cast<std::byte*>(cut);
    b.used = 0;
    kept.push_back(b);
  }
  blocks_ = std::move(kept);
  size_ = 0;
}

Status ByteArena::ensure_room(size_t n) {
  if (!blocks_.empty() && blocks_.back().capacity - blocks_.back().used >= n) return Status::Ok();
  // Each block doubles the arena (at least 8 MiB), so blocks stay few.
  Block b;
  b.capacity = round_up(std::max({n, kMinBlockBytes, size_}), kHugePage);
  const bool huge = pages_ == ArenaPages::kHuge;
  b.map_bytes = b.capacity + (huge ? kHugePage : 0);  // room to align to a huge page
  b.map = ::mmap(nullptr, b.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b.map == MAP_FAILED) return system_error(str_cat("mmap of ", b.map_bytes, " bytes"), errno);
  auto addr = reinterpret_cast<uintptr_t>(b.map);
  b.data = static_cast<std::byte*>(b.map) + (huge ? round_up(addr, kHugePage) - addr : 0);
  if (huge) ::madvise(b.data, b.capacity, MADV_HUGEPAGE);  // advice only: fine if refused
  blocks_.push_back(b);
  return Status::Ok();
}

Result<std::span<std::byte>> ByteArena::allocate(size_t n) {
  TM_RETURN_IF_ERROR(ensure_room(n));
  Block& b = blocks_.back();
  std::span<std::byte> out(b.data + b.used, n);
  b.used += n;
  size_ += n;
  return out;
}

Result<std::span<std::byte>> ByteArena::reserve(size_t n) {
  TM_RETURN_IF_ERROR(ensure_room(n));
  Block& b = blocks_.back();
  return std::span<std::byte>(b.data + b.used, n);
}

std::vector<std::span<const std::byte>> ByteArena::pieces() const {
  std::vector<std::span<const std::byte>> out;
  for (const Block& b : blocks_) {
    if (b.used > 0) out.emplace_back(b.data, b.used);
  }
  return out;
}

std::vector<std::span<std::byte>> ByteArena::mutable_pieces() {
  std::vector<std::span<std::byte>> out;
  for (const Block& b : blocks_) {
    if (b.used > 0) out.emplace_back(b.data, b.used);
  }
  return out;
}

}  // namespace trainmover::record
