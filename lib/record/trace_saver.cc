#include "record/trace_saver.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <exception>

#include "common/log.h"

namespace trainmover::record {
namespace {

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

TraceSaver::TraceSaver(TraceBuilder builder, uint32_t iterations, Compression compression,
                       std::string dir)
    : builder_(std::move(builder)),
      iterations_(iterations),
      compression_(compression),
      dir_(std::move(dir)),
      result_(Status(TM_ERROR_INTERNAL, "the trace was not saved")),
      thread_([this] { run(); }) {}

TraceSaver::~TraceSaver() {
  if (thread_.joinable()) thread_.join();
}

const Result<StoreResult>& TraceSaver::wait() {
  if (thread_.joinable()) thread_.join();
  return result_;
}

void TraceSaver::run() {
  // The save must not take CPU or disk time from the training loop; it can
  // wait. SCHED_IDLE and the idle I/O class apply to this thread only; nice
  // 19 is the fallback where SCHED_IDLE is refused.
  ::pthread_setname_np(::pthread_self(), "tm-trace-save");  // for top, perf and gdb
  const auto tid = static_cast<pid_t>(::syscall(SYS_gettid));
  sched_param param{};
  if (::sched_setscheduler(tid, SCHED_IDLE, &param) != 0) {
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19);
  }
  constexpr int kIoprioWhoProcess = 1, kIoprioClassIdle = 3, kIoprioClassShift = 13;
  ::syscall(SYS_ioprio_set, kIoprioWhoProcess, tid, kIoprioClassIdle << kIoprioClassShift);
  Result<StoreResult> result = Status(TM_ERROR_INTERNAL, "the trace was not saved");
  const double cpu_start = thread_cpu_seconds();
  try {
    auto encoded = builder_.encode(iterations_, compression_);
    result = encoded.ok() ? TraceDirectory(dir_).store(encoded.value())
                          : Result<StoreResult>(encoded.status());
  } catch (const std::exception& e) {  // bad_alloc: nothing may escape a thread
    result = Status(TM_ERROR_SYSTEM, str_cat("saving the trace: ", e.what()));
  }
  const double saved_at = thread_cpu_seconds();
  const int slot = builder_.meta().slot;
  const uint64_t calls = builder_.calls();
  // The recorded bytes are on disk (or were not wanted): give them back
  // now rather than when the communicator is destroyed.
  builder_.free_calls();
  // What the save took from the node's CPUs: its whole cost to training
  // when every CPU is busy, since it then finds no idle time to run in.
  const double save_ms = (saved_at - cpu_start) * 1e3;
  const double free_ms = (thread_cpu_seconds() - saved_at) * 1e3;
  if (!result.ok()) {
    log(LogLevel::kWarn, "trace of slot ", slot, " not saved: ", result.status().message());
  } else if (result->outcome == StoreOutcome::kConflict) {
    log(LogLevel::kWarn, "trace of slot ", slot, " not kept: ", result->detail);
  } else {
    log(LogLevel::kInfo, "trace of slot ", slot, " ", store_outcome_name(result->outcome), ": ",
        result->path, " (", calls, " calls; CPU: ", save_ms, " ms, and ", free_ms,
        " ms to free the recorded memory)");
  }
  result_ = std::move(result);
}

}  // namespace trainmover::record
