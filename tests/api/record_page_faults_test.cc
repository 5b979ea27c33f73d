// The page faults recording costs the training thread, counted by the kernel
// (getrusage RUSAGE_THREAD), in a real job process with every CPU it may use
// busy: the process is bound to one CPU on which a spinning thread of normal
// priority competes with the training loop, as on a node where each rank is
// bound to a busy core. No helper at idle priority can then run; whatever
// the recorder leaves for later lands on the training thread.
//
// Counts, not times: on a virtual machine that returns freed memory to its
// host a first touch costs ~11 us per 4 KiB page, and on a shared host a
// time proves nothing; the count is the same on any host.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/page_faults.h"
#include "support/multiprocess.h"
#include "trainmover/trainmover.h"

namespace trainmover {
namespace {

constexpr size_t kCount = size_t{1} << 20;  // 4 MiB of floats: 1024 pages per capture
constexpr uint64_t kPagesPerIteration = kCount * sizeof(float) / 4096;
constexpr int kRecorded = 3;
constexpr int kPlain = 5;  // unrecorded iterations before and after
// Faults a plain iteration may take on any host (the allocator, a stack
// page): far below one capture's kPagesPerIteration.
constexpr uint64_t kSlackPerIteration = 16;

// Binds the calling thread, and the threads it starts after, to one CPU,
// and keeps that CPU busy with a thread of normal priority until destroyed.
class BusyCpu {
 public:
  bool bind() {
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::sched_setaffinity(0, sizeof one, &one) != 0) return false;
    spinner_ = std::thread([this] {
      while (!stop_.load(std::memory_order_relaxed)) {
      }
    });
    return true;
  }
  // Lets the CPU go idle again.
  void stop() {
    stop_ = true;
    if (spinner_.joinable()) spinner_.join();
  }
  ~BusyCpu() { stop(); }

 private:
  std::atomic<bool> stop_{false};
  std::thread spinner_;
};

// What the job's training thread saw, in minor page faults.
struct Faults {
  uint64_t plain_before = 0;        // kPlain unmarked iterations before recording
  uint64_t recorded = 0;            // the kRecorded recorded iterations
  uint64_t last_capture = 0;        // from the end of iteration K-2 to the end of K-1's calls
  uint64_t after_save = 0;          // kPlain iterations once tm_comm_wait_trace returned
  uint64_t after_save_process = 0;  // the same, every thread of the process
};

uint64_t process_minor_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_minflt);
}

int fail(const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, tm_get_last_error());
  return 2;
}

class RecordPageFaults : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    // ASan's allocator and shadow memory fault in pages of their own on
    // every allocation and copy: the counts mean something only in a plain
    // build, which runs this test too.
    GTEST_SKIP() << "page-fault counts are not meaningful under AddressSanitizer";
#endif
    std::string tmpl = (std::filesystem::temp_directory_path() / "tm_faults.XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // One slot recording kRecorded iterations of a 4 MiB allreduce with
  // `reserve_bytes` of reserve; the counts come back through a file.
  Faults run_job(size_t reserve_bytes) {
    const std::string traces = dir_ + "/traces", report = dir_ + "/faults";
    auto exits = job_.run(1, [&](int slot) {
      BusyCpu busy;
      if (!busy.bind()) return 3;
      CommConfig cc = job_.config(slot, 1, "faults");
      tm_config_t c = TM_CONFIG_INITIALIZER;
      tm_config_init(&c);
      c.slot = cc.slot;
      c.nslots = cc.nslots;
      c.job_id = cc.job_id;
      c.job_secret = cc.job_secret.c_str();
      c.store_address = cc.store_address.c_str();
      c.timeout_s = cc.timeout_s;
      c.connect_timeout_s = cc.connect_timeout_s;
      c.record_iterations = kRecorded;
      c.record_reserve_bytes = reserve_bytes;
      c.trace_dir = traces.c_str();
      tm_comm_t comm = nullptr;
      if (tm_comm_init(&comm, &c) != TM_SUCCESS) return fail("tm_comm_init");
      std::vector<float> grads(kCount, 1.0f);
      auto allreduce = [&] {
        return tm_allreduce(grads.data(), grads.data(), kCount, TM_FLOAT32, TM_SUM, comm);
      };
      auto iteration = [&] {
        return tm_iteration_begin(comm) == TM_SUCCESS && allreduce() == TM_SUCCESS &&
               tm_iteration_end(comm) == TM_SUCCESS;
      };
      Faults f;
      uint64_t at = thread_minor_faults();
      for (int i = 0; i < kPlain; ++i)
        if (allreduce() != TM_SUCCESS) return fail("unmarked allreduce");
      f.plain_before = thread_minor_faults() - at;
      at = thread_minor_faults();
      for (int i = 0; i < kRecorded - 1; ++i)
        if (!iteration()) return fail("recorded iteration");
      const uint64_t before_last = thread_minor_faults();
      if (tm_iteration_begin(comm) != TM_SUCCESS || allreduce() != TM_SUCCESS)
        return fail("last recorded iteration");
      f.last_capture = thread_minor_faults() - before_last;
      if (tm_iteration_end(comm) != TM_SUCCESS) return fail("tm_iteration_end");
      f.recorded = thread_minor_faults() - at;
      // The save runs at idle priority: with the CPU kept busy it would
      // take seconds. It is not what is measured.
      busy.stop();
      if (tm_comm_wait_trace(comm) != TM_SUCCESS) return fail("tm_comm_wait_trace");
      at = thread_minor_faults();
      const uint64_t process_at = process_minor_faults();
      for (int i = 0; i < kPlain; ++i)
        if (!iteration()) return fail("iteration after the save");
      f.after_save = thread_minor_faults() - at;
      f.after_save_process = process_minor_faults() - process_at;
      tm_comm_destroy(comm);
      std::ofstream(report) << f.plain_before << " " << f.recorded << " " << f.last_capture << " "
                            << f.after_save << " " << f.after_save_process << "\n";
      return 0;
    });
    EXPECT_TRUE(exits[0].ok()) << exits[0].describe();
    Faults f;
    std::ifstream(report) >> f.plain_before >> f.recorded >> f.last_capture >> f.after_save >>
        f.after_save_process;
    std::printf(
        "minor faults of the training thread: %llu in %d plain iterations, %llu in %d "
        "recorded (%llu in the last capture), %llu in %d after the save (process: %llu)\n",
        static_cast<unsigned long long>(f.plain_before), kPlain,
        static_cast<unsigned long long>(f.recorded), kRecorded,
        static_cast<unsigned long long>(f.last_capture),
        static_cast<unsigned long long>(f.after_save), kPlain,
        static_cast<unsigned long long>(f.after_save_process));
    std::filesystem::remove_all(traces);
    return f;
  }

  testing::TestJob job_;
  std::string dir_;
};

// With a reserve that holds the K iterations, their captures copy into
// memory made resident during tm_comm_init(): no more faults than plain
// iterations (before: one per page of every capture, 3072 here).
TEST_F(RecordPageFaults, RecordedIterationsTakeNoFaultsWithEveryCpuBusy) {
  Faults f = run_job(kRecorded * (kCount * sizeof(float) + 4096));
  EXPECT_LE(f.plain_before, kPlain * kSlackPerIteration);
  EXPECT_LE(f.recorded, kRecorded * kSlackPerIteration)
      << "the recorded iterations' copies took page faults (" << kRecorded * kPagesPerIteration
      << " would be one per page)";
}

// Without a reserve, the first recorded iteration faults its capture in
// (nothing told its size before); each later one copies into room made
// resident at the end of the one before.
TEST_F(RecordPageFaults, WithoutAReserveOnlyTheFirstRecordedIterationFaults) {
  Faults f = run_job(0);
  EXPECT_LE(f.last_capture, kSlackPerIteration)
      << "the last recorded iteration's copy took page faults (" << kPagesPerIteration
      << " would be one per page)";
}

// Once the save is done, iterations take no more faults than before
// recording: the trace's memory is not touched again, and freeing it makes
// nothing fault in, on the training thread or any other of the process.
TEST_F(RecordPageFaults, IterationsAfterTheSaveTakeNoFaultsForTraceMemory) {
  Faults f = run_job(kRecorded * (kCount * sizeof(float) + 4096));
  EXPECT_LE(f.after_save, f.plain_before + kPlain * kSlackPerIteration);
  EXPECT_LE(f.after_save_process, kPlain * kSlackPerIteration);
}

}  // namespace
}  // namespace trainmover
