// Unit tests of lib/record: roles, the trace format (round trip, every kind
// of bad input), the replay cursor and the per-role trace directory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "record/compress.h"
#include "record/file_io.h"
#include "record/file_lock.h"
#include "record/role.h"
#include "record/trace.h"
#include "record/trace_builder.h"
#include "record/trace_dir.h"

namespace trainmover::record {
namespace {

using Bytes = std::vector<std::byte>;

::testing::AssertionResult FailsWith(const Status& status, tm_result_t code,
                                     const std::string& text) {
  if (status.ok()) return ::testing::AssertionFailure() << "succeeded; expected '" << text << "'";
  if (status.code() != code) {
    return ::testing::AssertionFailure() << "code " << status.code() << ": " << status.message();
  }
  if (status.message().find(text) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "message '" << status.message() << "' does not name '" << text << "'";
  }
  return ::testing::AssertionSuccess();
}

Bytes pattern(size_t n, int seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 31 + seed * 7) & 0xFF);
  return b;
}

TraceMeta meta(const char* role = "stage=first,tp=1") {
  TraceMeta m;
  m.job_id = 77;
  m.role = Role::parse(role).value();
  m.slot = 2;
  m.nslots = 4;
  return m;
}

// Two iterations: allreduce + broadcast + recv, then allreduce + barrier.
TraceBuilder sample_builder(int seed = 0) {
  TraceBuilder b(meta());
  auto call = [](uint32_t it, uint32_t idx, TraceOp op, uint64_t count, int32_t peer) {
    CallInfo c;
    c.iteration = it;
    c.index = idx;
    c.op = static_cast<uint16_t>(op);
    c.redop = op == TraceOp::kAllreduce ? 0 : kNoRedop;
    c.dtype = 0;
    c.elem_size = 4;
    c.count = count;
    c.peer = peer;
    return c;
  };
  EXPECT_TRUE(b.append(call(0, 0, TraceOp::kAllreduce, 256, kNoPeer), pattern(1024, seed)).ok());
  EXPECT_TRUE(b.append(call(0, 1, TraceOp::kBroadcast, 16, 0), pattern(64, seed + 1)).ok());
  EXPECT_TRUE(b.append(call(0, 2, TraceOp::kRecv, 8, 3), pattern(32, seed + 2)).ok());
  EXPECT_TRUE(
      b.append(call(1, 0, TraceOp::kAllreduce, 256, kNoPeer), pattern(1024, seed + 3)).ok());
  EXPECT_TRUE(b.append(call(1, 1, TraceOp::kBarrier, 0, kNoPeer), {}).ok());
  return b;
}

Bytes sample_file(Compression compression = Compression::kNone, int seed = 0) {
  return sample_builder(seed).finish(2, compression).value();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tm_trace_test.XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Role, CanonicalFormSortsAttributes) {
  auto role = Role::parse("tp=3,stage=middle,dp=0");
  ASSERT_TRUE(role.ok()) << role.status().message();
  EXPECT_EQ(role->canonical(), "stage=middle,dp=0,tp=3");
  EXPECT_EQ(role->file_name(), "stage=middle,dp=0,tp=3.tmtrace");
  EXPECT_EQ(Role::parse(role->canonical()).value(), role.value());
  EXPECT_EQ(Role::parse("").value().canonical(), "stage=none");
}

TEST(Role, RejectsBadText) {
  EXPECT_TRUE(FailsWith(Role::parse("stage=second").status(), TM_ERROR_INVALID_ARGUMENT, "second"));
  EXPECT_TRUE(FailsWith(Role::parse("tp").status(), TM_ERROR_INVALID_ARGUMENT, "key=value"));
  EXPECT_TRUE(FailsWith(Role::parse("tp=1,tp=2").status(), TM_ERROR_INVALID_ARGUMENT, "twice"));
  EXPECT_TRUE(FailsWith(Role::parse("a/b=1").status(), TM_ERROR_INVALID_ARGUMENT, "a/b"));
  EXPECT_TRUE(FailsWith(Role::parse("x=../..").status(), TM_ERROR_INVALID_ARGUMENT, "../.."));
  Role r;
  EXPECT_TRUE(FailsWith(r.set_attribute("stage", "first"), TM_ERROR_INVALID_ARGUMENT, "reserved"));
  std::string long_value(64, 'v');
  for (char k = 'a'; k < 'c'; ++k) ASSERT_TRUE(r.set_attribute(std::string(1, k), long_value).ok());
  EXPECT_TRUE(FailsWith(r.set_attribute("e", long_value), TM_ERROR_INVALID_ARGUMENT, "longer"));
}

TEST(Trace, RoundTripKeepsEveryField) {
  for (Compression c : {Compression::kNone, Compression::kZstd}) {
    if (c == Compression::kZstd && !zstd_available()) continue;
    auto trace = Trace::parse(sample_file(c));
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    EXPECT_EQ(trace->meta(), meta());
    EXPECT_EQ(trace->compressed(), c == Compression::kZstd);
    EXPECT_EQ(trace->iterations(), 2u);
    ASSERT_EQ(trace->calls().size(), 5u);
    ASSERT_EQ(trace->iteration(0).size(), 3u);
    ASSERT_EQ(trace->iteration(1).size(), 2u);
    const CallView& recv = trace->iteration(0)[2];
    EXPECT_EQ(recv.info.op, static_cast<uint16_t>(TraceOp::kRecv));
    EXPECT_EQ(recv.info.peer, 3);
    EXPECT_EQ(recv.info.count, 8u);
    Bytes expect = pattern(32, 2);
    EXPECT_TRUE(std::equal(recv.output.begin(), recv.output.end(), expect.begin(), expect.end()));
    EXPECT_TRUE(trace->iteration(1)[1].output.empty());
  }
}

TEST(Trace, CompressionShrinksRepetitiveOutputs) {
  if (!zstd_available()) GTEST_SKIP() << "built without zstd";
  TraceBuilder b(meta());
  CallInfo c;
  c.op = static_cast<uint16_t>(TraceOp::kAllreduce);
  c.elem_size = 4;
  c.count = 1 << 16;
  ASSERT_TRUE(b.append(c, Bytes(size_t{1} << 18)).ok());
  auto plain = b.finish(1, Compression::kNone).value();
  auto packed = b.finish(1, Compression::kZstd).value();
  EXPECT_LT(packed.size() * 100, plain.size());
  EXPECT_TRUE(Trace::parse(packed).ok());
}

TEST(Trace, BuilderRejectsOutOfOrderCalls) {
  TraceBuilder b(meta());
  CallInfo c;
  c.iteration = 1;
  EXPECT_TRUE(b.append(c, {}).ok());
  c.index = 2;
  EXPECT_TRUE(FailsWith(b.append(c, {}), TM_ERROR_INVALID_ARGUMENT, "next index is 1"));
  c.iteration = 0;
  c.index = 0;
  EXPECT_TRUE(FailsWith(b.append(c, {}), TM_ERROR_INVALID_ARGUMENT, "after a call of iteration 1"));
  EXPECT_TRUE(FailsWith(b.finish(1, Compression::kNone).status(), TM_ERROR_INVALID_ARGUMENT,
                        "iteration 1"));
}

TEST(Trace, RejectsEveryTruncation) {
  Bytes file = sample_file();
  for (size_t n = 0; n < file.size(); ++n) {
    Bytes cut(file.begin(), file.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_TRUE(FailsWith(Trace::parse(cut).status(), TM_ERROR_PROTOCOL, "truncated"))
        << "at " << n << " bytes";
  }
}

TEST(Trace, RejectsEveryFlippedByte) {
  for (Compression c : {Compression::kNone, Compression::kZstd}) {
    if (c == Compression::kZstd && !zstd_available()) continue;
    Bytes file = sample_file(c);
    for (size_t i = 0; i < file.size(); ++i) {
      Bytes bad = file;
      bad[i] ^= std::byte{0x40};
      auto t = Trace::parse(bad);
      ASSERT_FALSE(t.ok()) << "flipped byte " << i;
      EXPECT_EQ(t.status().code(), TM_ERROR_PROTOCOL) << t.status().message();
      // Bytes 8-9 are the version, 0-7 the magic; every other flip is corruption.
      const std::string& m = t.status().message();
      const char* kind = i < 8 ? "not a trace" : i < 10 ? "wrong version" : nullptr;
      if (kind != nullptr) {
        EXPECT_NE(m.find(kind), std::string::npos) << i << ": " << m;
      } else {
        EXPECT_TRUE(m.find("corrupted") != std::string::npos ||
                    m.find("truncated") != std::string::npos)
            << i << ": " << m;
      }
    }
  }
}

TEST(Trace, NamesAWrongVersion) {
  Bytes file = sample_file();
  file[8] = std::byte{2};
  EXPECT_TRUE(
      FailsWith(Trace::parse(file).status(), TM_ERROR_PROTOCOL,
                "wrong version: the trace has format version 2, this build reads version 1"));
}

TEST(Trace, RejectsACorruptedRecordEvenWithAValidFileChecksum) {
  Bytes file = sample_file();
  auto t = Trace::parse(file).value();
  size_t body_at = file.size() - kTrailerBytes - t.header().stored_body_bytes;
  file[body_at + kRecordFixedBytes - 4 + 100] ^= std::byte{1};  // inside call 0's output
  uint32_t crc = crc32c(std::span<const std::byte>(file).first(file.size() - 4));
  for (int i = 0; i < 4; ++i) file[file.size() - 4 + i] = static_cast<std::byte>(crc >> (8 * i));
  EXPECT_TRUE(FailsWith(Trace::parse(file).status(), TM_ERROR_PROTOCOL,
                        "corrupted: checksum mismatch in call 0 of iteration 0"));
}

TEST(Trace, RejectsTrailingBytesAndOtherFiles) {
  Bytes file = sample_file();
  file.push_back(std::byte{0});
  EXPECT_TRUE(FailsWith(Trace::parse(file).status(), TM_ERROR_PROTOCOL, "after the trailer"));
  std::string text = "hello, not a trace at all";
  Bytes other(reinterpret_cast<const std::byte*>(text.data()),
              reinterpret_cast<const std::byte*>(text.data()) + text.size());
  EXPECT_TRUE(FailsWith(Trace::parse(other).status(), TM_ERROR_PROTOCOL, "not a trace"));
}

TEST(Trace, NamesAWrongJobRoleOrApi) {
  Bytes file = sample_file();
  TraceExpect job;
  job.job_id = 78;
  EXPECT_TRUE(FailsWith(Trace::parse(file, job).status(), TM_ERROR_INVALID_ARGUMENT,
                        "wrong job: the trace was recorded by job 77, not job 78"));
  TraceExpect role;
  role.role = Role::parse("stage=last").value();
  EXPECT_TRUE(FailsWith(Trace::parse(file, role).status(), TM_ERROR_INVALID_ARGUMENT,
                        "wrong role: the trace records role 'stage=first,tp=1', not 'stage=last'"));
  TraceExpect api;
  api.api = kApiNccl;
  EXPECT_TRUE(FailsWith(Trace::parse(file, api).status(), TM_ERROR_INVALID_ARGUMENT, "wrong api"));
  TraceExpect all{77, Role::parse("tp=1,stage=first").value(), std::string(kApiTrainmover)};
  EXPECT_TRUE(Trace::parse(file, all).ok());
}

TEST(Trace, BoundsTheDecompressedSize) {
  if (!zstd_available()) GTEST_SKIP() << "built without zstd";
  EXPECT_TRUE(FailsWith(Trace::parse(sample_file(Compression::kZstd), {}, 100).status(),
                        TM_ERROR_PROTOCOL, "exceeds the limit"));
}

TEST(TraceCursor, WalksIterationsAndNamesEveryMisstep) {
  auto trace = Trace::parse(sample_file()).value();
  TraceCursor cur(trace);
  EXPECT_TRUE(FailsWith(cur.next().status(), TM_ERROR_PROTOCOL, "outside an iteration"));
  ASSERT_TRUE(cur.begin_iteration().ok());
  EXPECT_TRUE(FailsWith(cur.begin_iteration(), TM_ERROR_PROTOCOL, "began again"));
  ASSERT_TRUE(cur.next().ok());
  EXPECT_TRUE(FailsWith(cur.end_iteration(), TM_ERROR_PROTOCOL,
                        "iteration 0 ended after 1 calls, the trace recorded 3"));
  ASSERT_TRUE(cur.next().ok());
  ASSERT_TRUE(cur.next().ok());
  EXPECT_TRUE(FailsWith(cur.next().status(), TM_ERROR_PROTOCOL, "iteration 0, call 3"));
  ASSERT_TRUE(cur.end_iteration().ok());
  ASSERT_TRUE(cur.begin_iteration().ok());
  EXPECT_EQ(cur.iteration(), 1u);
  EXPECT_EQ(cur.next().value()->info.op, static_cast<uint16_t>(TraceOp::kAllreduce));
  ASSERT_TRUE(cur.next().ok());
  ASSERT_TRUE(cur.end_iteration().ok());
  EXPECT_TRUE(FailsWith(cur.begin_iteration(), TM_ERROR_PROTOCOL,
                        "past the end of the trace: it records 2 iterations"));
}

TEST(FileIo, AtomicWriteIsPrivateAndFirstWriterWins) {
  TempDir dir;
  std::string path = dir.path() + "/f";
  Bytes one = pattern(100, 1), two = pattern(50, 2);
  EXPECT_TRUE(write_file_atomic(path, one, Replace::kNo).value());
  EXPECT_FALSE(write_file_atomic(path, two, Replace::kNo).value());
  EXPECT_EQ(read_file(path, 1000).value(), one);
  EXPECT_TRUE(write_file_atomic(path, two, Replace::kYes).value());
  EXPECT_EQ(read_file(path, 1000).value(), two);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0007, 0u);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u) << "a temporary file was left behind";
  EXPECT_TRUE(FailsWith(read_file(path, 10).status(), TM_ERROR_INVALID_ARGUMENT, "limit"));
  EXPECT_EQ(read_file(dir.path() + "/none", 10).status().code(), TM_ERROR_NOT_FOUND);
}

TEST(TraceDirectory, KeepsOneTracePerRoleAndDropsDuplicates) {
  TempDir dir;
  TraceDirectory traces(dir.path() + "/job/traces");
  auto first = traces.store(sample_file());
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->outcome, StoreOutcome::kWritten);
  EXPECT_EQ(first->path, dir.path() + "/job/traces/stage=first,tp=1.tmtrace");

  // Another replica: another slot, same content (compressed or not).
  TraceBuilder replica = sample_builder();
  replica.meta().slot = 3;
  Compression c = zstd_available() ? Compression::kZstd : Compression::kNone;
  auto dup = traces.store(replica.finish(2, c).value());
  ASSERT_TRUE(dup.ok()) << dup.status().message();
  EXPECT_EQ(dup->outcome, StoreOutcome::kDuplicate);
  // The same, from an encoded builder (the recorder's path, which compares
  // without parsing), against the plain first file. It writes nothing: not
  // even a temporary copy appears in the directory (its time stays).
  auto dir_time = [&] {
    struct stat st {};
    EXPECT_EQ(::stat((dir.path() + "/job/traces").c_str(), &st), 0);
    return std::pair(st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  };
  const auto before = dir_time();
  for (Compression mine : {Compression::kNone, c}) {
    auto encoded = replica.encode(2, mine);
    ASSERT_TRUE(encoded.ok()) << encoded.status().message();
    auto again = traces.store(encoded.value());
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(again->outcome, StoreOutcome::kDuplicate);
  }
  EXPECT_EQ(dir_time(), before) << "a duplicate was written to the directory";
  TraceBuilder other = sample_builder(5);
  auto different = traces.store(other.encode(2, Compression::kNone).value());
  ASSERT_TRUE(different.ok()) << different.status().message();
  EXPECT_EQ(different->outcome, StoreOutcome::kConflict);

  auto conflict = traces.store(sample_file(Compression::kNone, 9));
  ASSERT_TRUE(conflict.ok()) << conflict.status().message();
  EXPECT_EQ(conflict->outcome, StoreOutcome::kConflict);
  EXPECT_NE(conflict->detail.find("output of call 0 of iteration 0 differs"), std::string::npos)
      << conflict->detail;

  auto loaded = traces.load(Role::parse("stage=first,tp=1").value());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->meta().slot, 2);  // the first one stayed
  EXPECT_TRUE(FailsWith(traces.load(Role::parse("stage=last").value()).status(), TM_ERROR_NOT_FOUND,
                        "stage=last.tmtrace"));
}

TEST(FileLock, ASecondHolderWaitsAndTimesOut) {
  TempDir dir;
  std::string path = dir.path() + "/role.lock";
  {
    auto held = FileLock::acquire(path, std::chrono::milliseconds(0));
    ASSERT_TRUE(held.ok()) << held.status().message();
    auto t0 = std::chrono::steady_clock::now();
    auto second = FileLock::acquire(path, std::chrono::milliseconds(100));
    EXPECT_TRUE(FailsWith(second.status(), TM_ERROR_TIMEOUT, "still held"));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(FileLock::acquire(path, std::chrono::milliseconds(0)).ok()) << "not released";
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_TRUE(FailsWith(FileLock::acquire(dir.path() + "/no/such/dir", {}).status(),
                        TM_ERROR_SYSTEM, "create lock file"));
}

// Replicas that finish recording together write the role's trace once: one
// that finds another writing waits for it, then compares.
TEST(TraceDirectory, AReplicaWaitsForTheWriterAndWritesNothing) {
  TempDir dir;
  TraceDirectory traces(dir.path());
  std::string path = dir.path() + "/stage=first,tp=1.tmtrace";
  auto writer = FileLock::acquire(path + ".lock", std::chrono::milliseconds(0));
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  TraceBuilder replica = sample_builder();
  replica.meta().slot = 3;
  auto encoded = replica.encode(2, Compression::kNone);
  ASSERT_TRUE(encoded.ok());
  Result<StoreResult> stored = Status(TM_ERROR_INTERNAL, "not run");
  std::thread waiting([&] { stored = traces.store(encoded.value()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(write_file_atomic(path, sample_file(Compression::kNone), Replace::kNo).value());
  writer = Status(TM_ERROR_INTERNAL, "released");
  waiting.join();
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_EQ(stored->outcome, StoreOutcome::kDuplicate);
}

// A replica compares with the stored trace as it reads it; a stored file
// cut short or with bytes after its end is never taken for a duplicate.
TEST(TraceDirectory, ADamagedStoredTraceIsNoDuplicate) {
  for (int damage : {-1, +1}) {
    TempDir dir;
    TraceDirectory traces(dir.path());
    auto first = traces.store(sample_file());
    ASSERT_TRUE(first.ok()) << first.status().message();
    Bytes file = read_file(first->path, 1 << 20).value();
    if (damage < 0) file.resize(file.size() - 1);
    if (damage > 0) file.push_back(std::byte{0});
    ASSERT_TRUE(write_file_atomic(first->path, file, Replace::kYes).ok());
    TraceBuilder replica = sample_builder();
    replica.meta().slot = 3;
    auto again = traces.store(replica.encode(2, Compression::kNone).value());
    if (again.ok()) {
      EXPECT_NE(again->outcome, StoreOutcome::kDuplicate) << damage;
    } else {
      EXPECT_NE(again.status().message().find(first->path), std::string::npos)
          << again.status().message();
    }
  }
}

TEST(TraceDirectory, RefusesAWorldWritableDirectory) {
  TempDir dir;
  TraceDirectory traces(dir.path());
  ASSERT_TRUE(traces.store(sample_file()).ok());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  Role role = Role::parse("stage=first,tp=1").value();
  EXPECT_TRUE(FailsWith(traces.store(sample_file()).status(), TM_ERROR_INVALID_ARGUMENT,
                        "writable by every user"));
  EXPECT_TRUE(
      FailsWith(traces.load(role).status(), TM_ERROR_INVALID_ARGUMENT, "writable by every user"));
  ASSERT_EQ(::chmod(dir.path().c_str(), 0750), 0);
  EXPECT_TRUE(traces.load(role).ok());
}

TEST(TraceDirectory, RejectsAMisplacedFile) {
  TempDir dir;
  TraceDirectory traces(dir.path());
  ASSERT_TRUE(traces.store(sample_file()).ok());
  Role last = Role::parse("stage=last").value();
  std::filesystem::rename(traces.path_for(Role::parse("stage=first,tp=1").value()),
                          traces.path_for(last));
  EXPECT_TRUE(FailsWith(traces.load(last).status(), TM_ERROR_INVALID_ARGUMENT, "wrong role"));
}

}  // namespace
}  // namespace trainmover::record
