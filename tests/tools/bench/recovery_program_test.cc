// `trainmover-bench recovery` as a program: its options, and a small real
// run at N = 4 (trainmover-gpt under trainmover-launch, a rank killed with
// SIGKILL) of every way, whose rows the simulator reads.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tool_run.h"
#include "tools/sim/measured.h"

namespace trainmover::bench {
namespace {

// Small enough for ASan and a loaded machine: a step takes milliseconds, so
// the kill (after step 20, past the first checkpoint) comes well before the
// end even when the bench reads the output late.
constexpr const char* kSmallRun =
    "recovery --nranks 4 --steps 300 --kill-step 20 --checkpoint-every 10 --timeout 120 --json";

double number(const Json& o, const char* key) {
  auto v = json_number(o, key);
  EXPECT_TRUE(v.ok()) << key << " missing in " << json_line(o);
  return v.ok() ? v.value() : -1;
}

TEST(RecoveryProgram, HelpDescribesTheSubcommandAndItsOptions) {
  expect_help_mentions(
      "recovery", {"--nranks", "--impl", "--steps", "--kill-step", "--checkpoint-every", "--repeat",
                   "--json", "stop-restart", "cold-standby"});
}

TEST(RecoveryProgram, BadArgumentsExit2NamingTheArgument) {
  expect_usage_errors({{"recovery --nranks 5", "odd"},
                       {"recovery --nranks 0", "nranks"},
                       {"recovery --impl torchrun", "impl"},
                       {"recovery --steps 50 --kill-step 60", "kill-step"},
                       {"recovery --kill-step 20 --checkpoint-every 30", "checkpoint"},
                       {"recovery --repeat 0", "repeat"},
                       {"recovery --bogus", "bogus"}});
}

TEST(RecoveryProgram, SmallRunOfEveryWayHasEveryKeyAndSaneFigures) {
  ToolRun run = bench(kSmallRun, 600);
  ASSERT_EQ(run.status, 0) << run.all;
  const std::vector<Json> rows = json_lines(run.out);
  ASSERT_EQ(rows.size(), 3u) << run.out;
  std::vector<std::string> impls;
  for (const Json& row : rows) {
    impls.push_back(json_string(row, "impl").value_or("?"));
    EXPECT_EQ(number(row, "nranks"), 4);
    const double downtime = number(row, "downtime_s"), wall = number(row, "wall_s");
    EXPECT_GT(wall, 0) << json_line(row);
    EXPECT_GE(downtime, 0) << json_line(row);
    EXPECT_LE(downtime, wall) << json_line(row);  // one normal step less
    for (const char* key :
         {"detection_s", "switch_s", "state_transfer_s", "first_step_s", "cpu_s", "normal_step_s"})
      EXPECT_GE(number(row, key), 0) << key << ": " << json_line(row);
    EXPECT_LT(number(row, "detection_s"), wall) << json_line(row);
    const double resume = number(row, "resume_step");
    EXPECT_GT(resume, 0) << json_line(row);
    EXPECT_LE(resume, 300) << json_line(row);
    EXPECT_GE(number(row, "lost_steps"), 0) << json_line(row);
  }
  EXPECT_EQ(impls, (std::vector<std::string>{"trainmover", "stop-restart", "cold-standby"}));
  // stop-restart goes back to a checkpoint (one every 10 steps), the others
  // to the step in flight: no later than the checkpoint.
  const auto ckpt = static_cast<int64_t>(number(rows[1], "resume_step"));
  EXPECT_EQ(ckpt % 10, 0) << json_line(rows[1]);
  EXPECT_GE(number(rows[0], "resume_step"), ckpt) << json_line(rows[0]);
  // The goals are reported (met or not) on stderr, next to the rows.
  EXPECT_NE(run.all.find("stop-restart / trainmover downtime"), std::string::npos) << run.all;

  // The simulator reads these rows: TrainMover's downtime, the others ignored.
  const std::string path = ::testing::TempDir() + "recovery_rows.jsonl";
  std::ofstream(path) << run.out;
  auto measured = sim::read_measured_downtimes_file(path, 1.0, 0.3);
  std::remove(path.c_str());
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  EXPECT_EQ(measured.value().unexpected.at_gpus, 4);
  EXPECT_EQ(measured.value().unexpected.seconds, number(rows[0], "downtime_s"));
  EXPECT_EQ(measured.value().planned.seconds, measured.value().unexpected.seconds);
}

TEST(RecoveryProgram, RepeatPrintsEachRunAndJudgesTheGoalsOnMedians) {
  ToolRun run = bench(
      "recovery --nranks 4 --impl trainmover --repeat 2 --steps 300 --kill-step 20 "
      "--checkpoint-every 10 --timeout 120 --json",
      600);
  ASSERT_EQ(run.status, 0) << run.all;
  const std::vector<Json> rows = json_lines(run.out);
  ASSERT_EQ(rows.size(), 2u) << run.out;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(number(rows[i], "round"), static_cast<double>(i + 1)) << json_line(rows[i]);
    // The critical path's CPU comes with its parts, which add up to it.
    ASSERT_TRUE(rows[i].contains("critical_cpu_parts")) << json_line(rows[i]);
    const Json& parts = rows[i]["critical_cpu_parts"];
    ASSERT_TRUE(parts.is_object()) << json_line(rows[i]);
    double sum = 0;
    for (const char* part : {"coordinator", "prepare", "switch", "first_step"}) {
      EXPECT_GE(number(parts, part), 0) << part << ": " << json_line(rows[i]);
      sum += number(parts, part);
    }
    double total = 0;
    for (const auto& [name, seconds] : parts.items()) total += seconds.get<double>();
    EXPECT_NEAR(total, number(rows[i], "critical_cpu_s"), 1e-9) << json_line(rows[i]);
    EXPECT_LE(sum, total + 1e-9) << json_line(rows[i]);
  }
  EXPECT_NE(run.all.find("# medians of 2 runs:"), std::string::npos) << run.all;
}

}  // namespace
}  // namespace trainmover::bench
