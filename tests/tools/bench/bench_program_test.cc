// trainmover-bench run as a program: help, argument errors, and tiny real
// measurements whose JSON lines must parse and carry the documented keys.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "config.h"
#include "tool_run.h"

namespace trainmover::bench {
namespace {

void expect_result_keys(const Json& o, int nranks, double bytes,
                        const std::string& op = "allreduce") {
  EXPECT_EQ(json_string(o, "op"), op);
  EXPECT_EQ(json_number(o, "nranks").value(), nranks);
  EXPECT_EQ(json_number(o, "bytes").value(), bytes);
  ASSERT_TRUE(json_number(o, "time_s").ok());
  EXPECT_GT(json_number(o, "time_s").value(), 0);
  ASSERT_TRUE(json_number(o, "busbw_GBps").ok());
  EXPECT_GT(json_number(o, "busbw_GBps").value(), 0);
}

// `key` holds one positive figure per round.
void expect_per_round(const Json& o, const char* key, size_t rounds) {
  ASSERT_TRUE(o.contains(key) && o.at(key).is_array()) << key << " in " << o.dump();
  ASSERT_EQ(o.at(key).size(), rounds) << key << " in " << o.dump();
  for (const Json& v : o.at(key)) {
    ASSERT_TRUE(v.is_number()) << key << " in " << o.dump();
    EXPECT_GT(v.get<double>(), 0) << key << " in " << o.dump();
  }
}

TEST(BenchProgram, HelpDescribesSubcommandsAndOptions) {
  ToolRun top = bench("--help");
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("allreduce"), std::string::npos);
  EXPECT_EQ(top.out.find("worker"), std::string::npos) << "the worker mode is internal";
  expect_help_mentions(
      "allreduce", {"--nranks", "--bytes", "--iters", "--warmup", "--rounds", "--impl", "--json"});
}

TEST(BenchProgram, BadArgumentsExit2NamingTheArgument) {
  expect_usage_errors({{"", "no subcommand"},
                       {"frobnicate", "frobnicate"},
                       {"allreduce --nranks 0", "--nranks"},
                       {"allreduce --nranks 99", "--nranks"},
                       {"allreduce --bytes 4K,6", "6"},
                       {"allreduce --bytes lots", "--bytes"},
                       {"allreduce --iters -1", "--iters"},
                       {"allreduce --impl trainmover,nccl", "nccl"},
                       {"allreduce --transport pigeon", "--transport"},
                       {"allreduce --bogus", "--bogus"}});
}

// The trainmover rows name the algorithm each size ran (comm/algorithm.h's
// defaults for allreduce: recursive doubling up to 256 KiB, recursive halving
// up to 16 MiB, the ring above).
TEST(BenchProgram, TinyTrainmoverRunPrintsParsableJson) {
  ToolRun run =
      bench("allreduce --nranks 2 --bytes 4K,1M,17M --iters 2 --rounds 1 --impl trainmover --json");
  ASSERT_EQ(run.status, 0) << run.all;
  auto objects = json_lines(run.out);
  ASSERT_EQ(objects.size(), 3u) << run.all;
  EXPECT_EQ(json_string(objects[0], "impl"), "trainmover");
  expect_result_keys(objects[0], 2, 4096);
  EXPECT_EQ(json_string(objects[0], "algorithm"), "doubling") << run.all;
  EXPECT_EQ(json_string(objects[1], "algorithm"), "halving") << run.all;
  EXPECT_EQ(json_string(objects[2], "algorithm"), "ring") << run.all;
  EXPECT_EQ(json_string(objects[0], "transport"), "auto") << run.all;
}

// Over each transport the rows say which, and with shared memory they carry
// this host's memcpy bandwidth, the bound of a shared-memory link.
TEST(BenchProgram, TheTransportIsChosenAndReported) {
  for (const char* kind : {"tcp", "shm"}) {
    ToolRun run = bench(std::string("allreduce --nranks 2 --bytes 64K --iters 2 --rounds 1 ") +
                        "--impl trainmover --json --transport " + kind);
    ASSERT_EQ(run.status, 0) << run.all;
    auto objects = json_lines(run.out);
    ASSERT_EQ(objects.size(), 1u) << run.all;
    expect_result_keys(objects[0], 2, 65536);
    EXPECT_EQ(json_string(objects[0], "transport"), kind) << run.all;
    auto memcpy = json_number(objects[0], "host_memcpy_GBps");
    if (std::string(kind) == "tcp") {
      EXPECT_FALSE(memcpy.ok()) << run.all;
    } else {
      ASSERT_TRUE(memcpy.ok()) << run.all;
      EXPECT_GT(memcpy.value(), 0) << run.all;
    }
  }
}

#ifdef HAVE_MPI
// openmpi-shm is measured only on request, over OpenMPI's shared memory.
TEST(BenchProgram, OpenmpiShmOnRequestWithItsRatio) {
  ToolRun run = bench(
      "allgather --nranks 2 --bytes 4K --iters 2 --rounds 1 --impl trainmover,openmpi-shm --json");
  ASSERT_EQ(run.status, 0) << run.all;
  std::set<std::string> impls;
  for (const Json& o : json_lines(run.out)) {
    impls.insert(json_string(o, "impl").value_or("?"));
    expect_result_keys(o, 2, 4096, "allgather");
    if (json_string(o, "impl") == "trainmover") {
      EXPECT_TRUE(json_number(o, "vs_openmpi_shm").ok()) << run.all;
      EXPECT_FALSE(o.contains("vs_openmpi_tcp")) << run.all;
    }
  }
  EXPECT_EQ(impls, (std::set<std::string>{"trainmover", "openmpi-shm"})) << run.all;
  ToolRun table = bench("allreduce --nranks 2 --bytes 4K --iters 2 --rounds 1 --impl openmpi-shm");
  ASSERT_EQ(table.status, 0) << table.all;
  EXPECT_NE(table.out.find("openmpi-shm us"), std::string::npos) << table.out;
}
#endif

TEST(BenchProgram, TinyRunOfEveryImplementation) {
  ToolRun run = bench("allreduce --nranks 2 --bytes 4K,64K --iters 2 --rounds 2 --json");
  ASSERT_EQ(run.status, 0) << run.all;
  std::set<std::string> impls;
  for (const Json& o : json_lines(run.out)) {
    impls.insert(json_string(o, "impl").value_or("?"));
    ASSERT_TRUE(json_number(o, "bytes").ok());
    expect_result_keys(o, 2, json_number(o, "bytes").value());
    expect_per_round(o, "round_times_s", 2);
    if (json_string(o, "impl") == "trainmover") {
#ifdef HAVE_GLOO
      EXPECT_TRUE(json_number(o, "vs_gloo").ok());
      expect_per_round(o, "vs_gloo_rounds", 2);
#endif
#ifdef HAVE_MPI
      EXPECT_TRUE(json_number(o, "vs_openmpi_tcp").ok());
      expect_per_round(o, "vs_openmpi_tcp_rounds", 2);
#endif
    }
  }
  std::set<std::string> expected = {"trainmover"};
#ifdef HAVE_GLOO
  expected.insert("gloo");
#endif
#ifdef HAVE_MPI
  expected.insert("openmpi-tcp");
#endif
  EXPECT_EQ(impls, expected) << run.all;
}

std::set<std::string> built_impls() {
  std::set<std::string> impls = {"trainmover"};
#ifdef HAVE_GLOO
  impls.insert("gloo");
#endif
#ifdef HAVE_MPI
  impls.insert("openmpi-tcp");
#endif
  return impls;
}

// gloo's ReduceScatterHalvingDoubling (Debian's gloo 2022-05-18) sends from
// the caller's buffer without waiting and then copies results into it, so now
// and then its result is wrong (seen 6 in 15 runs of 3 ranks under load). The
// bench checks the result and skips gloo naming the wrong element; that, and
// only that, excuses gloo's missing row.
bool gloo_reduce_scatter_raced(const std::string& op, const ToolRun& run) {
  return op == "reduce_scatter" &&
         run.all.find("worker (gloo): wrong reduce_scatter result") != std::string::npos &&
         run.all.find("gloo failed, skipped") != std::string::npos;
}

// Each implementation checks one call's result before it is timed, so a
// row means that implementation computed the collective right: 3 ranks (gloo's
// halving-doubling and OpenMPI's algorithms for a count that is no power of
// two), and a size whose blocks leave bytes over.
TEST(BenchProgram, EveryCollectiveOfEveryImplementation) {
  for (const char* op : {"reduce_scatter", "allgather", "broadcast"}) {
    ToolRun run = bench(std::string(op) + " --nranks 3 --bytes 4K,64K --iters 2 --rounds 1 --json");
    ASSERT_EQ(run.status, 0) << op << ": " << run.all;
    std::set<std::string> impls;
    for (const Json& o : json_lines(run.out)) {
      impls.insert(json_string(o, "impl").value_or("?"));
      ASSERT_TRUE(json_number(o, "bytes").ok());
      expect_result_keys(o, 3, json_number(o, "bytes").value(), op);
    }
    std::set<std::string> expected = built_impls();
    if (gloo_reduce_scatter_raced(op, run)) expected.erase("gloo");
    EXPECT_EQ(impls, expected) << op << ": " << run.all;
  }
  ToolRun help = bench("--help");
  for (const char* op : {"reduce_scatter", "allgather", "broadcast"})
    EXPECT_NE(help.out.find(op), std::string::npos) << help.out;
  expect_usage_errors({{"allgather --nranks 4 --bytes 8", "--bytes 8"}});
}

TEST(BenchProgram, TableOutputHasOneRowPerSize) {
  ToolRun run = bench("allreduce --nranks 2 --bytes 4K,8K --iters 2 --rounds 1 --impl trainmover");
  ASSERT_EQ(run.status, 0) << run.all;
  EXPECT_NE(run.out.find("\n      4096 "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\n      8192 "), std::string::npos) << run.out;
}

TEST(BenchRecord, HelpAndBadArguments) {
  ToolRun help = bench("record --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--record-iterations"), std::string::npos) << help.out;
  ToolRun top = bench("--help");
  EXPECT_NE(top.out.find("record"), std::string::npos) << top.out;
  for (const char* args :
       {"record --nranks 0", "record --bytes 1G1", "record --frobnicate", "record --rounds",
        "record extra", "record --cpus-per-rank 0", "record --reserve 0",
        // Issue 14: refused like allreduce and switch refuse them.
        "record --job-timeout 0", "record --bytes 5", "record --bytes 6"}) {
    ToolRun run = bench(args);
    EXPECT_EQ(run.status, 2) << args << "\n" << run.all;
    EXPECT_NE(run.all.find("trainmover-bench record:"), std::string::npos) << run.all;
  }
}

TEST(BenchRecord, VariablesOfTheRecordingJobAreDefaultsCheckedLikeOptions) {
  ASSERT_EQ(setenv("TRAINMOVER_RECORD_RESERVE", "0", 1), 0);
  ToolRun run = bench("record --rounds 1");
  unsetenv("TRAINMOVER_RECORD_RESERVE");
  EXPECT_EQ(run.status, 2) << run.all;
  EXPECT_NE(run.all.find("TRAINMOVER_RECORD_RESERVE (the default of --reserve)"), std::string::npos)
      << run.all;
  ToolRun help = bench("record --help");
  EXPECT_NE(help.out.find("$TRAINMOVER_RECORD_RESERVE when set"), std::string::npos) << help.out;
}

TEST(BenchRecord, TinyRunPrintsEveryKeyAndReplaysTheRecording) {
  ToolRun run = bench(
      "record --nranks 2 --bytes 64K --passes 2 --rounds 2 --after 2 --cpus-per-rank 2 --control "
      "--reserve auto --json");
  ASSERT_EQ(run.status, 0) << run.all;
  auto lines = json_lines(run.out);
  ASSERT_EQ(lines.size(), 1u) << run.out;
  const Json& o = lines[0];
  EXPECT_EQ(json_string(o, "bench"), "record");
  for (const char* key : {"iter_time_s", "iter_time_recording_s", "replay_iter_time_s",
                          "compute_time_s", "baseline_iter_time_s", "iter_time_settled_s"}) {
    ASSERT_TRUE(json_number(o, key).ok()) << key;
    EXPECT_GT(json_number(o, key).value(), 0) << key;
  }
  for (const char* key :
       {"overhead_pct", "overhead_after_pct", "overhead_settled_pct", "replay_overhead_pct",
        "save_wait_s", "noise_pct", "noise_after_pct", "noise_settled_pct"})
    EXPECT_TRUE(json_number(o, key).ok()) << key;
  // Two iterations of one 64 KiB allreduce each, plus header and records.
  double bytes = json_number(o, "trace_bytes_per_role").value();
  EXPECT_GT(bytes, 2 * 65536);
  EXPECT_LT(bytes, 2 * 65536 + 1024);
  EXPECT_EQ(json_number(o, "trace_files").value(), 1);
  EXPECT_EQ(json_number(o, "replay_matches").value(), 1);
  EXPECT_EQ(json_number(o, "cpu_bind").value(), 2);
  EXPECT_EQ(json_number(o, "record_reserve_bytes").value(), 2 * (65536 + 44));
  // Which kind of host: a first touch costs something, however little.
  EXPECT_GT(json_number(o, "first_touch_us_per_page").value(), 0);
  for (const char* key : {"minflt_recorded", "minflt_recorded_plain", "minflt_after",
                          "minflt_after_plain", "minflt_settled", "minflt_settled_plain"}) {
    ASSERT_TRUE(json_number(o, key).ok()) << key;
    EXPECT_GE(json_number(o, key).value(), 0) << key;
  }
  // The reserve holds the recorded outputs: the captures fault nothing in
  // (each would take 16 faults into fresh pages). Not under ASan, whose
  // allocator and shadow memory take faults of their own.
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(
      json_number(o, "minflt_recorded").value() - json_number(o, "minflt_recorded_plain").value(),
      8);
#endif
}

}  // namespace
}  // namespace trainmover::bench
