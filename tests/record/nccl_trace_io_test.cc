// The NCCL interposer's trace files, without CUDA: what the recorder writes
// through lib/record is what replay loads, and a trace that is truncated,
// corrupted, of another version, role, job or api is rejected with a
// message saying which.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "record/nccl/recorder.h"
#include "record/nccl/trace_io.h"
#include "record/trace_builder.h"
#include "record/trace_dir.h"

namespace trainmover::nccl {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tm-nccl-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::byte> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

void write_all(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

Settings settings_for(const std::string& dir, const char* role, uint64_t job) {
  Settings s;
  s.mode = Mode::kRecord;
  s.trace_dir = dir;
  s.role = record::Role::parse(role).value();
  s.job_id = job;
  return s;
}

CallDesc call_of(CallKind kind, int32_t dtype, uint64_t count, int32_t op, int32_t peer) {
  return make_call(kind, dtype, op, peer, count).value();
}

std::vector<std::byte> pattern(size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(seed * 31 + i * 7);
  return out;
}

// Records a communicator of 2 ranks and a split of it, with calls whose
// copies land out of order, through the file sink.
void record_trace(const Settings& s) {
  auto sink = open_trace_sink(s);
  ASSERT_TRUE(sink.ok()) << sink.status().message();
  Recorder rec(100, std::move(*sink));
  ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kInit, 2, 1, -1, 0, 0}).ok());
  ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kSplit, 1, 0, 0, 3, 1}).ok());
  auto a = rec.admit(0, call_of(CallKind::kAllReduce, 7, 16, 0, -1), 0);
  auto b = rec.admit(0, call_of(CallKind::kAllGather, 9, 8, -1, -1), 0);
  auto c = rec.admit(1, call_of(CallKind::kRecv, 0, 5, -1, 0), 0);
  auto d = rec.admit(0, call_of(CallKind::kSend, 0, 5, -1, 0), 0);
  ASSERT_TRUE(a && b && c && d);
  ASSERT_TRUE(rec.put_call(*b, pattern(32, 2)).ok());  // lands before a
  ASSERT_TRUE(rec.put_call(*c, pattern(5, 3)).ok());
  ASSERT_TRUE(rec.put_call(*a, pattern(64, 1)).ok());
  ASSERT_TRUE(rec.put_call(*d, {}).ok());
  Status done = rec.finish();
  ASSERT_TRUE(done.ok()) << done.message();
}

std::vector<std::byte> answer(ReplayBook& book, uint32_t comm, const CallDesc& call) {
  auto a = book.next(comm, call);
  EXPECT_TRUE(a.ok()) << a.status().message();
  if (!a.ok() || !a->has_value()) return {};
  return std::vector<std::byte>((*a)->output.begin(), (*a)->output.end());
}

TEST(NcclTraceIo, ReplaysWhatWasRecorded) {
  TempDir dir;
  Settings s = settings_for(dir.path(), "rank=1", 42);
  record_trace(s);
  EXPECT_EQ(trace_path(s), dir.path() + "/stage=none,rank=1.tmtrace");
  auto mode = std::filesystem::status(trace_path(s)).permissions();
  EXPECT_EQ(mode & std::filesystem::perms::others_all, std::filesystem::perms::none);

  s.mode = Mode::kReplay;
  auto book = load_replay_book(s);
  ASSERT_TRUE(book.ok()) << book.status().message();
  ASSERT_TRUE(book->open_init(2, 1).ok());
  ASSERT_TRUE(book->open_split(0, 3, 1).ok());
  EXPECT_EQ(answer(*book, 0, call_of(CallKind::kAllReduce, 7, 16, 0, -1)), pattern(64, 1));
  EXPECT_EQ(answer(*book, 0, call_of(CallKind::kAllGather, 9, 8, -1, -1)), pattern(32, 2));
  EXPECT_EQ(answer(*book, 1, call_of(CallKind::kRecv, 0, 5, -1, 0)), pattern(5, 3));
  EXPECT_TRUE(answer(*book, 0, call_of(CallKind::kSend, 0, 5, -1, 0)).empty());
  auto past = book->next(0, call_of(CallKind::kSend, 0, 5, -1, 0));
  ASSERT_TRUE(past.ok());
  EXPECT_FALSE(past->has_value());
}

void expect_rejected(const Settings& s, const char* why) {
  auto book = load_replay_book(s);
  ASSERT_FALSE(book.ok()) << "expected a rejection: " << why;
  EXPECT_NE(book.status().message().find(why), std::string::npos) << book.status().message();
}

TEST(NcclTraceIo, RejectsAnotherJobRoleOrVersion) {
  TempDir dir;
  Settings s = settings_for(dir.path(), "rank=1", 42);
  record_trace(s);
  Settings other_job = s;
  other_job.job_id = 43;
  expect_rejected(other_job, "wrong job");

  // Another role's trace placed under this role's name.
  Settings other_role = settings_for(dir.path(), "rank=2", 42);
  std::filesystem::copy_file(trace_path(s), trace_path(other_role));
  expect_rejected(other_role, "wrong role");

  auto file = read_all(trace_path(s));
  file[8] = std::byte{9};  // the format version
  write_all(trace_path(s), file);
  expect_rejected(s, "wrong version");
}

TEST(NcclTraceIo, RejectsTruncatedAndCorruptedTraces) {
  TempDir dir;
  Settings s = settings_for(dir.path(), "rank=1", 42);
  record_trace(s);
  auto file = read_all(trace_path(s));
  write_all(trace_path(s), std::vector<std::byte>(file.begin(), file.end() - 20));
  expect_rejected(s, "truncated");
  auto flipped = file;
  flipped[file.size() / 2] ^= std::byte{0x40};
  write_all(trace_path(s), flipped);
  expect_rejected(s, "corrupted");
  std::filesystem::remove(trace_path(s));
  expect_rejected(s, trace_path(s).c_str());  // a missing trace names its path
}

TEST(NcclTraceIo, RejectsATraceOfTheCApi) {
  TempDir dir;
  Settings s = settings_for(dir.path(), "rank=1", 42);
  record::TraceMeta meta;
  meta.job_id = 42;
  meta.role = s.role;  // api "trainmover"
  meta.slot = 0;
  meta.nslots = 1;
  record::TraceBuilder builder(meta);
  auto file = builder.finish(1, record::Compression::kNone);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(record::TraceDirectory(dir.path()).store(*file).ok());
  expect_rejected(s, "wrong api");
}

TEST(NcclTraceIo, RejectsAGapInACommunicatorsCalls) {
  TempDir dir;
  Settings s = settings_for(dir.path(), "rank=1", 42);
  {
    auto sink = open_trace_sink(s);
    ASSERT_TRUE(sink.ok());
    Recorder rec(100, std::move(*sink));
    ASSERT_TRUE(rec.add_comm(CommEntry{0, CommOrigin::kInit, 1, 0, -1, 0, 0}).ok());
    auto a = rec.admit(0, call_of(CallKind::kAllReduce, 7, 1, 0, -1), 0);
    auto b = rec.admit(0, call_of(CallKind::kAllReduce, 7, 1, 0, -1), 0);
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(rec.put_call(*b, pattern(4, 1)).ok());  // call 0 never lands
    Status finished = rec.finish();
    ASSERT_FALSE(finished.ok());
    EXPECT_NE(finished.message().find("never did"), std::string::npos) << finished.message();
  }
  EXPECT_FALSE(std::filesystem::exists(trace_path(s)));
}

}  // namespace
}  // namespace trainmover::nccl
