// What the driver of `trainmover-bench switch` and its worker processes say
// to each other through the round's rendezvous store, and the clock they
// share.
//
// Processes are numbered by `who`: 0..N-1 serve the slots, N is the standby.
// Timestamps are CLOCK_MONOTONIC (std::chrono::steady_clock) nanoseconds,
// one clock for every process of this host, so the driver can subtract a
// worker's timestamp from its own t0.
//
// Sequence (see trainmover-bench(1) for what is measured):
//   every process       up/<who> once its communicator (or standby) exists
//   planned, delta      driver: view of epoch 1; processes: prepared/<who>;
//                       driver: go = t0 (ns, in the near future)
//   planned, rebuild    driver: go = t0
//   unexpected          driver: start; workers loop allreduces; the driver
//                       kills the victim at t0; a worker that fails adds 1
//                       to failures, the first one also writes failed_slot;
//                       the driver then publishes the view of epoch 1
//                       (delta) or rebuild (rebuild); the workers switch
//                       and write failed_at/<slot> (the iteration they
//                       failed in); the driver publishes resume, the
//                       earliest of those: the iteration to issue again
//   every process       times/<who> (its timestamps), then waits for done
//   a failing process   error/<who> (its error message) before exiting 1
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"

namespace trainmover::bench {

inline constexpr const char* kSwitchCommName = "bench";
inline constexpr const char* kRebuildCommName = "bench-rebuild";
inline constexpr const char* kStandbyEndpointKey = "standby/endpoint";
inline constexpr const char* kGoKey = "go";
inline constexpr const char* kStartKey = "start";
inline constexpr const char* kFailuresKey = "failures";
inline constexpr const char* kFailedSlotKey = "failed_slot";
inline constexpr const char* kRebuildKey = "rebuild";
inline constexpr const char* kResumeKey = "resume";
inline constexpr const char* kDoneKey = "done";

std::string up_key(int who);
std::string prepared_key(int who);
std::string failed_at_key(int slot);
std::string times_key(int who);
std::string error_key(int who);

// "slot 3" or "the standby".
std::string who_name(int who, int nranks);

int64_t monotonic_now_ns();
// Sleeps until the monotonic clock reads `t_ns`: an absolute clock_nanosleep,
// with `spin` to shortly before and then a busy wait, so that every process
// wakes within microseconds of t_ns. Spin only when every process has a core
// of its own: with more processes than cores, N spinning processes would
// delay the very processes being measured.
void sleep_until_ns(int64_t t_ns, bool spin);
// Whether `processes` processes of this host each have a CPU of their own
// (the CPUs this process may run on).
bool one_cpu_each(int processes);

// What the threads of this process have spent, summed from
// /proc/self/task/*/schedstat: time on a CPU, and time runnable but waiting
// for one. Both -1 when the kernel does not say. Over a switch, on_cpu is the
// work it did and waiting what the scheduler added (65 processes on 2 CPUs
// wait more than they work).
struct SchedTimes {
  int64_t on_cpu_ns = -1;
  int64_t waiting_ns = -1;
};
SchedTimes sched_times();
// CPU time of the whole process, threads that have ended included.
int64_t process_cpu_ns();

// A process's timestamps by name ("view", "prepared", "ready", ...), sent
// as "name=ns name=ns ...". A name ending in "_ns" is a duration instead,
// one ending in "_count" a count.
using Stamps = std::map<std::string, int64_t>;
std::string encode_stamps(const Stamps& stamps);
Result<Stamps> parse_stamps(const std::string& text);

}  // namespace trainmover::bench
