// Option parsing, per-size plans and the parsing of rank outputs.
#include <gtest/gtest.h>

#include <vector>

#include "collective_options.h"
#include "job_runner.h"

namespace trainmover::bench {
namespace {

ParsedCollective parse(std::vector<std::string> args, const char* subcommand = "allreduce") {
  args.insert(args.begin(), subcommand);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return parse_collective_options(static_cast<int>(args.size()), argv.data());
}

TEST(CollectiveOptions, DefaultsAreTheMainJob) {
  ParsedCollective parsed = parse({});
  ASSERT_FALSE(parsed.exit_now);
  EXPECT_EQ(parsed.options.nranks, 4);
  EXPECT_EQ(parsed.options.bytes,
            (std::vector<uint64_t>{4096, 65536, 1 << 20, 16 << 20, 64 << 20}));
  EXPECT_EQ(parsed.options.iters, 20);
  EXPECT_EQ(parsed.options.rounds, 3);
  EXPECT_EQ(parsed.options.impls, (std::vector<std::string>{"trainmover", "gloo", "openmpi-tcp"}));
  EXPECT_FALSE(parsed.options.json);
}

TEST(CollectiveOptions, ParsesEveryOption) {
  ParsedCollective parsed = parse({"--nranks", "8", "--bytes", "4K,1M", "--iters=7", "--warmup",
                                   "0", "--rounds", "5", "--impl", "gloo,trainmover,gloo", "--json",
                                   "--max-volume", "1G", "--job-timeout", "90"});
  ASSERT_FALSE(parsed.exit_now);
  const CollectiveOptions& o = parsed.options;
  EXPECT_EQ(o.nranks, 8);
  EXPECT_EQ(o.bytes, (std::vector<uint64_t>{4096, 1 << 20}));
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.rounds, 5);
  EXPECT_EQ(o.impls, (std::vector<std::string>{"gloo", "trainmover"}));
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.max_volume, 1ull << 30);
  EXPECT_EQ(o.job_timeout_s, 90);
}

TEST(CollectiveOptions, BadValuesExit2) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{{"--nranks", "0"},
                                                                             {"--nranks", "65"},
                                                                             {"--bytes", "6"},
                                                                             {"--bytes", "4K,huge"},
                                                                             {"--iters", "0"},
                                                                             {"--impl", "nccl"},
                                                                             {"--rounds", "x"},
                                                                             {"--bogus"},
                                                                             {"stray"},
                                                                             {"--bytes"}}) {
    ParsedCollective parsed = parse(args);
    EXPECT_TRUE(parsed.exit_now) << args[0];
    EXPECT_EQ(parsed.exit_code, 2) << args[0];
  }
}

TEST(CollectiveOptions, TheSubcommandNamesTheCollective) {
  for (Collective c : kCollectives) {
    ParsedCollective parsed = parse({"--nranks", "3"}, collective_name(c));
    ASSERT_FALSE(parsed.exit_now) << collective_name(c);
    EXPECT_EQ(parsed.options.op, c);
  }
}

// reduce_scatter and allgather need one float per rank's block; the others one float.
TEST(CollectiveOptions, SizesTooSmallForOneFloatPerRankExit2) {
  EXPECT_EQ(parse({"--nranks", "8", "--bytes", "16"}, "reduce_scatter").exit_code, 2);
  EXPECT_EQ(parse({"--nranks", "8", "--bytes", "4K,28"}, "allgather").exit_code, 2);
  EXPECT_FALSE(parse({"--nranks", "8", "--bytes", "32"}, "allgather").exit_now);
  EXPECT_FALSE(parse({"--nranks", "8", "--bytes", "4"}, "broadcast").exit_now);
}

// Counts as nccl-tests: the larger buffer is `bytes`, a rank's block bytes/4/N.
TEST(CollectiveShapes, BlocksAndBusBandwidthFactors) {
  CollectiveShape rs = collective_shape(Collective::kReduceScatter, 4096 + 4, 3);
  EXPECT_EQ(rs.recv_count, 341u);
  EXPECT_EQ(rs.send_count, 1023u);
  EXPECT_EQ(rs.moved_bytes, 4092u);
  CollectiveShape ag = collective_shape(Collective::kAllgather, 4096, 4);
  EXPECT_EQ(ag.send_count, 256u);
  EXPECT_EQ(ag.recv_count, 1024u);
  CollectiveShape ar = collective_shape(Collective::kAllreduce, 4096, 4);
  EXPECT_EQ(ar.send_count, 1024u);
  EXPECT_EQ(ar.recv_count, 1024u);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 4), 1.0);
}

TEST(CollectiveShapes, ExpectedOutputsAndTheFirstWrongElement) {
  std::vector<float> gathered = {1, 1, 2, 2, 3, 3};
  EXPECT_EQ(first_wrong_output(Collective::kAllgather, gathered.data(), 6, 3), -1);
  gathered[3] = 3;
  EXPECT_EQ(first_wrong_output(Collective::kAllgather, gathered.data(), 6, 3), 3);
  std::vector<float> summed(5, 6.0f);  // 1 + 2 + 3
  EXPECT_EQ(first_wrong_output(Collective::kReduceScatter, summed.data(), 5, 3), -1);
  EXPECT_EQ(first_wrong_output(Collective::kAllreduce, summed.data(), 5, 4), 0);
  std::vector<float> root(4, 1.0f);
  EXPECT_EQ(first_wrong_output(Collective::kBroadcast, root.data(), 4, 7), -1);
}

TEST(SizePlans, LargeSizesGetFewerIterations) {
  CollectiveOptions o;
  o.bytes = {4096, 64 << 20, 1ull << 30};
  o.iters = 20;
  o.warmup = 5;
  o.max_volume = 512ull << 20;
  auto plans = plan_sizes(o);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].iters, 20);
  EXPECT_EQ(plans[0].warmup, 5);
  EXPECT_EQ(plans[1].iters, 8);
  EXPECT_EQ(plans[1].warmup, 4);
  EXPECT_EQ(plans[2].iters, 1);
  EXPECT_EQ(plans[2].warmup, 1);
}

TEST(SizePlans, RoundTripThroughTheWorkerCommandLine) {
  std::vector<SizePlan> plans = {{4096, 20, 5}, {1 << 20, 3, 0}};
  auto parsed = parse_plan(format_plan(plans));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ(parsed.value()[1].bytes, 1u << 20);
  EXPECT_EQ(parsed.value()[1].iters, 3);
  EXPECT_EQ(parsed.value()[1].warmup, 0);
  for (const char* bad : {"", "4096:1", "4096:0:0", "6:1:1", "4096:1:1,x"}) {
    EXPECT_FALSE(parse_plan(bad).ok()) << bad;
  }
}

TEST(RankOutputs, TimeIsTheSlowestRankOverIterations) {
  std::vector<SizePlan> plan = {{4096, 10, 0}, {8192, 4, 0}};
  std::vector<std::string> outputs = {
      "{\"bytes\":4096,\"iters\":10,\"elapsed_s\":1.0}\n{\"bytes\":8192,\"iters\":4,\"elapsed_s\":"
      "2.0}\n",
      "noise\n{\"bytes\":4096,\"iters\":10,\"elapsed_s\":3.0}\n{\"bytes\":8192,\"iters\":4,"
      "\"elapsed_s\":1.0}\n"};
  auto times = times_from_outputs(outputs, plan, "elapsed_s");
  ASSERT_TRUE(times.ok()) << times.status().message();
  EXPECT_DOUBLE_EQ(times.value()[0], 0.3);
  EXPECT_DOUBLE_EQ(times.value()[1], 0.5);
}

TEST(RankOutputs, MissingOrUnplannedSizesAreErrors) {
  std::vector<SizePlan> plan = {{4096, 10, 0}};
  EXPECT_FALSE(times_from_outputs({""}, plan, "elapsed_s").ok());
  EXPECT_FALSE(
      times_from_outputs({"{\"bytes\":64,\"iters\":1,\"elapsed_s\":1}"}, plan, "elapsed_s").ok());
}

}  // namespace
}  // namespace trainmover::bench
