// Tests of the simulation against closed forms, published figures and the
// properties a user relies on (determinism, orderings).
#include "simulation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>

#include "closed_form.h"
#include "policies.h"
#include "projection.h"
#include "statistics.h"

namespace trainmover::sim {
namespace {

// A 99.9% interval: the tests use fixed seeds, and a 95% interval would put
// one test in twenty a single unlucky seed away from failing.
constexpr double kZ999 = 3.29;

struct CheckpointCase {
  double mttf_h;
  double save_s;
  double restart_s;  // includes the infrastructure cost
};

void PrintTo(const CheckpointCase& c, std::ostream* out) {
  *out << "MTTF " << c.mttf_h << " h, save " << c.save_s << " s, restart " << c.restart_s << " s";
}

// Checkpoint-restart with only unexpected failures: the setting the closed
// forms describe.
ScenarioConfig failures_only(double mttf_s, double weeks) {
  ScenarioConfig config;
  config.gpus = 1024;
  config.weeks = weeks;
  config.mttf_s = mttf_s;
  config.infra_s = 0;
  config.planned_per_unexpected = 0;
  return config;
}

PolicyModel checkpoint_restart_model(double mttf_s, double save_s, double restart_s) {
  PolicyModel model;
  model.kind = PolicyKind::kCheckpointRestart;
  model.unexpected_down_s = restart_s;
  model.checkpoint_save_s = save_s;
  model.checkpoint_interval_s = young_interval(save_s, mttf_s);
  return model;
}

double standard_error(const Summary& summary) {
  return summary.ettr_stddev / std::sqrt(static_cast<double>(summary.replications));
}

class ClosedFormConvergence : public ::testing::TestWithParam<CheckpointCase> {};

TEST_P(ClosedFormConvergence, SimulationMatchesRenewalFormulaWithinItsInterval) {
  const CheckpointCase c = GetParam();
  const double mttf_s = c.mttf_h * 3600;
  const PolicyModel model = checkpoint_restart_model(mttf_s, c.save_s, c.restart_s);
  const Summary summary = simulate(failures_only(mttf_s, 26), model, 11, 40);
  const double exact = renewal_ettr(c.save_s, model.checkpoint_interval_s, c.restart_s, mttf_s);
  EXPECT_NEAR(summary.ettr_mean, exact, kZ999 * standard_error(summary))
      << "95% CI half-width " << summary.ettr_ci95;
}

TEST_P(ClosedFormConvergence, SimulationMatchesFirstOrderFormulaUpToItsSecondOrderTerm) {
  const CheckpointCase c = GetParam();
  const double mttf_s = c.mttf_h * 3600;
  const PolicyModel model = checkpoint_restart_model(mttf_s, c.save_s, c.restart_s);
  const Summary summary = simulate(failures_only(mttf_s, 26), model, 12, 40);
  const double tau = model.checkpoint_interval_s;
  const double first_order = first_order_ettr(c.save_s, tau, c.restart_s, mttf_s);
  // The first-order formula drops terms in (tau/MTTF)^2; bound them by its
  // distance from the exact renewal result.
  const double second_order =
      std::abs(renewal_ettr(c.save_s, tau, c.restart_s, mttf_s) - first_order);
  EXPECT_LT(second_order, 0.02);
  EXPECT_NEAR(summary.ettr_mean, first_order, kZ999 * standard_error(summary) + second_order);
}

INSTANTIATE_TEST_SUITE_P(Settings, ClosedFormConvergence,
                         ::testing::Values(CheckpointCase{50.0, 30.0, 300.0},
                                           CheckpointCase{7.9, 45.0, 420.0},
                                           CheckpointCase{1.8, 45.0, 508.0}));

TEST(Simulation, IntervalShrinksAsTheSimulatedPeriodGrows) {
  const double mttf_s = 4 * 3600;
  const PolicyModel model = checkpoint_restart_model(mttf_s, 45, 400);
  const Summary short_run = simulate(failures_only(mttf_s, 2), model, 3, 20);
  const Summary long_run = simulate(failures_only(mttf_s, 32), model, 3, 20);
  // Sixteen times the period: the interval should shrink about four-fold.
  EXPECT_LT(long_run.ettr_ci95, short_run.ettr_ci95 / 2.5);
}

TEST(Simulation, WithoutFailuresCheckpointRestartOnlyPaysItsSaves) {
  PolicyModel model = checkpoint_restart_model(1e6, 45, 300);
  const ScenarioConfig config = failures_only(std::numeric_limits<double>::infinity(), 1);
  const RunStats stats = simulate_once(config, model, 5);
  const double tau = model.checkpoint_interval_s;
  EXPECT_EQ(stats.unexpected, 0);
  EXPECT_NEAR(stats.ettr(), tau / (tau + 45), 0.002);
}

TEST(Simulation, RebalancingAloneCostsItsDowntimeEveryPeriod) {
  const PolicyParams params;
  ScenarioConfig config = failures_only(std::numeric_limits<double>::infinity(), 1);
  config.rebalance_every_s = 600;
  const PolicyModel model = resolve_policy(PolicyKind::kTrainmover, 1024, 1e9, params).value();
  const RunStats stats = simulate_once(config, model, 1);
  EXPECT_EQ(stats.rebalances, 7 * 24 * 6 - 1);  // the last one falls on the end
  EXPECT_NEAR(stats.ettr(), 1.0 - stats.rebalances * 16.6 / stats.wall_s, 1e-9);
}

TEST(Simulation, InstantStandbyReplenishmentNeverRunsOut) {
  const PolicyParams params;
  const ScenarioConfig config = failures_only(0.5 * 3600, 2);
  PolicyModel model =
      resolve_policy(PolicyKind::kTrainmover, 131072, config.mttf_s, params).value();
  model.standby_replenish_s = 0;
  EXPECT_EQ(simulate_once(config, model, 4).standby_misses, 0);
  model.standby_replenish_s = 3600;
  EXPECT_GT(simulate_once(config, model, 4).standby_misses, 0);
}

TEST(Simulation, DeterministicForASeed) {
  const PolicyParams params;
  const ScenarioConfig config = [] {
    ScenarioConfig c = failures_only(2 * 3600, 2);
    c.planned_per_unexpected = llama3_planned_per_unexpected();
    c.infra_s = 120;
    c.stragglers.per_day_at_16k = 4;
    return c;
  }();
  for (PolicyKind kind :
       {PolicyKind::kCheckpointRestart, PolicyKind::kTrainmover, PolicyKind::kTorchft}) {
    const PolicyModel model = resolve_policy(kind, 1024, config.mttf_s, params).value();
    const RunStats a = simulate_once(config, model, 42);
    const RunStats b = simulate_once(config, model, 42);
    const RunStats c = simulate_once(config, model, 43);
    EXPECT_EQ(a.useful_s, b.useful_s);
    EXPECT_EQ(a.interruptions(), b.interruptions());
    EXPECT_EQ(a.cause_counts, b.cause_counts);
    EXPECT_NE(a.useful_s, c.useful_s);
  }
}

TEST(Simulation, AllPoliciesSeeTheSameFailures) {
  const PolicyParams params;
  const ScenarioConfig config = failures_only(1.8 * 3600, 1);
  const RunStats reference = simulate_once(
      config, resolve_policy(PolicyKind::kTrainmover, 1024, config.mttf_s, params).value(), 9);
  for (PolicyKind kind : {PolicyKind::kCheckpointRestart, PolicyKind::kOobleck, PolicyKind::kParcae,
                          PolicyKind::kTorchft}) {
    const RunStats stats =
        simulate_once(config, resolve_policy(kind, 1024, config.mttf_s, params).value(), 9);
    EXPECT_EQ(stats.unexpected, reference.unexpected) << policy_name(kind);
    EXPECT_EQ(stats.cause_counts, reference.cause_counts) << policy_name(kind);
  }
}

ProjectionConfig at_scale(double gpus) {
  ProjectionConfig config;
  config.gpus = {gpus};
  config.policies = all_policies();
  config.policies.pop_back();  // no measured data here
  config.weeks = 2;
  config.replications = 10;
  return config;
}

double ettr_of(const std::vector<ProjectionRow>& rows, std::string_view policy) {
  for (const ProjectionRow& row : rows) {
    if (row.policy == policy) return row.summary.ettr_mean;
  }
  ADD_FAILURE() << "no row for " << policy;
  return 0;
}

TEST(Projection, TrainmoverBeatsCheckpointRestartAndItsOwnNoStandbyVariantAtScale) {
  for (double gpus : {16384.0, 131072.0}) {
    const std::vector<ProjectionRow> rows = project(at_scale(gpus)).value();
    EXPECT_GT(ettr_of(rows, "trainmover"), ettr_of(rows, "checkpoint-restart") + 0.1);
    EXPECT_GT(ettr_of(rows, "trainmover"), ettr_of(rows, "trainmover-nostandby"));
    EXPECT_GT(ettr_of(rows, "trainmover"), ettr_of(rows, "oobleck"));
    EXPECT_GT(ettr_of(rows, "oobleck"), ettr_of(rows, "parcae"));  // 157 s vs 221 s per event
  }
}

TEST(Projection, EttrFallsWithScale) {
  ProjectionConfig config = at_scale(1024);
  config.gpus = {1024, 16384, 131072};
  const std::vector<ProjectionRow> rows = project(config).value();
  const std::size_t per_scale = config.policies.size();
  for (std::size_t p = 0; p < per_scale; ++p) {
    EXPECT_GT(rows[p].summary.ettr_mean, rows[per_scale + p].summary.ettr_mean) << rows[p].policy;
    EXPECT_GT(rows[per_scale + p].summary.ettr_mean, rows[2 * per_scale + p].summary.ettr_mean)
        << rows[p].policy;
  }
}

TEST(Projection, MoreStandbysMissLessButIdleMore) {
  ProjectionConfig config = at_scale(131072);
  config.policies = {PolicyKind::kTrainmover};
  config.params.standbys = 1;
  const ProjectionRow one = project(config).value().front();
  config.params.standbys = 4;
  const ProjectionRow four = project(config).value().front();
  EXPECT_GT(one.summary.standby_misses, four.summary.standby_misses);
  EXPECT_GE(four.summary.ettr_mean, one.summary.ettr_mean);
  EXPECT_EQ(four.standby_gpus, 32);
}

// The TrainMover paper: rebalancing every 10 minutes leaves ETTR >= 0.97 with
// TrainMover and 0.42-0.50 with Megatron-LM (restart), at 1,024 GPUs.
TEST(Projection, RebalancingEveryTenMinutesMatchesThePublishedRange) {
  ProjectionConfig config = at_scale(1024);
  config.policies = {PolicyKind::kTrainmover, PolicyKind::kCheckpointRestart};
  config.mttf.fixed_mttf_hours = 1e9;  // isolate rebalancing
  config.rebalance_every_s = 600;
  const std::vector<ProjectionRow> rows = project(config).value();
  EXPECT_GE(ettr_of(rows, "trainmover"), 0.97);
  EXPECT_GE(ettr_of(rows, "checkpoint-restart"), 0.42);
  EXPECT_LE(ettr_of(rows, "checkpoint-restart"), 0.50);
}

TEST(Projection, StragglersCostTrainingTime) {
  ProjectionConfig config = at_scale(16384);
  config.policies = {PolicyKind::kTrainmover};
  const double without = project(config).value().front().summary.ettr_mean;
  config.stragglers.per_day_at_16k = 12;
  const double with = project(config).value().front().summary.ettr_mean;
  EXPECT_LT(with, without - 0.005);
}

TEST(Statistics, IntervalUsesStudentT) {
  const std::vector<double> samples{1.0, 2.0, 3.0};
  const MeanInterval interval = mean_with_interval(samples);
  EXPECT_DOUBLE_EQ(interval.mean, 2.0);
  EXPECT_DOUBLE_EQ(interval.stddev, 1.0);
  EXPECT_NEAR(interval.half_width_95, 4.303 / std::sqrt(3.0), 1e-9);
}

}  // namespace
}  // namespace trainmover::sim
