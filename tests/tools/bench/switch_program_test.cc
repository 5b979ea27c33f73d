// `trainmover-bench switch` run as a program: help, argument errors, and a
// small real run of both modes whose JSON lines must carry every documented
// key with a positive, finite value.
#include <gtest/gtest.h>

#include <cstdlib>

#include <cmath>
#include <set>

#include "tool_run.h"

namespace trainmover::bench {
namespace {

TEST(SwitchProgram, HelpDescribesTheSubcommandAndItsOptions) {
  ToolRun top = bench("--help");
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("switch"), std::string::npos);
  EXPECT_EQ(top.out.find("switch-worker"), std::string::npos) << "the worker mode is internal";
  expect_help_mentions("switch", {"--nranks", "--mode", "--impl", "--victim", "--bytes", "--warmup",
                                  "--rounds", "--timeout", "--trace", "--json"});
}

TEST(SwitchProgram, BadArgumentsExit2NamingTheArgument) {
  expect_usage_errors({{"switch --mode sideways", "sideways"},
                       {"switch --mode planned,crashed", "crashed"},
                       {"switch --nranks 1", "--nranks"},
                       {"switch --nranks 65", "--nranks"},
                       {"switch --nranks 4,x", "'x'"},
                       {"switch --nranks 4,,8", "--nranks"},
                       {"switch --nranks", "needs a value"},
                       {"switch --impl delta,nccl", "nccl"},
                       {"switch --nranks 4,8 --victim 4", "--victim"},
                       {"switch --bytes 6", "--bytes"},
                       {"switch --rounds 0", "--rounds"},
                       {"switch --timeout -1", "--timeout"},
                       {"switch --bogus", "--bogus"},
                       {"switch extra", "extra"}});
}

// The number under `key`, or NaN (which fails any comparison) when absent.
double number(const Json& o, const char* key) {
  auto v = json_number(o, key);
  return v.ok() ? v.value() : std::nan("");
}

void expect_positive(const Json& o, const char* key, const std::string& where) {
  auto v = json_number(o, key);
  ASSERT_TRUE(v.ok()) << where << ": " << v.status().message();
  EXPECT_TRUE(std::isfinite(v.value()) && v.value() > 0)
      << where << ": " << key << " = " << v.value();
}

TEST(SwitchProgram, SmallRunOfBothModesPrintsEveryKey) {
  ToolRun run = bench("switch --nranks 3 --rounds 1 --mode planned,unexpected --json", 60);
  ASSERT_EQ(run.status, 0) << run.all;
  std::set<std::string> cells;
  for (const Json& o : json_lines(run.out)) {
    const std::string mode = json_string(o, "mode").value_or("?");
    const std::string impl = json_string(o, "impl").value_or("?");
    const std::string where = mode + "/" + impl;
    cells.insert(where);
    EXPECT_EQ(number(o, "nranks"), 3) << where;
    // Counted by the processes, each link at both its ends. Victim 1 of 3:
    // the delta swaps its two links (the killed leaver reports none); the
    // rebuild closes every old link and opens the new ring's three.
    const bool planned = mode == "planned";
    const bool delta = impl == "delta";
    EXPECT_EQ(number(o, "links_opened"), delta ? 4 : 6) << where;
    EXPECT_EQ(number(o, "links_closed"), delta ? (planned ? 4 : 2) : (planned ? 6 : 4)) << where;
    EXPECT_EQ(number(o, "rounds"), 1) << where;
    for (const char* key : {"switchover_s", "first_collective_s", "switchover_all_s",
                            "switch_local_s", "join_connect_s"}) {
      expect_positive(o, key, where);
    }
    EXPECT_GE(number(o, "first_collective_s"), number(o, "switchover_s"))
        << where << ": the first collective ends after the switch";
    EXPECT_EQ(o.contains("detection_s"), mode == "unexpected") << where;
    if (mode == "unexpected") {
      expect_positive(o, "detection_s", where);
      expect_positive(o, "detection_all_s", where);
    }
    EXPECT_EQ(o.contains("prepare_s"), where == "planned/delta") << where;
  }
  std::set<std::string> expected = {"planned/delta", "planned/rebuild", "unexpected/delta",
                                    "unexpected/rebuild"};
  EXPECT_EQ(cells, expected) << run.all;
}

// With recursive doubling's links (the default) victim 1 of 4 has three
// links (slots 0 and 2 of the ring, 3 its doubling partner), on the ring
// alone two: the delta swaps those, counted at both ends.
TEST(SwitchProgram, LinksChangedUnderEachAlgorithm) {
  for (const char* algo : {"ring", "auto"}) {
    ::setenv("TRAINMOVER_ALGO", algo, 1);
    ToolRun run = bench("switch --nranks 4 --victim 1 --rounds 1 --impl delta --json", 60);
    ::unsetenv("TRAINMOVER_ALGO");
    ASSERT_EQ(run.status, 0) << algo << ": " << run.all;
    auto lines = json_lines(run.out);
    ASSERT_EQ(lines.size(), 1u) << run.all;
    const bool ring = std::string(algo) == "ring";
    EXPECT_EQ(json_string(lines[0], "links_of"), ring ? "ring" : "ring+doubling") << algo;
    EXPECT_EQ(number(lines[0], "links_opened"), ring ? 4 : 6) << algo;
    EXPECT_EQ(number(lines[0], "links_closed"), ring ? 4 : 6) << algo;
  }
  ::setenv("TRAINMOVER_ALGO", "tree", 1);
  ToolRun bad = bench("switch --nranks 4 --rounds 1", 60);
  ::unsetenv("TRAINMOVER_ALGO");
  EXPECT_EQ(bad.status, 2) << bad.all;
  EXPECT_NE(bad.all.find("TRAINMOVER_ALGO"), std::string::npos) << bad.all;
}

TEST(SwitchProgram, TableHasARowPerCellAndTheGoals) {
  ToolRun run = bench("switch --nranks 2,3 --rounds 1 --impl delta,rebuild", 60);
  ASSERT_EQ(run.status, 0) << run.all;
  EXPECT_NE(run.out.find("planned    delta     2 "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("planned    rebuild   3 "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("rebuild / delta switchover_s at N=3"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("delta switchover_s N=3 / N=2"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace trainmover::bench
