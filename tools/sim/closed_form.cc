#include "closed_form.h"

#include <cmath>

namespace trainmover::sim {

double first_order_ettr(double save_s, double interval_s, double restart_s, double mttf_s) {
  return 1.0 - save_s / interval_s - (restart_s + interval_s / 2.0) / mttf_s;
}

double renewal_ettr(double save_s, double interval_s, double restart_s, double mttf_s) {
  const double segment = interval_s + save_s;
  return interval_s * std::exp(-restart_s / mttf_s) / (mttf_s * std::expm1(segment / mttf_s));
}

}  // namespace trainmover::sim
