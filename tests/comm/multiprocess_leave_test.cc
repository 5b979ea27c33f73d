// Ending a job without a barrier: one slot runs the job's last operation and
// destroys its communicator at once; the others enter the same operation
// 200 ms later. Every slot must complete it with the right result, for every
// collective and for send/recv, whichever slot leaves first (issue 14).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "support/multiprocess.h"

namespace trainmover {
namespace {

constexpr size_t kCount = 10007;  // uneven chunks; fits the sockets' buffers
constexpr auto kLateBy = std::chrono::milliseconds(200);

enum class LastOp { kAllreduce, kReduceScatter, kAllgather, kBroadcast, kBarrier, kSend, kRecv };
constexpr LastOp kLastOps[] = {LastOp::kAllreduce, LastOp::kReduceScatter, LastOp::kAllgather,
                               LastOp::kBroadcast, LastOp::kBarrier,       LastOp::kSend,
                               LastOp::kRecv};

const char* name_of(LastOp op) {
  switch (op) {
    case LastOp::kAllreduce:
      return "allreduce";
    case LastOp::kReduceScatter:
      return "reduce_scatter";
    case LastOp::kAllgather:
      return "allgather";
    case LastOp::kBroadcast:
      return "broadcast";
    case LastOp::kBarrier:
      return "barrier";
    case LastOp::kSend:
      return "send";  // the leaver sends to every other slot
    case LastOp::kRecv:
      return "recv";  // the leaver receives from every other slot
  }
  return "?";
}

// Slot s contributes s + 1 + i at index i: exact in float for these sizes.
float value(int slot, size_t i) { return static_cast<float>(slot + 1) + static_cast<float>(i); }

Status check(bool equal, const char* what) {
  return equal ? Status::Ok() : error(TM_ERROR_INTERNAL, what, ": wrong result");
}

Status run_allreduce(Communicator& c) {
  const int n = c.nslots();
  std::vector<float> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = value(c.slot(), i);
  TM_RETURN_IF_ERROR(c.allreduce(data.data(), data.data(), kCount, TM_FLOAT32, TM_SUM));
  bool equal = true;
  for (size_t i = 0; i < kCount; ++i) {
    float want = 0;
    for (int s = 0; s < n; ++s) want += value(s, i);
    equal = equal && data[i] == want;
  }
  return check(equal, "allreduce");
}

Status run_reduce_scatter(Communicator& c) {
  const size_t n = static_cast<size_t>(c.nslots());
  std::vector<float> in(kCount * n), out(kCount);
  for (size_t i = 0; i < in.size(); ++i) in[i] = value(c.slot(), i);
  TM_RETURN_IF_ERROR(c.reduce_scatter(in.data(), out.data(), kCount, TM_FLOAT32, TM_SUM));
  bool equal = true;
  for (size_t i = 0; i < kCount; ++i) {
    float want = 0;
    for (size_t s = 0; s < n; ++s) want += value(static_cast<int>(s), c.slot() * kCount + i);
    equal = equal && out[i] == want;
  }
  return check(equal, "reduce_scatter");
}

Status run_allgather(Communicator& c) {
  const size_t n = static_cast<size_t>(c.nslots());
  std::vector<float> in(kCount), out(kCount * n);
  for (size_t i = 0; i < kCount; ++i) in[i] = value(c.slot(), i);
  TM_RETURN_IF_ERROR(c.allgather(in.data(), out.data(), kCount, TM_FLOAT32));
  bool equal = true;
  for (size_t s = 0; s < n; ++s)
    for (size_t i = 0; i < kCount; ++i)
      equal = equal && out[s * kCount + i] == value(static_cast<int>(s), i);
  return check(equal, "allgather");
}

// The leaver is the root: the slot before it ends the chain and needs
// nothing more from it.
Status run_broadcast(Communicator& c, int root) {
  std::vector<float> data(kCount, -1.0f);
  if (c.slot() == root)
    for (size_t i = 0; i < kCount; ++i) data[i] = value(root, i);
  TM_RETURN_IF_ERROR(c.broadcast(data.data(), data.data(), kCount, TM_FLOAT32, root));
  bool equal = true;
  for (size_t i = 0; i < kCount; ++i) equal = equal && data[i] == value(root, i);
  return check(equal, "broadcast");
}

// The leaver sends to every other slot; each of them receives.
Status run_send(Communicator& c, int leaver) {
  std::vector<float> data(kCount);
  if (c.slot() != leaver) {
    TM_RETURN_IF_ERROR(c.recv(data.data(), kCount, TM_FLOAT32, leaver));
    bool equal = true;
    for (size_t i = 0; i < kCount; ++i) equal = equal && data[i] == value(leaver, i);
    return check(equal, "recv from the leaver");
  }
  for (size_t i = 0; i < kCount; ++i) data[i] = value(leaver, i);
  for (int s = 0; s < c.nslots(); ++s) {
    if (s != leaver) TM_RETURN_IF_ERROR(c.send(data.data(), kCount, TM_FLOAT32, s));
  }
  return Status::Ok();
}

// Every other slot sends to the leaver, which receives them all.
Status run_recv(Communicator& c, int leaver) {
  std::vector<float> data(kCount);
  if (c.slot() != leaver) {
    for (size_t i = 0; i < kCount; ++i) data[i] = value(c.slot(), i);
    return c.send(data.data(), kCount, TM_FLOAT32, leaver);
  }
  for (int s = 0; s < c.nslots(); ++s) {
    if (s == leaver) continue;
    TM_RETURN_IF_ERROR(c.recv(data.data(), kCount, TM_FLOAT32, s));
    bool equal = true;
    for (size_t i = 0; i < kCount; ++i) equal = equal && data[i] == value(s, i);
    TM_RETURN_IF_ERROR(check(equal, "recv at the leaver"));
  }
  return Status::Ok();
}

Status run_last(Communicator& c, LastOp op, int leaver) {
  switch (op) {
    case LastOp::kAllreduce:
      return run_allreduce(c);
    case LastOp::kReduceScatter:
      return run_reduce_scatter(c);
    case LastOp::kAllgather:
      return run_allgather(c);
    case LastOp::kBroadcast:
      return run_broadcast(c, leaver);
    case LastOp::kBarrier:
      return c.barrier();
    case LastOp::kSend:
      return run_send(c, leaver);
    case LastOp::kRecv:
      return run_recv(c, leaver);
  }
  return error(TM_ERROR_INTERNAL, "unknown operation");
}

int complain(int slot, const std::string& what) {
  std::fprintf(stderr, "slot %d: %s\n", slot, what.c_str());
  return 3;
}

// One communicator per last operation, one after the other in the same
// processes: each ends as a job would.
int end_every_way(const testing::TestJob& job, int n, int leaver, int slot) {
  for (LastOp op : kLastOps) {
    const std::string what = str_cat(name_of(op), " with slot ", leaver, " leaving first");
    auto comm = Communicator::create(job.config(slot, n, name_of(op)));
    if (!comm.ok()) return complain(slot, what + ": " + comm.status().message());
    // A first operation links every ring neighbour before the last one.
    if (Status st = comm.value()->barrier(); !st.ok())
      return complain(slot, what + ": first barrier: " + st.message());
    if (slot != leaver) std::this_thread::sleep_for(kLateBy);
    if (Status st = run_last(*comm.value(), op, leaver); !st.ok())
      return complain(slot, what + ": " + st.message());
    comm.value().reset();  // tm_comm_destroy
  }
  return 0;
}

class LeaveFirst : public ::testing::TestWithParam<int> {};

TEST_P(LeaveFirst, EverySlotMayDestroyRightAfterTheLastOperation) {
  const int n = GetParam();
  for (int leaver = 0; leaver < n; ++leaver) {
    testing::TestJob job;
    auto exits = job.run(
        n, [&](int slot) { return end_every_way(job, n, leaver, slot); },
        std::chrono::seconds(120));
    for (int s = 0; s < n; ++s) {
      EXPECT_TRUE(exits[static_cast<size_t>(s)].ok())
          << "slot " << s << " with slot " << leaver
          << " leaving first: " << exits[static_cast<size_t>(s)].describe();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, LeaveFirst, ::testing::Values(3, 7));

}  // namespace
}  // namespace trainmover
