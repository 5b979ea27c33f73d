// Unit tests of the model pieces: scaling laws, published figures, parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "closed_form.h"
#include "failure_model.h"
#include "measured.h"
#include "policies.h"
#include "projection.h"
#include "report.h"

#include "common/json.h"

namespace trainmover::sim {
namespace {

TEST(FailureModel, MttfPassesThroughBothPublishedPoints) {
  const MttfScaling scaling;
  EXPECT_NEAR(job_mttf_hours(scaling, 1024), 7.9, 1e-9);
  EXPECT_NEAR(job_mttf_hours(scaling, 16384), 1.8, 1e-9);
}

TEST(FailureModel, MttfIsAPowerLawThatKeepsFallingBeyondTheData) {
  const MttfScaling scaling;
  const double exponent = mttf_scaling_exponent(scaling);
  EXPECT_NEAR(exponent, std::log(7.9 / 1.8) / std::log(16.0), 1e-12);
  // Each doubling divides the MTTF by the same factor.
  EXPECT_NEAR(job_mttf_hours(scaling, 65536) / job_mttf_hours(scaling, 131072),
              std::pow(2, exponent), 1e-9);
  EXPECT_LT(job_mttf_hours(scaling, 131072), job_mttf_hours(scaling, 65536));
  EXPECT_GT(job_mttf_hours(scaling, 512), 7.9);
}

TEST(FailureModel, FixedMttfOverridesScaling) {
  MttfScaling scaling;
  scaling.fixed_mttf_hours = 3.0;
  EXPECT_EQ(job_mttf_hours(scaling, 1024), 3.0);
  EXPECT_EQ(job_mttf_hours(scaling, 131072), 3.0);
}

TEST(FailureModel, Llama3CausesAddUpToTheReport) {
  int total = 0;
  int software = 0;
  for (const FailureCause& cause : llama3_unexpected_causes()) {
    total += cause.llama3_count;
    if (!cause.removes_machine) software += cause.llama3_count;
  }
  EXPECT_EQ(total, kLlama3Unexpected);
  EXPECT_EQ(software, 54 + 7 + 2);  // software bug, NCCL watchdog, dependency
  EXPECT_EQ(kLlama3Planned + kLlama3Unexpected, 466);
  EXPECT_NEAR(llama3_planned_per_unexpected(), 47.0 / 419.0, 1e-12);
}

TEST(FailureModel, CauseSamplerFollowsTheReportedFrequencies) {
  CauseSampler sampler;
  std::mt19937_64 rng(7);
  std::vector<int> counts(llama3_unexpected_causes().size(), 0);
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) ++counts[sampler.draw(rng)];
  const double faulty_gpu = static_cast<double>(counts[0]) / draws;
  EXPECT_NEAR(faulty_gpu, 148.0 / 419.0, 0.005);
}

TEST(RestartModel, MatchesThePublishedBreakdownAndCalibration) {
  const RestartModel restart;
  EXPECT_NEAR(restart.checkpoint_load_seconds(), 1.56 * 60, 1e-9);
  EXPECT_NEAR(restart.restart_seconds(8192), 6.47 * 60, 1e-9);
  EXPECT_NEAR(restart.restart_seconds(1024), 300.0, 1e-9);
  EXPECT_GT(restart.restart_seconds(131072), restart.restart_seconds(65536));
}

TEST(LogScaling, TrainmoverFiguresAreReproducedAtTheirScales) {
  const PolicyParams params;
  EXPECT_NEAR(params.trainmover_planned.at(32), 11.5, 1e-9);
  EXPECT_NEAR(params.trainmover_planned.at(1024), 16.6, 1e-9);
  EXPECT_NEAR(params.trainmover_unexpected.at(32), 19.6, 1e-9);
  EXPECT_NEAR(params.trainmover_unexpected.at(1024), 21.1, 1e-9);
  EXPECT_NEAR(params.trainmover_planned.per_doubling_s, (16.6 - 11.5) / 5, 1e-9);
}

TEST(Policies, NamesRoundTrip) {
  for (PolicyKind kind : all_policies()) {
    ASSERT_TRUE(policy_from_name(policy_name(kind)).has_value());
    EXPECT_EQ(*policy_from_name(policy_name(kind)), kind);
  }
  EXPECT_FALSE(policy_from_name("megatron").has_value());
}

TEST(Policies, CheckpointRestartUsesYoungsInterval) {
  const PolicyParams params;
  const double mttf_s = 1.8 * 3600;
  const PolicyModel model =
      resolve_policy(PolicyKind::kCheckpointRestart, 16384, mttf_s, params).value();
  EXPECT_NEAR(model.checkpoint_interval_s, std::sqrt(2 * params.checkpoint_save_s * mttf_s), 1e-9);
  EXPECT_NEAR(model.planned_down_s, model.unexpected_down_s + params.checkpoint_save_s, 1e-9);
}

TEST(Policies, OobleckAndParcaeChargeRemoveAndJoinAtThePublishedScale) {
  const PolicyParams params;
  EXPECT_NEAR(resolve_policy(PolicyKind::kOobleck, 32, 1e5, params).value().unexpected_down_s, 157,
              1e-9);
  EXPECT_NEAR(resolve_policy(PolicyKind::kParcae, 32, 1e5, params).value().unexpected_down_s, 221,
              1e-9);
}

TEST(Policies, NoStandbyVariantHoldsNoMachines) {
  const PolicyParams params;
  EXPECT_EQ(resolve_policy(PolicyKind::kTrainmover, 8192, 1e4, params).value().standby_machines, 1);
  EXPECT_EQ(
      resolve_policy(PolicyKind::kTrainmoverNoStandby, 8192, 1e4, params).value().standby_machines,
      0);
}

TEST(Policies, TrainmoverPlannedNeverCostsMoreThanUnexpected) {
  const PolicyParams params;
  for (double gpus : {1024.0, 16384.0, 131072.0, 1048576.0}) {
    const PolicyModel model = resolve_policy(PolicyKind::kTrainmover, gpus, 1e4, params).value();
    EXPECT_LE(model.planned_down_s, model.unexpected_down_s) << gpus;
  }
  EXPECT_NEAR(resolve_policy(PolicyKind::kTrainmover, 1024, 1e4, params).value().planned_down_s,
              16.6, 1e-9);
}

TEST(Policies, MeasuredWithoutDataIsAnError) {
  const PolicyParams params;
  auto model = resolve_policy(PolicyKind::kMeasured, 1024, 1e4, params);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("needs --measured FILE"), std::string::npos);
}

// What a JSON writer may legally emit: \u escapes (the bench's writer used
// them for control characters; the old reader took "\u0061" for "u0061"),
// CRLF line ends, spaces, keys in any order and values of any type.
TEST(Measured, ReadsEscapesAndCrlfLines) {
  std::istringstream in(
      "{\"impl\":\"delt\\u0061\",\"mode\":\"pl\\u0061nned\",\"nranks\":8,\"ok\":true,"
      "\"x\":null,\"switchover_s\":1,\"first_collective_s\":0.5}\r\n"
      "{ \"mode\" : \"unexpected\" , \"impl\" : \"delta\" , \"nranks\" : 8.0 , "
      "\"switchover_s\" : 2e0 , \"first_collective_s\" : 0.5 }\r\n"
      "\r\n");
  const MeasuredDowntimes measured = read_measured_downtimes(in, 1.0, 0.3).value();
  EXPECT_NEAR(measured.planned.seconds, 1.5, 1e-12);
  EXPECT_NEAR(measured.unexpected.seconds, 2.5, 1e-12);
}

// A figure the bench could not measure is null: refused, naming it.
TEST(Measured, NullFigureIsAnErrorNamingIt) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"switchover_s":null,"first_collective_s":0.5})");
  auto measured = read_measured_downtimes(in, 1.0, 0.3);
  ASSERT_FALSE(measured.ok()) << "a null switchover_s was accepted";
  EXPECT_NE(measured.status().message().find("switchover_s"), std::string::npos)
      << measured.status().message();
  EXPECT_NE(measured.status().message().find("null"), std::string::npos)
      << measured.status().message();
}

TEST(Measured, MalformedLinesAreErrorsNamingTheLine) {
  for (const char* bad : {R"({"a": 1)", R"({"a": })", R"({"a": 1} x)", "[1]",
                          R"({"mode":"planned","impl":"delta","nranks":8,"switchover_s":inf})"}) {
    std::istringstream in(std::string("\n") + bad + "\n");
    auto measured = read_measured_downtimes(in, 1.0, 0.3);
    ASSERT_FALSE(measured.ok()) << "accepted: " << bad;
    EXPECT_NE(measured.status().message().find("line 2"), std::string::npos)
        << measured.status().message();
  }
}

TEST(Measured, SampleFileGivesMedianAtLargestScaleAndFittedGrowth) {
  const MeasuredDowntimes measured =
      read_measured_downtimes_file(TM_SIM_DATA "/bench_switch_sample.jsonl", 1.0, 0.3).value();
  EXPECT_EQ(measured.planned.at_gpus, 16);
  EXPECT_NEAR(measured.planned.seconds, 0.25, 1e-9);  // median of 0.23, 0.27, 0.25
  EXPECT_NEAR(measured.planned.per_doubling_s, 0.05, 1e-9);
  EXPECT_NEAR(measured.unexpected.seconds, 0.50, 1e-9);  // the rebuild row is ignored
  EXPECT_NEAR(measured.unexpected.per_doubling_s, 0.07, 1e-9);
}

TEST(Measured, OneScaleFallsBackToTheGivenGrowth) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})"
      "\n"
      R"({"mode":"unexpected","impl":"delta","nranks":8,"links_changed":1,"switchover_s":2,"first_collective_s":0.5})"
      "\n");
  const MeasuredDowntimes measured = read_measured_downtimes(in, 1.0, 0.3).value();
  EXPECT_NEAR(measured.planned.at(16), 2.5, 1e-9);
  EXPECT_NEAR(measured.unexpected.at(32), 2.5 + 0.6, 1e-9);
}

TEST(Measured, ErrorsNameTheLine) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})"
      "\n{\"mode\": \"planned\", \"impl\": \"delta\"}\n");
  auto measured = read_measured_downtimes(in, 1.0, 0.3);
  ASSERT_FALSE(measured.ok()) << "no error for a row without nranks";
  EXPECT_NE(measured.status().message().find("line 2"), std::string::npos)
      << measured.status().message();
}

// `trainmover-bench recovery --json` rows: TrainMover's downtime_s is the
// unexpected line; the baselines' rows are ignored; with no planned rows,
// migrations are charged the failure's downtime.
TEST(Measured, RecoveryRowsGiveTheUnexpectedLineAndTheBaselinesAreIgnored) {
  std::istringstream in(R"({"impl":"trainmover","nranks":4,"downtime_s":0.01,"lost_steps":0})"
                        "\n"
                        R"({"impl":"stop-restart","nranks":16,"downtime_s":9})"
                        "\n"
                        R"({"impl":"cold-standby","nranks":16,"downtime_s":7})"
                        "\n"
                        R"({"impl":"trainmover","nranks":16,"downtime_s":0.03,"lost_steps":1})"
                        "\n");
  const MeasuredDowntimes measured = read_measured_downtimes(in, 1.0, 0.3).value();
  EXPECT_EQ(measured.unexpected.at_gpus, 16);
  EXPECT_NEAR(measured.unexpected.seconds, 0.03, 1e-12);
  EXPECT_NEAR(measured.unexpected.per_doubling_s, 0.01, 1e-12);  // 0.02 over two doublings
  EXPECT_NEAR(measured.planned.seconds, 0.03, 1e-12);
}

TEST(Measured, RecoveryRowWithoutDowntimeIsAnErrorNamingIt) {
  std::istringstream in(R"({"impl":"trainmover","nranks":4,"switch_s":0.01})");
  auto measured = read_measured_downtimes(in, 1.0, 0.3);
  ASSERT_FALSE(measured.ok());
  EXPECT_NE(measured.status().message().find("downtime_s"), std::string::npos)
      << measured.status().message();
}

TEST(Measured, MissingModeIsAnError) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})");
  EXPECT_FALSE(read_measured_downtimes(in, 1.0, 0.3).ok());
}

// JSON has no inf or nan: a figure that is not finite is written as null,
// and every line stays valid JSON.
TEST(Report, JsonLinesWriteNonFiniteFiguresAsNull) {
  ProjectionRow row;
  row.gpus = 1024;
  row.policy = "trainmover";
  row.mttf_hours = std::numeric_limits<double>::infinity();
  row.summary.ettr_mean = std::nan("");
  row.cost_usd_per_week = 12.4;
  std::ostringstream out;
  write_json_lines(out, std::span<const ProjectionRow>(&row, 1), 1);
  const trainmover::Json line = trainmover::Json::parse(out.str());
  EXPECT_TRUE(line.at("mttf_hours").is_null()) << out.str();
  EXPECT_TRUE(line.at("ettr").is_null()) << out.str();
  EXPECT_EQ(line.at("gpus"), 1024) << out.str();
  EXPECT_EQ(line.at("cost_usd_per_week"), 12) << out.str();
  EXPECT_EQ(out.str().find("inf"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("nan"), std::string::npos) << out.str();
}

TEST(ClosedForm, RenewalAgreesWithFirstOrderWhenFailuresAreRare) {
  const double mttf_s = 1e7;
  const double tau = young_interval(30, mttf_s);
  EXPECT_NEAR(renewal_ettr(30, tau, 300, mttf_s), first_order_ettr(30, tau, 300, mttf_s), 1e-5);
}

TEST(Projection, WasteCountsIdleJobGpusAndStandbys) {
  EXPECT_NEAR(wasted_gpu_hours_per_week(1000, 0.9, 0), 100 * 168.0, 1e-9);
  EXPECT_NEAR(wasted_gpu_hours_per_week(1000, 1.0, 8), 8 * 168.0, 1e-9);
}

}  // namespace
}  // namespace trainmover::sim
