// Runs the trainmover-sim binary as a user would.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/json.h"

namespace trainmover::sim {
namespace {


struct Outcome {
  int status;
  std::string output;  // stdout and stderr together
};

Outcome run_sim(const std::string& args) {
  const std::string command = std::string(TM_SIM_BINARY) + " " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    output.append(buffer.data(), n);
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, output};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct BadArgs {
  const char* args;
  int status;
  const char* message;
};

class BadArguments : public ::testing::TestWithParam<BadArgs> {};

TEST_P(BadArguments, FailWithAClearMessage) {
  const Outcome outcome = run_sim(GetParam().args);
  EXPECT_EQ(outcome.status, GetParam().status) << outcome.output;
  EXPECT_NE(outcome.output.find(GetParam().message), std::string::npos) << outcome.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadArguments,
    ::testing::Values(BadArgs{"--gpus abc", 2, "--gpus: 'abc' is not an integer"},
                      BadArgs{"--gpus 1024,,2048", 2, "--gpus: empty value"},
                      BadArgs{"--gpus 0", 2, "--gpus: '0' is out of range"},
                      BadArgs{"--weeks -1", 2, "--weeks: '-1' is out of range"},
                      BadArgs{"--weeks", 2, "--weeks needs a value"},
                      BadArgs{"--policies megatron", 2, "'megatron' is not one of"},
                      BadArgs{"--standbys -2", 2, "--standbys: '-2' is out of range"},
                      BadArgs{"--straggler-slowdown 1.5", 2, "--straggler-slowdown: '1.5' is out"},
                      BadArgs{"--straggler-slowdown 1", 2, "must be below 1"},
                      BadArgs{"--replications 1", 2, "--replications: '1' is out of range"},
                      BadArgs{"--frobnicate", 2, "unknown option '--frobnicate'"},
                      BadArgs{"--json=yes", 2, "--json takes no value"},
                      BadArgs{"--weeks 1 --weeks 2", 2, "--weeks is given more than once"},
                      BadArgs{"--policies measured", 2, "needs --measured FILE"},
                      BadArgs{"--measured /nonexistent/bench.jsonl", 1,
                              "cannot open measured downtimes file"}));

// Values that would make a run last practically forever, or overflow the
// output, are refused at once with the option named (issue 14).
INSTANTIATE_TEST_SUITE_P(
    Bounds, BadArguments,
    ::testing::Values(
        BadArgs{"--weeks 1e6", 2, "--weeks: '1e6' is out of range"},
        BadArgs{"--mttf-hours 1e-9", 2, "--mttf-hours: '1e-9' is out of range"},
        BadArgs{"--rebalance-every 1e-12", 2, "--rebalance-every: '1e-12' is out of range"},
        BadArgs{"--stragglers-per-day 1e300", 2, "--stragglers-per-day: '1e300' is out of range"},
        BadArgs{"--planned-ratio 1e300", 2, "--planned-ratio: '1e300' is out of range"},
        BadArgs{"--price 1e308 --json", 2, "--price: '1e308' is out of range"},
        BadArgs{"--weeks 520 --replications 100000", 2, "would simulate about"},
        BadArgs{"--mttf-hours 0.01 --weeks 52", 2, "would simulate about"}));

// The most expensive price and the largest scale still give finite JSON.
TEST(Cli, JsonIsFiniteAtTheLargestPriceAndScale) {
  const Outcome outcome = run_sim("--gpus 16777216 --price 10000 --replications 2 --json");
  ASSERT_EQ(outcome.status, 0) << outcome.output;
  for (const std::string& line : lines_of(outcome.output)) {
    EXPECT_EQ(line.find("inf"), std::string::npos) << line;
    EXPECT_EQ(line.find("nan"), std::string::npos) << line;
  }
}

TEST(Cli, HelpListsEveryOption) {
  const Outcome outcome = run_sim("--help");
  EXPECT_EQ(outcome.status, 0);
  for (const char* option : {"--gpus",
                             "--weeks",
                             "--seed",
                             "--replications",
                             "--policies",
                             "--mttf-hours",
                             "--planned-ratio",
                             "--rebalance-every",
                             "--stragglers-per-day",
                             "--straggler-slowdown",
                             "--straggler-detect-min",
                             "--infra-min",
                             "--standbys",
                             "--standby-replenish-min",
                             "--checkpoint-save-s",
                             "--step-s",
                             "--measured",
                             "--json",
                             "--plot",
                             "--price",
                             "--help"}) {
    EXPECT_NE(outcome.output.find(option), std::string::npos) << option;
  }
}

TEST(Cli, JsonHasOneObjectPerScaleAndPolicyWithTheDocumentedKeys) {
  const Outcome outcome = run_sim("--gpus 1024,16384 --weeks 1 --seed 1 --json");
  ASSERT_EQ(outcome.status, 0) << outcome.output;
  const std::vector<std::string> lines = lines_of(outcome.output);
  ASSERT_EQ(lines.size(), 2u * 6u);
  for (const std::string& line : lines) {
    const trainmover::Json object = trainmover::Json::parse(line);
    for (const char* key :
         {"gpus", "policy", "ettr", "wasted_gpu_hours_per_week", "interruptions"}) {
      EXPECT_TRUE(object.contains(key)) << key << " missing in " << line;
    }
    const double ettr = object.at("ettr").get<double>();
    EXPECT_GT(ettr, 0.0);
    EXPECT_LE(ettr, 1.0);
  }
}

TEST(Cli, SameSeedSameOutputOtherSeedOtherOutput) {
  const std::string args = "--gpus 8192 --weeks 1 --json --seed ";
  const Outcome a = run_sim(args + "5");
  const Outcome b = run_sim(args + "5");
  const Outcome c = run_sim(args + "6");
  EXPECT_EQ(a.output, b.output);
  EXPECT_NE(a.output, c.output);
}

TEST(Cli, MeasuredPolicyReadsBenchOutput) {
  const Outcome outcome = run_sim(std::string("--gpus 1024 --json --measured ") + TM_SIM_DATA +
                                  "/bench_switch_sample.jsonl");
  ASSERT_EQ(outcome.status, 0) << outcome.output;
  EXPECT_NE(outcome.output.find("\"policy\":\"measured\""), std::string::npos);
}

TEST(Cli, ClosedFormCheckPrintsOneRowPerScale) {
  const Outcome outcome = run_sim("--closed-form --gpus 1024,8192,16384");
  ASSERT_EQ(outcome.status, 0) << outcome.output;
  const std::vector<std::string> lines = lines_of(outcome.output);
  ASSERT_EQ(lines.size(), 2u + 3u);
  EXPECT_EQ(lines[2].find("   1024"), 0u) << lines[2];
  EXPECT_EQ(lines[4].find("  16384"), 0u) << lines[4];
}

TEST(Cli, PlotHasOneLinePerPolicy) {
  const std::string path = testing::TempDir() + "/trainmover-sim-plot.svg";
  const Outcome outcome = run_sim(
      "--gpus 1024,8192,131072 --policies trainmover,torchft,oobleck "
      "--plot " +
      path);
  ASSERT_EQ(outcome.status, 0) << outcome.output;
  std::ifstream in(path);
  std::stringstream svg;
  svg << in.rdbuf();
  const std::string text = svg.str();
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  std::size_t polylines = 0;
  for (std::size_t at = text.find("<polyline"); at != std::string::npos;
       at = text.find("<polyline", at + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 3u);
  EXPECT_NE(text.find(">torchft<"), std::string::npos);
  EXPECT_NE(text.find(">128K<"), std::string::npos);
}

}  // namespace
}  // namespace trainmover::sim
