// Communicator::abort (tm_comm_abort) across real processes: a collective
// blocked on a SIGSTOPped peer is ended from another thread within
// milliseconds, the abort reaches the other slots, the communicator is then
// destroyed cleanly or repaired by a recovery switch whose results are
// bitwise the serial reference; aborting an idle communicator and aborting
// twice are harmless.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "support/switching.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace trainmover {
namespace {

using testing::complain;

// Long enough that only an abort can end a blocked collective in these tests.
constexpr double kTimeoutS = 30.0;
constexpr size_t kCount = 64 * 1024;
// The abort must end a blocked call this fast; typically it takes well under
// a millisecond (printed). Generous for a loaded 2-CPU machine.
constexpr double kAbortLimitS = 1.0;

size_t count_entries(const char* dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
}

struct Resources {
  size_t threads = count_entries("/proc/self/task");
  size_t fds = count_entries("/proc/self/fd");
};

int destroy_and_check(std::unique_ptr<Communicator> comm, const Resources& before, int slot) {
  comm.reset();
  Resources after;
#if !defined(__SANITIZE_THREAD__)  // ThreadSanitizer starts a thread of its own meanwhile
  if (after.threads != before.threads) return complain(slot, "threads leaked by destroy");
#endif
  if (after.fds != before.fds) return complain(slot, "fds leaked by destroy");
#if defined(__SANITIZE_ADDRESS__)
  if (__lsan_do_recoverable_leak_check() != 0) return complain(slot, "memory leaked");
#endif
  return 0;
}

CommConfig config_for(const testing::TestJob& job, int slot, int nslots, const std::string& name) {
  CommConfig c = job.config(slot, nslots, name);
  c.timeout_s = kTimeoutS;
  return c;
}

// A stopped process is killed by the test, never left behind.
int stop_self(rendezvous::Store& store, const std::string& key) {
  if (!store.set(key, std::to_string(getpid())).ok()) return 4;
  raise(SIGSTOP);
  return 5;  // resumed: not expected
}

int kill_stopped(rendezvous::Store& store, const std::string& key) {
  auto pid = store.get(key, std::chrono::seconds(20));
  if (!pid.ok()) return complain(-1, pid.status().message());
  ::kill(static_cast<pid_t>(std::stol(pid.value())), SIGKILL);
  return 0;
}

// Calls `blocked` on this thread and comm.abort() from another after
// `after`; returns the call's status and how long after the abort it came.
struct Aborted {
  Status status;
  double after_abort_s = 0;
  Status abort_status;
};
template <typename F>
Aborted abort_while(Communicator& comm, std::chrono::milliseconds after, F&& blocked) {
  Aborted out;
  std::atomic<int64_t> aborted_at{0};
  std::thread aborter([&] {
    std::this_thread::sleep_for(after);
    aborted_at = testing::monotonic_ns();
    out.abort_status = comm.abort();
  });
  out.status = blocked();
  int64_t returned = testing::monotonic_ns();
  aborter.join();
  out.after_abort_s = static_cast<double>(returned - aborted_at.load()) / 1e9;
  return out;
}

// Both the error and its promptness, and what every later call says.
int check_aborted(Communicator& comm, int slot, const Status& st, bool reported) {
  if (st.code() != TM_ERROR_ABORTED) return complain(slot, "not aborted: " + st.message());
  bool names_reporter = st.message().find("reported by slot") != std::string::npos;
  if (names_reporter != reported) return complain(slot, "unexpected origin: " + st.message());
  if (st.failed_slot() != -1) return complain(slot, "an abort blames a slot: " + st.message());
  std::vector<float> data(16, 1.0f);
  Status again = comm.allreduce(data.data(), data.data(), data.size(), TM_FLOAT32, TM_SUM);
  if (again.code() != TM_ERROR_ABORTED) return complain(slot, "later call: " + again.message());
  return 0;
}

TEST(Abort, EndsAnAllreduceBlockedOnAStoppedPeer) {
  constexpr int n = 3, victim = 2;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    auto store = testing::connect_store(job);
    Resources before;  // with the store's connection, which outlives the communicator
    auto created = Communicator::create(config_for(job, slot, n, "stopped"));
    if (!store || !created.ok()) return complain(slot, "setup");
    auto comm = std::move(created).value();
    if (!comm->barrier().ok()) return complain(slot, "barrier");
    if (slot == victim) return stop_self(*store, "victim/pid");
    if (!store->get("victim/pid", std::chrono::seconds(20)).ok()) return 4;
    std::vector<float> data(kCount, 1.0f);
    auto allreduce = [&] {
      return comm->allreduce(data.data(), data.data(), data.size(), TM_FLOAT32, TM_SUM);
    };
    if (slot == 1) {  // the abort of slot 0 reaches it
      if (int rc = check_aborted(*comm, slot, allreduce(), true)) return rc;
    } else {
      Aborted a = abort_while(*comm, std::chrono::milliseconds(300), allreduce);
      std::fprintf(stderr, "slot 0: the allreduce returned %.3f ms after the abort: %s\n",
                   a.after_abort_s * 1e3, a.status.message().c_str());
      if (!a.abort_status.ok()) return complain(slot, "abort: " + a.abort_status.message());
      if (a.after_abort_s > kAbortLimitS) return complain(slot, "the abort took too long");
      if (int rc = check_aborted(*comm, slot, a.status, false)) return rc;
      if (!comm->abort().ok()) return complain(slot, "a second abort failed");
      if (int rc = kill_stopped(*store, "victim/pid")) return rc;
    }
    return destroy_and_check(std::move(comm), before, slot);
  });
  EXPECT_EQ(exits[victim].signal, SIGKILL) << exits[victim].describe();
  for (int s = 0; s < victim; ++s) EXPECT_TRUE(exits[s].ok()) << s << ": " << exits[s].describe();
}

TEST(Abort, IdleCommunicatorAbortedTwiceFailsItsNextCall) {
  constexpr int n = 2;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    Resources before;
    auto created = Communicator::create(config_for(job, slot, n, "idle"));
    if (!created.ok()) return complain(slot, "setup");
    auto comm = std::move(created).value();
    if (Status b = comm->barrier(); !b.ok()) return complain(slot, "barrier: " + b.message());
    if (slot == 0 && (!comm->abort().ok() || !comm->abort().ok()))
      return complain(slot, "abort of an idle communicator failed");
    int64_t start = testing::monotonic_ns();
    Status st = comm->barrier();
    double took = static_cast<double>(testing::monotonic_ns() - start) / 1e9;
    if (took > kAbortLimitS) return complain(slot, str_cat("the barrier took ", took, " s"));
    if (int rc = check_aborted(*comm, slot, st, slot == 1)) return rc;
    return destroy_and_check(std::move(comm), before, slot);
  });
  for (int s = 0; s < n; ++s) EXPECT_TRUE(exits[s].ok()) << s << ": " << exits[s].describe();
}

// The coordinator's use: a hung slot is replaced by a standby after an abort
// instead of a timeout, and the job carries on with exact results.
constexpr int kSlots = 3, kVictim = 1, kHangAt = 2, kIterations = 5;

Result<int> agreed_resume(rendezvous::Store& store) {
  int resume = kIterations;
  for (int s = 0; s < kSlots; ++s) {
    if (s == kVictim) continue;
    TM_ASSIGN_OR_RETURN(std::string v, store.get(str_cat("failed_at/", s), seconds(20)));
    resume = std::min(resume, std::stoi(v));
  }
  return resume;
}

int abort_stayer(const testing::TestJob& job, int slot) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create(config_for(job, slot, kSlots, "recover"));
  if (!store || !created.ok()) return complain(slot, "setup");
  Communicator& comm = *created.value();
  bool aborted = false;  // once: the iteration is issued again after the switch
  for (int it = 0; it < kIterations; ++it) {
    auto iteration = [&] {
      auto r = testing::run_iteration(comm, it, kCount);
      return r.ok() ? Status::Ok() : r.status();
    };
    Status failure;
    if (slot == 0 && it == kHangAt && !aborted) {
      aborted = true;
      Aborted a = abort_while(comm, std::chrono::milliseconds(300), iteration);
      std::fprintf(stderr, "slot 0: iteration %d returned %.3f ms after the abort\n", it,
                   a.after_abort_s * 1e3);
      if (a.after_abort_s > kAbortLimitS) return complain(slot, "the abort took too long");
      failure = a.status;
    } else {
      failure = iteration();
    }
    if (failure.ok()) continue;
    if (failure.code() != TM_ERROR_ABORTED) return complain(slot, failure.message());
    if (!store->set(str_cat("failed_at/", slot), std::to_string(it)).ok()) return 4;
    auto joiner = testing::fetch_endpoint(*store, "standby");
    auto first = testing::initial_view(*store, "recover", kSlots);
    if (!joiner.ok() || !first.ok()) return complain(slot, "views");
    Status st =
        testing::switch_to(comm, testing::replace_slot(first.value(), 1, kVictim, joiner.value()));
    if (!st.ok()) return complain(slot, "recovery switch: " + st.message());
    auto resume = agreed_resume(*store);
    if (!resume.ok()) return complain(slot, resume.status().message());
    it = resume.value() - 1;
  }
  if (slot == 0 && kill_stopped(*store, "victim/pid") != 0) return 4;
  Status st = testing::exchange_across(comm);
  return st.ok() ? 0 : complain(slot, "send/recv after the switch: " + st.message());
}

int abort_victim(const testing::TestJob& job) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create(config_for(job, kVictim, kSlots, "recover"));
  if (!store || !created.ok()) return complain(kVictim, "setup");
  for (int it = 0; it < kHangAt; ++it) {
    if (!testing::run_iteration(*created.value(), it, kCount).ok())
      return complain(kVictim, "iteration");
  }
  return stop_self(*store, "victim/pid");  // hangs before iteration kHangAt
}

int abort_joiner(const testing::TestJob& job) {
  auto store = testing::connect_store(job);
  auto created = Communicator::create_standby(config_for(job, 0, kSlots, "recover"));
  if (!store || !created.ok()) return complain(-1, "standby setup");
  Communicator& comm = *created.value();
  if (!testing::publish_endpoint(*store, "standby", comm.endpoint()).ok()) return 4;
  auto first = testing::initial_view(*store, "recover", kSlots);
  if (!first.ok()) return complain(-1, first.status().message());
  Status st =
      testing::join_view(comm, testing::replace_slot(first.value(), 1, kVictim, comm.endpoint()));
  if (!st.ok()) return complain(kVictim, "joining: " + st.message());
  auto resume = agreed_resume(*store);
  if (!resume.ok()) return complain(kVictim, resume.status().message());
  for (int it = resume.value(); it < kIterations; ++it) {
    auto done = testing::run_iteration(comm, it, kCount);
    if (!done.ok()) return complain(kVictim, done.status().message());
  }
  st = testing::exchange_across(comm);
  return st.ok() ? 0 : complain(kVictim, "send/recv after the switch: " + st.message());
}

TEST(Abort, RecoverySwitchAfterAnAbortGivesExactResults) {
  testing::TestJob job;
  // Processes 0..kSlots-1 serve the slots; process kSlots is the standby.
  auto exits = job.run(kSlots + 1, [&](int who) {
    if (who == kSlots) return abort_joiner(job);
    if (who == kVictim) return abort_victim(job);
    return abort_stayer(job, who);
  });
  EXPECT_EQ(exits[kVictim].signal, SIGKILL) << exits[kVictim].describe();
  for (int who = 0; who <= kSlots; ++who) {
    if (who == kVictim) continue;
    EXPECT_TRUE(exits[static_cast<size_t>(who)].ok())
        << "process " << who << ": " << exits[static_cast<size_t>(who)].describe();
  }
}

}  // namespace
}  // namespace trainmover
