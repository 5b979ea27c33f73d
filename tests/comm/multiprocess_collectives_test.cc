// Collectives across real processes: every operation x datatype for 1..9
// slots, uneven and tiny counts, in-place and out-of-place, each result
// compared bit for bit with the serial reference (support/reference.h); every
// collective once on the ring and once with recursive doubling, each over TCP
// and over shared memory.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "comm/communicator.h"
#include "comm/datatype.h"
#include "common/page_faults.h"
#include "rendezvous/tcp_store.h"
#include "support/multiprocess.h"
#include "support/reference.h"

#include <thread>

namespace trainmover {
namespace {

using testing::Bytes;

constexpr tm_datatype_t kTypes[] = {TM_FLOAT32, TM_FLOAT64, TM_FLOAT16, TM_BFLOAT16,
                                    TM_INT32,   TM_INT64,   TM_UINT8};
constexpr tm_redop_t kOps[] = {TM_SUM, TM_PROD, TM_MAX, TM_MIN, TM_AVG};

// Reports a mismatch from a child; returns a non-zero exit code.
int mismatch(int slot, const std::string& what, const Bytes& got, const Bytes& want) {
  size_t i = 0;
  while (i < got.size() && got[i] == want[i]) ++i;
  std::fprintf(stderr, "slot %d: %s differs from the reference at byte %zu of %zu\n", slot,
               what.c_str(), i, want.size());
  return 3;
}

int failed(int slot, const std::string& what, const Status& st) {
  std::fprintf(stderr, "slot %d: %s failed: %s\n", slot, what.c_str(), st.message().c_str());
  return 2;
}

std::vector<size_t> counts_for(int n) {
  return {0, 1, static_cast<size_t>(n) - 1, static_cast<size_t>(n) + 1, 1000, 4099};
}

// The algorithm this communicator's allreduce of `count` elements runs.
Algorithm algorithm_of(const Communicator& comm, size_t count, tm_datatype_t type) {
  return choose_algorithm(comm.config().algorithms, CollectiveKind::kAllreduce,
                          count * datatype_size(type), comm.nslots());
}

int check_allreduce(Communicator& comm, tm_datatype_t type, tm_redop_t op, size_t count,
                    bool in_place) {
  const int n = comm.nslots(), slot = comm.slot();
  const Algorithm algorithm = algorithm_of(comm, count, type);
  const std::string what =
      str_cat("allreduce (", algorithm_name(algorithm), ") ", redop_name(op), " ",
              datatype_name(type), " count ", count, in_place ? " in-place" : "");
  Bytes input = testing::make_input(type, op, slot, count);
  Bytes output(input.size(), std::byte{0x5A});
  Bytes original = input;
  Status st = in_place ? comm.allreduce(input.data(), input.data(), count, type, op)
                       : comm.allreduce(input.data(), output.data(), count, type, op);
  if (!st.ok()) return failed(slot, what, st);
  Bytes want = testing::reference_allreduce(type, op, n, count, 0, algorithm);
  const Bytes& got = in_place ? input : output;
  if (got != want) return mismatch(slot, what, got, want);
  if (!in_place && input != original)
    return mismatch(slot, what + " (input modified)", input, original);
  return 0;
}

int check_reduce_scatter(Communicator& comm, tm_datatype_t type, tm_redop_t op, size_t recvcount,
                         bool in_place) {
  const int n = comm.nslots(), slot = comm.slot();
  const size_t esize = datatype_size(type);
  const std::string what = str_cat("reduce_scatter ", redop_name(op), " ", datatype_name(type),
                                   " recvcount ", recvcount, in_place ? " in-place" : "");
  Bytes input = testing::make_input(type, op, slot, recvcount * static_cast<size_t>(n));
  Bytes output(recvcount * esize, std::byte{0x5A});
  std::byte* own = input.data() + static_cast<size_t>(slot) * recvcount * esize;
  Status st =
      comm.reduce_scatter(input.data(), in_place ? own : output.data(), recvcount, type, op);
  if (!st.ok()) return failed(slot, what, st);
  Bytes got = in_place ? Bytes(own, own + recvcount * esize) : output;
  const Algorithm algorithm =
      choose_algorithm(comm.config().algorithms, CollectiveKind::kReduceScatter,
                       recvcount * static_cast<size_t>(n) * esize, n);
  Bytes want = testing::reference_reduce_scatter(type, op, n, slot, recvcount, 0, algorithm);
  return got == want ? 0 : mismatch(slot, what, got, want);
}

int check_allgather(Communicator& comm, tm_datatype_t type, size_t count, bool in_place) {
  const int n = comm.nslots(), slot = comm.slot();
  const size_t esize = datatype_size(type);
  const std::string what =
      str_cat("allgather ", datatype_name(type), " count ", count, in_place ? " in-place" : "");
  Bytes want;
  for (int s = 0; s < n; ++s) {
    Bytes part = testing::make_input(type, TM_SUM, s, count, 7);
    want.insert(want.end(), part.begin(), part.end());
  }
  Bytes mine = testing::make_input(type, TM_SUM, slot, count, 7);
  Bytes output(want.size(), std::byte{0x5A});
  std::byte* own = output.data() + static_cast<size_t>(slot) * count * esize;
  if (in_place && count > 0) std::memcpy(own, mine.data(), mine.size());
  Status st = comm.allgather(in_place ? own : mine.data(), output.data(), count, type);
  if (!st.ok()) return failed(slot, what, st);
  return output == want ? 0 : mismatch(slot, what, output, want);
}

int check_broadcast(Communicator& comm, tm_datatype_t type, size_t count, int root, bool in_place) {
  const int slot = comm.slot();
  const std::string what = str_cat("broadcast ", datatype_name(type), " count ", count, " root ",
                                   root, in_place ? " in-place" : "");
  Bytes want = testing::make_input(type, TM_SUM, root, count, 11);
  Bytes send = slot == root ? want : Bytes(want.size(), std::byte{0x11});
  Bytes recv(want.size(), std::byte{0x5A});
  if (in_place && slot == root) recv = want;
  Status st = comm.broadcast(in_place ? recv.data() : send.data(), recv.data(), count, type, root);
  if (!st.ok()) return failed(slot, what, st);
  return recv == want ? 0 : mismatch(slot, what, recv, want);
}

// Runs every collective check in one child per slot. `force` picks the
// algorithm of every collective.
int run_matrix(const testing::TestJob& job, int n, int slot, size_t segment_bytes,
               AlgorithmPolicy::Force force, const std::string& transport) {
  CommConfig config = job.config(slot, n, str_cat("matrix", n, "-", segment_bytes));
  config.segment_bytes = segment_bytes;
  config.algorithms.force = force;
  config.transport = transport;
  auto comm = Communicator::create(config);
  if (!comm.ok()) return failed(slot, "create", comm.status());
  Communicator& c = *comm.value();
  for (bool in_place : {false, true}) {
    for (tm_datatype_t type : kTypes) {
      for (tm_redop_t op : kOps) {
        for (size_t count : counts_for(n)) {
          if (int rc = check_allreduce(c, type, op, count, in_place)) return rc;
        }
        for (size_t recvcount : {size_t{0}, size_t{1}, static_cast<size_t>(n) - 1,
                                 static_cast<size_t>(n) + 1, size_t{333}}) {
          if (int rc = check_reduce_scatter(c, type, op, recvcount, in_place)) return rc;
        }
      }
      for (size_t count : {size_t{0}, size_t{1}, size_t{777}}) {
        if (int rc = check_allgather(c, type, count, in_place)) return rc;
      }
      for (int root = 0; root < n; ++root) {
        if (int rc = check_broadcast(c, type, 1001, root, in_place)) return rc;
      }
    }
  }
  Status st = c.barrier();
  return st.ok() ? 0 : failed(slot, "barrier", st);
}

class CollectiveMatrix
    : public ::testing::TestWithParam<std::tuple<int, AlgorithmPolicy::Force, std::string>> {};

TEST_P(CollectiveMatrix, EveryOpAndTypeMatchesReference) {
  const auto [n, force, transport] = GetParam();
  testing::TestJob job;
  // A small segment makes counts of a few thousand run through many
  // pipelined rounds (and recursive doubling exchange many segments).
  auto exits = job.run(
      n, [&](int slot) { return run_matrix(job, n, slot, 1024, force, transport); },
      std::chrono::seconds(240));
  for (int s = 0; s < n; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

INSTANTIATE_TEST_SUITE_P(Slots, CollectiveMatrix,
                         ::testing::Combine(::testing::Range(1, 10),
                                            ::testing::Values(AlgorithmPolicy::Force::kRing,
                                                              AlgorithmPolicy::Force::kDoubling,
                                                              AlgorithmPolicy::Force::kHalving),
                                            ::testing::Values("tcp", "shm")));

// A large allreduce with the default segment size (many rounds, staging reuse).
TEST(Collectives, LargeAllreduceDefaultSegments) {
  constexpr int n = 4;
  constexpr size_t count = (size_t{16} << 20) / 4 + 13;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    auto comm = Communicator::create(job.config(slot, n, "large"));
    if (!comm.ok()) return failed(slot, "create", comm.status());
    return check_allreduce(*comm.value(), TM_FLOAT32, TM_SUM, count, false);
  });
  for (int s = 0; s < n; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

// TRAINMOVER_ALGO=halving sends every reduce_scatter through the
// communicator's scratch, whatever its size: the scratch is kept between
// calls, not freed after each one above the size thresholds and made (and
// faulted in) again at the next. Counted in the calling thread's page
// faults, which the kernel counts alike on any host.
TEST(Collectives, ForcedHalvingKeepsTheReduceScatterScratch) {
  constexpr int n = 4;
  constexpr size_t kInputBytes = size_t{4} << 20;  // above every default threshold
  constexpr size_t recvcount = kInputBytes / sizeof(float) / n;
  constexpr int kCalls = 4;
  constexpr uint64_t kPagesPerCall = kInputBytes / 4096;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    CommConfig config = job.config(slot, n, "scratch");
    config.algorithms.force = AlgorithmPolicy::Force::kHalving;
    auto comm = Communicator::create(config);
    if (!comm.ok()) return failed(slot, "create", comm.status());
    Bytes send = testing::make_input(TM_FLOAT32, TM_SUM, slot, recvcount * n, 7);
    Bytes recv(recvcount * sizeof(float));
    auto call = [&] {
      return comm.value()->reduce_scatter(send.data(), recv.data(), recvcount, TM_FLOAT32, TM_SUM);
    };
    if (Status st = call(); !st.ok()) return failed(slot, "first reduce_scatter", st);
    const uint64_t before = thread_minor_faults();
    for (int i = 0; i < kCalls; ++i) {
      if (Status st = call(); !st.ok()) return failed(slot, "reduce_scatter", st);
    }
    const uint64_t faults = thread_minor_faults() - before;
    if (faults >= kPagesPerCall / 2) {
      std::fprintf(stderr, "slot %d: %llu page faults in %d calls (%llu pages of scratch each)\n",
                   slot, static_cast<unsigned long long>(faults), kCalls,
                   static_cast<unsigned long long>(kPagesPerCall));
      return 6;
    }
    return 0;
  });
  for (int s = 0; s < n; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

// The same slots served by processes started in another order, on other
// ports, give bit-identical results under the default policy: on the ring
// (a large count), with recursive halving (a medium one) and with recursive
// doubling (a small one).
TEST(Collectives, ResultsDependOnlyOnSlots) {
  constexpr int n = 5;
  constexpr size_t kCounts[] = {(AlgorithmPolicy::kDefaultHalvingMaxBytes[0] / 4) + 3, 200003,
                                1003};
  testing::TestJob job;
  auto store = rendezvous::TcpStore::connect(job.store_address(), job.secret(), job.job_id(),
                                             std::chrono::seconds(10));
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_EQ(choose_algorithm(AlgorithmPolicy{}, CollectiveKind::kAllreduce, kCounts[0] * 4, n),
            Algorithm::kRing);
  ASSERT_EQ(choose_algorithm(AlgorithmPolicy{}, CollectiveKind::kAllreduce, kCounts[1] * 4, n),
            Algorithm::kHalving);
  ASSERT_EQ(choose_algorithm(AlgorithmPolicy{}, CollectiveKind::kAllreduce, kCounts[2] * 4, n),
            Algorithm::kDoubling);
  for (int run = 0; run < 2; ++run) {
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
      int slot = run == 0 ? i : n - 1 - i;  // second run: processes take slots in reverse order
      pids.push_back(testing::fork_child([&, slot, run] {
        auto comm = Communicator::create(job.config(slot, n, str_cat("order", run)));
        if (!comm.ok()) return failed(slot, "create", comm.status());
        auto client = rendezvous::TcpStore::connect(job.store_address(), job.secret(), job.job_id(),
                                                    std::chrono::seconds(10));
        if (!client.ok()) return 4;
        for (size_t count : kCounts) {
          Bytes data = testing::make_input(TM_FLOAT32, TM_SUM, slot, count, 99);
          Status st = comm.value()->allreduce(data.data(), data.data(), count, TM_FLOAT32, TM_SUM);
          if (!st.ok()) return failed(slot, "allreduce", st);
          Status set =
              client.value()->set(str_cat("hash/", count, "/", run, "/", slot),
                                  std::to_string(testing::fnv1a(data.data(), data.size())));
          if (!set.ok()) return 5;
        }
        return 0;
      }));
      std::this_thread::sleep_for(std::chrono::milliseconds(run == 0 ? 0 : 20));
    }
    auto exits = testing::wait_children(pids, std::chrono::seconds(60));
    for (const auto& e : exits) ASSERT_TRUE(e.ok()) << e.describe();
  }
  for (size_t count : kCounts) {
    auto first = store.value()->get(str_cat("hash/", count, "/0/0"), std::chrono::seconds(1));
    ASSERT_TRUE(first.ok());
    for (int run = 0; run < 2; ++run) {
      for (int slot = 0; slot < n; ++slot) {
        auto h = store.value()->get(str_cat("hash/", count, "/", run, "/", slot),
                                    std::chrono::seconds(1));
        ASSERT_TRUE(h.ok()) << h.status().message();
        EXPECT_EQ(h.value(), first.value())
            << "count " << count << " run " << run << " slot " << slot;
      }
    }
  }
}

TEST(PointToPoint, NeighboursAndFarSlotsInOrder) {
  constexpr int n = 5;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    auto comm = Communicator::create(job.config(slot, n, "p2p"));
    if (!comm.ok()) return failed(slot, "create", comm.status());
    Communicator& c = *comm.value();
    // Every slot sends three messages (sizes 0, 5 and 300000 int32) to every
    // other slot, lower slots first; receives are posted in the same order.
    for (int round = 0; round < n; ++round) {
      for (int peer = 0; peer < n; ++peer) {
        if (peer == slot) continue;
        bool i_send_first = slot < peer;
        for (int leg = 0; leg < 2; ++leg) {
          bool sending = (leg == 0) == i_send_first;
          for (size_t count : {size_t{0}, size_t{5}, size_t{300000}}) {
            int from = sending ? slot : peer;
            std::vector<int32_t> msg(count);
            for (size_t i = 0; i < count; ++i)
              msg[i] = static_cast<int32_t>(from * 1000003 + round * 7919 + i);
            if (sending) {
              Status st = c.send(msg.data(), count, TM_INT32, peer);
              if (!st.ok()) return failed(slot, "send", st);
            } else {
              std::vector<int32_t> got(count, -1);
              Status st = c.recv(got.data(), count, TM_INT32, peer);
              if (!st.ok()) return failed(slot, "recv", st);
              if (got != msg) return 3;
            }
          }
        }
      }
    }
    Status st = c.barrier();
    return st.ok() ? 0 : failed(slot, "barrier", st);
  });
  for (int s = 0; s < n; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

// A message of many frames (more than the sender keeps in flight at once).
TEST(PointToPoint, LargeMessageInManyFrames) {
  constexpr int n = 2;
  constexpr size_t count = (size_t{20} << 20) / 8 + 3;  // 20 MiB of int64 and a bit
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    auto comm = Communicator::create(job.config(slot, n, "p2p-large"));
    if (!comm.ok()) return failed(slot, "create", comm.status());
    Bytes msg = testing::make_input(TM_INT64, TM_SUM, 0, count, 3);
    if (slot == 0) {
      Status st = comm.value()->send(msg.data(), count, TM_INT64, 1);
      return st.ok() ? 0 : failed(slot, "send", st);
    }
    Bytes got(msg.size());
    Status st = comm.value()->recv(got.data(), count, TM_INT64, 0);
    if (!st.ok()) return failed(slot, "recv", st);
    return got == msg ? 0 : mismatch(slot, "large message", got, msg);
  });
  for (int s = 0; s < n; ++s) {
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
  }
}

// CPU time the calling thread has used (getrusage RUSAGE_THREAD), in seconds.
double thread_cpu_s() {
  rusage usage{};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// A caller looks at its links without sleeping only briefly (the engine's
// bounded spin, docs/latency.md): one that waits 300 ms for a message
// sleeps through nearly all of it. Unbounded, the wait would cost ~300 ms
// of CPU.
class WaitingReceiver : public ::testing::TestWithParam<std::string> {};

TEST_P(WaitingReceiver, SleepsInsteadOfSpinning) {
  constexpr int n = 2;
  constexpr auto kSenderDelay = std::chrono::milliseconds(300);
  constexpr double kMaxCpuS = 0.06;
  testing::TestJob job;
  auto exits = job.run(n, [&](int slot) {
    CommConfig config = job.config(slot, n, "waiting-" + GetParam());
    config.transport = GetParam();
    auto comm = Communicator::create(config);
    if (!comm.ok()) return failed(slot, "create", comm.status());
    Communicator& c = *comm.value();
    int64_t value = slot;
    // A first exchange, so that the links are up before the timed wait.
    if (Status st = c.allreduce(&value, &value, 1, TM_INT64, TM_SUM); !st.ok())
      return failed(slot, "allreduce", st);
    if (slot == 1) {
      std::this_thread::sleep_for(kSenderDelay);
      Status st = c.send(&value, 1, TM_INT64, 0);
      return st.ok() ? 0 : failed(slot, "send", st);
    }
    const double before = thread_cpu_s();
    if (Status st = c.recv(&value, 1, TM_INT64, 1); !st.ok()) return failed(slot, "recv", st);
    const double cpu = thread_cpu_s() - before;
    if (cpu > kMaxCpuS) {
      std::fprintf(stderr, "slot 0: %.3f s of CPU waiting 0.3 s for a message (at most %.3f)\n",
                   cpu, kMaxCpuS);
      return 6;
    }
    return 0;
  });
  for (int s = 0; s < n; ++s)
    EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
        << "slot " << s << ": " << exits[static_cast<size_t>(s)].describe();
}

INSTANTIATE_TEST_SUITE_P(Transports, WaitingReceiver, ::testing::Values("tcp", "shm"));

}  // namespace
}  // namespace trainmover
