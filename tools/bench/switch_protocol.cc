#include "switch_protocol.h"

#include <dirent.h>
#include <sched.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <memory>

#include "common/parse.h"
#include "common/str.h"

namespace trainmover::bench {
namespace {

// Long enough to cover the wake-up latency of clock_nanosleep.
constexpr int64_t kSpinNs = 300'000;
constexpr int64_t kNsPerSecond = 1'000'000'000;

}  // namespace

std::string up_key(int who) { return str_cat("up/", who); }
std::string prepared_key(int who) { return str_cat("prepared/", who); }
std::string failed_at_key(int slot) { return str_cat("failed_at/", slot); }
std::string times_key(int who) { return str_cat("times/", who); }
std::string error_key(int who) { return str_cat("error/", who); }

std::string who_name(int who, int nranks) {
  return who == nranks ? std::string("the standby") : str_cat("slot ", who);
}

int64_t monotonic_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void sleep_until_ns(int64_t t_ns, bool spin) {
  int64_t wake = spin ? t_ns - kSpinNs : t_ns;
  if (wake > monotonic_now_ns()) {
    timespec at{static_cast<time_t>(wake / kNsPerSecond), static_cast<long>(wake % kNsPerSecond)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
    }
  }
  while (monotonic_now_ns() < t_ns) {
  }
}

bool one_cpu_each(int processes) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return false;
  return processes <= CPU_COUNT(&cpus);
}

int64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

SchedTimes sched_times() {
  std::unique_ptr<DIR, int (*)(DIR*)> tasks(opendir("/proc/self/task"), closedir);
  if (!tasks) return {};
  SchedTimes total{0, 0};
  while (dirent* entry = readdir(tasks.get())) {
    if (entry->d_name[0] == '.') continue;
    // schedstat: time on CPU, time waiting on a run queue, timeslices.
    std::ifstream in(str_cat("/proc/self/task/", entry->d_name, "/schedstat"));
    int64_t on_cpu = 0;
    int64_t waiting = 0;
    if (!(in >> on_cpu >> waiting)) return {};
    total.on_cpu_ns += on_cpu;
    total.waiting_ns += waiting;
  }
  return total;
}

std::string encode_stamps(const Stamps& stamps) {
  std::string out;
  for (const auto& [name, ns] : stamps) {
    if (!out.empty()) out += ' ';
    out += str_cat(name, "=", ns);
  }
  return out;
}

Result<Stamps> parse_stamps(const std::string& text) {
  Stamps stamps;
  for (std::string_view item : split(text, ' ')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return error(TM_ERROR_PROTOCOL, "timestamp '", item, "' is not name=ns");
    }
    TM_ASSIGN_OR_RETURN(int64_t ns, parse_int(item.substr(eq + 1), 0, INT64_MAX));
    stamps[std::string(item.substr(0, eq))] = ns;
  }
  return stamps;
}

}  // namespace trainmover::bench
