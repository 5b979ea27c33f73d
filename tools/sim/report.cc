#include "report.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "common/json.h"
#include "failure_model.h"

namespace trainmover::sim {
namespace {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string ettr_cell(const Summary& summary) {
  return fixed(summary.ettr_mean, 4) + " ±" + fixed(summary.ettr_ci95, 4);
}

std::string cell(double value, int decimals, std::size_t width) {
  return padded(fixed(value, decimals), width);
}

// `value` rounded to `decimals` for JSON: an integer with none; null (by
// the writer) when it is not finite.
Json json_figure(double value, int decimals) {
  if (!std::isfinite(value)) return value;
  const double scale = std::pow(10.0, decimals);
  const double rounded = std::round(value * scale) / scale;
  if (decimals == 0 && std::fabs(rounded) < 9e15) return static_cast<long long>(rounded);
  return rounded;
}

}  // namespace

Status write_models(std::ostream& out, const ProjectionConfig& config) {
  std::ostringstream text;
  text << "   GPUs  policy                MTTF h  unexpected s  planned s  rebalance s  "
          "lost work s  ckpt every s  standbys\n";
  for (double gpus : config.gpus) {
    const double mttf_s = job_mttf_hours(config.mttf, gpus) * 3600.0;
    for (PolicyKind kind : config.policies) {
      TM_ASSIGN_OR_RETURN(const PolicyModel model,
                          resolve_policy(kind, gpus, mttf_s, config.params));
      std::string policy(policy_name(kind));
      policy.resize(20, ' ');
      const bool checkpoints = model.uses_checkpoints();
      text << cell(gpus, 0, 7) << "  " << policy << cell(mttf_s / 3600, 2, 8)
           << cell(model.unexpected_down_s, 1, 14) << cell(model.planned_down_s, 1, 11)
           << cell(model.rebalance_down_s, 1, 13)
           << (checkpoints ? padded("ckpt", 13) : cell(model.lost_work_s, 1, 13))
           << (checkpoints ? cell(model.checkpoint_interval_s, 0, 14) : padded("-", 14))
           << padded(std::to_string(model.standby_machines), 10) << '\n';
    }
  }
  out << text.str();
  return Status::Ok();
}

void write_table(std::ostream& out, std::span<const ProjectionRow> rows, double weeks) {
  out << "   GPUs  policy                MTTF h  interrupts/wk  ETTR (95% CI)    "
         "standby GPUs  wasted GPU-h/wk   cost $/wk\n";
  double previous_gpus = -1;
  for (const ProjectionRow& row : rows) {
    if (row.gpus != previous_gpus && previous_gpus >= 0) out << '\n';
    previous_gpus = row.gpus;
    std::string policy = row.policy;
    policy.resize(20, ' ');
    out << padded(fixed(row.gpus, 0), 7) << "  " << policy << padded(fixed(row.mttf_hours, 2), 8)
        << padded(fixed(row.summary.interruptions / weeks, 1), 15) << "  " << ettr_cell(row.summary)
        << padded(std::to_string(row.standby_gpus), 14)
        << padded(fixed(row.wasted_gpu_hours_per_week, 0), 17)
        << padded(fixed(row.cost_usd_per_week, 0), 12) << '\n';
  }
}

void write_json_lines(std::ostream& out, std::span<const ProjectionRow> rows, double weeks) {
  for (const ProjectionRow& row : rows) {
    const Json line = {
        {"gpus", json_figure(row.gpus, 0)},
        {"policy", row.policy},
        {"ettr", json_figure(row.summary.ettr_mean, 6)},
        {"ettr_ci95", json_figure(row.summary.ettr_ci95, 6)},
        {"wasted_gpu_hours_per_week", json_figure(row.wasted_gpu_hours_per_week, 1)},
        {"cost_usd_per_week", json_figure(row.cost_usd_per_week, 0)},
        {"interruptions", json_figure(row.summary.interruptions, 2)},
        {"unexpected", json_figure(row.summary.unexpected, 2)},
        {"standby_misses", json_figure(row.summary.standby_misses, 2)},
        {"standby_gpus", row.standby_gpus},
        {"mttf_hours", json_figure(row.mttf_hours, 3)},
        {"weeks", json_figure(weeks, 2)},
        {"replications", row.summary.replications}};
    out << json_line(line) << '\n';
  }
}

}  // namespace trainmover::sim
