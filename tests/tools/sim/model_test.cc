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

namespace tmsim {
namespace {

TEST(FailureModel, MttfPassesThroughBothPublishedPoints) {
  const MttfScaling scaling;
  EXPECT_NEAR(JobMttfHours(scaling, 1024), 7.9, 1e-9);
  EXPECT_NEAR(JobMttfHours(scaling, 16384), 1.8, 1e-9);
}

TEST(FailureModel, MttfIsAPowerLawThatKeepsFallingBeyondTheData) {
  const MttfScaling scaling;
  const double exponent = MttfScalingExponent(scaling);
  EXPECT_NEAR(exponent, std::log(7.9 / 1.8) / std::log(16.0), 1e-12);
  // Each doubling divides the MTTF by the same factor.
  EXPECT_NEAR(JobMttfHours(scaling, 65536) / JobMttfHours(scaling, 131072), std::pow(2, exponent),
              1e-9);
  EXPECT_LT(JobMttfHours(scaling, 131072), JobMttfHours(scaling, 65536));
  EXPECT_GT(JobMttfHours(scaling, 512), 7.9);
}

TEST(FailureModel, FixedMttfOverridesScaling) {
  MttfScaling scaling;
  scaling.fixed_mttf_hours = 3.0;
  EXPECT_EQ(JobMttfHours(scaling, 1024), 3.0);
  EXPECT_EQ(JobMttfHours(scaling, 131072), 3.0);
}

TEST(FailureModel, Llama3CausesAddUpToTheReport) {
  int total = 0;
  int software = 0;
  for (const FailureCause& cause : Llama3UnexpectedCauses()) {
    total += cause.llama3_count;
    if (!cause.removes_machine) software += cause.llama3_count;
  }
  EXPECT_EQ(total, kLlama3Unexpected);
  EXPECT_EQ(software, 54 + 7 + 2);  // software bug, NCCL watchdog, dependency
  EXPECT_EQ(kLlama3Planned + kLlama3Unexpected, 466);
  EXPECT_NEAR(Llama3PlannedPerUnexpected(), 47.0 / 419.0, 1e-12);
}

TEST(FailureModel, CauseSamplerFollowsTheReportedFrequencies) {
  CauseSampler sampler;
  std::mt19937_64 rng(7);
  std::vector<int> counts(Llama3UnexpectedCauses().size(), 0);
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) ++counts[sampler.Draw(rng)];
  const double faulty_gpu = static_cast<double>(counts[0]) / draws;
  EXPECT_NEAR(faulty_gpu, 148.0 / 419.0, 0.005);
}

TEST(RestartModel, MatchesThePublishedBreakdownAndCalibration) {
  const RestartModel restart;
  EXPECT_NEAR(restart.CheckpointLoadSeconds(), 1.56 * 60, 1e-9);
  EXPECT_NEAR(restart.RestartSeconds(8192), 6.47 * 60, 1e-9);
  EXPECT_NEAR(restart.RestartSeconds(1024), 300.0, 1e-9);
  EXPECT_GT(restart.RestartSeconds(131072), restart.RestartSeconds(65536));
}

TEST(LogScaling, TrainmoverFiguresAreReproducedAtTheirScales) {
  const PolicyParams params;
  EXPECT_NEAR(params.trainmover_planned.At(32), 11.5, 1e-9);
  EXPECT_NEAR(params.trainmover_planned.At(1024), 16.6, 1e-9);
  EXPECT_NEAR(params.trainmover_unexpected.At(32), 19.6, 1e-9);
  EXPECT_NEAR(params.trainmover_unexpected.At(1024), 21.1, 1e-9);
  EXPECT_NEAR(params.trainmover_planned.per_doubling_s, (16.6 - 11.5) / 5, 1e-9);
}

TEST(Policies, NamesRoundTrip) {
  for (PolicyKind kind : AllPolicies()) {
    ASSERT_TRUE(PolicyFromName(PolicyName(kind)).has_value());
    EXPECT_EQ(*PolicyFromName(PolicyName(kind)), kind);
  }
  EXPECT_FALSE(PolicyFromName("megatron").has_value());
}

TEST(Policies, CheckpointRestartUsesYoungsInterval) {
  const PolicyParams params;
  const double mttf_s = 1.8 * 3600;
  const PolicyModel model = ResolvePolicy(PolicyKind::kCheckpointRestart, 16384, mttf_s, params);
  EXPECT_NEAR(model.checkpoint_interval_s, std::sqrt(2 * params.checkpoint_save_s * mttf_s), 1e-9);
  EXPECT_NEAR(model.planned_down_s, model.unexpected_down_s + params.checkpoint_save_s, 1e-9);
}

TEST(Policies, OobleckAndParcaeChargeRemoveAndJoinAtThePublishedScale) {
  const PolicyParams params;
  EXPECT_NEAR(ResolvePolicy(PolicyKind::kOobleck, 32, 1e5, params).unexpected_down_s, 157, 1e-9);
  EXPECT_NEAR(ResolvePolicy(PolicyKind::kParcae, 32, 1e5, params).unexpected_down_s, 221, 1e-9);
}

TEST(Policies, NoStandbyVariantHoldsNoMachines) {
  const PolicyParams params;
  EXPECT_EQ(ResolvePolicy(PolicyKind::kTrainmover, 8192, 1e4, params).standby_machines, 1);
  EXPECT_EQ(ResolvePolicy(PolicyKind::kTrainmoverNoStandby, 8192, 1e4, params).standby_machines, 0);
}

TEST(Policies, TrainmoverPlannedNeverCostsMoreThanUnexpected) {
  const PolicyParams params;
  for (double gpus : {1024.0, 16384.0, 131072.0, 1048576.0}) {
    const PolicyModel model = ResolvePolicy(PolicyKind::kTrainmover, gpus, 1e4, params);
    EXPECT_LE(model.planned_down_s, model.unexpected_down_s) << gpus;
  }
  EXPECT_NEAR(ResolvePolicy(PolicyKind::kTrainmover, 1024, 1e4, params).planned_down_s, 16.6, 1e-9);
}

TEST(Policies, MeasuredWithoutDataIsAnError) {
  const PolicyParams params;
  EXPECT_THROW(ResolvePolicy(PolicyKind::kMeasured, 1024, 1e4, params), std::invalid_argument);
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
  const MeasuredDowntimes measured = ReadMeasuredDowntimes(in, 1.0, 0.3);
  EXPECT_NEAR(measured.planned.seconds, 1.5, 1e-12);
  EXPECT_NEAR(measured.unexpected.seconds, 2.5, 1e-12);
}

// A figure the bench could not measure is null: refused, naming it.
TEST(Measured, NullFigureIsAnErrorNamingIt) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"switchover_s":null,"first_collective_s":0.5})");
  try {
    ReadMeasuredDowntimes(in, 1.0, 0.3);
    FAIL() << "a null switchover_s was accepted";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("\"switchover_s\" is null"), std::string::npos)
        << error.what();
  }
}

TEST(Measured, MalformedLinesAreErrorsNamingTheLine) {
  for (const char* bad : {R"({"a": 1)", R"({"a": })", R"({"a": 1} x)", "[1]",
                          R"({"mode":"planned","impl":"delta","nranks":8,"switchover_s":inf})"}) {
    std::istringstream in(std::string("\n") + bad + "\n");
    try {
      ReadMeasuredDowntimes(in, 1.0, 0.3);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::runtime_error& error) {
      EXPECT_NE(std::string(error.what()).find("line 2"), std::string::npos) << error.what();
    }
  }
}

TEST(Measured, SampleFileGivesMedianAtLargestScaleAndFittedGrowth) {
  const MeasuredDowntimes measured =
      ReadMeasuredDowntimesFile(TM_SIM_DATA "/bench_switch_sample.jsonl", 1.0, 0.3);
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
  const MeasuredDowntimes measured = ReadMeasuredDowntimes(in, 1.0, 0.3);
  EXPECT_NEAR(measured.planned.At(16), 2.5, 1e-9);
  EXPECT_NEAR(measured.unexpected.At(32), 2.5 + 0.6, 1e-9);
}

TEST(Measured, ErrorsNameTheLine) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})"
      "\n{\"mode\": \"planned\", \"impl\": \"delta\"}\n");
  try {
    ReadMeasuredDowntimes(in, 1.0, 0.3);
    FAIL() << "no error for a row without nranks";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("line 2"), std::string::npos) << error.what();
  }
}

TEST(Measured, MissingModeIsAnError) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})");
  EXPECT_THROW(ReadMeasuredDowntimes(in, 1.0, 0.3), std::runtime_error);
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
  WriteJsonLines(out, std::span<const ProjectionRow>(&row, 1), 1);
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
  const double tau = YoungInterval(30, mttf_s);
  EXPECT_NEAR(RenewalEttr(30, tau, 300, mttf_s), FirstOrderEttr(30, tau, 300, mttf_s), 1e-5);
}

TEST(Projection, WasteCountsIdleJobGpusAndStandbys) {
  EXPECT_NEAR(WastedGpuHoursPerWeek(1000, 0.9, 0), 100 * 168.0, 1e-9);
  EXPECT_NEAR(WastedGpuHoursPerWeek(1000, 1.0, 8), 8 * 168.0, 1e-9);
}

}  // namespace
}  // namespace tmsim
