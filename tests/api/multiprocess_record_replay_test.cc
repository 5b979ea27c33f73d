// Record and replay across real processes, through the C API: the slots of
// a job record their first iterations; a standby replays a slot's shadow
// iterations in a sandbox and gets the recorded outputs bit for bit, then
// goes live in place (same handle, same buffers) and joins a real job.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "record/compress.h"
#include "record/file_io.h"
#include "record/trace.h"
#include "support/multiprocess.h"
#include "trainmover/trainmover.h"

namespace trainmover {
namespace {

constexpr int kSlots = 3;
constexpr int kRecorded = 2;
constexpr size_t kCount = 4099;  // not a multiple of anything

// A C configuration for a TestJob slot; its strings point into `cc` and
// `trace_dir`, which must outlive it.
tm_config_t c_config(const CommConfig& cc, const std::string& trace_dir) {
  tm_config_t c = TM_CONFIG_INITIALIZER;
  tm_config_init(&c);
  c.slot = cc.slot;
  c.nslots = cc.nslots;
  c.job_id = cc.job_id;
  c.job_secret = cc.job_secret.c_str();
  c.store_address = cc.store_address.c_str();
  c.name = cc.name.c_str();
  c.timeout_s = cc.timeout_s;
  c.connect_timeout_s = cc.connect_timeout_s;
  c.heartbeat_interval_s = cc.heartbeat_interval_s;
  c.record_iterations = kRecorded;
  c.trace_dir = trace_dir.empty() ? nullptr : trace_dir.c_str();
  return c;
}

int fail(int slot, const char* what) {
  std::fprintf(stderr, "slot %d: %s: %s\n", slot, what, tm_get_last_error());
  return 2;
}

// The program's buffers: allocated once, used by every iteration, whatever
// the communicator is doing.
struct Buffers {
  std::vector<float> grads = std::vector<float>(kCount);
  std::vector<float> params = std::vector<float>(kCount);
  std::vector<int32_t> shard = std::vector<int32_t>(kCount);
  std::vector<int32_t> gathered = std::vector<int32_t>(7 * kSlots);
  std::vector<int32_t> inbox = std::vector<int32_t>(5);
};

void fill(Buffers& b, int slot, int it) {
  for (size_t i = 0; i < kCount; ++i) {
    b.grads[i] = static_cast<float>(slot + 1) * 0.1f + static_cast<float>(i % 97) * 0.01f +
                 static_cast<float>(it);
  }
}

// One training iteration. `slot_dependent`: also reduce_scatter and a ring
// of send/recv, whose outputs differ per slot.
int iteration(tm_comm_t comm, Buffers& b, int slot, int it, bool slot_dependent) {
  fill(b, slot, it);
  std::vector<int32_t> mine(7, slot * 1000 + it), contrib(kCount * kSlots);
  for (size_t i = 0; i < contrib.size(); ++i) contrib[i] = static_cast<int32_t>(i) + it;
  if (tm_iteration_begin(comm) != TM_SUCCESS) return fail(slot, "tm_iteration_begin");
  if (tm_allreduce(b.grads.data(), b.grads.data(), kCount, TM_FLOAT32, TM_SUM, comm) != 0)
    return fail(slot, "allreduce");
  if (tm_broadcast(b.grads.data(), b.params.data(), kCount, TM_FLOAT32, it % kSlots, comm) != 0)
    return fail(slot, "broadcast");
  if (tm_allgather(mine.data(), b.gathered.data(), 7, TM_INT32, comm) != 0)
    return fail(slot, "allgather");
  if (slot_dependent) {
    if (tm_reduce_scatter(contrib.data(), b.shard.data(), kCount, TM_INT32, TM_MAX, comm) != 0)
      return fail(slot, "reduce_scatter");
    std::vector<int32_t> out(5, slot * 10 + it);
    if (tm_send(out.data(), 5, TM_INT32, (slot + 1) % kSlots, comm) != 0) return fail(slot, "send");
    if (tm_recv(b.inbox.data(), 5, TM_INT32, (slot + kSlots - 1) % kSlots, comm) != 0)
      return fail(slot, "recv");
  }
  if (tm_barrier(comm) != 0) return fail(slot, "barrier");
  if (tm_iteration_end(comm) != TM_SUCCESS) return fail(slot, "tm_iteration_end");
  return 0;
}

// The bytes a slot saw in an iteration, for bitwise comparison.
std::vector<std::byte> snapshot(const Buffers& b) {
  std::vector<std::byte> out;
  auto add = [&](auto& v) {
    auto s = std::as_bytes(std::span(v));
    out.insert(out.end(), s.begin(), s.end());
  };
  add(b.grads);
  add(b.params);
  add(b.gathered);
  add(b.shard);
  add(b.inbox);
  return out;
}

std::string snapshot_path(const std::string& dir, int slot, int it) {
  return str_cat(dir, "/seen-", slot, "-", it);
}

// Iteration 5 on a live communicator, its results checked: every slot's
// contribution reached the allreduce, the ring of send/recv and allgather.
int live_iteration(tm_comm_t comm, Buffers& b, int slot) {
  if (int rc = iteration(comm, b, slot, 5, true); rc != 0) return rc;
  for (size_t i = 0; i < kCount; ++i) {
    float want = 0;
    for (int s = 0; s < kSlots; ++s) {
      want += static_cast<float>(s + 1) * 0.1f + static_cast<float>(i % 97) * 0.01f + 5.0f;
    }
    if (std::abs(b.grads[i] - want) > 1e-3f) {
      std::fprintf(stderr, "slot %d: live allreduce[%zu] = %f, want %f\n", slot, i,
                   static_cast<double>(b.grads[i]), static_cast<double>(want));
      return 8;
    }
  }
  if (b.inbox[0] != ((slot + kSlots - 1) % kSlots) * 10 + 5 || b.gathered[7 * 2] != 2005) return 9;
  return 0;
}

class RecordReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tm_record.XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    traces_ = dir_ + "/traces";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The live job: every slot records, runs one more iteration, and leaves
  // what it saw in each recorded iteration under dir_.
  void record(bool slot_dependent, bool compress = false) {
    auto exits = job_.run(kSlots, [&](int slot) {
      CommConfig cc = job_.config(slot, kSlots, "recorded");
      tm_config_t c = c_config(cc, traces_);
      c.trace_compress = compress ? 1 : 0;
      tm_comm_t comm = nullptr;
      if (tm_comm_init(&comm, &c) != TM_SUCCESS) return fail(slot, "tm_comm_init");
      std::string dp = str_cat("dp=", slot);
      if (tm_comm_set_role(comm, TM_STAGE_NONE, slot_dependent ? dp.c_str() : nullptr) != 0)
        return fail(slot, "tm_comm_set_role");
      Buffers b;
      for (int it = 0; it < kRecorded + 1; ++it) {
        tm_comm_mode_t mode{};
        tm_comm_mode(comm, &mode);
        if (mode != (it < kRecorded ? TM_MODE_RECORDING : TM_MODE_LIVE)) {
          std::fprintf(stderr, "slot %d: mode %d in iteration %d\n", slot, mode, it);
          return 4;
        }
        if (int rc = iteration(comm, b, slot, it, slot_dependent); rc != 0) return rc;
        if (it < kRecorded && !record::write_file_atomic(snapshot_path(dir_, slot, it), snapshot(b),
                                                         record::Replace::kYes)
                                   .ok())
          return 5;
      }
      if (tm_comm_wait_trace(comm) != TM_SUCCESS) return fail(slot, "tm_comm_wait_trace");
      tm_comm_destroy(comm);
      return 0;
    });
    for (int s = 0; s < kSlots; ++s)
      ASSERT_TRUE(exits[s].ok()) << "slot " << s << ": " << exits[s].describe();
  }

  testing::TestJob job_;
  std::string dir_, traces_;
};

// Trace files, and anything else but the per-role lock files.
size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().extension() != ".lock";
  return n;
}

TEST_F(RecordReplay, DataParallelReplicasKeepOneTrace) {
  // Compressed when this build can: the replicas then compare their raw
  // outputs with the decompressed first trace.
  record(/*slot_dependent=*/false, /*compress=*/record::zstd_available());
  ASSERT_EQ(files_in(traces_), 1u);
  auto trace = record::Trace::load(traces_ + "/stage=none.tmtrace");
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->meta().job_id, job_.job_id());
  EXPECT_EQ(trace->compressed(), record::zstd_available());
  EXPECT_EQ(trace->meta().nslots, kSlots);
  EXPECT_EQ(trace->iterations(), static_cast<uint32_t>(kRecorded));
  EXPECT_EQ(trace->calls().size(), 4u * kRecorded);  // the third iteration is not recorded
  // Any slot's replay of the single trace gives that slot what it saw.
  for (int standby_slot : {0, 2}) {
    std::vector<pid_t> pids = {testing::fork_child([&] {
      CommConfig cc = job_.config(standby_slot, kSlots);
      tm_config_t c = c_config(cc, traces_);
      tm_comm_t comm = nullptr;
      if (tm_comm_init_sandbox(&comm, &c, nullptr) != 0) return fail(standby_slot, "sandbox");
      Buffers b;
      for (int it = 0; it < kRecorded; ++it) {
        if (int rc = iteration(comm, b, standby_slot, it, false); rc != 0) return rc;
        auto seen = record::read_file(snapshot_path(dir_, standby_slot, it), 1 << 30);
        if (!seen.ok() || seen.value() != snapshot(b)) return 6;
      }
      tm_comm_destroy(comm);
      return 0;
    })};
    auto exits = testing::wait_children(pids, std::chrono::seconds(30));
    EXPECT_TRUE(exits[0].ok()) << "standby as slot " << standby_slot << ": " << exits[0].describe();
  }
}

TEST_F(RecordReplay, StandbyReplaysThenGoesLiveInPlace) {
  record(/*slot_dependent=*/true);
  ASSERT_EQ(files_in(traces_), static_cast<size_t>(kSlots));  // dp=0, dp=1, dp=2
  constexpr int kStandby = 1;
  // A new job of 3 slots: 0 and 2 start live; slot 1 is the standby, which
  // first runs its shadow iterations from the trace.
  auto exits = job_.run(kSlots, [&](int slot) {
    CommConfig cc = job_.config(slot, kSlots, "after");
    tm_config_t c = c_config(cc, "");
    Buffers b;
    tm_comm_t comm = nullptr;
    if (slot != kStandby) {
      if (tm_comm_init(&comm, &c) != TM_SUCCESS) return fail(slot, "tm_comm_init");
    } else {
      std::string role = str_cat("stage=none,dp=", slot);
      c.trace_dir = traces_.c_str();
      c.role = role.c_str();
      if (tm_comm_init_sandbox(&comm, &c, nullptr) != TM_SUCCESS) return fail(slot, "sandbox");
      for (int it = 0; it < kRecorded; ++it) {
        if (int rc = iteration(comm, b, slot, it, true); rc != 0) return rc;
        auto seen = record::read_file(snapshot_path(dir_, slot, it), 1 << 30);
        if (!seen.ok() || seen.value() != snapshot(b)) {
          std::fprintf(stderr, "standby: iteration %d differs from the recording\n", it);
          return 6;
        }
      }
      tm_comm_t handle = comm;
      const float* params = b.params.data();
      std::vector<float> params_before = b.params;
      if (tm_comm_go_live(comm, &c) != TM_SUCCESS) return fail(slot, "tm_comm_go_live");
      tm_comm_mode_t mode{};
      tm_comm_mode(comm, &mode);
      if (comm != handle || mode != TM_MODE_LIVE || b.params.data() != params ||
          b.params != params_before) {
        std::fprintf(stderr, "standby: handle, mode or buffers changed by going live\n");
        return 7;
      }
    }
    // Everyone: a real iteration, on the same buffers.
    int rc = live_iteration(comm, b, slot);
    tm_comm_destroy(comm);
    return rc;
  });
  for (int s = 0; s < kSlots; ++s)
    EXPECT_TRUE(exits[s].ok()) << "slot " << s << ": " << exits[s].describe();
}

// The whole standby path: a fourth process warms up in a sandbox on slot 1's
// trace while slots 0-2 train, turns into a standby in place, and replaces
// slot 1's process with the two-phase switch (planned) — no restart of the
// job, no new rendezvous, the standby's handle and buffers unchanged.
TEST_F(RecordReplay, WarmedUpStandbyJoinsTheRunningJobBySwitch) {
  record(/*slot_dependent=*/true);
  constexpr int kLeaver = 1, kStandby = kSlots;  // process index of the standby
  auto exits = job_.run(kSlots + 1, [&](int who) {
    CommConfig cc = job_.config(who == kStandby ? 0 : who, kSlots, "running");
    tm_config_t c = c_config(cc, "");
    Buffers b;
    tm_comm_t comm = nullptr;
    const int slot = who == kStandby ? kLeaver : who;
    if (who == kStandby) {
      std::string role = str_cat("stage=none,dp=", kLeaver);
      c.trace_dir = traces_.c_str();
      c.role = role.c_str();
      if (tm_comm_init_sandbox(&comm, &c, nullptr) != TM_SUCCESS) return fail(slot, "sandbox");
      for (int it = 0; it < kRecorded; ++it) {
        if (int rc = iteration(comm, b, slot, it, true); rc != 0) return rc;
      }
      tm_comm_t handle = comm;
      const float* grads = b.grads.data();
      if (tm_comm_go_standby(comm, &c) != TM_SUCCESS) return fail(slot, "tm_comm_go_standby");
      if (tm_comm_join(comm, 1, kLeaver) != TM_SUCCESS) return fail(slot, "tm_comm_join");
      if (tm_comm_switchover(comm, 1) != TM_SUCCESS) return fail(slot, "tm_comm_switchover");
      if (comm != handle || b.grads.data() != grads) return 7;
    } else {
      if (tm_comm_init(&comm, &c) != TM_SUCCESS) return fail(slot, "tm_comm_init");
      if (int rc = iteration(comm, b, slot, 4, true); rc != 0) return rc;
      if (tm_comm_prepare_switch(comm, 1) != TM_SUCCESS) return fail(slot, "prepare_switch");
      if (tm_comm_wait_prepared(comm) != TM_SUCCESS) return fail(slot, "wait_prepared");
      if (tm_comm_switchover(comm, 1) != TM_SUCCESS) return fail(slot, "switchover");
      if (who == kLeaver) {
        tm_comm_destroy(comm);
        return 0;
      }
    }
    // The new view: the standby serves slot 1.
    int rc = live_iteration(comm, b, slot);
    tm_comm_destroy(comm);
    return rc;
  });
  for (int who = 0; who <= kSlots; ++who)
    EXPECT_TRUE(exits[who].ok()) << "process " << who << ": " << exits[who].describe();
}

TEST_F(RecordReplay, ASlotDependentTraceConflictsWithoutAnAttribute) {
  // Every slot declares the same role but reduce_scatter differs by slot:
  // the first trace stays and the others are reported, not written.
  auto exits = job_.run(kSlots, [&](int slot) {
    CommConfig cc = job_.config(slot, kSlots, "conflict");
    tm_config_t c = c_config(cc, traces_);
    tm_comm_t comm = nullptr;
    if (tm_comm_init(&comm, &c) != TM_SUCCESS) return fail(slot, "tm_comm_init");
    Buffers b;
    for (int it = 0; it < kRecorded; ++it) {
      if (int rc = iteration(comm, b, slot, it, true); rc != 0) return rc;
    }
    tm_result_t saved = tm_comm_wait_trace(comm);
    bool conflict = saved == TM_ERROR_INVALID_ARGUMENT &&
                    std::strstr(tm_get_last_error(), "slot-dependent output") != nullptr;
    if (saved != TM_SUCCESS && !conflict) return fail(slot, "tm_comm_wait_trace");
    tm_comm_destroy(comm);
    return conflict ? 10 : 0;
  });
  int kept = 0, dropped = 0;
  for (const auto& e : exits) {
    kept += e.ok() ? 1 : 0;
    dropped += e.code == 10 ? 1 : 0;
  }
  EXPECT_EQ(kept, 1);  // the first writer
  EXPECT_EQ(dropped, kSlots - 1);
  EXPECT_EQ(files_in(traces_), 1u);
}

}  // namespace
}  // namespace trainmover
