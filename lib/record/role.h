// Role: what a recorded trace stands for, so that one standby can replay
// each kind of process of a job in turn. A role is a pipeline stage (none,
// first, middle, last) plus sorted key=value attributes the program declares
// (for example "tp=0" for a tensor-parallel rank).
//
// Data-parallel replicas of a role record identical traces when every
// collective output is the same on every replica (allreduce, allgather,
// broadcast); only one copy is kept. When an output depends on the slot
// (reduce_scatter, send/recv between replicas), each replica must declare a
// distinguishing attribute such as "dp=3", or the replicas' traces conflict
// and only the first is kept.
//
// The canonical text form, "stage=first" or "stage=first,dp=3,tp=0" (keys
// sorted), is the role's identity in trace headers and file names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainmover::record {

enum class Stage : uint8_t { kNone = 0, kFirst = 1, kMiddle = 2, kLast = 3 };

const char* stage_name(Stage stage);  // "none", "first", "middle", "last"
Result<Stage> parse_stage(std::string_view text);

inline constexpr size_t kMaxRoleText = 200;  // keeps file names under NAME_MAX

struct Role {
  Stage stage = Stage::kNone;
  std::map<std::string, std::string> attributes;  // sorted by key

  // Keys: [a-z0-9_], 1-32 characters, not "stage". Values: [A-Za-z0-9_.-],
  // 1-64 characters. Fails, naming the offending text, otherwise.
  Status set_attribute(std::string_view key, std::string_view value);
  std::string canonical() const;
  // "<canonical>.tmtrace": safe as a file name (no '/', no leading dot).
  std::string file_name() const;
  // Accepts attributes in any order, "stage=..." anywhere; "" is stage none.
  // Parses "k=v,k=v" as produced by canonical(); fails on duplicates.
  static Result<Role> parse(std::string_view text);

  bool operator==(const Role&) const = default;
};

}  // namespace trainmover::record
