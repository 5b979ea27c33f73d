// The environment a process of a job starts with: ours, with its TRAINMOVER_*
// identity (slot, slots, job id, secret, store) and the caller's extras in
// place. One builder for every job this host starts: the launcher's local
// job and the switch benchmark's rounds.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trainmover::launcher {

// What a process needs to join its job (see trainmover(7)).
struct JobIdentity {
  int slot = 0;
  int nslots = 1;
  uint64_t job_id = 0;
  std::string secret_hex;
  std::string store_address;
};

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// "NAME=value" entries: this process's environment, where every name of
// `identity` and then of `extra` replaces a same-named entry (an extra wins
// over the identity: with both present, getenv() would find the first).
// Reads environ; call it from one thread at a time with no setenv beside it.
std::vector<std::string> child_environment(const JobIdentity& identity, const EnvVars& extra = {});

}  // namespace trainmover::launcher
