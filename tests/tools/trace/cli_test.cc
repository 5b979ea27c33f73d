// Runs trainmover-trace as a user would, on traces written here: its
// output, its messages for bad files and its exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "record/compress.h"
#include "record/file_io.h"
#include "record/trace_builder.h"

namespace trainmover::record {
namespace {

struct Outcome {
  int status;
  std::string output;  // stdout and stderr together
};

Outcome run(const std::string& args) {
  const std::string command = std::string(TM_TRACE_BINARY) + " " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    output.append(buffer.data(), n);
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, output};
}

std::vector<std::byte> trace(int slot, float value, Compression c = Compression::kNone) {
  TraceMeta m;
  m.job_id = 9;
  m.role = Role::parse("stage=last,tp=2").value();
  m.slot = slot;
  m.nslots = 4;
  TraceBuilder b(m);
  std::vector<float> out(16, value);
  for (uint32_t it = 0; it < 2; ++it) {
    CallInfo ar;
    ar.iteration = it;
    ar.op = static_cast<uint16_t>(TraceOp::kAllreduce);
    ar.redop = TM_AVG;
    ar.dtype = TM_FLOAT32;
    ar.elem_size = 4;
    ar.count = 16;
    EXPECT_TRUE(b.append(ar, std::as_bytes(std::span(out))).ok());
    CallInfo bc = ar;
    bc.index = 1;
    bc.op = static_cast<uint16_t>(TraceOp::kBroadcast);
    bc.redop = kNoRedop;
    bc.count = 8;
    bc.peer = 1;
    EXPECT_TRUE(b.append(bc, std::as_bytes(std::span(out)).first(32)).ok());
  }
  return b.finish(2, c).value();
}

class TraceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tm_trace_cli.XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string put(const std::string& name, const std::vector<std::byte>& bytes) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(write_file_atomic(path, bytes, Replace::kYes).ok());
    return path;
  }
  std::string dir_;
};

TEST_F(TraceCli, HelpListsSubcommands) {
  Outcome o = run("--help");
  EXPECT_EQ(o.status, 0);
  for (const char* s : {"show", "check", "diff", "Exit status"})
    EXPECT_NE(o.output.find(s), std::string::npos) << o.output;
  for (const char* sub : {"show", "check", "diff"}) {
    Outcome h = run(std::string(sub) + " --help");
    EXPECT_EQ(h.status, 0) << sub;
    EXPECT_NE(h.output.find("Usage: trainmover-trace " + std::string(sub)), std::string::npos);
  }
}

TEST_F(TraceCli, ShowPrintsHeaderAndCalls) {
  std::string f = put("a", trace(1, 1.5f));
  Outcome o = run("show " + f);
  EXPECT_EQ(o.status, 0) << o.output;
  for (const char* s :
       {"job:         9", "api:         trainmover", "role:        stage=last,tp=2",
        "recorded by: slot 1 of 4", "iterations:  2", "calls:       4",
        "iteration 1: 2 calls, 96 output bytes", "   0  allreduce(avg) of 16 float32 -> 64 bytes",
        "   1  broadcast of 8 float32, root 1 -> 32 bytes"}) {
    EXPECT_NE(o.output.find(s), std::string::npos) << "no '" << s << "' in\n" << o.output;
  }
  Outcome s = run("show --summary " + f);
  EXPECT_EQ(s.output.find("allreduce"), std::string::npos) << s.output;
}

TEST_F(TraceCli, CheckAcceptsSoundTracesAndNamesBadOnes) {
  std::string good = put("good", trace(0, 1.0f));
  Outcome ok = run("check --job 9 --role tp=2,stage=last --api trainmover " + good);
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("ok: role stage=last,tp=2, job 9, 2 iterations, 4 calls"),
            std::string::npos)
      << ok.output;

  auto bytes = trace(0, 1.0f);
  auto cut = bytes;
  cut.resize(cut.size() - 5);
  auto flipped = bytes;
  flipped[flipped.size() / 2] ^= std::byte{1};
  auto version = bytes;
  version[8] = std::byte{7};
  struct Case {
    std::string args;
    int status;
    const char* message;
  };
  const Case cases[] = {
      {"check " + put("cut", cut), 1, "truncated"},
      {"check " + put("flipped", flipped), 1, "corrupted"},
      {"check " + put("version", version), 1, "wrong version: the trace has format version 7"},
      {"check --job 10 " + good, 1, "wrong job: the trace was recorded by job 9, not job 10"},
      {"check --role stage=first " + good, 1, "wrong role"},
      {"check --api nccl " + good, 1, "wrong api"},
      {"check " + dir_ + "/missing", 2, "no such file"},
      {"check " + good + " " + put("cut2", cut), 1, "truncated"},
      {"check", 2, "no trace file given"},
      {"check --job", 2, "--job needs a value"},
      {"check --job x " + good, 2, "--job"},
      {"check --role stage=up " + good, 2, "--role"},
      {"check --frobnicate " + good, 2, "unknown option '--frobnicate'"},
      // Issue 14: a directory cannot be read as a trace, like a missing file.
      {"check " + dir_, 2, "not a regular file"},
      {"check " + good + " " + dir_, 2, "not a regular file"},
      {"show " + dir_, 2, "not a regular file"},
      {"diff " + good + " " + dir_, 2, "not a regular file"},
      {"frobnicate", 2, "unknown subcommand 'frobnicate'"},
      {"", 2, "no subcommand given"},
      {"show", 2, "exactly one trace file"},
      {"show " + put("junk", std::vector<std::byte>(40, std::byte{'x'})), 1, "not a trace"},
      {"diff " + good, 2, "exactly two trace files"},
  };
  for (const Case& c : cases) {
    Outcome o = run(c.args);
    EXPECT_EQ(o.status, c.status) << c.args << "\n" << o.output;
    EXPECT_NE(o.output.find(c.message), std::string::npos) << c.args << "\n" << o.output;
  }
}

TEST_F(TraceCli, DiffComparesContentNotSlotOrCompression) {
  std::string a = put("a", trace(0, 1.0f));
  std::string b =
      put("b", trace(3, 1.0f, zstd_available() ? Compression::kZstd : Compression::kNone));
  Outcome same = run("diff " + a + " " + b);
  EXPECT_EQ(same.status, 0) << same.output;
  EXPECT_NE(same.output.find("identical: 4 calls in 2 iterations"), std::string::npos);
  std::string c = put("c", trace(0, 2.0f));
  Outcome differ = run("diff " + a + " " + c);
  EXPECT_EQ(differ.status, 1) << differ.output;
  EXPECT_NE(differ.output.find("iteration 0, call 0: allreduce(avg) of 16 float32: outputs differ"),
            std::string::npos)
      << differ.output;
  EXPECT_NE(differ.output.find("4 differences"), std::string::npos) << differ.output;
  Outcome missing = run("diff " + a + " " + dir_ + "/none");
  EXPECT_EQ(missing.status, 2) << missing.output;
}

}  // namespace
}  // namespace trainmover::record
