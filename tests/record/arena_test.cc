// Unit tests of the recorder's memory: ByteArena's reserve/allocate contract
// and the Prefaulter, which must fault pages in without changing bytes that
// are written at the same time, and stop when asked.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

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

TEST(Prefaulter, FaultsTheRangeIn) {
  if (!Prefaulter::supported()) GTEST_SKIP() << "no MADV_POPULATE_WRITE on this kernel";
  ByteArena arena;
  auto room = arena.reserve(16 * kMiB);
  ASSERT_TRUE(room.ok());
  const size_t pages = room->size() / static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  ASSERT_LT(resident_pages(*room), pages);  // fresh anonymous memory
  Prefaulter prefaulter;
  prefaulter.populate(*room);
  prefaulter.wait();
  EXPECT_EQ(resident_pages(*room), pages);
}

TEST(Prefaulter, KeepsBytesWrittenWhileItRuns) {
  ByteArena arena;
  auto room = arena.reserve(64 * kMiB);
  ASSERT_TRUE(room.ok());
  Prefaulter prefaulter;
  prefaulter.populate(*room);
  // Written from the front while the prefaulter works through the range.
  for (size_t i = 0; i < room->size(); i += 512) (*room)[i] = std::byte(i / 512 % 251 + 1);
  prefaulter.wait();
  size_t wrong = 0;
  for (size_t i = 0; i < room->size(); i += 512)
    wrong += (*room)[i] != std::byte(i / 512 % 251 + 1);
  EXPECT_EQ(wrong, 0u);
}

TEST(Prefaulter, StopAbandonsTheRestAndItCanPopulateAgain) {
  if (!Prefaulter::supported()) GTEST_SKIP() << "no MADV_POPULATE_WRITE on this kernel";
  ByteArena arena;
  auto big = arena.reserve(512 * kMiB);  // seconds of work in 256 KiB steps at idle priority
  ASSERT_TRUE(big.ok());
  const size_t pages = big->size() / static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  Prefaulter prefaulter;
  prefaulter.populate(*big);
  prefaulter.stop();
  EXPECT_LT(resident_pages(*big), pages);
  auto more = arena.reserve(513 * kMiB);  // a new block after the first
  ASSERT_TRUE(more.ok());
  prefaulter.populate(more->subspan(0, 4 * kMiB));
  prefaulter.wait();
  EXPECT_EQ(resident_pages(more->subspan(0, 4 * kMiB)),
            4 * kMiB / static_cast<size_t>(::sysconf(_SC_PAGESIZE)));
}

}  // namespace
}  // namespace trainmover::record
