// LocalJob with real child processes (/bin/sh scripts): environment, exit
// codes, crashes, timeouts, signal escalation, output capture, cleanliness.
#include "launcher/local_job.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "launcher/child_env.h"

namespace trainmover::launcher {
namespace {

LocalJobOptions sh_job(int nprocs, const std::string& script) {
  LocalJobOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.nprocs = nprocs;
  options.timeout = seconds(20);
  options.kill_grace = seconds(1);
  return options;
}

LocalJobResult run_ok(const LocalJobOptions& options) {
  auto result = run_local_job(options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? result.value() : LocalJobResult{};
}

int open_fd_count() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// No child of ours is left, zombie or alive.
void expect_no_children() {
  errno = 0;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(LocalJob, EveryRankSeesItsEnvironment) {
  auto options = sh_job(
      4,
      "test \"$TRAINMOVER_NSLOTS\" = 4 || exit 10; "
      "test ${#TRAINMOVER_JOB_SECRET} -ge 32 || exit 11; "
      "test \"$EXTRA\" = yes || exit 12; "
      "echo \"$TRAINMOVER_SLOT $TRAINMOVER_STORE $TRAINMOVER_JOB_ID $TRAINMOVER_JOB_SECRET\"");
  options.capture_stdout = true;
  options.extra_env = {{"EXTRA", "yes"}};
  LocalJobResult result = run_ok(options);
  ASSERT_EQ(result.ranks.size(), 4u);
  EXPECT_TRUE(result.succeeded());
  std::set<std::string> shared;
  for (const RankResult& rank : result.ranks) {
    EXPECT_TRUE(rank.succeeded()) << rank.describe();
    std::istringstream in(rank.output);
    int slot = -1;
    std::string store, job_id, secret;
    in >> slot >> store >> job_id >> secret;
    EXPECT_EQ(slot, rank.rank);
    EXPECT_EQ(store.rfind("127.0.0.1:", 0), 0u) << store;
    shared.insert(store + " " + job_id + " " + secret);
  }
  EXPECT_EQ(shared.size(), 1u) << "ranks disagree on store, job id or secret";
  expect_no_children();
}

TEST(LocalJob, ExtraEnvironmentOverridesTheJobs) {
  auto options = sh_job(2, "echo $TRAINMOVER_STORE");
  options.capture_stdout = true;
  options.extra_env = {{"TRAINMOVER_STORE", "elsewhere:1"}};
  LocalJobResult result = run_ok(options);
  for (const RankResult& rank : result.ranks) EXPECT_EQ(rank.output, "elsewhere:1\n");
}

TEST(LocalJob, FailingRankIsNamedAndTheOthersAreStopped) {
  auto options = sh_job(3, "if [ $TRAINMOVER_SLOT = 1 ]; then exit 3; fi; exec sleep 30");
  auto start = Clock::now();
  LocalJobResult result = run_ok(options);
  EXPECT_LT(to_seconds(Clock::now() - start), 10.0);
  EXPECT_FALSE(result.succeeded());
  ASSERT_EQ(result.first_failed_rank, 1);
  const RankResult& failed = result.ranks[1];
  EXPECT_TRUE(failed.exited);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.shell_status(), 3);
  EXPECT_EQ(failed.describe(), "rank 1 exited with status 3");
  for (int r : {0, 2}) {
    EXPECT_TRUE(result.ranks[r].stopped_by_job);
    EXPECT_EQ(result.ranks[r].term_signal, SIGTERM) << result.ranks[r].describe();
  }
  expect_no_children();
}

TEST(LocalJob, CrashingRankIsReportedWithItsRankAndSignal) {
  LocalJobResult result =
      run_ok(sh_job(4, "if [ $TRAINMOVER_SLOT = 2 ]; then kill -9 $$; fi; exec sleep 30"));
  ASSERT_EQ(result.first_failed_rank, 2);
  EXPECT_FALSE(result.ranks[2].exited);
  EXPECT_EQ(result.ranks[2].term_signal, SIGKILL);
  EXPECT_EQ(result.ranks[2].shell_status(), 137);
  EXPECT_NE(result.ranks[2].describe().find("rank 2 was killed by signal 9"), std::string::npos)
      << result.ranks[2].describe();
  expect_no_children();
}

TEST(LocalJob, TimeoutStopsHangingRanksWithinTheBound) {
  auto options = sh_job(2, "exec sleep 30");
  options.timeout = seconds(0.5);
  auto start = Clock::now();
  LocalJobResult result = run_ok(options);
  double elapsed = to_seconds(Clock::now() - start);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(result.first_failed_rank, -1);  // nobody failed by itself
  EXPECT_GE(elapsed, 0.45);
  EXPECT_LT(elapsed, 0.5 + 1.0 + 2.0);  // timeout + grace + slack
  for (const RankResult& rank : result.ranks) EXPECT_EQ(rank.term_signal, SIGTERM);
  expect_no_children();
}

TEST(LocalJob, RankIgnoringSigtermIsKilledAfterTheGrace) {
  auto options = sh_job(1, "trap '' TERM; sleep 30; sleep 30");
  options.timeout = seconds(0.3);
  options.kill_grace = seconds(0.3);
  auto start = Clock::now();
  LocalJobResult result = run_ok(options);
  EXPECT_LT(to_seconds(Clock::now() - start), 3.0);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.ranks[0].term_signal, SIGKILL);
  expect_no_children();
}

TEST(LocalJob, ForwardedSignalReachesEveryRank) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  signalfd_siginfo info{};
  info.ssi_signo = SIGINT;
  ASSERT_EQ(write(fds[1], &info, sizeof info), static_cast<ssize_t>(sizeof info));
  auto options = sh_job(3, "exec sleep 30");
  options.forward_signals_fd = fds[0];
  LocalJobResult result = run_ok(options);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(result.forwarded_signal, SIGINT);
  EXPECT_FALSE(result.succeeded());
  for (const RankResult& rank : result.ranks) EXPECT_EQ(rank.term_signal, SIGINT);
  expect_no_children();
}

TEST(LocalJob, CapturesLargeOutputCompletely) {
  auto options = sh_job(2, "head -c 3000000 /dev/zero | tr '\\0' x");
  options.capture_stdout = true;
  LocalJobResult result = run_ok(options);
  for (const RankResult& rank : result.ranks) {
    EXPECT_EQ(rank.output.size(), 3000000u);
    EXPECT_EQ(rank.output.find_first_not_of('x'), std::string::npos);
  }
}

TEST(LocalJob, LeavesNoDescriptorsOrChildrenBehind) {
  int before = open_fd_count();
  for (int i = 0; i < 3; ++i) {
    auto options = sh_job(3, i == 1 ? "exit 1" : "echo hi");
    options.capture_stdout = true;
    (void)run_ok(options);
  }
  EXPECT_EQ(open_fd_count(), before);
  expect_no_children();
}

// Our descriptors without FD_CLOEXEC: what any child of ours inherits anyway
// (from whoever started the test), as opposed to what the job opened.
std::set<int> inheritable_fds() {
  std::set<int> fds = {0, 1, 2};
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  while (dirent* entry = readdir(dir)) {
    int fd = atoi(entry->d_name);
    if (entry->d_name[0] == '.' || fd == dirfd(dir)) continue;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0) fds.insert(fd);
  }
  closedir(dir);
  return fds;
}

TEST(LocalJob, RanksInheritNoDescriptorOfTheJob) {
  // Each rank's shell lists its own descriptors (not those of ls).
  auto options = sh_job(3, "ls /proc/$$/fd");
  options.capture_stdout = true;
  std::set<int> expected = inheritable_fds();
  LocalJobResult result = run_ok(options);
  for (const RankResult& rank : result.ranks) {
    std::set<int> fds;
    std::istringstream in(rank.output);
    for (int fd; in >> fd;) fds.insert(fd);
    EXPECT_EQ(fds, expected) << "rank " << rank.rank << " has: " << rank.output;
  }
}

TEST(LocalJob, MissingProgramIsAnErrorNamingIt) {
  LocalJobOptions options;
  options.argv = {"no-such-program-tm"};
  options.nprocs = 2;
  auto result = run_local_job(options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no-such-program-tm"), std::string::npos);
  options.argv = {"/nonexistent/prog"};
  result = run_local_job(options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("/nonexistent/prog"), std::string::npos);
  expect_no_children();
}

TEST(LocalJob, InvalidOptionsAreRejected) {
  LocalJobOptions options;
  EXPECT_FALSE(run_local_job(options).ok());  // no program
  options.argv = {"/bin/true"};
  options.nprocs = 0;
  auto result = run_local_job(options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("nprocs"), std::string::npos);
}

}  // namespace
}  // namespace trainmover::launcher

namespace trainmover::launcher {
namespace {

// The one builder of a job process's environment (the local job's ranks and
// the switch benchmark's workers).
TEST(ChildEnvironment, IdentityAndExtrasReplaceOurEntries) {
  ASSERT_EQ(setenv("TRAINMOVER_SLOT", "99", 1), 0);
  ASSERT_EQ(setenv("TM_CHILD_ENV_TEST", "old", 1), 0);
  std::vector<std::string> env =
      child_environment({3, 8, 42, "abcd", "127.0.0.1:5"},
                        {{"TM_CHILD_ENV_TEST", "new"}, {"TRAINMOVER_STORE", "127.0.0.1:6"}});
  unsetenv("TRAINMOVER_SLOT");
  unsetenv("TM_CHILD_ENV_TEST");
  auto count = [&](const std::string& entry) { return std::count(env.begin(), env.end(), entry); };
  auto named = [&](const std::string& name) {
    return std::count_if(env.begin(), env.end(),
                         [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
  };
  EXPECT_EQ(count("TRAINMOVER_SLOT=3"), 1);
  EXPECT_EQ(named("TRAINMOVER_SLOT"), 1);
  EXPECT_EQ(count("TRAINMOVER_NSLOTS=8"), 1);
  EXPECT_EQ(count("TRAINMOVER_JOB_ID=42"), 1);
  EXPECT_EQ(count("TRAINMOVER_JOB_SECRET=abcd"), 1);
  EXPECT_EQ(count("TRAINMOVER_STORE=127.0.0.1:6"), 1) << "an extra wins over the identity";
  EXPECT_EQ(named("TRAINMOVER_STORE"), 1);
  EXPECT_EQ(count("TM_CHILD_ENV_TEST=new"), 1);
  EXPECT_EQ(named("TM_CHILD_ENV_TEST"), 1);
  EXPECT_GE(named("PATH"), 1) << "the rest of our environment is kept";
}

}  // namespace
}  // namespace trainmover::launcher
