// Tests of the sandbox communicator through the C API, on traces built in
// the test: recorded outputs come back bit for bit, and every mismatch,
// bad trace and misuse fails with a message that says what and where.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "record/file_io.h"
#include "record/trace_builder.h"
#include "record/trace_dir.h"
#include "trainmover/trainmover.h"

namespace trainmover::record {
namespace {

constexpr uint64_t kJob = 4242;
constexpr int kSlots = 4;

std::vector<float> floats(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i) * 0.25f;
  return v;
}

CallInfo call(uint32_t it, uint32_t idx, TraceOp op, uint16_t redop, uint64_t count, int32_t peer) {
  CallInfo c;
  c.iteration = it;
  c.index = idx;
  c.op = static_cast<uint16_t>(op);
  c.redop = redop;
  c.dtype = TM_FLOAT32;
  c.elem_size = 4;
  c.count = count;
  c.peer = peer;
  return c;
}

// The outputs of iteration `it`, call by call.
std::vector<std::vector<float>> outputs(uint32_t it) {
  float b = static_cast<float>(it) * 100;
  return {floats(8, b), floats(4, b + 10), floats(2 * kSlots, b + 20), {}, {}, floats(3, b + 30)};
}

// Per iteration: allreduce(sum) of 8 float32, broadcast of 4 from root 0,
// allgather of 2 each (4 slots), barrier, send of 3 to slot 3, recv of 3
// from slot 1.
std::vector<std::byte> sample_trace(uint32_t iterations, const char* role = "stage=middle,tp=1") {
  TraceMeta meta;
  meta.job_id = kJob;
  meta.role = Role::parse(role).value();
  meta.slot = 2;
  meta.nslots = kSlots;
  TraceBuilder b(meta);
  for (uint32_t it = 0; it < iterations; ++it) {
    auto out = outputs(it);
    CallInfo calls[] = {call(it, 0, TraceOp::kAllreduce, TM_SUM, 8, kNoPeer),
                        call(it, 1, TraceOp::kBroadcast, kNoRedop, 4, 0),
                        call(it, 2, TraceOp::kAllgather, kNoRedop, 2, kNoPeer),
                        call(it, 3, TraceOp::kBarrier, kNoRedop, 0, kNoPeer),
                        call(it, 4, TraceOp::kSend, kNoRedop, 3, 3),
                        call(it, 5, TraceOp::kRecv, kNoRedop, 3, 1)};
    calls[3].dtype = TM_UINT8;
    calls[3].elem_size = 1;
    for (size_t i = 0; i < 6; ++i)
      EXPECT_TRUE(b.append(calls[i], std::as_bytes(std::span(out[i]))).ok());
  }
  return b.finish(iterations, Compression::kNone).value();
}

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tm_sandbox.XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    path_ = dir_ + "/trace";
    ASSERT_TRUE(write_file_atomic(path_, sample_trace(2), Replace::kYes).ok());
    ASSERT_EQ(tm_config_init(&config_), TM_SUCCESS);
    config_.slot = 2;
    config_.job_id = kJob;
  }
  void TearDown() override {
    tm_comm_destroy(comm_);
    std::filesystem::remove_all(dir_);
  }
  void open() {
    ASSERT_EQ(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_SUCCESS)
        << tm_get_last_error();
  }
  // Runs iteration `it` as recorded; returns the first failure's code.
  tm_result_t run_iteration(uint32_t it) {
    auto want = outputs(it);
    std::vector<float> in(8, 1.0f), out(8), bc(4), gathered(2 * kSlots), rx(3);
    tm_result_t r = tm_iteration_begin(comm_);
    if (r == TM_SUCCESS) r = tm_allreduce(in.data(), out.data(), 8, TM_FLOAT32, TM_SUM, comm_);
    if (r == TM_SUCCESS) r = tm_broadcast(nullptr, bc.data(), 4, TM_FLOAT32, 0, comm_);
    if (r == TM_SUCCESS) r = tm_allgather(in.data(), gathered.data(), 2, TM_FLOAT32, comm_);
    if (r == TM_SUCCESS) r = tm_barrier(comm_);
    if (r == TM_SUCCESS) r = tm_send(in.data(), 3, TM_FLOAT32, 3, comm_);
    if (r == TM_SUCCESS) r = tm_recv(rx.data(), 3, TM_FLOAT32, 1, comm_);
    if (r == TM_SUCCESS) r = tm_iteration_end(comm_);
    if (r != TM_SUCCESS) return r;
    EXPECT_EQ(out, want[0]);
    EXPECT_EQ(bc, want[1]);
    EXPECT_EQ(gathered, want[2]);
    EXPECT_EQ(rx, want[5]);
    return r;
  }
  void expect_error(tm_result_t r, tm_result_t code, const std::string& text) {
    EXPECT_EQ(r, code) << tm_get_last_error();
    EXPECT_NE(std::string(tm_get_last_error()).find(text), std::string::npos)
        << "'" << tm_get_last_error() << "' does not contain '" << text << "'";
  }

  std::string dir_, path_;
  tm_config_t config_ = TM_CONFIG_INITIALIZER;
  tm_comm_t comm_ = nullptr;
};

TEST_F(Sandbox, ReplaysRecordedOutputsBitForBit) {
  open();
  tm_comm_mode_t mode{};
  ASSERT_EQ(tm_comm_mode(comm_, &mode), TM_SUCCESS);
  EXPECT_EQ(mode, TM_MODE_SANDBOX);
  int slot = -1, nslots = -1;
  tm_comm_slot(comm_, &slot);
  tm_comm_nslots(comm_, &nslots);
  EXPECT_EQ(slot, 2);
  EXPECT_EQ(nslots, kSlots);
  EXPECT_EQ(tm_comm_set_role(comm_, TM_STAGE_MIDDLE, "tp=1"), TM_SUCCESS) << tm_get_last_error();
  ASSERT_EQ(run_iteration(0), TM_SUCCESS) << tm_get_last_error();
  ASSERT_EQ(run_iteration(1), TM_SUCCESS) << tm_get_last_error();
  expect_error(tm_iteration_begin(comm_), TM_ERROR_PROTOCOL,
               "past the end of the trace: it records 2 iterations, iteration 2 was asked for");
}

// tm_comm_abort on a sandbox, from another thread: every later call fails
// with TM_ERROR_ABORTED; aborting twice is harmless.
TEST_F(Sandbox, AbortFailsEveryLaterCall) {
  open();
  ASSERT_EQ(run_iteration(0), TM_SUCCESS) << tm_get_last_error();
  std::thread aborter([&] {
    EXPECT_EQ(tm_comm_abort(comm_), TM_SUCCESS);
    EXPECT_EQ(tm_comm_abort(comm_), TM_SUCCESS);
  });
  aborter.join();
  expect_error(tm_iteration_begin(comm_), TM_ERROR_ABORTED, "aborted");
  std::vector<float> buf(8);
  expect_error(tm_allreduce(buf.data(), buf.data(), 8, TM_FLOAT32, TM_SUM, comm_), TM_ERROR_ABORTED,
               "the sandbox was aborted");
  EXPECT_STREQ(tm_get_error_string(TM_ERROR_ABORTED), "aborted");
  expect_error(tm_comm_abort(nullptr), TM_ERROR_INVALID_ARGUMENT, "comm is NULL");
}

TEST_F(Sandbox, NamesIterationCallExpectedAndAsked) {
  open();
  ASSERT_EQ(run_iteration(0), TM_SUCCESS) << tm_get_last_error();
  ASSERT_EQ(tm_iteration_begin(comm_), TM_SUCCESS);
  std::vector<float> buf(8);
  ASSERT_EQ(tm_allreduce(buf.data(), buf.data(), 8, TM_FLOAT32, TM_SUM, comm_), TM_SUCCESS);
  expect_error(tm_allreduce(buf.data(), buf.data(), 4, TM_FLOAT32, TM_SUM, comm_),
               TM_ERROR_PROTOCOL,
               "sandbox: iteration 1, call 1: the trace expects broadcast of 4 float32, root 0, "
               "the program asked for allreduce(sum) of 4 float32");
  // The error sticks: even the right call fails now.
  expect_error(tm_broadcast(nullptr, buf.data(), 4, TM_FLOAT32, 0, comm_), TM_ERROR_PROTOCOL,
               "iteration 1, call 1");
}

TEST_F(Sandbox, RejectsEveryKindOfMismatch) {
  struct Case {
    const char* asked;
    std::function<tm_result_t(tm_comm_t, float*)> call;
  };
  const Case cases[] = {
      {"allreduce(max) of 8 float32",
       [](tm_comm_t c, float* b) { return tm_allreduce(b, b, 8, TM_FLOAT32, TM_MAX, c); }},
      {"allreduce(sum) of 9 float32",
       [](tm_comm_t c, float* b) { return tm_allreduce(b, b, 9, TM_FLOAT32, TM_SUM, c); }},
      {"allreduce(sum) of 4 float64",
       [](tm_comm_t c, float* b) { return tm_allreduce(b, b, 4, TM_FLOAT64, TM_SUM, c); }},
      {"barrier", [](tm_comm_t c, float*) { return tm_barrier(c); }},
      {"recv of 8 float32 from slot 1",
       [](tm_comm_t c, float* b) { return tm_recv(b, 8, TM_FLOAT32, 1, c); }},
  };
  for (const Case& k : cases) {
    open();
    std::vector<float> buf(16);
    ASSERT_EQ(tm_iteration_begin(comm_), TM_SUCCESS);
    expect_error(k.call(comm_, buf.data()), TM_ERROR_PROTOCOL,
                 std::string("iteration 0, call 0: the trace expects allreduce(sum) of 8 float32, "
                             "the program asked for ") +
                     k.asked);
    tm_comm_destroy(comm_);
    comm_ = nullptr;
  }
  open();  // a wrong root
  std::vector<float> buf(16);
  ASSERT_EQ(tm_iteration_begin(comm_), TM_SUCCESS);
  ASSERT_EQ(tm_allreduce(buf.data(), buf.data(), 8, TM_FLOAT32, TM_SUM, comm_), TM_SUCCESS);
  expect_error(tm_broadcast(buf.data(), buf.data(), 4, TM_FLOAT32, 2, comm_), TM_ERROR_PROTOCOL,
               "expects broadcast of 4 float32, root 0, the program asked for broadcast of 4 "
               "float32, root 2");
}

TEST_F(Sandbox, NamesMissingAndExtraCallsAndCallsOutsideIterations) {
  open();
  std::vector<float> buf(16);
  expect_error(tm_allreduce(buf.data(), buf.data(), 8, TM_FLOAT32, TM_SUM, comm_),
               TM_ERROR_PROTOCOL, "call outside an iteration");
  tm_comm_destroy(comm_);
  open();
  ASSERT_EQ(tm_iteration_begin(comm_), TM_SUCCESS);
  ASSERT_EQ(tm_allreduce(buf.data(), buf.data(), 8, TM_FLOAT32, TM_SUM, comm_), TM_SUCCESS);
  expect_error(tm_iteration_end(comm_), TM_ERROR_PROTOCOL,
               "iteration 0 ended after 1 calls, the trace recorded 6");
  tm_comm_destroy(comm_);
  open();
  ASSERT_EQ(run_iteration(0), TM_SUCCESS);
  ASSERT_EQ(tm_iteration_begin(comm_), TM_SUCCESS);
  tm_allreduce(buf.data(), buf.data(), 8, TM_FLOAT32, TM_SUM, comm_);
  tm_broadcast(nullptr, buf.data(), 4, TM_FLOAT32, 0, comm_);
  tm_allgather(buf.data(), buf.data(), 2, TM_FLOAT32, comm_);
  tm_barrier(comm_);
  tm_send(buf.data(), 3, TM_FLOAT32, 3, comm_);
  ASSERT_EQ(tm_recv(buf.data(), 3, TM_FLOAT32, 1, comm_), TM_SUCCESS);
  expect_error(tm_barrier(comm_), TM_ERROR_PROTOCOL,
               "iteration 1, call 6: past the end of the iteration, which recorded 6 calls");
}

TEST_F(Sandbox, RejectsBadTracesSayingWhich) {
  config_.job_id = kJob + 1;
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "wrong job: the trace was recorded by job 4242, not job 4243");
  config_.job_id = kJob;
  config_.role = "stage=last";
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "wrong role: the trace records role 'stage=middle,tp=1', not 'stage=last'");
  config_.role = nullptr;
  auto file = sample_trace(2);
  file.resize(file.size() / 2);
  ASSERT_TRUE(write_file_atomic(path_, file, Replace::kYes).ok());
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_PROTOCOL,
               "truncated");
  file = sample_trace(2);
  file[200] ^= std::byte{4};
  ASSERT_TRUE(write_file_atomic(path_, file, Replace::kYes).ok());
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_PROTOCOL,
               "corrupted");
  file = sample_trace(2);
  file[8] = std::byte{9};
  ASSERT_TRUE(write_file_atomic(path_, file, Replace::kYes).ok());
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_PROTOCOL,
               "wrong version");
  expect_error(tm_comm_init_sandbox(&comm_, &config_, (dir_ + "/none").c_str()), TM_ERROR_NOT_FOUND,
               "no such file");
  config_.slot = kSlots;
  ASSERT_TRUE(write_file_atomic(path_, sample_trace(2), Replace::kYes).ok());
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "not a slot of the recorded job of 4 slots");
  EXPECT_EQ(comm_, nullptr);
}

TEST_F(Sandbox, FindsTheTraceOfItsRoleInTheTraceDirectory) {
  TraceDirectory traces(dir_ + "/traces");
  ASSERT_TRUE(traces.store(sample_trace(2)).ok());
  ASSERT_TRUE(traces.store(sample_trace(1, "stage=first")).ok());
  std::string tdir = traces.dir();
  config_.trace_dir = tdir.c_str();
  expect_error(tm_comm_init_sandbox(&comm_, &config_, nullptr), TM_ERROR_NOT_FOUND,
               "stage=none.tmtrace");
  config_.role = "tp=1,stage=middle";
  ASSERT_EQ(tm_comm_init_sandbox(&comm_, &config_, nullptr), TM_SUCCESS) << tm_get_last_error();
  ASSERT_EQ(run_iteration(0), TM_SUCCESS) << tm_get_last_error();
  tm_comm_destroy(comm_);
  config_.role = "stage=first";  // the same standby replays another role
  ASSERT_EQ(tm_comm_init_sandbox(&comm_, &config_, nullptr), TM_SUCCESS) << tm_get_last_error();
  ASSERT_EQ(run_iteration(0), TM_SUCCESS) << tm_get_last_error();
}

TEST_F(Sandbox, ChecksTheDeclaredRoleAndMisuse) {
  open();
  expect_error(tm_comm_set_role(comm_, TM_STAGE_LAST, "tp=1"), TM_ERROR_INVALID_ARGUMENT,
               "wrong role: the sandbox replays role 'stage=middle,tp=1', the program declared "
               "'stage=last,tp=1'");
  expect_error(tm_comm_set_role(comm_, TM_STAGE_MIDDLE, "stage=first"), TM_ERROR_INVALID_ARGUMENT,
               "separate stage argument");
  expect_error(tm_comm_set_role(comm_, static_cast<tm_stage_t>(7), nullptr),
               TM_ERROR_INVALID_ARGUMENT, "invalid pipeline stage 7");
  expect_error(tm_iteration_end(comm_), TM_ERROR_INVALID_ARGUMENT, "without tm_iteration_begin");
  ASSERT_EQ(tm_iteration_begin(comm_), TM_SUCCESS);
  expect_error(tm_iteration_begin(comm_), TM_ERROR_INVALID_ARGUMENT, "has not ended");
  expect_error(tm_comm_set_role(comm_, TM_STAGE_MIDDLE, "tp=1"), TM_ERROR_INVALID_ARGUMENT,
               "before the first tm_iteration_begin");
  expect_error(tm_comm_go_live(comm_, &config_), TM_ERROR_INVALID_ARGUMENT,
               "iteration 0 has not ended");
}

TEST_F(Sandbox, ConfigChecksRecordFields) {
  config_.record_iterations = -1;
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "TRAINMOVER_RECORD_ITERATIONS");
  config_.record_iterations = 2;
  config_.role = "stage=sideways";
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "TRAINMOVER_ROLE");
  config_.role = nullptr;
  config_.trace_compress = 2;
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "TRAINMOVER_TRACE_COMPRESS");
  config_.trace_compress = 0;
  config_.record_reserve_bytes = SIZE_MAX / 2;
  expect_error(tm_comm_init_sandbox(&comm_, &config_, path_.c_str()), TM_ERROR_INVALID_ARGUMENT,
               "TRAINMOVER_RECORD_RESERVE");
  config_.record_reserve_bytes = size_t{32} << 20;
  expect_error(tm_comm_init_sandbox(&comm_, &config_, nullptr), TM_ERROR_INVALID_ARGUMENT,
               "TRAINMOVER_TRACE_DIR");
}

}  // namespace
}  // namespace trainmover::record
