// The lifeline between a real parent and a real forked child: a SIGKILLed
// holder is heard, a released or never-armed one is not, and a descriptor
// that is no lifeline is refused.
#include "control/lifeline.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>

namespace trainmover::control {
namespace {

using std::chrono::seconds;

enum class ChildDoes { kHoldAndWait, kHoldThenRelease, kNothing };

// Forks a child (before any thread of ours exists) that takes the lifeline
// as told, says so on a pipe, and then waits to be killed or exits 0.
pid_t fork_child(const LifelineWatch& watch, ChildDoes does) {
  int ready[2];
  EXPECT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    std::unique_ptr<LifelineHolder> holder;
    if (does != ChildDoes::kNothing) {
      auto taken = LifelineHolder::take(UniqueFd(dup(watch.fd())));
      if (!taken.ok()) _exit(3);
      holder = std::move(*taken);
    }
    if (does == ChildDoes::kHoldThenRelease) holder->release();
    char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(4);
    if (does == ChildDoes::kHoldAndWait) pause();
    _exit(0);
  }
  close(ready[1]);
  char byte = 0;
  EXPECT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  return pid;
}

int reap(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

TEST(Lifeline, HearsAKilledHolder) {
  auto watch = LifelineWatch::create().value();
  pid_t child = fork_child(*watch, ChildDoes::kHoldAndWait);
  std::promise<void> died;
  ASSERT_TRUE(watch->watch([&died] { died.set_value(); }).ok());
  auto heard = died.get_future();
  EXPECT_EQ(heard.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout)
      << "a living holder was reported dead";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  EXPECT_EQ(heard.wait_for(seconds(5)), std::future_status::ready);
  int status = reap(child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(Lifeline, AReleasedHolderTellsNothing) {
  auto watch = LifelineWatch::create().value();
  pid_t child = fork_child(*watch, ChildDoes::kHoldThenRelease);
  bool died = false;
  ASSERT_TRUE(watch->watch([&died] { died = true; }).ok());
  int status = reap(child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  watch.reset();  // joins the watching thread
  EXPECT_FALSE(died);
}

TEST(Lifeline, AHolderNeverArmedTellsNothingAndTheWatchStopsAtOnce) {
  auto watch = LifelineWatch::create().value();
  pid_t child = fork_child(*watch, ChildDoes::kNothing);
  bool died = false;
  ASSERT_TRUE(watch->watch([&died] { died = true; }).ok());
  EXPECT_TRUE(WIFEXITED(reap(child)));
  auto start = std::chrono::steady_clock::now();
  watch.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(1));
  EXPECT_FALSE(died);
}

TEST(Lifeline, RefusesWhatIsNoLifeline) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[1]);
  auto from_pipe = LifelineHolder::take(UniqueFd(fds[0]));
  ASSERT_FALSE(from_pipe.ok());
  EXPECT_NE(from_pipe.status().message().find("is no lifeline"), std::string::npos);

  FILE* file = tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(ftruncate(fileno(file), 4096), 0);  // the right size, not the magic
  auto from_file = LifelineHolder::take(UniqueFd(dup(fileno(file))));
  fclose(file);
  ASSERT_FALSE(from_file.ok());
  EXPECT_NE(from_file.status().message().find("is no lifeline"), std::string::npos);
}

TEST(Lifeline, FromEnvironment) {
  unsetenv(kLifelineFdEnv);
  auto none = LifelineHolder::from_env();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(), nullptr);
  for (const char* bad : {"abc", "-1", "999999"}) {
    setenv(kLifelineFdEnv, bad, 1);
    auto r = LifelineHolder::from_env();
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(kLifelineFdEnv), std::string::npos) << bad;
  }
  auto watch = LifelineWatch::create().value();
  int fd = dup(watch->fd());
  setenv(kLifelineFdEnv, std::to_string(fd).c_str(), 1);
  auto held = LifelineHolder::from_env();
  unsetenv(kLifelineFdEnv);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_NE(held->get(), nullptr);
  EXPECT_LT(fcntl(fd, F_GETFD), 0) << "the holder keeps the mapping, not the descriptor";
}

}  // namespace
}  // namespace trainmover::control
