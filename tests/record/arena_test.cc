// Unit tests of the recorder's memory: ByteArena's reserve/allocate contract
// and populate(), which must make the room resident, by either method,
// without changing bytes written before it.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/page_faults.h"
#include "record/arena.h"
#include "record/prefault.h"

namespace trainmover::record {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Pages of `range` that are resident (mincore), counted.
size_t resident_pages(std::span<std::byte> range) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(range.data()) & ~(page - 1);
  auto end = reinterpret_cast<uintptr_t>(range.data() + range.size());
  std::vector<unsigned char> in((end - begin + page - 1) / page);
  if (::mincore(reinterpret_cast<void*>(begin), end - begin, in.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

TEST(ByteArena, AllocationsAfterReserveLandInTheReservedRoom) {
  ByteArena arena;
  auto first = arena.allocate(3 * kMiB);
  ASSERT_TRUE(first.ok());
  // The 8 MiB first block has 5 MiB left: 6 MiB need a new block.
  auto room = arena.reserve(6 * kMiB);
  ASSERT_TRUE(room.ok());
  ASSERT_EQ(room->size(), 6 * kMiB);
  EXPECT_EQ(arena.size(), 3 * kMiB);  // reserving allocates nothing
  auto a = arena.allocate(2 * kMiB);
  auto b = arena.allocate(4 * kMiB);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->data(), room->data());
  EXPECT_EQ(b->data(), room->data() + 2 * kMiB);
  EXPECT_EQ(arena.pieces().size(), 2u);
  EXPECT_EQ(arena.size(), 9 * kMiB);
}

TEST(ByteArena, ReserveWithinTheLastBlockMapsNothing) {
  ByteArena arena;
  ASSERT_TRUE(arena.allocate(kMiB).ok());
  auto room = arena.reserve(2 * kMiB);
  ASSERT_TRUE(room.ok());
  auto next = arena.allocate(2 * kMiB);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->data(), room->data());
  EXPECT_EQ(arena.pieces().size(), 1u);
}

TEST(ByteArena, HugePagesAlignBlocksAndKeepTheContract) {
  ByteArena arena(ArenaPages::kHuge);
  auto a = arena.allocate(3 * kMiB);
  auto room = arena.reserve(6 * kMiB);
  ASSERT_TRUE(a.ok() && room.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % (2 * kMiB), 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(room->data()) % (2 * kMiB), 0u);  // a new block
  auto b = arena.allocate(6 * kMiB);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), room->data());
  std::fill(b->begin(), b->end(), std::byte{7});
  ByteArena moved = std::move(arena);
  EXPECT_EQ(moved.size(), 9 * kMiB);
  EXPECT_EQ(moved.pieces().back().back(), std::byte{7});
}

TEST(ByteArena, FreeWrittenGivesBackTheBytesAndKeepsTheRoomAfter) {
  ByteArena arena;
  auto written = arena.allocate(3 * kMiB + 100);
  ASSERT_TRUE(written.ok());
  std::fill(written->begin(), written->end(), std::byte{7});
  auto room = arena.reserve(4 * kMiB);  // faulted in ahead, never written
  ASSERT_TRUE(room.ok());
  std::fill(room->begin(), room->end(), std::byte{0});
  const size_t room_pages = resident_pages(*room);
  arena.free_written();
  EXPECT_EQ(arena.size(), 0u);
  EXPECT_TRUE(arena.pieces().empty());
  // The written pages are unmapped (mincore fails on them); the first page
  // of the room shares a page with the last written bytes and goes too.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in(1);
  EXPECT_NE(::mincore(written->data(), page, in.data()), 0);
  const size_t shared = page - reinterpret_cast<uintptr_t>(room->data()) % page;
  auto rest = room->subspan(shared);  // from the room's first page of its own
  EXPECT_EQ(resident_pages(rest), room_pages - 1);
  // The arena goes on from the room that is left.
  auto again = arena.allocate(kMiB);
  ASSERT_TRUE(again.ok());
  EXPECT_GE(again->data(), rest.data());
  EXPECT_LT(again->data(), rest.data() + rest.size());
  std::fill(again->begin(), again->end(), std::byte{1});
  EXPECT_EQ(arena.size(), kMiB);
}

// Both ways of populating make every page of the room resident, and leave
// alone the bytes written before it in its first page.
void expect_populates(PopulateMethod method) {
  ByteArena arena;
  auto written = arena.allocate(100);  // the room starts inside this page
  ASSERT_TRUE(written.ok());
  std::fill(written->begin(), written->end(), std::byte{7});
  auto room = arena.reserve(16 * kMiB);
  ASSERT_TRUE(room.ok());
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t whole = (16 * kMiB - (page - 100)) / page;  // pages wholly in the room
  ASSERT_LT(resident_pages(*room), whole);                 // fresh anonymous memory
  EXPECT_EQ(populate(*room, method), method);
  EXPECT_GE(resident_pages(*room), whole);
  EXPECT_EQ(std::count(written->begin(), written->end(), std::byte{7}), 100);
}

TEST(Populate, WithMadviseMakesTheRoomResident) {
  if (!populate_write_supported()) GTEST_SKIP() << "no MADV_POPULATE_WRITE on this kernel";
  expect_populates(PopulateMethod::kMadvise);
}

TEST(Populate, ByTouchingMakesTheRoomResident) { expect_populates(PopulateMethod::kTouch); }

// The caller pays the faults, not a later writer: counted on this thread.
TEST(Populate, TakesTheFaultsOnTheCallingThread) {
  ByteArena arena;
  auto room = arena.reserve(8 * kMiB);
  ASSERT_TRUE(room.ok());
  const uint64_t pages = 8 * kMiB / static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  populate(*room);
  const uint64_t before = thread_minor_faults();
  std::fill(room->begin(), room->end(), std::byte{3});
  EXPECT_LT(thread_minor_faults() - before, pages / 64);
}

TEST(Populate, AnEmptyOrSubPageRangeDoesNothing) {
  ByteArena arena;
  auto room = arena.reserve(kMiB);
  ASSERT_TRUE(room.ok());
  populate(room->subspan(1, 100), PopulateMethod::kTouch);
  populate({}, PopulateMethod::kTouch);
  EXPECT_EQ(resident_pages(room->subspan(0, 4096)), 0u);
}

}  // namespace
}  // namespace trainmover::record
