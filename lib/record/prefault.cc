#include "record/prefault.h"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <system_error>

namespace trainmover::record {
namespace {

constexpr size_t kStep = size_t{256} << 10;

// A failure (memory short) only means the writer faults the pages itself.
void populate_step(std::span<std::byte> range) {
#ifdef MADV_POPULATE_WRITE
  ::madvise(range.data(), range.size(), MADV_POPULATE_WRITE);
#else
  (void)range;
#endif
}

// madvise needs a page-aligned start; the bytes before it in the same page
// are already mapped (they belong to records written before).
std::span<std::byte> page_aligned(std::span<std::byte> range) {
  constexpr uintptr_t kPage = 4096;
  auto begin = reinterpret_cast<uintptr_t>(range.data());
  uintptr_t aligned = (begin + kPage - 1) & ~(kPage - 1);
  size_t skip = aligned - begin;
  if (skip >= range.size()) return {};
  return range.subspan(skip);
}

}  // namespace

bool Prefaulter::supported() {
#ifdef MADV_POPULATE_WRITE
  static const bool works = [] {
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return false;
    bool ok = ::madvise(page, 4096, MADV_POPULATE_WRITE) == 0;
    ::munmap(page, 4096);
    return ok;
  }();
  return works;
#else
  return false;
#endif
}

void Prefaulter::populate(std::span<std::byte> range) {
  range = page_aligned(range);
  if (range.empty() || !supported()) return;
  try {
    threads_.emplace_back([this, range] {
      sched_param idle{};
      ::sched_setscheduler(0, SCHED_IDLE, &idle);  // refused: normal priority
      for (size_t at = 0; at < range.size() && !stopping_.load(std::memory_order_relaxed);
           at += kStep) {
        populate_step(range.subspan(at, std::min(kStep, range.size() - at)));
      }
    });
  } catch (const std::system_error&) {
    // No thread: the first writes fault the pages in, as without us.
  }
}

void Prefaulter::wait() {
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Prefaulter::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  wait();
  stopping_.store(false, std::memory_order_relaxed);
}

}  // namespace trainmover::record
