#include "record/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace trainmover::record {
namespace {

size_t page_size() {
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

// The pages wholly inside `range`: madvise needs a page-aligned start.
std::span<std::byte> whole_pages(std::span<std::byte> range) {
  const uintptr_t page = page_size();
  auto begin = reinterpret_cast<uintptr_t>(range.data());
  auto end = begin + range.size();
  uintptr_t first = (begin + page - 1) & ~(page - 1);
  uintptr_t last = end & ~(page - 1);
  if (last <= first) return {};
  return range.subspan(first - begin, last - first);
}

void touch(std::span<std::byte> pages) {
  // volatile: the compiler may not drop a store of the zero the page holds.
  for (size_t at = 0; at < pages.size(); at += page_size())
    *static_cast<volatile std::byte*>(pages.data() + at) = std::byte{0};
}

// False where the kernel has no MADV_POPULATE_WRITE (EINVAL); true when it
// did the work or ran out of memory (the writer then faults in the rest).
bool populate_write(std::span<std::byte> pages) {
#ifdef MADV_POPULATE_WRITE
  if (::madvise(pages.data(), pages.size(), MADV_POPULATE_WRITE) == 0) return true;
  return errno != EINVAL;
#else
  (void)pages;
  return false;
#endif
}

}  // namespace

bool populate_write_supported() {
  static const bool works = [] {
    void* page =
        ::mmap(nullptr, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return false;
    bool ok = populate_write({static_cast<std::byte*>(page), page_size()});
    ::munmap(page, page_size());
    return ok;
  }();
  return works;
}

PopulateMethod populate(std::span<std::byte> range, PopulateMethod method) {
  std::span<std::byte> pages = whole_pages(range);
  if (pages.empty()) return method;
  if (method == PopulateMethod::kMadvise && populate_write_supported() && populate_write(pages))
    return PopulateMethod::kMadvise;
  touch(pages);
  return PopulateMethod::kTouch;
}

}  // namespace trainmover::record
