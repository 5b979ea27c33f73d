// trainmover-gpt run as a user runs it: alone, and as a DP x PP job of
// trainmover-launch (real processes, real sockets). Its loss goes down, its
// runs are bitwise reproducible, a pipeline split changes no bit, and
// checkpoints resume exactly and refuse damage.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "launcher/local_job.h"

namespace trainmover::gpt {
namespace {

struct ToolRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

// Runs a shell command line (stderr into the output), bounded in time.
ToolRun run_shell(const std::string& command) {
  launcher::LocalJobOptions options;
  options.argv = {"/bin/sh", "-c", command + " 2>&1"};
  options.timeout = seconds(240);
  options.capture_stdout = true;
  auto result = launcher::run_local_job(options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return {};
  return {result->ranks[0].shell_status(), result->ranks[0].output};
}

ToolRun gpt(const std::string& args) { return run_shell(std::string(TM_GPT_PATH) + " " + args); }

ToolRun job(int nprocs, const std::string& args) {
  return run_shell(std::string(TM_LAUNCH_PATH) + " --nprocs " + std::to_string(nprocs) +
                   " --timeout 200 -- " + TM_GPT_PATH + " " + args);
}

// The "param-hash HEX" line; fails the test when missing.
std::string hash_of(const ToolRun& run) {
  std::smatch m;
  EXPECT_EQ(run.status, 0) << run.output;
  if (!std::regex_search(run.output, m, std::regex("param-hash ([0-9a-f]{16})"))) {
    ADD_FAILURE() << "no hash in: " << run.output;
    return "";
  }
  return m[1];
}

constexpr const char* kShort = "--steps 12 --log-every 0 --print-hash";

TEST(GptTraining, LossGoesDown) {
  ToolRun run = gpt("--steps 300 --log-every 100");
  ASSERT_EQ(run.status, 0) << run.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.output, m, std::regex("loss ([0-9.]+) -> ([0-9.]+)")))
      << run.output;
  const double first = std::stod(m[1]), last = std::stod(m[2]);
  EXPECT_GT(first, 5.0) << "the first loss should be about ln 256 = 5.55";
  EXPECT_LT(last, 3.2) << run.output;
  EXPECT_NE(run.output.find("step 100/300 loss"), std::string::npos) << run.output;
}

TEST(GptTraining, SingleProcessRunsAreBitwiseReproducible) {
  const std::string a = hash_of(gpt(kShort)), b = hash_of(gpt(kShort));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, hash_of(gpt(std::string(kShort) + " --seed 2")));
}

TEST(GptTraining, PipelinesEqualOneStageBitwise) {
  const std::string args = std::string(kShort) + " --micro-batches 2";
  EXPECT_EQ(hash_of(job(2, args + " --pp 2")), hash_of(gpt(args)));
  // A middle stage both receives and sends, in both directions.
  const std::string deeper = std::string(kShort) + " --layers 3 --micro-batches 4";
  EXPECT_EQ(hash_of(job(3, deeper + " --pp 3")), hash_of(gpt(deeper)));
}

TEST(GptTraining, DataAndPipelineParallelRunsAreBitwiseReproducible) {
  const std::string args = std::string(kShort) + " --dp 2 --pp 2";
  const std::string a = hash_of(job(4, args));
  EXPECT_EQ(hash_of(job(4, args)), a);
  // The pipeline split changes no bit with DP either.
  EXPECT_EQ(hash_of(job(2, std::string(kShort) + " --dp 2")), a);
  // Two replicas see other data than one: the hash must differ.
  EXPECT_NE(a, hash_of(gpt(kShort)));
}

class GptResume : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpt-resume-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string ckpt(const std::string& extra) {
    return " --log-every 0 --print-hash --checkpoint-every 5 --checkpoint-dir " + dir_ + extra;
  }
  std::string dir_;
};

TEST_F(GptResume, ResumingFromACheckpointGivesTheUninterruptedHash) {
  const std::string straight = hash_of(gpt("--steps 20 --log-every 0 --print-hash"));
  ASSERT_EQ(gpt("--steps 10" + ckpt("")).status, 0);
  ToolRun resumed = gpt("--steps 20 --resume" + ckpt(""));
  EXPECT_NE(resumed.output.find("resumed at step 10"), std::string::npos) << resumed.output;
  EXPECT_EQ(hash_of(resumed), straight);
}

TEST_F(GptResume, APipelineResumesFromTheStepAllStagesHave) {
  const std::string straight = hash_of(job(2, "--pp 2 --steps 20 --log-every 0 --print-hash"));
  ASSERT_EQ(job(2, "--pp 2 --steps 15" + ckpt("")).status, 0);
  // Stage 1 lost its last checkpoint: both stages go back to step 10.
  std::filesystem::remove(dir_ + "/stage1-step0000000015.ckpt");
  ToolRun resumed = job(2, "--pp 2 --steps 20 --resume" + ckpt(""));
  EXPECT_NE(resumed.output.find("resumed at step 10"), std::string::npos) << resumed.output;
  EXPECT_EQ(hash_of(resumed), straight);
}

TEST_F(GptResume, ADamagedCheckpointIsRefused) {
  ASSERT_EQ(gpt("--steps 5" + ckpt("")).status, 0);
  const std::string file = dir_ + "/stage0-step0000000005.ckpt";
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    f.put('\x7f');
  }
  ToolRun run = gpt("--steps 10 --resume" + ckpt(""));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find(file + ": damaged payload"), std::string::npos) << run.output;
}

TEST_F(GptResume, AnotherModelsCheckpointIsRefused) {
  ASSERT_EQ(gpt("--steps 5" + ckpt("")).status, 0);
  ToolRun run = gpt("--steps 10 --resume --d-model 48" + ckpt(""));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("written for vocab 256, d_model 32"), std::string::npos) << run.output;
}

TEST(GptCommandLine, BadArgumentsExit2NamingTheProblem) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c :
       {Case{"--frobnicate", "frobnicate"}, Case{"--steps x", "steps"},
        Case{"--steps -1", "--steps"}, Case{"--heads 5", "n_heads"},
        Case{"--batch 6 --micro-batches 4", "--micro-batches"},
        Case{"--resume", "--checkpoint-dir"}, Case{"--pp 9", "layers"}, Case{"--lr 0", "--lr"}}) {
    ToolRun run = gpt(c.args);
    EXPECT_EQ(run.status, 2) << c.args << ": " << run.output;
    EXPECT_NE(run.output.find(c.message), std::string::npos) << c.args << ": " << run.output;
  }
}

TEST(GptCommandLine, HelpListsTheOptions) {
  ToolRun run = gpt("--help");
  EXPECT_EQ(run.status, 0);
  for (const char* option : {"--dp", "--pp", "--checkpoint-dir", "--resume", "--print-hash"})
    EXPECT_NE(run.output.find(option), std::string::npos) << option;
}

TEST(GptCommandLine, AJobOfTheWrongSizeIsRefused) {
  ToolRun run = job(3, "--dp 2 --pp 2 --steps 1");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.output.find("needs 4 processes"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace trainmover::gpt
