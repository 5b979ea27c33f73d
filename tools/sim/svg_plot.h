// An SVG line chart of wasted GPU-hours per week against job size, one line
// per policy, both axes logarithmic (scales and waste span decades).
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "projection.h"

namespace trainmover::sim {

void write_waste_plot(std::ostream& out, std::span<const ProjectionRow> rows,
                      const std::string& title);

}  // namespace trainmover::sim
