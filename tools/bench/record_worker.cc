#include "record_worker.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/page_faults.h"
#include "common/parse.h"
#include "trainmover/trainmover.h"
#include "workload.h"

namespace trainmover::bench {
namespace {

constexpr int kComputeSamples = 5;

struct WorkerArgs {
  std::string phase;
  size_t count = 0;
  int passes = 1, warmup = 0, recorded = 0, after = 0;
  int cpus = 0;  // per rank; 0: unbound
};

// Binds the calling thread, and so every thread it starts later (the
// communicator's engine, the trace saver), to `cpus` of the n CPUs this
// process may use: those at positions slot*cpus ... slot*cpus+cpus-1,
// modulo n. Ranks stop migrating, as under srun's task/affinity, which
// takes most of the noise out of iteration times on a small host; with
// more than one CPU a rank's helper threads need not share the training
// thread's.
Status bind_to_cpus(int slot, int cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return system_error("sched_getaffinity", errno);
  const int count = CPU_COUNT(&allowed);
  if (count == 0) return Status::Ok();
  std::vector<int> usable;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) usable.push_back(cpu);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  for (int k = 0; k < std::min(cpus, count); ++k)
    CPU_SET(usable[static_cast<size_t>((slot * cpus + k) % count)], &mine);
  if (::sched_setaffinity(0, sizeof mine, &mine) != 0)
    return system_error(str_cat("sched_setaffinity of slot ", slot, " to ", cpus, " CPUs"), errno);
  return Status::Ok();
}

Status tm(tm_result_t r, const char* what) {
  if (r == TM_SUCCESS) return Status::Ok();
  return error(r, what, ": ", tm_get_last_error());
}

// Owns a tm_comm_t.
struct Handle {
  tm_comm_t comm = nullptr;
  ~Handle() { tm_comm_destroy(comm); }
};

Status step(tm_comm_t comm, Workload& w, int passes, int it, int nslots) {
  w.compute(passes, it);
  TM_RETURN_IF_ERROR(
      tm(tm_allreduce(w.gradients(), w.gradients(), w.count(), TM_FLOAT32, TM_SUM, comm),
         "allreduce"));
  w.apply(nslots);
  return Status::Ok();
}

void print_iteration(const char* phase, int it, double elapsed, uint32_t crc, uint64_t faults) {
  const Json line = {
      {"phase", phase}, {"iter", it}, {"elapsed_s", elapsed}, {"crc", crc}, {"minflt", faults}};
  std::printf("%s\n", json_line(line).c_str());
}

Status timed_iteration(tm_comm_t comm, Workload& w, const WorkerArgs& a, int it, int nslots,
                       const char* phase) {
  const uint64_t faults_before = thread_minor_faults();
  auto start = Clock::now();
  TM_RETURN_IF_ERROR(tm(tm_iteration_begin(comm), "tm_iteration_begin"));
  TM_RETURN_IF_ERROR(step(comm, w, a.passes, it, nslots));
  TM_RETURN_IF_ERROR(tm(tm_iteration_end(comm), "tm_iteration_end"));
  // Read the clock before the CRC: as two arguments of one call, their
  // order would be unspecified and the CRC could land inside the time.
  double elapsed = to_seconds(Clock::now() - start);
  const uint64_t faults = thread_minor_faults() - faults_before;
  print_iteration(phase, it, elapsed, w.gradient_crc(), faults);
  return Status::Ok();
}

Status run_live(const WorkerArgs& a) {
  tm_config_t config = TM_CONFIG_INITIALIZER;
  TM_RETURN_IF_ERROR(tm(tm_config_init(&config), "tm_config_init"));
  Handle h;
  if (a.cpus > 0) TM_RETURN_IF_ERROR(bind_to_cpus(config.slot, a.cpus));
  TM_RETURN_IF_ERROR(tm(tm_comm_init(&h.comm, &config), "tm_comm_init"));
  Workload w(a.count, config.slot);
  for (int i = 0; i < a.warmup; ++i)
    TM_RETURN_IF_ERROR(step(h.comm, w, a.passes, -1, config.nslots));
  const int total = a.recorded + a.after;
  for (int it = 0; it < total; ++it) {
    TM_RETURN_IF_ERROR(timed_iteration(h.comm, w, a, it, config.nslots, "live"));
  }
  // The trace's save ran beside the iterations above; the ones below come
  // after it (without recording, the wait returns at once).
  auto start = Clock::now();
  TM_RETURN_IF_ERROR(tm(tm_comm_wait_trace(h.comm), "tm_comm_wait_trace"));
  const Json line = {{"phase", "save_wait"}, {"elapsed_s", to_seconds(Clock::now() - start)}};
  std::printf("%s\n", json_line(line).c_str());
  for (int it = total; it < total + a.after; ++it) {
    TM_RETURN_IF_ERROR(timed_iteration(h.comm, w, a, it, config.nslots, "live"));
  }
  return Status::Ok();
}

Status run_replay(const WorkerArgs& a) {
  tm_config_t config = TM_CONFIG_INITIALIZER;
  TM_RETURN_IF_ERROR(tm(tm_config_init(&config), "tm_config_init"));
  if (a.cpus > 0) TM_RETURN_IF_ERROR(bind_to_cpus(config.slot, a.cpus));
  Handle h;
  TM_RETURN_IF_ERROR(tm(tm_comm_init_sandbox(&h.comm, &config, nullptr), "tm_comm_init_sandbox"));
  int nslots = 0;
  TM_RETURN_IF_ERROR(tm(tm_comm_nslots(h.comm, &nslots), "tm_comm_nslots"));
  // Warm-up calls outside iterations are not recorded, so the replay warms
  // up its compute only (touching the buffers, as the live warm-up did).
  Workload w(a.count, config.slot);
  for (int i = 0; i < a.warmup; ++i) w.compute(a.passes, -1);
  Workload probe(a.count, config.slot);
  for (int i = 0; i < kComputeSamples; ++i) {
    auto start = Clock::now();
    probe.compute(a.passes, i);
    probe.apply(nslots);
    const Json line = {{"phase", "compute"}, {"elapsed_s", to_seconds(Clock::now() - start)}};
    std::printf("%s\n", json_line(line).c_str());
  }
  for (int it = 0; it < a.recorded; ++it) {
    TM_RETURN_IF_ERROR(timed_iteration(h.comm, w, a, it, nslots, "replay"));
  }
  return Status::Ok();
}

// The hidden mode's options, as `trainmover-bench record` passes them.
cli::CommandLine worker_command_line(WorkerArgs& a, int64_t& count) {
  constexpr int64_t kMax = int64_t{1} << 40;
  cli::CommandLine command_line("trainmover-bench record-worker",
                                "trainmover-bench record-worker --phase live|replay [OPTIONS]",
                                "One process of a `trainmover-bench record` job.\n");
  command_line
      .custom(
          "phase", "PHASE",
          [&a](std::string_view text) -> Status {
            if (text != "live" && text != "replay")
              return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is neither live nor replay");
            a.phase = std::string(text);
            return Status::Ok();
          },
          "live or replay")
      .required()
      .integer("count", "N", 1, kMax, count, "floats in the gradient buffer")
      .required()
      .integer("passes", "N", 0, kMax, a.passes, "compute passes")
      .integer("warmup", "W", 0, kMax, a.warmup, "unrecorded iterations first")
      .integer("recorded", "K", 0, kMax, a.recorded, "iterations recorded")
      .integer("after", "M", 0, kMax, a.after, "iterations after the recorded ones")
      .integer("bind", "C", 0, 4096, a.cpus, "CPUs per rank; 0: unbound");
  return command_line;
}

}  // namespace

int record_worker_main(int argc, char** argv) {
  WorkerArgs args;
  int64_t count = 0;
  cli::CommandLine command_line = worker_command_line(args, count);
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  args.count = static_cast<size_t>(count);
  Status st = args.phase == "live" ? run_live(args) : run_replay(args);
  std::fflush(stdout);
  if (!st.ok()) {
    std::fprintf(stderr, "trainmover-bench record-worker (%s): %s\n", args.phase.c_str(),
                 st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace trainmover::bench
