// populate(): makes memory that a recorder is about to write resident now,
// on the calling thread, so that the copies into it later take no page
// faults.
//
// Why synchronous, and on the caller's thread: on a virtual machine that
// returns freed memory to its host, a first touch costs about 11 us per
// 4 KiB page (22.7 ms for 8 MiB, measured on one of this project's machine
// kind; 3-17 us here), every time. A helper thread at idle priority, as the
// recorder used before, never ran when every rank was bound to a busy CPU,
// so the recorded iterations' copies took the faults (+44% on one such
// host). The caller picks a moment that is not timed as a training step
// (communicator creation, the end of an iteration) and pays the faults
// there, whatever the CPUs are doing.
//
// How: madvise(MADV_POPULATE_WRITE) (Linux 5.14) maps the pages writable
// without a fault per page; where the kernel lacks it, one byte per page is
// written (a fault per page, but all of them here). Only pages wholly inside
// the range are touched: the bytes before its first page boundary share a
// page with bytes already written, which is resident.
//
// Contract: the range is mapped, writable, and holds nothing yet (the room
// ByteArena::reserve() returns): the fallback writes zeros into it. Memory
// short is not an error: populate() stops, and the writer faults in what is
// left, as without it. Thread-safe (no state).
#pragma once

#include <cstddef>
#include <span>

namespace trainmover::record {

enum class PopulateMethod {
  kMadvise,  // MADV_POPULATE_WRITE
  kTouch,    // a write per page
};

// Makes `range` resident with `method`; kMadvise falls back to kTouch where
// the kernel refuses it. Returns the method that did the work.
PopulateMethod populate(std::span<std::byte> range,
                        PopulateMethod method = PopulateMethod::kMadvise);

// Whether this kernel has MADV_POPULATE_WRITE.
bool populate_write_supported();

}  // namespace trainmover::record
