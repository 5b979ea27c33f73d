// Replaces the global operator new/delete of a test binary to count what is
// allocated while an AllocationWatch is open (support/switching.h). The
// counters are process-wide atomics: the engine thread allocates too.
#include <atomic>
#include <cstdlib>
#include <new>

#include "support/switching.h"

namespace {

// Instrument state; the replaced operators are global by nature.
std::atomic<int> watching{0};
std::atomic<size_t> largest_seen{0};
std::atomic<size_t> total_seen{0};

void* counted_alloc(size_t n) {
  if (watching.load(std::memory_order_relaxed) > 0) {
    total_seen.fetch_add(n, std::memory_order_relaxed);
    size_t prev = largest_seen.load(std::memory_order_relaxed);
    while (n > prev && !largest_seen.compare_exchange_weak(prev, n)) {
    }
  }
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace trainmover::testing {

AllocationWatch::AllocationWatch() {
  largest_seen = 0;
  total_seen = 0;
  ++watching;
}
AllocationWatch::~AllocationWatch() { --watching; }
size_t AllocationWatch::largest() const { return largest_seen.load(); }
size_t AllocationWatch::total() const { return total_seen.load(); }

}  // namespace trainmover::testing
