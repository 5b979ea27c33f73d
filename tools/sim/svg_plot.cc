#include "svg_plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

namespace trainmover::sim {
namespace {

constexpr double kWidth = 960, kHeight = 560;
constexpr double kLeft = 90, kRight = 230, kTop = 50, kBottom = 70;
// Dashes tell apart lines that run close together (and help colour-blind readers).
constexpr std::array<const char*, 8> kDashes{"", "8,4", "2,3",      "10,3,2,3",
                                             "", "3,3", "12,4,2,4", "1,2"};
constexpr std::array<const char*, 8> kColors{"#d62728", "#ff7f0e", "#8c564b", "#9467bd",
                                             "#1f77b4", "#17becf", "#2ca02c", "#7f7f7f"};

struct Range {
  double low, high;
  double fraction(double v) const { return high > low ? (v - low) / (high - low) : 0.5; }
};

struct Axes {
  Range x;  // log2 GPUs
  Range y;  // log10 wasted GPU-hours
  double X(double gpus) const {
    return kLeft + x.fraction(std::log2(gpus)) * (kWidth - kLeft - kRight);
  }
  double Y(double wasted) const {
    const double clamped = std::max(wasted, std::pow(10.0, y.low));
    return kHeight - kBottom - y.fraction(std::log10(clamped)) * (kHeight - kTop - kBottom);
  }
};

std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string gpu_label(double gpus) {
  char buffer[32];
  if (gpus >= 1024 && std::fmod(gpus, 1024) == 0) {
    std::snprintf(buffer, sizeof buffer, "%.0fK", gpus / 1024);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f", gpus);
  }
  return buffer;
}

std::string decade_label(int exponent) {
  static constexpr std::array<const char*, 4> kSuffix{"", "K", "M", "G"};
  const int group = std::clamp(exponent / 3, 0, 3);
  const double value = std::pow(10.0, exponent - 3 * group);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f%s", value, kSuffix[static_cast<std::size_t>(group)]);
  return buffer;
}

Axes fit_axes(std::span<const ProjectionRow> rows) {
  double gmin = rows.front().gpus, gmax = gmin, wmin = 1e300, wmax = 0;
  for (const ProjectionRow& row : rows) {
    gmin = std::min(gmin, row.gpus);
    gmax = std::max(gmax, row.gpus);
    if (row.wasted_gpu_hours_per_week > 0) wmin = std::min(wmin, row.wasted_gpu_hours_per_week);
    wmax = std::max(wmax, row.wasted_gpu_hours_per_week);
  }
  if (wmax <= 0) wmin = wmax = 1;
  const double pad = gmax > gmin ? 0.25 : 1.0;
  return Axes{Range{std::log2(gmin) - pad, std::log2(gmax) + pad},
              Range{std::floor(std::log10(wmin)), std::ceil(std::log10(wmax) + 1e-9)}};
}

void write_grid(std::ostream& out, const Axes& axes, std::span<const ProjectionRow> rows) {
  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kTop, y1 = kHeight - kBottom;
  out << "<rect x='" << x0 << "' y='" << y0 << "' width='" << x1 - x0 << "' height='" << y1 - y0
      << "' fill='white' stroke='#333'/>\n";
  for (int e = static_cast<int>(axes.y.low); e <= static_cast<int>(axes.y.high); ++e) {
    const double y = axes.Y(std::pow(10.0, e));
    out << "<line x1='" << x0 << "' x2='" << x1 << "' y1='" << num(y) << "' y2='" << num(y)
        << "' stroke='#ddd'/>\n<text x='" << x0 - 8 << "' y='" << num(y + 4)
        << "' text-anchor='end'>" << decade_label(e) << "</text>\n";
  }
  std::vector<double> scales;
  for (const ProjectionRow& row : rows) scales.push_back(row.gpus);
  std::sort(scales.begin(), scales.end());
  scales.erase(std::unique(scales.begin(), scales.end()), scales.end());
  for (double gpus : scales) {
    const double x = axes.X(gpus);
    out << "<line x1='" << num(x) << "' x2='" << num(x) << "' y1='" << y0 << "' y2='" << y1
        << "' stroke='#eee'/>\n<text x='" << num(x) << "' y='" << y1 + 20
        << "' text-anchor='middle'>" << gpu_label(gpus) << "</text>\n";
  }
  out << "<text x='" << (x0 + x1) / 2 << "' y='" << kHeight - 25
      << "' text-anchor='middle'>GPUs in the job (log scale)</text>\n"
      << "<text transform='translate(22," << (y0 + y1) / 2
      << ") rotate(-90)' text-anchor='middle'>wasted GPU-hours per week (log scale)</text>\n";
}

void write_series(std::ostream& out, const Axes& axes, std::span<const ProjectionRow> rows) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ProjectionRow*>> by_policy;
  for (const ProjectionRow& row : rows) {
    if (!by_policy.contains(row.policy)) order.push_back(row.policy);
    by_policy[row.policy].push_back(&row);
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    const char* color = kColors[i % kColors.size()];
    const char* dash = kDashes[i % kDashes.size()];
    std::vector<const ProjectionRow*>& points = by_policy[order[i]];
    std::sort(points.begin(), points.end(),
              [](const ProjectionRow* a, const ProjectionRow* b) { return a->gpus < b->gpus; });
    out << "<polyline fill='none' stroke='" << color << "' stroke-width='2.5' stroke-dasharray='"
        << dash << "' points='";
    for (const ProjectionRow* p : points) {
      out << num(axes.X(p->gpus)) << ',' << num(axes.Y(p->wasted_gpu_hours_per_week)) << ' ';
    }
    out << "'/>\n";
    for (const ProjectionRow* p : points) {
      out << "<circle cx='" << num(axes.X(p->gpus)) << "' cy='"
          << num(axes.Y(p->wasted_gpu_hours_per_week)) << "' r='4' fill='" << color << "'/>\n";
    }
    const double ly = kTop + 20 + 24 * static_cast<double>(i);
    const double lx = kWidth - kRight + 20;
    out << "<line x1='" << lx << "' x2='" << lx + 26 << "' y1='" << ly - 4 << "' y2='" << ly - 4
        << "' stroke='" << color << "' stroke-dasharray='" << dash
        << "' stroke-width='2.5'/>\n<text x='" << lx + 34 << "' y='" << ly << "'>" << order[i]
        << "</text>\n";
  }
}

}  // namespace

void write_waste_plot(std::ostream& out, std::span<const ProjectionRow> rows,
                      const std::string& title) {
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth << "' height='" << kHeight
      << "' viewBox='0 0 " << kWidth << ' ' << kHeight
      << "' font-family='sans-serif' font-size='13'>\n"
      << "<rect width='100%' height='100%' fill='#fafafa'/>\n"
      << "<text x='" << kLeft << "' y='30' font-size='17' font-weight='bold'>" << title
      << "</text>\n";
  if (!rows.empty()) {
    const Axes axes = fit_axes(rows);
    write_grid(out, axes, rows);
    write_series(out, axes, rows);
  }
  out << "</svg>\n";
}

}  // namespace trainmover::sim
