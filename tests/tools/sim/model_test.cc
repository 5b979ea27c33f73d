// Unit tests of the model pieces: scaling laws, published figures, parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "closed_form.h"
#include "failure_model.h"
#include "flat_json.h"
#include "measured.h"
#include "policies.h"
#include "projection.h"

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
  const PolicyModel model = ResolvePolicy(PolicyKind::kCheckpointRestart, 16384, mttf_s, params).value();
  EXPECT_NEAR(model.checkpoint_interval_s, std::sqrt(2 * params.checkpoint_save_s * mttf_s), 1e-9);
  EXPECT_NEAR(model.planned_down_s, model.unexpected_down_s + params.checkpoint_save_s, 1e-9);
}

TEST(Policies, OobleckAndParcaeChargeRemoveAndJoinAtThePublishedScale) {
  const PolicyParams params;
  EXPECT_NEAR(ResolvePolicy(PolicyKind::kOobleck, 32, 1e5, params).value().unexpected_down_s, 157, 1e-9);
  EXPECT_NEAR(ResolvePolicy(PolicyKind::kParcae, 32, 1e5, params).value().unexpected_down_s, 221, 1e-9);
}

TEST(Policies, NoStandbyVariantHoldsNoMachines) {
  const PolicyParams params;
  EXPECT_EQ(ResolvePolicy(PolicyKind::kTrainmover, 8192, 1e4, params).value().standby_machines, 1);
  EXPECT_EQ(ResolvePolicy(PolicyKind::kTrainmoverNoStandby, 8192, 1e4, params).value().standby_machines, 0);
}

TEST(Policies, TrainmoverPlannedNeverCostsMoreThanUnexpected) {
  const PolicyParams params;
  for (double gpus : {1024.0, 16384.0, 131072.0, 1048576.0}) {
    const PolicyModel model = ResolvePolicy(PolicyKind::kTrainmover, gpus, 1e4, params).value();
    EXPECT_LE(model.planned_down_s, model.unexpected_down_s) << gpus;
  }
  EXPECT_NEAR(ResolvePolicy(PolicyKind::kTrainmover, 1024, 1e4, params).value().planned_down_s, 16.6, 1e-9);
}

TEST(Policies, MeasuredWithoutDataIsAnError) {
  const PolicyParams params;
  auto model = ResolvePolicy(PolicyKind::kMeasured, 1024, 1e4, params);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("needs --measured FILE"), std::string::npos);
}

TEST(FlatJson, ParsesTheBenchFormat) {
  const FlatObject row = ParseFlatJsonObject(
      R"({"mode": "planned", "impl": "delta", "nranks": 16, "ok": true, "x": null})");
  EXPECT_EQ(std::get<std::string>(row.at("mode")), "planned");
  EXPECT_EQ(std::get<double>(row.at("nranks")), 16.0);
  EXPECT_TRUE(std::get<bool>(row.at("ok")));
}

TEST(FlatJson, RejectsMalformedObjects) {
  EXPECT_THROW(ParseFlatJsonObject(R"({"a": 1)"), std::runtime_error);
  EXPECT_THROW(ParseFlatJsonObject(R"({"a": })"), std::runtime_error);
  EXPECT_THROW(ParseFlatJsonObject(R"({"a": 1} x)"), std::runtime_error);
}

TEST(Measured, SampleFileGivesMedianAtLargestScaleAndFittedGrowth) {
  const MeasuredDowntimes measured =
      ReadMeasuredDowntimesFile(TM_SIM_DATA "/bench_switch_sample.jsonl", 1.0, 0.3).value();
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
  const MeasuredDowntimes measured = ReadMeasuredDowntimes(in, 1.0, 0.3).value();
  EXPECT_NEAR(measured.planned.At(16), 2.5, 1e-9);
  EXPECT_NEAR(measured.unexpected.At(32), 2.5 + 0.6, 1e-9);
}

TEST(Measured, ErrorsNameTheLine) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})"
      "\n{\"mode\": \"planned\", \"impl\": \"delta\"}\n");
  auto measured = ReadMeasuredDowntimes(in, 1.0, 0.3);
  ASSERT_FALSE(measured.ok()) << "no error for a row without nranks";
  EXPECT_NE(measured.status().message().find("line 2"), std::string::npos)
      << measured.status().message();
}

TEST(Measured, MissingModeIsAnError) {
  std::istringstream in(
      R"({"mode":"planned","impl":"delta","nranks":8,"links_changed":1,"switchover_s":1,"first_collective_s":0.5})");
  EXPECT_FALSE(ReadMeasuredDowntimes(in, 1.0, 0.3).ok());
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
