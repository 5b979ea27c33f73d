#include "report.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "common/json.h"
#include "failure_model.h"

namespace tmsim {
namespace {

std::string Fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string Padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string EttrCell(const Summary& summary) {
  return Fixed(summary.ettr_mean, 4) + " ±" + Fixed(summary.ettr_ci95, 4);
}

std::string Cell(double value, int decimals, std::size_t width) {
  return Padded(Fixed(value, decimals), width);
}

// `value` rounded to `decimals` for JSON: an integer with none; null (by
// the writer) when it is not finite.
trainmover::Json Figure(double value, int decimals) {
  if (!std::isfinite(value)) return value;
  const double scale = std::pow(10.0, decimals);
  const double rounded = std::round(value * scale) / scale;
  if (decimals == 0 && std::fabs(rounded) < 9e15) return static_cast<long long>(rounded);
  return rounded;
}

}  // namespace

void WriteModels(std::ostream& out, const ProjectionConfig& config) {
  out << "   GPUs  policy                MTTF h  unexpected s  planned s  rebalance s  "
         "lost work s  ckpt every s  standbys\n";
  for (double gpus : config.gpus) {
    const double mttf_s = JobMttfHours(config.mttf, gpus) * 3600.0;
    for (PolicyKind kind : config.policies) {
      const PolicyModel model = ResolvePolicy(kind, gpus, mttf_s, config.params);
      std::string policy(PolicyName(kind));
      policy.resize(20, ' ');
      const bool checkpoints = model.UsesCheckpoints();
      out << Cell(gpus, 0, 7) << "  " << policy << Cell(mttf_s / 3600, 2, 8)
          << Cell(model.unexpected_down_s, 1, 14) << Cell(model.planned_down_s, 1, 11)
          << Cell(model.rebalance_down_s, 1, 13)
          << (checkpoints ? Padded("ckpt", 13) : Cell(model.lost_work_s, 1, 13))
          << (checkpoints ? Cell(model.checkpoint_interval_s, 0, 14) : Padded("-", 14))
          << Padded(std::to_string(model.standby_machines), 10) << '\n';
    }
  }
}

void WriteTable(std::ostream& out, std::span<const ProjectionRow> rows, double weeks) {
  out << "   GPUs  policy                MTTF h  interrupts/wk  ETTR (95% CI)    "
         "standby GPUs  wasted GPU-h/wk   cost $/wk\n";
  double previous_gpus = -1;
  for (const ProjectionRow& row : rows) {
    if (row.gpus != previous_gpus && previous_gpus >= 0) out << '\n';
    previous_gpus = row.gpus;
    std::string policy = row.policy;
    policy.resize(20, ' ');
    out << Padded(Fixed(row.gpus, 0), 7) << "  " << policy << Padded(Fixed(row.mttf_hours, 2), 8)
        << Padded(Fixed(row.summary.interruptions / weeks, 1), 15) << "  " << EttrCell(row.summary)
        << Padded(std::to_string(row.standby_gpus), 14)
        << Padded(Fixed(row.wasted_gpu_hours_per_week, 0), 17)
        << Padded(Fixed(row.cost_usd_per_week, 0), 12) << '\n';
  }
}

void WriteJsonLines(std::ostream& out, std::span<const ProjectionRow> rows, double weeks) {
  for (const ProjectionRow& row : rows) {
    const trainmover::Json line = {
        {"gpus", Figure(row.gpus, 0)},
        {"policy", row.policy},
        {"ettr", Figure(row.summary.ettr_mean, 6)},
        {"ettr_ci95", Figure(row.summary.ettr_ci95, 6)},
        {"wasted_gpu_hours_per_week", Figure(row.wasted_gpu_hours_per_week, 1)},
        {"cost_usd_per_week", Figure(row.cost_usd_per_week, 0)},
        {"interruptions", Figure(row.summary.interruptions, 2)},
        {"unexpected", Figure(row.summary.unexpected, 2)},
        {"standby_misses", Figure(row.summary.standby_misses, 2)},
        {"standby_gpus", row.standby_gpus},
        {"mttf_hours", Figure(row.mttf_hours, 3)},
        {"weeks", Figure(weeks, 2)},
        {"replications", row.summary.replications}};
    out << trainmover::json_line(line) << '\n';
  }
}

}  // namespace tmsim
