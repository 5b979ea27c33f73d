// The two kinds of entry an NCCL trace holds, and their encoding.
//
// A communicator entry says how the program created its k-th communicator
// (init or split, with size and rank); a call entry says what the n-th data
// call on a communicator asked for and how many output bytes it returned.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "record/nccl/call.h"

namespace trainmover::nccl {

enum class CommOrigin : uint8_t { kInit = 1, kSplit = 2 };

struct CommEntry {
  uint32_t ordinal = 0;  // creation order in the process, from 0
  CommOrigin origin = CommOrigin::kInit;
  int32_t nranks = 0;
  int32_t rank = 0;
  int32_t parent = -1;  // split: the parent's ordinal
  int32_t color = 0;    // split only
  int32_t key = 0;      // split only

  bool operator==(const CommEntry&) const = default;
};

struct CallEntry {
  uint32_t comm = 0;  // the communicator's ordinal
  uint64_t seq = 0;   // the call's index on that communicator, from 0
  CallDesc desc;
  uint64_t output_bytes = 0;

  bool operator==(const CallEntry&) const = default;
};

std::string describe(const CommEntry& comm);

// A communicator entry travels as the output bytes of a trace record.
void encode(const CommEntry& comm, std::vector<std::byte>& out);
// Validates every field; errors say which.
Result<CommEntry> decode_comm(std::span<const std::byte> in);

}  // namespace trainmover::nccl
