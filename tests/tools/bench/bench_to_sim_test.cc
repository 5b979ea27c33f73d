// The round trip across tools: what `trainmover-bench switch --json` writes,
// `trainmover-sim --measured` reads, giving the downtimes the lines say
// (to the bit: both sides go through nlohmann-json).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "common/str.h"
#include "tool_run.h"
#include "tools/sim/measured.h"

namespace trainmover::bench {
namespace {

// A file holding `text`, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/tm_bench_to_sim_XXXXXX";
    const int fd = ::mkstemp(name);
    EXPECT_GE(fd, 0);
    if (fd >= 0) ::close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The number under `key`, or NaN (which fails any comparison) when absent.
double number(const Json& o, const char* key) {
  auto v = json_number(o, key);
  return v.ok() ? v.value() : std::nan("");
}

// switchover_s + first_collective_s of the delta line of `mode` at `nranks`.
double downtime(const std::vector<Json>& lines, const std::string& mode, int nranks) {
  for (const Json& o : lines) {
    if (json_string(o, "mode") == mode && json_string(o, "impl") == "delta" &&
        number(o, "nranks") == nranks) {
      return number(o, "switchover_s") + number(o, "first_collective_s");
    }
  }
  ADD_FAILURE() << "no delta line for " << mode << " at N=" << nranks;
  return -1;
}

TEST(BenchToSim, WhatSwitchJsonWritesTheSimulatorReads) {
  ToolRun run =
      bench("switch --nranks 2,3 --rounds 1 --mode planned,unexpected --impl delta --json", 120);
  ASSERT_EQ(run.status, 0) << run.all;
  const std::vector<Json> lines = json_lines(run.out);
  ASSERT_EQ(lines.size(), 4u) << run.out;
  TempFile file(run.out);

  auto read = sim::read_measured_downtimes_file(file.path(), 1.0, 0.3);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const sim::MeasuredDowntimes& measured = read.value();
  EXPECT_EQ(measured.planned.at_gpus, 3);
  EXPECT_EQ(measured.planned.seconds, downtime(lines, "planned", 3));
  EXPECT_EQ(measured.unexpected.at_gpus, 3);
  EXPECT_EQ(measured.unexpected.seconds, downtime(lines, "unexpected", 3));
  EXPECT_GE(measured.planned.per_doubling_s, 0);  // fitted from N = 2 and 3

  ToolRun sim = run_program(TM_SIM_PATH, str_cat("--gpus 1024 --weeks 1 --seed 1 --json "
                                                 "--measured ",
                                                 file.path()));
  ASSERT_EQ(sim.status, 0) << sim.all;
  bool measured_policy = false;
  for (const Json& o : json_lines(sim.out)) {
    if (json_string(o, "policy") != "measured") continue;
    measured_policy = true;
    EXPECT_GT(number(o, "ettr"), 0) << json_line(o);
  }
  EXPECT_TRUE(measured_policy) << sim.out;
}

}  // namespace
}  // namespace trainmover::bench
