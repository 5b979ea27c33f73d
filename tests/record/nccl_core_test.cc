// The NCCL interposer's trace logic, without CUDA: descriptors, the record
// window, groups, the recorder and its writer, replay cursors, the past-end
// wait, settings, and the man page listing every variable.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "record/nccl/call.h"
#include "record/nccl/completion_writer.h"
#include "record/nccl/entries.h"
#include "record/nccl/group_queue.h"
#include "record/nccl/host_pool.h"
#include "record/nccl/past_end.h"
#include "record/nccl/recorder.h"
#include "record/nccl/replay_book.h"
#include "record/nccl/settings.h"
#include "record/nccl/window.h"

namespace trainmover::nccl {
namespace {

CallDesc call_of(CallKind kind, int32_t dtype, uint64_t count, int32_t op = 0, int32_t peer = 0) {
  auto c = make_call(kind, dtype, op, peer, count);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(NcclCall, ElementSizesFollowNccl) {
  EXPECT_EQ(element_size(static_cast<int32_t>(DataType::kFloat32)).value(), 4u);
  EXPECT_EQ(element_size(static_cast<int32_t>(DataType::kBfloat16)).value(), 2u);
  EXPECT_EQ(element_size(static_cast<int32_t>(DataType::kUint64)).value(), 8u);
  EXPECT_EQ(element_size(static_cast<int32_t>(DataType::kFloat8e5m2)).value(), 1u);
  EXPECT_FALSE(element_size(12).ok());
  EXPECT_FALSE(element_size(-1).ok());
}

TEST(NcclCall, MakeCallChecksCodes) {
  EXPECT_FALSE(make_call(CallKind::kAllReduce, 99, 0, -1, 4).ok());
  EXPECT_FALSE(make_call(CallKind::kAllReduce, 7, -1, -1, 4).ok());
  EXPECT_FALSE(make_call(CallKind::kSend, 7, -1, -1, 4).ok());
  auto c = make_call(CallKind::kAllGather, 7, 3, 5, 4);  // op and peer are not used
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->op, -1);
  EXPECT_EQ(c->peer, -1);
}

TEST(NcclCall, OutputBytesPerKind) {
  const int32_t f32 = 7;
  EXPECT_EQ(output_bytes(call_of(CallKind::kAllReduce, f32, 10), 0, 4), 40u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kAllGather, f32, 10), 0, 4), 160u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kReduceScatter, f32, 10), 0, 4), 40u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kBroadcast, f32, 10, 0, 2), 1, 4), 40u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kSend, f32, 10, 0, 1), 0, 4), 0u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kRecv, f32, 10, 0, 1), 0, 4), 40u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kReduce, f32, 10, 0, 1), 1, 4), 40u);
  EXPECT_EQ(output_bytes(call_of(CallKind::kReduce, f32, 10, 0, 1), 0, 4), 0u);
}

TEST(NcclCall, DescribeNamesTheCall) {
  EXPECT_EQ(describe(call_of(CallKind::kAllReduce, 7, 1024, 0)),
            "ncclAllReduce(count=1024, float32, op=sum)");
  EXPECT_EQ(describe(call_of(CallKind::kRecv, 9, 8, 0, 3)), "ncclRecv(count=8, bfloat16, peer=3)");
  EXPECT_EQ(describe(call_of(CallKind::kBroadcast, 0, 8, 0, 2)),
            "ncclBroadcast(count=8, int8, root=2)");
}

TEST(NcclEntries, CommRoundTrip) {
  CommEntry comm{2, CommOrigin::kSplit, 4, 1, 0, 7, 3};
  std::vector<std::byte> buf;
  encode(comm, buf);
  auto back = decode_comm(buf);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, comm);
}

TEST(NcclEntries, RejectsTruncatedAndInconsistentComms) {
  CommEntry good{1, CommOrigin::kInit, 2, 1, -1, 0, 0};
  std::vector<std::byte> buf;
  encode(good, buf);
  for (size_t n = 0; n < buf.size(); ++n) EXPECT_FALSE(decode_comm(std::span(buf).first(n)).ok());
  auto bad_origin = buf;
  bad_origin[4] = std::byte{9};
  EXPECT_NE(decode_comm(bad_origin).status().message().find("origin"), std::string::npos);
  CommEntry comm{1, CommOrigin::kInit, 2, 5, -1, 0, 0};  // rank 5 of 2
  buf.clear();
  encode(comm, buf);
  EXPECT_FALSE(decode_comm(buf).ok());
  CommEntry split{0, CommOrigin::kSplit, 1, 0, 0, 0, 0};  // its own parent
  buf.clear();
  encode(split, buf);
  EXPECT_FALSE(decode_comm(buf).ok());
}

TEST(NcclCall, KindsAreNcclFuncCodes) {
  EXPECT_EQ(static_cast<int>(CallKind::kBroadcast), 0);
  EXPECT_EQ(static_cast<int>(CallKind::kAllReduce), 4);
  EXPECT_EQ(static_cast<int>(CallKind::kRecv), 7);
  EXPECT_TRUE(valid_kind(6));
  EXPECT_FALSE(valid_kind(5));  // ncclFuncSendRecv is never a call
  EXPECT_FALSE(valid_kind(8));
}

TEST(NcclWindow, FirstCallsPerCommunicator) {
  RecordWindow w(2);
  EXPECT_TRUE(w.admit(0, 0));
  EXPECT_TRUE(w.admit(1, 0));
  EXPECT_FALSE(w.closed(0));
  EXPECT_TRUE(w.admit(0, 0));
  EXPECT_TRUE(w.closed(0));
  EXPECT_FALSE(w.admit(0, 0));
  EXPECT_TRUE(w.admit(1, 0));
  EXPECT_FALSE(w.admit(1, 0));
}

TEST(NcclWindow, AGroupStartedInsideIsRecordedWhole) {
  RecordWindow w(2);
  EXPECT_TRUE(w.admit(0, 0));
  EXPECT_TRUE(w.admit(0, 5));  // the group starts inside the window
  EXPECT_TRUE(w.admit(0, 5));  // past the limit, same group
  EXPECT_TRUE(w.admit(0, 5));
  EXPECT_FALSE(w.admit(0, 6));  // next group: outside
  EXPECT_FALSE(w.admit(0, 0));
}

TEST(NcclGroupQueue, HoldsUntilOutermostEnd) {
  GroupQueue<int> g;
  EXPECT_EQ(g.group_id(), 0u);
  EXPECT_FALSE(g.end().ok());
  g.start();
  uint64_t first = g.group_id();
  EXPECT_NE(first, 0u);
  g.defer(1);
  g.start();
  g.defer(2);
  EXPECT_EQ(g.group_id(), first);
  auto inner = g.end();
  ASSERT_TRUE(inner.ok());
  EXPECT_TRUE(inner->empty());
  auto outer = g.end();
  ASSERT_TRUE(outer.ok());
  EXPECT_EQ(*outer, (std::vector<int>{1, 2}));
  g.start();
  EXPECT_NE(g.group_id(), first);
}

// Feeds what a recorder writes straight into a TraceBuilder.
class BuilderSink : public TraceSink {
 public:
  explicit BuilderSink(TraceBuilder& b, bool& finished) : b_(b), finished_(finished) {}
  Status put_comm(const CommEntry& comm) override { return b_.add_comm(comm); }
  Status put_call(const CallEntry& call, std::span<const std::byte> output) override {
    return b_.add_call(call, output);
  }
  Status finish() override {
    finished_ = true;
    return Status::Ok();
  }

 private:
  TraceBuilder& b_;
  bool& finished_;
};

TEST(NcclRecorder, NumbersCallsAndAppliesTheWindow) {
  TraceBuilder builder;
  bool finished = false;
  Recorder rec(2, std::make_unique<BuilderSink>(builder, finished));
  auto c0 = rec.add_comm(CommEntry{0, CommOrigin::kInit, 1, 0, -1, 0, 0});
  ASSERT_TRUE(c0.ok());
  EXPECT_EQ(*c0, 0u);
  auto call = call_of(CallKind::kAllReduce, 7, 1);
  auto e0 = rec.admit(0, call, 0);
  ASSERT_TRUE(e0.has_value());
  EXPECT_EQ(e0->seq, 0u);
  EXPECT_EQ(e0->output_bytes, 4u);
  EXPECT_FALSE(rec.windows_closed());
  auto e1 = rec.admit(0, call, 0);
  ASSERT_TRUE(e1.has_value());
  EXPECT_EQ(e1->seq, 1u);
  EXPECT_TRUE(rec.windows_closed());
  EXPECT_FALSE(rec.admit(0, call, 0).has_value());
  EXPECT_FALSE(rec.admit(7, call, 0).has_value());  // unknown communicator

  // The copies land out of order; the trace is still complete.
  EXPECT_TRUE(rec.put_call(*e1, bytes_of({5, 6, 7, 8})).ok());
  EXPECT_FALSE(rec.put_call(*e0, bytes_of({1, 2})).ok());  // wrong size is an error
  EXPECT_FALSE(rec.status().ok());
  EXPECT_FALSE(rec.finish().ok());  // never finished after an error
  EXPECT_FALSE(finished);
}

TEST(NcclRecorder, RecordedTraceReplaysTheSameBytes) {
  TraceBuilder builder;
  bool finished = false;
  Recorder rec(3, std::make_unique<BuilderSink>(builder, finished));
  ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kInit, 2, 1, -1, 0, 0}).ok());
  ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kSplit, 1, 0, 0, 4, 1}).ok());
  auto gather = call_of(CallKind::kAllGather, 0, 2);  // 2 ranks x 2 int8
  auto send = call_of(CallKind::kSend, 0, 2, 0, 0);
  auto reduce = call_of(CallKind::kAllReduce, 0, 1, 2);
  {
    CompletionWriter writer(rec);
    auto a = rec.admit(0, gather, 0);
    auto b = rec.admit(0, send, 0);
    auto c = rec.admit(1, reduce, 0);
    ASSERT_TRUE(a && b && c);
    std::vector<std::byte> out_a = bytes_of({1, 2, 3, 4}), out_c = bytes_of({9});
    std::atomic<int> released{0};
    for (int i = 0; i < 3; ++i) writer.expect();
    writer.complete(*c, out_c, nullptr, [&] { ++released; });
    writer.complete(*b, {}, nullptr, [&] { ++released; });
    writer.complete(*a, out_a, nullptr, [&] { ++released; });
    writer.finish_when_idle();
    ASSERT_TRUE(writer.drain(Deadline::after(seconds(30))));
    EXPECT_EQ(released.load(), 3);
  }
  EXPECT_TRUE(rec.status().ok()) << rec.status().message();
  EXPECT_TRUE(finished);

  auto book = builder.build();
  ASSERT_TRUE(book.ok()) << book.status().message();
  ASSERT_TRUE(book->open_init(2, 1).ok());
  ASSERT_TRUE(book->open_split(0, 4, 1).ok());
  auto ans = book->next(0, gather);
  ASSERT_TRUE(ans.ok() && ans->has_value());
  EXPECT_EQ(std::vector<std::byte>((*ans)->output.begin(), (*ans)->output.end()),
            bytes_of({1, 2, 3, 4}));
  auto ans_send = book->next(0, send);
  ASSERT_TRUE(ans_send.ok() && ans_send->has_value());
  EXPECT_TRUE((*ans_send)->output.empty());
  auto ans_c = book->next(1, reduce);
  ASSERT_TRUE(ans_c.ok() && ans_c->has_value());
  EXPECT_EQ((*ans_c)->output[0], std::byte{9});
  auto past = book->next(1, reduce);
  ASSERT_TRUE(past.ok());
  EXPECT_FALSE(past->has_value());  // exhausted
}

// The writer reads a call's bytes only once its `landed` check says the
// copy reached them (in the interposer, a CUDA event behind the copy).
TEST(NcclCompletionWriter, WritesOnlyWhatHasLanded) {
  TraceBuilder builder;
  bool finished = false;
  Recorder rec(1, std::make_unique<BuilderSink>(builder, finished));
  ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kInit, 1, 0, -1, 0, 0}).ok());
  auto reduce = call_of(CallKind::kAllReduce, 0, 2);
  auto entry = rec.admit(0, reduce, 0);
  ASSERT_TRUE(entry);
  std::vector<std::byte> staged = bytes_of({0, 0});  // the copy has not run yet
  std::atomic<bool> landed{false};
  std::atomic<int> polls{0}, released{0};
  {
    CompletionWriter writer(rec);
    writer.expect();
    writer.complete(
        *entry, staged,
        [&]() -> Result<bool> {
          ++polls;
          return landed.load();
        },
        [&] { ++released; });
    writer.finish_when_idle();
    EXPECT_FALSE(writer.drain(Deadline::after(std::chrono::milliseconds(50))));
    EXPECT_GT(polls.load(), 1);  // asked again, not once and given up
    EXPECT_EQ(released.load(), 0);
    staged[0] = std::byte{7};  // the copy lands (in place: the span points here)
    staged[1] = std::byte{8};
    landed = true;
    ASSERT_TRUE(writer.drain(Deadline::after(seconds(30))));
    EXPECT_EQ(released.load(), 1);
  }
  EXPECT_TRUE(finished);
  auto book = builder.build();
  ASSERT_TRUE(book.ok()) << book.status().message();
  ASSERT_TRUE(book->open_init(1, 0).ok());
  auto ans = book->next(0, reduce);
  ASSERT_TRUE(ans.ok() && ans->has_value());
  EXPECT_EQ(std::vector<std::byte>((*ans)->output.begin(), (*ans)->output.end()), bytes_of({7, 8}));
}

TEST(NcclCompletionWriter, ACopyThatFailsOrNeverLandsLeavesTheTraceUnfinished) {
  for (bool fails : {true, false}) {
    TraceBuilder builder;
    bool finished = false;
    Recorder rec(2, std::make_unique<BuilderSink>(builder, finished));
    ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kInit, 1, 0, -1, 0, 0}).ok());
    auto entry = rec.admit(0, call_of(CallKind::kAllReduce, 0, 1), 0);
    ASSERT_TRUE(entry);
    std::vector<std::byte> staged = bytes_of({1});
    std::atomic<int> released{0};
    {
      CompletionWriter writer(rec);
      writer.expect();
      writer.complete(
          *entry, staged,
          [fails]() -> Result<bool> {
            if (fails) return error(TM_ERROR_SYSTEM, "cudaEventQuery: illegal address");
            return false;  // a stream that never gets there
          },
          [&] { ++released; });
      writer.finish_when_idle();
      if (fails) {
        EXPECT_TRUE(writer.drain(Deadline::after(seconds(30))));
      }
    }  // for the copy that never lands: the destructor returns all the same
    EXPECT_FALSE(rec.status().ok());
    EXPECT_NE(rec.status().message().find(fails ? "illegal address" : "at exit"), std::string::npos)
        << rec.status().message();
    EXPECT_FALSE(finished);
    EXPECT_EQ(released.load(), 0);  // the copy may still write it
  }
}

TEST(NcclReplayBook, MismatchesNameBothCalls) {
  TraceBuilder b;
  ASSERT_TRUE(b.add_comm(CommEntry{0, CommOrigin::kInit, 1, 0, -1, 0, 0}).ok());
  auto rec = call_of(CallKind::kAllReduce, 7, 4, 0);
  ASSERT_TRUE(b.add_call(CallEntry{0, 0, rec, 16}, std::vector<std::byte>(16)).ok());
  auto book = b.build();
  ASSERT_TRUE(book.ok());
  auto bad_init = book->open_init(2, 0);
  ASSERT_FALSE(bad_init.ok());
  EXPECT_NE(bad_init.status().message().find("rank 0 of 1"), std::string::npos);
  EXPECT_FALSE(book->open_split(0, 0, 0).ok());
  ASSERT_TRUE(book->open_init(1, 0).ok());
  EXPECT_EQ(book->open_init(1, 0).status().code(), TM_ERROR_NOT_FOUND);  // only one recorded
  auto other = book->next(0, call_of(CallKind::kAllReduce, 7, 8, 0));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("count=8"), std::string::npos);
  EXPECT_NE(other.status().message().find("count=4"), std::string::npos);
  EXPECT_FALSE(book->next(3, rec).ok());
  EXPECT_TRUE(book->next(0, rec).ok());  // a mismatch does not advance
}

TEST(NcclReplayBook, RejectsInconsistentTraces) {
  auto call = call_of(CallKind::kAllReduce, 7, 1, 0);
  CommEntry comm{0, CommOrigin::kInit, 1, 0, -1, 0, 0};
  {
    TraceBuilder b;  // call 1 without call 0
    ASSERT_TRUE(b.add_comm(comm).ok());
    ASSERT_TRUE(b.add_call(CallEntry{0, 1, call, 4}, std::vector<std::byte>(4)).ok());
    auto r = b.build();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("missing"), std::string::npos);
  }
  {
    TraceBuilder b;  // communicator 1 without 0
    CommEntry second = comm;
    second.ordinal = 1;
    ASSERT_TRUE(b.add_comm(second).ok());
    EXPECT_FALSE(b.build().ok());
  }
  {
    TraceBuilder b;  // output size disagrees with the call
    ASSERT_TRUE(b.add_comm(comm).ok());
    ASSERT_TRUE(b.add_call(CallEntry{0, 0, call, 8}, std::vector<std::byte>(8)).ok());
    EXPECT_FALSE(b.build().ok());
  }
  {
    TraceBuilder b;
    ASSERT_TRUE(b.add_comm(comm).ok());
    EXPECT_FALSE(b.add_comm(comm).ok());  // twice
    EXPECT_FALSE(b.add_call(CallEntry{0, 0, call, 4}, std::vector<std::byte>(3)).ok());
  }
}

TEST(NcclPastEnd, WaitTimesOutWithAReason) {
  PastEndGate gate;
  Status s = gate.wait("trace exhausted", seconds(0.01));
  EXPECT_EQ(s.code(), TM_ERROR_TIMEOUT);
  EXPECT_NE(s.message().find("no switch to the live job"), std::string::npos);
  CommEntry comm{0, CommOrigin::kInit, 1, 0, -1, 0, 0};
  std::string msg = past_end_message(comm, 12, call_of(CallKind::kAllReduce, 7, 4, 0), 5);
  EXPECT_NE(msg.find("trace exhausted"), std::string::npos);
  EXPECT_NE(msg.find("12 recorded calls"), std::string::npos);
  EXPECT_NE(msg.find("TRAINMOVER_NCCL_REPLAY_WAIT"), std::string::npos);
}

TEST(NcclPastEnd, ReleaseEndsTheWait) {
  PastEndGate gate;
  std::thread releaser([&] { gate.release(); });
  Status s = gate.wait("trace exhausted", seconds(600));
  releaser.join();
  EXPECT_EQ(s.code(), TM_ERROR_PEER_FAILED);
}

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(NcclSettings, OffByDefault) {
  auto s = settings_from_env(env_of({}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->mode, Mode::kOff);
}

TEST(NcclSettings, ReadsEverything) {
  auto s = settings_from_env(env_of({{"TRAINMOVER_NCCL_MODE", "replay"},
                                     {"TRAINMOVER_NCCL_TRACE_DIR", "/tmp/t"},
                                     {"RANK", "3"},
                                     {"TRAINMOVER_NCCL_JOB", "42"},
                                     {"TRAINMOVER_NCCL_RECORD_CALLS", "50"},
                                     {"TRAINMOVER_NCCL_REPLAY_WAIT", "250ms"}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->mode, Mode::kReplay);
  EXPECT_EQ(s->role.canonical(), "stage=none,rank=3");
  EXPECT_EQ(s->job_id, 42u);
  EXPECT_EQ(s->record_calls, 50u);
  EXPECT_DOUBLE_EQ(s->replay_wait_s, 0.25);
  EXPECT_EQ(trace_path(*s), "/tmp/t/stage=none,rank=3.tmtrace");
}

TEST(NcclSettings, ErrorsNameTheVariable) {
  auto bad = [](std::map<std::string, std::string> vars, const char* expect) {
    auto s = settings_from_env(env_of(std::move(vars)));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find(expect), std::string::npos) << s.status().message();
  };
  bad({{"TRAINMOVER_NCCL_MODE", "fast"}}, "TRAINMOVER_NCCL_MODE");
  bad({{"TRAINMOVER_NCCL_MODE", "record"}}, "TRAINMOVER_NCCL_TRACE_DIR");
  bad({{"TRAINMOVER_NCCL_MODE", "record"}, {"TRAINMOVER_NCCL_TRACE_DIR", "/t"}},
      "TRAINMOVER_NCCL_ROLE");
  bad({{"TRAINMOVER_NCCL_MODE", "record"},
       {"TRAINMOVER_NCCL_TRACE_DIR", "/t"},
       {"TRAINMOVER_NCCL_ROLE", "../x=1"}},
      "TRAINMOVER_NCCL_ROLE");
  bad({{"TRAINMOVER_NCCL_MODE", "record"},
       {"TRAINMOVER_NCCL_TRACE_DIR", "/t"},
       {"TRAINMOVER_NCCL_ROLE", "stage=first,tp=0"},
       {"TRAINMOVER_NCCL_RECORD_CALLS", "0"}},
      "TRAINMOVER_NCCL_RECORD_CALLS");
  bad({{"TRAINMOVER_NCCL_MODE", "record"},
       {"TRAINMOVER_NCCL_TRACE_DIR", "/t"},
       {"RANK", "0"},
       {"TRAINMOVER_NCCL_JOB", "job-a"}},
      "TRAINMOVER_NCCL_JOB");
  bad({{"TRAINMOVER_NCCL_MODE", "record"},
       {"TRAINMOVER_NCCL_TRACE_DIR", "/t"},
       {"RANK", "0"},
       {"TRAINMOVER_NCCL_REPLAY_WAIT", "1e9"}},
      "TRAINMOVER_NCCL_REPLAY_WAIT");
  bad({{"TRAINMOVER_NCCL_MODE", "record"},
       {"TRAINMOVER_NCCL_TRACE_DIR", "/t"},
       {"RANK", "0"},
       {"TRAINMOVER_NCCL_RECORD_CALLS", "0"}},
      "TRAINMOVER_NCCL_RECORD_CALLS");
}

TEST(NcclHostPool, ReusesFreedBuffers) {
  int allocations = 0;
  HostPool pool(
      [&](size_t n) -> Result<void*> {
        ++allocations;
        return std::malloc(n);
      },
      [](void* p) { std::free(p); });
  auto a = pool.acquire(100);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->size(), 100u);
  pool.release(*a);
  auto b = pool.acquire(60);  // fits in the freed one
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data(), a->data());
  EXPECT_EQ(b->size(), 60u);
  auto c = pool.acquire(100);  // the only buffer is taken
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(allocations, 2);
  EXPECT_EQ(pool.bytes_held(), 200u);
  pool.release(*b);
  pool.release(*c);
}

TEST(NcclDocs, EveryVariableIsInTheManPage) {
  std::ifstream in(std::string(TM_SRCDIR) + "/man/libtrainmover-nccl.7");
  std::stringstream page;
  page << in.rdbuf();
  ASSERT_FALSE(page.str().empty()) << "cannot read man/libtrainmover-nccl.7";
  for (const auto& [name, meaning] : nccl_environment_variables())
    EXPECT_NE(page.str().find(std::string(".B ") + name), std::string::npos)
        << name << " is not documented in libtrainmover-nccl(7)";
}

}  // namespace
}  // namespace trainmover::nccl
