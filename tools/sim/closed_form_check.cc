#include "closed_form_check.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "closed_form.h"

namespace tmsim {
namespace {

std::string Fixed(double value, int decimals, int width) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%*.*f", width, decimals, value);
  return buffer;
}

}  // namespace

trainmover::Result<std::vector<ClosedFormCheckRow>> CheckClosedForm(
    const ProjectionConfig& config) {
  TM_RETURN_IF_ERROR(CheckRunSize(config));
  std::vector<ClosedFormCheckRow> rows;
  for (double gpus : config.gpus) {
    ScenarioConfig scenario;
    scenario.gpus = gpus;
    scenario.weeks = config.weeks;
    scenario.mttf_s = JobMttfHours(config.mttf, gpus) * 3600.0;
    scenario.infra_s = config.infra_s;
    TM_ASSIGN_OR_RETURN(
        const PolicyModel model,
        ResolvePolicy(PolicyKind::kCheckpointRestart, gpus, scenario.mttf_s, config.params));
    ClosedFormCheckRow row;
    row.gpus = gpus;
    row.mttf_s = scenario.mttf_s;
    row.interval_s = model.checkpoint_interval_s;
    row.save_s = model.checkpoint_save_s;
    row.restart_s = model.unexpected_down_s + scenario.infra_s;
    row.summary = Simulate(scenario, model, config.seed, config.replications);
    row.first_order = FirstOrderEttr(row.save_s, row.interval_s, row.restart_s, row.mttf_s);
    row.renewal = RenewalEttr(row.save_s, row.interval_s, row.restart_s, row.mttf_s);
    rows.push_back(row);
  }
  return rows;
}

void WriteClosedFormCheck(std::ostream& out, std::span<const ClosedFormCheckRow> rows) {
  out << "checkpoint-restart, unexpected failures only "
         "(first order: 1 - T_save/tau - (T_restart + tau/2)/MTTF)\n"
      << "   GPUs  MTTF h   tau s  T_save s  T_restart s  simulated (95% CI)  first order  "
         "renewal  renewal in CI\n";
  for (const ClosedFormCheckRow& row : rows) {
    const bool within = std::abs(row.summary.ettr_mean - row.renewal) <= row.summary.ettr_ci95;
    out << Fixed(row.gpus, 0, 7) << Fixed(row.mttf_s / 3600, 2, 8) << Fixed(row.interval_s, 0, 8)
        << Fixed(row.save_s, 1, 10) << Fixed(row.restart_s, 1, 13)
        << Fixed(row.summary.ettr_mean, 4, 11) << " ±" << Fixed(row.summary.ettr_ci95, 4, 6)
        << Fixed(row.first_order, 4, 13) << Fixed(row.renewal, 4, 9)
        << (within ? "            yes" : "             no") << '\n';
  }
}

}  // namespace tmsim
