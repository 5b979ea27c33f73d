// Failures across real processes: a peer that dies, a peer that hangs, slots
// that disagree, a rendezvous that never completes, a process with the wrong
// secret — each must end in an error naming the slot at fault, in bounded
// time, after which the communicator is destroyed without leaking threads,
// sockets or memory and the process carries on.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "rendezvous/tcp_store.h"
#include "support/multiprocess.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace trainmover {
namespace {

using Clock = std::chrono::steady_clock;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

size_t count_entries(const char* dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir)) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
}

// Threads, open fds, and (under ASan) leaks: what destroying a communicator
// must give back.
struct Resources {
  size_t threads = count_entries("/proc/self/task");
  size_t fds = count_entries("/proc/self/fd");
};

int complain(int slot, const std::string& what) {
  std::fprintf(stderr, "slot %d: %s\n", slot, what.c_str());
  return 3;
}

// Destroys `comm` and checks that everything it held is released.
int destroy_and_check(std::unique_ptr<Communicator> comm, const Resources& before, int slot) {
  comm.reset();
  Resources after;
  if (after.threads != before.threads) {
    return complain(
        slot, str_cat("threads: ", before.threads, " before, ", after.threads, " after destroy"));
  }
  if (after.fds != before.fds)
    return complain(slot, str_cat("fds: ", before.fds, " before, ", after.fds, " after destroy"));
#if defined(__SANITIZE_ADDRESS__)
  if (__lsan_do_recoverable_leak_check() != 0) return complain(slot, "memory leaked");
#endif
  return 0;
}

std::unique_ptr<rendezvous::TcpStore> store_client(const testing::TestJob& job) {
  auto s = rendezvous::TcpStore::connect(job.store_address(), job.secret(), job.job_id(),
                                         std::chrono::seconds(10));
  return s.ok() ? std::move(s).value() : nullptr;
}

void expect_all_ok(const std::vector<testing::ChildExit>& exits, int except = -1) {
  for (size_t s = 0; s < exits.size(); ++s) {
    if (static_cast<int>(s) == except) continue;
    EXPECT_TRUE(exits[s].ok()) << "slot " << s << ": " << exits[s].describe();
  }
}

TEST(PeerFailure, DeadPeerIsNamedWithinOneSecond) {
  constexpr int n = 4, victim = 2;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    Resources before;
    auto comm = Communicator::create(job.config(slot, n, "dead"));
    if (!comm.ok()) return complain(slot, comm.status().message());
    if (!comm.value()->barrier().ok()) return complain(slot, "barrier");
    if (slot == victim) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      auto store = store_client(job);
      if (!store || !store->set("death", std::to_string(now_ns())).ok()) return 4;
      raise(SIGKILL);
    }
    std::vector<float> data(size_t{1} << 20, 1.0f);
    Status st = comm.value()->allreduce(data.data(), data.data(), data.size(), TM_FLOAT32, TM_SUM);
    int64_t failed_at = now_ns();
    if (st.ok()) return complain(slot, "allreduce succeeded without slot 2");
    std::fprintf(stderr, "slot %d saw: %s\n", slot, st.message().c_str());
    if (st.code() != TM_ERROR_PEER_FAILED)
      return complain(slot, "unexpected code: " + st.message());
    if (st.failed_slot() != victim)
      return complain(slot,
                      "blamed slot " + std::to_string(st.failed_slot()) + ": " + st.message());
    if (st.message().find("slot 2") == std::string::npos)
      return complain(slot, "message does not name slot 2: " + st.message());
    Result<std::string> death = Status(TM_ERROR_INTERNAL, "no store");
    if (auto store = store_client(job)) death = store->get("death", std::chrono::seconds(5));
    if (!death.ok()) return complain(slot, death.status().message());
    double seconds = static_cast<double>(failed_at - std::stoll(death.value())) / 1e9;
    std::fprintf(stderr, "slot %d: error %.1f ms after the death\n", slot, seconds * 1e3);
    if (seconds > 1.0) return complain(slot, str_cat("error came ", seconds, " s after the death"));
    // The failure is sticky: the next call reports it at once.
    Status again = comm.value()->barrier();
    if (again.ok() || again.failed_slot() != victim)
      return complain(slot, "second call did not report the failure");
    return destroy_and_check(std::move(comm).value(), before, slot);
  });
  EXPECT_EQ(exits[victim].signal, SIGKILL) << exits[victim].describe();
  expect_all_ok(exits, victim);
}

// A sender killed in the middle of a message much larger than what the
// link holds in flight (a shared-memory ring of 4 MiB, or the socket
// buffers): it fills the link and dies while the receiver is not reading.
// The receive posted afterwards takes the part of the frame that arrived and
// must then fail at once naming the sender, over either transport; it never
// completes with a partial message.
class KilledMidMessage : public ::testing::TestWithParam<std::string> {};

size_t dev_shm_entries() {
  size_t n = 0;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

TEST_P(KilledMidMessage, TheReceiveFailsNamingTheSender) {
  constexpr int n = 2, sender = 1;
  constexpr size_t count = (size_t{64} << 20) / 4;
  const size_t shm_files = dev_shm_entries();
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    CommConfig config = job.config(slot, n, "mid-message");
    config.transport = GetParam();
    auto comm = Communicator::create(config);
    if (!comm.ok()) return complain(slot, comm.status().message());
    if (!comm.value()->barrier().ok()) return complain(slot, "barrier");
    std::vector<float> data(count, 2.0f);
    if (slot == sender) {
      std::thread killer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        auto store = store_client(job);
        if (store && store->set("death", "1").ok()) raise(SIGKILL);
        _exit(4);
      });
      Status st = comm.value()->send(data.data(), count, TM_FLOAT32, 0);
      killer.join();
      return complain(slot, "send returned: " + st.message());
    }
    auto store = store_client(job);
    if (!store || !store->get("death", std::chrono::seconds(10)).ok())
      return complain(slot, "the sender did not say it dies");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // it is gone now
    int64_t posted_at = now_ns();
    Status st = comm.value()->recv(data.data(), count, TM_FLOAT32, sender);
    double seconds = static_cast<double>(now_ns() - posted_at) / 1e9;
    if (st.ok())
      return complain(slot,
                      str_cat("the receive completed without the sender, after ", seconds, " s"));
    if (st.code() != TM_ERROR_PEER_FAILED || st.failed_slot() != sender)
      return complain(slot, "unexpected error: " + st.message());
    std::fprintf(stderr, "%s: '%s' after %.1f ms\n", GetParam().c_str(), st.message().c_str(),
                 seconds * 1e3);
    if (seconds > 1.0) return complain(slot, str_cat("the receive failed after ", seconds, " s"));
    return 0;
  });
  EXPECT_EQ(exits[sender].signal, SIGKILL) << exits[sender].describe();
  expect_all_ok(exits, sender);
  // The killed process's ring was a memfd: nothing of it is left behind.
  EXPECT_EQ(dev_shm_entries(), shm_files);
}

INSTANTIATE_TEST_SUITE_P(Transports, KilledMidMessage, ::testing::Values("tcp", "shm"),
                         [](const ::testing::TestParamInfo<std::string>& kind) {
                           return kind.param;
                         });

TEST(PeerFailure, HungPeerTimesOutNamingIt) {
  constexpr int n = 4, sleeper = 2;
  constexpr double timeout = 1.0;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    Resources before;
    CommConfig config = job.config(slot, n, "hung");
    config.timeout_s = timeout;
    auto comm = Communicator::create(config);
    if (!comm.ok()) return complain(slot, comm.status().message());
    if (!comm.value()->barrier().ok()) return complain(slot, "barrier");
    if (slot == sleeper) {  // alive, heartbeating, but never enters the allreduce
      std::this_thread::sleep_for(std::chrono::seconds(4));
      return destroy_and_check(std::move(comm).value(), before, slot);
    }
    std::vector<float> data(4096, 1.0f);
    auto t0 = Clock::now();
    Status st = comm.value()->allreduce(data.data(), data.data(), data.size(), TM_FLOAT32, TM_SUM);
    double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    if (st.ok()) return complain(slot, "allreduce succeeded without slot 2");
    std::fprintf(stderr, "slot %d saw after %.2f s: %s\n", slot, waited, st.message().c_str());
    if (st.code() != TM_ERROR_TIMEOUT) return complain(slot, "unexpected code: " + st.message());
    if (st.failed_slot() != sleeper)
      return complain(slot, str_cat("blamed slot ", st.failed_slot(), ": ", st.message()));
    if (waited < timeout * 0.9 || waited > timeout * 2 + 1)
      return complain(slot, str_cat("timed out after ", waited, " s"));
    return destroy_and_check(std::move(comm).value(), before, slot);
  });
  expect_all_ok(exits);
}

TEST(PeerFailure, MismatchedCountsAreAProtocolError) {
  constexpr int n = 3;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    Resources before;
    auto comm = Communicator::create(job.config(slot, n, "mismatch"));
    // Slots 0 and 1 can finish joining, disagree and drop their links while
    // slot 2 is still joining: it must then fail with the mismatch as cause.
    if (!comm.ok()) {
      return comm.status().code() == TM_ERROR_PROTOCOL
                 ? 0
                 : complain(slot, "unexpected: " + comm.status().message());
    }
    std::vector<float> data(3000, 1.0f);
    size_t count = slot == 1 ? 2999 : 3000;
    Status st = comm.value()->allreduce(data.data(), data.data(), count, TM_FLOAT32, TM_SUM);
    if (st.ok()) return complain(slot, "mismatched allreduce succeeded");
    if (st.code() != TM_ERROR_PROTOCOL) return complain(slot, "unexpected code: " + st.message());
    // A disagreement has no single culprit: every slot reports the same, -1.
    if (st.failed_slot() != -1)
      return complain(slot, str_cat("reported failed slot ", st.failed_slot(), ": ", st.message()));
    return destroy_and_check(std::move(comm).value(), before, slot);
  });
  expect_all_ok(exits);
}

TEST(PeerFailure, MismatchedOperationsAreAProtocolError) {
  constexpr int n = 2;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    auto comm = Communicator::create(job.config(slot, n, "mismatch-op"));
    if (!comm.ok()) return complain(slot, comm.status().message());
    std::vector<float> data(64, 1.0f);
    Status st = slot == 0
                    ? comm.value()->allreduce(data.data(), data.data(), 64, TM_FLOAT32, TM_SUM)
                    : comm.value()->broadcast(data.data(), data.data(), 64, TM_FLOAT32, 1);
    auto store = store_client(job);
    if (!store) return complain(slot, "no store");
    if (st.ok() && slot == 1) {
      // The broadcast root may finish before slot 0 notices. It keeps its
      // links until slot 0 has its answer: had it exited, slot 0 could see
      // the broken link first (a CI run: "send: Broken pipe"), not the mismatch.
      return store->get("slot0-done", std::chrono::seconds(10)).ok()
                 ? 0
                 : complain(slot, "slot 0 never finished");
    }
    if (slot == 0 && !store->set("slot0-done", "1").ok()) return complain(slot, "store set");
    if (st.ok()) return complain(slot, "mismatched operations succeeded");
    return st.code() == TM_ERROR_PROTOCOL ? 0 : complain(slot, "unexpected code: " + st.message());
  });
  expect_all_ok(exits);
}

TEST(Rendezvous, MissingSlotTimesOut) {
  testing::TestJob job;
  auto exits = job.run(1, [&](int) {
    CommConfig config = job.config(0, 2, "lonely");  // slot 1 never comes
    config.connect_timeout_s = 1.0;
    auto t0 = Clock::now();
    auto comm = Communicator::create(config);
    double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    if (comm.ok()) return complain(0, "created without slot 1");
    if (comm.status().code() != TM_ERROR_TIMEOUT)
      return complain(0, "unexpected: " + comm.status().message());
    if (comm.status().message().find("slot 1") == std::string::npos)
      return complain(0, comm.status().message());
    if (waited > 3.0) return complain(0, str_cat("took ", waited, " s"));
    return 0;
  });
  expect_all_ok(exits);
}

TEST(Security, WrongSecretCannotJoin) {
  testing::TestJob job;
  testing::TestJob other;  // another job: same machine, its own secret
  auto exits = job.run(1, [&](int) {
    CommConfig config = job.config(0, 2, "intruder");
    config.job_secret = other.secret().to_hex();
    config.connect_timeout_s = 2.0;
    auto comm = Communicator::create(config);
    if (comm.ok()) return complain(0, "joined with the wrong secret");
    return comm.status().code() == TM_ERROR_AUTH
               ? 0
               : complain(0, "unexpected: " + comm.status().message());
  });
  expect_all_ok(exits);
}

TEST(Arguments, BadCallsAreRejectedWithoutCommunication) {
  testing::TestJob job;
  auto exits = job.run(1, [&](int) {
    auto comm = Communicator::create(job.config(0, 1, "args"));
    if (!comm.ok()) return complain(0, comm.status().message());
    Communicator& c = *comm.value();
    float x = 1;
    struct Case {
      const char* what;
      Status status;
    } cases[] = {
        {"bad datatype", c.allreduce(&x, &x, 1, static_cast<tm_datatype_t>(42), TM_SUM)},
        {"bad op", c.allreduce(&x, &x, 1, TM_FLOAT32, static_cast<tm_redop_t>(9))},
        {"null sendbuf", c.allreduce(nullptr, &x, 1, TM_FLOAT32, TM_SUM)},
        {"root out of range", c.broadcast(&x, &x, 1, TM_FLOAT32, 1)},
        {"send to self", c.send(&x, 1, TM_FLOAT32, 0)},
        {"count overflow", c.allreduce(&x, &x, SIZE_MAX / 2, TM_FLOAT32, TM_SUM)},
    };
    for (const Case& k : cases) {
      if (k.status.code() != TM_ERROR_INVALID_ARGUMENT)
        return complain(0, str_cat(k.what, ": ", k.status.message()));
    }
    // The communicator is still usable afterwards.
    return c.allreduce(&x, &x, 1, TM_FLOAT32, TM_SUM).ok() && x == 1
               ? 0
               : complain(0, "unusable after bad calls");
  });
  expect_all_ok(exits);
}

}  // namespace
}  // namespace trainmover
