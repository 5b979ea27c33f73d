// The task's PMIx choices under srun --trainmover (launcher/task_store.h).
#include "launcher/task_store.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "config.h"  // HAVE_PMIX

namespace trainmover::launcher {
namespace {

#if HAVE_PMIX
constexpr bool kHavePmix = true;
#else
constexpr bool kHavePmix = false;
#endif

TEST(TaskStore, PmixPutsTheTcpStoreBehindPmix) {
  EXPECT_EQ(task_store_spec("192.0.2.2:4000", true), "pmix,tcp://192.0.2.2:4000");
  EXPECT_EQ(task_store_spec("tcp://192.0.2.2:4000", true), "pmix,tcp://192.0.2.2:4000");
}

TEST(TaskStore, WithoutPmixTheStoreIsUnchanged) {
  EXPECT_EQ(task_store_spec("192.0.2.2:4000", false), "192.0.2.2:4000");
  EXPECT_EQ(task_store_spec("tcp://h:1", false), "tcp://h:1");
  EXPECT_EQ(task_store_spec("", true), "");  // no store to fall back on: left alone
}

// Reads only the environment; the variables are removed after.
TEST(TaskStore, WantedForAPmixClientEnvironment) {
  for (const char* v :
       {"PMIX_NAMESPACE", "PMIX_RANK", "TRAINMOVER_PMIX_WIREUP", "TRAINMOVER_PMIX_EVENTS"})
    ::unsetenv(v);
  EXPECT_FALSE(pmix_wireup_wanted());
  EXPECT_FALSE(pmix_events_wanted());
  ::setenv("PMIX_NAMESPACE", "slurm.pmix.7.0", 1);
  EXPECT_FALSE(pmix_wireup_wanted());  // no rank
  EXPECT_FALSE(pmix_events_wanted());
  ::setenv("PMIX_RANK", "0", 1);
  EXPECT_EQ(pmix_wireup_wanted(), kHavePmix);
  EXPECT_EQ(pmix_events_wanted(), kHavePmix);
  ::setenv("TRAINMOVER_PMIX_WIREUP", "0", 1);
  ::setenv("TRAINMOVER_PMIX_EVENTS", "0", 1);
  EXPECT_FALSE(pmix_wireup_wanted());
  EXPECT_FALSE(pmix_events_wanted());
  for (const char* v :
       {"PMIX_NAMESPACE", "PMIX_RANK", "TRAINMOVER_PMIX_WIREUP", "TRAINMOVER_PMIX_EVENTS"})
    ::unsetenv(v);
}

}  // namespace
}  // namespace trainmover::launcher
