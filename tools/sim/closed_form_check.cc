#include "closed_form_check.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "closed_form.h"

namespace trainmover::sim {
namespace {

std::string fixed(double value, int decimals, int width) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%*.*f", width, decimals, value);
  return buffer;
}

}  // namespace

Result<std::vector<ClosedFormCheckRow>> check_closed_form(const ProjectionConfig& config) {
  TM_RETURN_IF_ERROR(check_run_size(config));
  std::vector<ClosedFormCheckRow> rows;
  for (double gpus : config.gpus) {
    ScenarioConfig scenario;
    scenario.gpus = gpus;
    scenario.weeks = config.weeks;
    scenario.mttf_s = job_mttf_hours(config.mttf, gpus) * 3600.0;
    scenario.infra_s = config.infra_s;
    TM_ASSIGN_OR_RETURN(
        const PolicyModel model,
        resolve_policy(PolicyKind::kCheckpointRestart, gpus, scenario.mttf_s, config.params));
    ClosedFormCheckRow row;
    row.gpus = gpus;
    row.mttf_s = scenario.mttf_s;
    row.interval_s = model.checkpoint_interval_s;
    row.save_s = model.checkpoint_save_s;
    row.restart_s = model.unexpected_down_s + scenario.infra_s;
    row.summary = simulate(scenario, model, config.seed, config.replications);
    row.first_order = first_order_ettr(row.save_s, row.interval_s, row.restart_s, row.mttf_s);
    row.renewal = renewal_ettr(row.save_s, row.interval_s, row.restart_s, row.mttf_s);
    rows.push_back(row);
  }
  return rows;
}

void write_closed_form_check(std::ostream& out, std::span<const ClosedFormCheckRow> rows) {
  out << "checkpoint-restart, unexpected failures only "
         "(first order: 1 - T_save/tau - (T_restart + tau/2)/MTTF)\n"
      << "   GPUs  MTTF h   tau s  T_save s  T_restart s  simulated (95% CI)  first order  "
         "renewal  renewal in CI\n";
  for (const ClosedFormCheckRow& row : rows) {
    const bool within = std::abs(row.summary.ettr_mean - row.renewal) <= row.summary.ettr_ci95;
    out << fixed(row.gpus, 0, 7) << fixed(row.mttf_s / 3600, 2, 8) << fixed(row.interval_s, 0, 8)
        << fixed(row.save_s, 1, 10) << fixed(row.restart_s, 1, 13)
        << fixed(row.summary.ettr_mean, 4, 11) << " ±" << fixed(row.summary.ettr_ci95, 4, 6)
        << fixed(row.first_order, 4, 13) << fixed(row.renewal, 4, 9)
        << (within ? "            yes" : "             no") << '\n';
  }
}

}  // namespace trainmover::sim
