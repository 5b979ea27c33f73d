// The task's store choice under srun --trainmover (launcher/task_store.h).
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
TEST(TaskStore, WantedOnlyForAPmixClientEnvironmentWithoutStandbys) {
  for (const char* v : {"PMIX_NAMESPACE", "PMIX_RANK", "TRAINMOVER_PMIX_WIREUP",
                        "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"})
    ::unsetenv(v);
  EXPECT_FALSE(pmix_wireup_wanted(2));
  ::setenv("PMIX_NAMESPACE", "slurm.pmix.7.0", 1);
  ::setenv("SLURM_STEP_NUM_TASKS", "2", 1);
  EXPECT_FALSE(pmix_wireup_wanted(2));  // no rank
  ::setenv("PMIX_RANK", "0", 1);
  EXPECT_EQ(pmix_wireup_wanted(2), kHavePmix);
  EXPECT_FALSE(pmix_wireup_wanted(1));  // one standby task in the step
  ::setenv("TRAINMOVER_PMIX_WIREUP", "0", 1);
  EXPECT_FALSE(pmix_wireup_wanted(2));
  for (const char* v :
       {"PMIX_NAMESPACE", "PMIX_RANK", "TRAINMOVER_PMIX_WIREUP", "SLURM_STEP_NUM_TASKS"})
    ::unsetenv(v);
}

}  // namespace
}  // namespace trainmover::launcher
