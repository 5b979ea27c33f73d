#include "event_printer.h"

#include <cstdio>

#include "common/parse.h"

namespace trainmover::launcher {
namespace {

using nlohmann::json;

std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

void EventPrinter::print(const json& e) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string line = describe(e);
  if (!line.empty()) std::fprintf(stderr, "%s: %s\n", prefix_.c_str(), line.c_str());
}

EventTotals EventPrinter::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return totals_;
}

std::string EventPrinter::describe(const json& e) {
  const std::string name = e.value("event", "");
  auto i = [&](const char* k) { return e.value(k, json()).dump(); };
  auto s = [&](const char* k) { return e.value(k, std::string()); };
  auto d = [&](const char* k) { return e.value(k, 0.0); };
  if (name == "slot_failed") {
    ++totals_.failures;
    return str_cat("slot ", i("slot"), " failed at step ", i("step"), ": ", s("detail"), " (",
                   s("source"), ", detected in ", format_fixed(d("detection_s") * 1e3, 1), " ms)");
  }
  if (name == "standby_promoted")
    return str_cat("standby ", i("standby"), " promoted to slot ", i("slot"));
  if (name == "state_transferred")
    return str_cat("state from slot ", i("donor"), " (", s("path"), "), ",
                   format_fixed(d("bytes") / 1e6, 2), " MB in ",
                   format_fixed(d("seconds") * 1e3, 1), " ms; resume at step ", i("resume_step"));
  if (name == "rolled_back")
    return str_cat("no live replica: every rank rolled back to the checkpoint of step ",
                   i("resume_step"), " in ", format_fixed(d("seconds") * 1e3, 1), " ms");
  if (name == "recovery_done") {
    ++totals_.recoveries;
    totals_.downtime_s += d("downtime_s");
    return str_cat("slot ", i("slot"), " recovered (", s("path"), "): downtime ",
                   format_fixed(d("downtime_s"), 3), " s = detection ",
                   format_fixed(d("detection_s"), 3), " + switch ", format_fixed(d("switch_s"), 3),
                   " + state ", format_fixed(d("state_transfer_s"), 3), " + first step ",
                   format_fixed(d("first_step_s"), 3));
  }
  if (name == "standby_warmup" && s("state") == "warming")
    return str_cat("standby ", i("standby"), " warming up for role ", s("warming"));
  if (name == "standby_warmup" && s("state") == "ready")
    return str_cat("standby ", i("standby"), " ready for ", i("ready_roles"), ", warm for ",
                   i("warm_roles"), e.contains("error") ? "; " + s("error") : "");
  if (name == "joiner_first_step")
    return str_cat("slot ", i("slot"), "'s first step as joiner (",
                   e.value("warm", false) ? "warm" : "cold",
                   "): ", format_fixed(d("wall_s") * 1e3, 1), " ms, ",
                   format_fixed(d("cpu_s") * 1e3, 1), " ms CPU, ", i("minflt"), " minor faults");
  if (name == "migration_requested") return str_cat("migration of slot ", i("slot"), " requested");
  if (name == "standby_lost" || name == "standby_failed")
    return str_cat("standby ", i("standby"), " lost: ", s("detail"), s("error"), "; pool ",
                   i("pool"));
  if (name == "joiner_failed")
    return str_cat("joiner (standby ", i("standby"), ") failed: ", s("detail"));
  if (name == "donor_failed") return str_cat("donor slot ", i("donor"), " failed");
  if (name == "no_standby")
    return str_cat("slot ", i("slot"), " failed and no standby is ready; waiting ", i("waiting_s"),
                   " s for one");
  if (name == "exit_after_finish")
    return str_cat("slot ", i("slot"), "'s process ", i("pid"),
                   " ended after it finished training (", s("detail"),
                   "): no failure, nothing to recover");
  if (name == "exit_ignored" && e.contains("slot"))  // the end of a failure told earlier
    return str_cat("slot ", i("slot"), "'s failed process ", i("pid"), " ended: ", s("detail"));
  if (name == "job_stopped") return str_cat("job stopped: ", s("reason"));
  return "";
}

}  // namespace trainmover::launcher
