// Reading srun's --no-kill and --kill-on-bad-exit from its own arguments
// (spank/srun_flags.h): long and bundled short forms, values of other
// options skipped, the last word winning, the environment beneath.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

extern "C" {
#include "spank/srun_flags.h"
}

namespace {

tm_srun_flags parse(std::vector<std::string> words) {
  words.insert(words.begin(), "srun");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  tm_srun_flags f{-1, -1};
  tm_srun_flags_parse_args(&f, static_cast<int>(argv.size()), argv.data());
  return f;
}

TEST(SrunFlags, NothingGivenIsUnset) {
  tm_srun_flags f = parse({"-N2", "-n", "2", "--mpi=pmix"});
  EXPECT_EQ(f.no_kill, -1);
  EXPECT_EQ(f.kill_bad_exit, -1);
}

TEST(SrunFlags, LongForms) {
  EXPECT_EQ(parse({"--no-kill"}).no_kill, 1);
  EXPECT_EQ(parse({"--no-kill=off"}).no_kill, 0);
  EXPECT_EQ(parse({"--no-kill=NO"}).no_kill, 0);
  EXPECT_EQ(parse({"--no-kill=set"}).no_kill, 1);
  EXPECT_EQ(parse({"--kill-on-bad-exit"}).kill_bad_exit, 1);
  EXPECT_EQ(parse({"--kill-on-bad-exit=0"}).kill_bad_exit, 0);
  EXPECT_EQ(parse({"--kill-on-bad-exit=1"}).kill_bad_exit, 1);
}

TEST(SrunFlags, BundledShortForms) {
  EXPECT_EQ(parse({"-k"}).no_kill, 1);
  EXPECT_EQ(parse({"-lk"}).no_kill, 1);
  EXPECT_EQ(parse({"-Xlk", "-N2"}).no_kill, 1);
  EXPECT_EQ(parse({"-koff"}).no_kill, 0);
  tm_srun_flags f = parse({"-lK0"});
  EXPECT_EQ(f.kill_bad_exit, 0);
  EXPECT_EQ(f.no_kill, -1);
  EXPECT_EQ(parse({"-K"}).kill_bad_exit, 1);
  EXPECT_EQ(parse({"-K1"}).kill_bad_exit, 1);
}

TEST(SrunFlags, ValuesOfOtherOptionsAreNotFlags) {
  // The letters after a valued option are its value: a partition "k80", a
  // job named "-k", a node list.
  EXPECT_EQ(parse({"-pk80"}).no_kill, -1);
  EXPECT_EQ(parse({"-J", "-k"}).no_kill, -1);
  EXPECT_EQ(parse({"-lJ", "-k"}).no_kill, -1);
  EXPECT_EQ(parse({"-w", "-K", "-k"}).no_kill, 1);
  EXPECT_EQ(parse({"-w", "-K", "-k"}).kill_bad_exit, -1);
  EXPECT_EQ(parse({"--job-name=-k"}).no_kill, -1);
}

TEST(SrunFlags, LastWordWinsAndDoubleDashEnds) {
  EXPECT_EQ(parse({"-k", "--no-kill=off"}).no_kill, 0);
  EXPECT_EQ(parse({"--no-kill=off", "-lk"}).no_kill, 1);
  EXPECT_EQ(parse({"--", "-k"}).no_kill, -1);
}

TEST(SrunFlags, EnvironmentAndCheck) {
  tm_srun_flags f{-1, -1};
  ::setenv("SLURM_NO_KILL", "1", 1);
  ::setenv("SLURM_KILL_BAD_EXIT", "0", 1);
  tm_srun_flags_parse_env(&f);
  EXPECT_EQ(f.no_kill, 1);
  EXPECT_EQ(f.kill_bad_exit, 0);
  ::setenv("SLURM_NO_KILL", "off", 1);
  tm_srun_flags_parse_env(&f);
  EXPECT_EQ(f.no_kill, 0);
  // This test's own command line has no --no-kill: the check names it,
  // with every word counted as the program's or as srun's.
  char err[256] = {};
  ::unsetenv("SLURM_NO_KILL");
  EXPECT_EQ(tm_srun_flags_check(0, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("run srun with --no-kill"), std::string::npos) << err;
  ::setenv("SLURM_NO_KILL", "1", 1);
  EXPECT_EQ(tm_srun_flags_check(1000, err, sizeof err), 0) << err;
  ::setenv("SLURM_KILL_BAD_EXIT", "1", 1);
  EXPECT_EQ(tm_srun_flags_check(1000, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("--kill-on-bad-exit=0"), std::string::npos) << err;
  ::unsetenv("SLURM_NO_KILL");
  ::unsetenv("SLURM_KILL_BAD_EXIT");
}

}  // namespace
