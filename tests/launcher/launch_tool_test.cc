// trainmover-launch, run as a program: exit statuses, messages, signals.
#include <signal.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "launcher/local_job.h"

namespace trainmover::launcher {
namespace {

struct ToolRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

// Runs `trainmover-launch ARGS` through sh (for the 2>&1), bounded, with
// the variable assignments `env` (e.g. "A=1 B=2") in its environment.
ToolRun launch(const std::string& args, const std::string& env = "") {
  LocalJobOptions options;
  options.argv = {"/bin/sh", "-c", "env " + env + " \"" + TM_LAUNCH_PATH + "\" " + args + " 2>&1"};
  options.timeout = seconds(30);
  options.capture_stdout = true;
  auto result = run_local_job(options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  if (!result.ok()) return {};
  return {result->ranks[0].shell_status(), result->ranks[0].output};
}

TEST(TrainmoverLaunch, AllRanksSucceed) {
  ToolRun run =
      launch("--nprocs 3 -- sh -c 'test $TRAINMOVER_NSLOTS = 3 && echo rank $TRAINMOVER_SLOT'");
  EXPECT_EQ(run.status, 0) << run.output;
  for (const char* line : {"rank 0", "rank 1", "rank 2"}) {
    EXPECT_NE(run.output.find(line), std::string::npos) << run.output;
  }
}

TEST(TrainmoverLaunch, ExitStatusIsTheFailingRanks) {
  ToolRun run = launch("-n 3 sh -c 'if [ $TRAINMOVER_SLOT = 1 ]; then exit 7; fi; exec sleep 30'");
  EXPECT_EQ(run.status, 7);
  EXPECT_NE(run.output.find("rank 1 exited with status 7"), std::string::npos) << run.output;
}

TEST(TrainmoverLaunch, KilledRankGives128PlusSignal) {
  ToolRun run =
      launch("-n 2 sh -c 'if [ $TRAINMOVER_SLOT = 0 ]; then kill -9 $$; fi; exec sleep 30'");
  EXPECT_EQ(run.status, 137);
  EXPECT_NE(run.output.find("rank 0 was killed by signal 9"), std::string::npos) << run.output;
}

TEST(TrainmoverLaunch, TimeoutGives124) {
  ToolRun run = launch("-n 2 --timeout 0.3 sleep 30");
  EXPECT_EQ(run.status, 124);
  EXPECT_NE(run.output.find("timeout"), std::string::npos) << run.output;
}

TEST(TrainmoverLaunch, HelpExitsZero) {
  ToolRun run = launch("--help");
  EXPECT_EQ(run.status, 0);
  EXPECT_NE(run.output.find("--nprocs"), std::string::npos);
  EXPECT_NE(run.output.find("TRAINMOVER_SLOT"), std::string::npos);
}

TEST(TrainmoverLaunch, BadArgumentsExit2NamingTheArgument) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {Case{"true", "--nprocs is required"}, Case{"-n 0 true", "--nprocs"},
                        Case{"-n x true", "--nprocs"}, Case{"-n 2", "no PROGRAM"},
                        Case{"-n 2 --timeout soon true", "--timeout"},
                        Case{"--frobnicate -n 2 true", "--frobnicate"}, Case{"-n", "-n"},
                        Case{"-n 2 --on-failure retry true", "--on-failure"},
                        Case{"-n 2 --on-failure restart --standby 1 true", "--standby"},
                        Case{"-n 2 --standby-start later --standby 1 true", "--standby-start"},
                        Case{"-n 2 --switch full --standby 1 true", "--switch"},
                        Case{"-n 2 --switch rebuild true", "need --standby"}}) {
    ToolRun run = launch(c.args);
    EXPECT_EQ(run.status, 2) << c.args << ": " << run.output;
    EXPECT_NE(run.output.find(c.message), std::string::npos) << c.args << ": " << run.output;
  }
}

// Every option's default may come from its TRAINMOVER_* variable; the
// command line wins, and a bad value names the variable.
TEST(TrainmoverLaunch, OptionsDefaultToTheirVariables) {
  ToolRun run = launch("-- sh -c 'echo slots $TRAINMOVER_NSLOTS'", "TRAINMOVER_NPROCS=2");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("slots 2"), std::string::npos) << run.output;
  run = launch("-n 3 -- sh -c 'echo slots $TRAINMOVER_NSLOTS'", "TRAINMOVER_NPROCS=2");
  EXPECT_NE(run.output.find("slots 3"), std::string::npos) << run.output;
  run = launch("sleep 30", "TRAINMOVER_NPROCS=1 TRAINMOVER_JOB_TIMEOUT=0.3");
  EXPECT_EQ(run.status, 124) << run.output;
  run = launch("-n 2 true", "TRAINMOVER_STANDBYS=many");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("TRAINMOVER_STANDBYS"), std::string::npos) << run.output;
  run = launch("-n 2 true", "TRAINMOVER_QUIET=yes");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("TRAINMOVER_QUIET"), std::string::npos) << run.output;
}

// --on-failure restart: slot 1 fails at the first start only (it sees
// TRAINMOVER_RESTART_COUNT); the whole job starts again and succeeds, and
// the events file tells the story.
TEST(TrainmoverLaunch, OnFailureRestartStartsTheWholeJobAgain) {
  const std::string events = ::testing::TempDir() + "launch_restart_events.jsonl";
  std::remove(events.c_str());
  ToolRun run =
      launch("-n 3 --on-failure restart --max-restarts 2 --events " + events +
             " sh -c 'echo start $TRAINMOVER_RESTART_COUNT slot $TRAINMOVER_SLOT;"
             " if [ $TRAINMOVER_RESTART_COUNT = 0 ] && [ $TRAINMOVER_SLOT = 1 ]; then exit 5; fi;"
             " if [ $TRAINMOVER_RESTART_COUNT = 0 ]; then exec sleep 30; fi'");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("start 1 slot 2"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("1 restart(s)"), std::string::npos) << run.output;
  std::ifstream in(events);
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(events.c_str());
  for (const char* event : {"\"job_started\"", "\"rank_failed\"", "\"exit_code\":5",
                            "\"job_restarting\"", "\"job_finished\""})
    EXPECT_NE(log.find(event), std::string::npos) << event << " missing in:\n" << log;
}

// A rank that fails at every start: after --max-restarts the job ends with
// its status.
TEST(TrainmoverLaunch, RestartsAreBoundedByMaxRestarts) {
  ToolRun run = launch(
      "-n 2 --on-failure restart --max-restarts 1 sh -c 'echo start $TRAINMOVER_RESTART_COUNT;"
      " if [ $TRAINMOVER_SLOT = 0 ]; then exit 4; fi; exec sleep 30'");
  EXPECT_EQ(run.status, 4) << run.output;
  EXPECT_NE(run.output.find("start 1"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("start 2"), std::string::npos) << run.output;
}

TEST(TrainmoverLaunch, EverythingFromProgramOnIsTheProgramsOwn) {
  ToolRun run = launch("-n 1 echo --help -n 3 --frobnicate");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, "--help -n 3 --frobnicate\n");
  ToolRun after_dashes = launch("--nprocs=1 --kill-grace 1 -- echo -t 5");
  EXPECT_EQ(after_dashes.status, 0) << after_dashes.output;
  EXPECT_EQ(after_dashes.output, "-t 5\n");
}

TEST(TrainmoverLaunch, AnOptionGivenTwiceIsAnError) {
  ToolRun run = launch("-n 2 -n 3 true");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("--nprocs is given more than once"), std::string::npos) << run.output;
}

TEST(TrainmoverLaunch, MissingProgramExits1) {
  ToolRun run = launch("-n 2 no-such-program-tm");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("no-such-program-tm"), std::string::npos) << run.output;
}

TEST(TrainmoverLaunch, SigtermIsForwardedToTheRanks) {
  char dir_template[] = "/tmp/tm-launch-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  // The ranks record their pids, the launcher gets SIGTERM once they run.
  std::string ranks = "sh -c 'echo $$ > " + dir + "/pid.$TRAINMOVER_SLOT; exec sleep 30'";
  LocalJobOptions options;
  options.argv = {"/bin/sh", "-c",
                  std::string("\"") + TM_LAUNCH_PATH + "\" -n 2 " + ranks +
                      " & L=$!; i=0; while [ ! -s " + dir + "/pid.1 ] || [ ! -s " + dir +
                      "/pid.0 ]; do sleep 0.05; i=$((i+1)); [ $i -gt 200 ] && exit 99; done; "
                      "kill -TERM $L; wait $L; echo status=$?"};
  options.timeout = seconds(30);
  options.capture_stdout = true;
  auto result = run_local_job(options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->ranks[0].output, "status=143\n");
  for (const char* name : {"/pid.0", "/pid.1"}) {
    std::ifstream in(dir + name);
    pid_t pid = 0;
    in >> pid;
    ASSERT_GT(pid, 0);
    EXPECT_NE(kill(pid, 0), 0) << "rank process " << pid << " survived";
    std::remove((dir + name).c_str());
  }
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace trainmover::launcher
