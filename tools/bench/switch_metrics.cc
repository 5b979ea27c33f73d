#include "switch_metrics.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "common/str.h"

namespace trainmover::bench {
namespace {

constexpr double kNsPerSecond = 1e9;

// Reads timestamps of a record relative to its t0, naming what is missing.
class StampReader {
 public:
  StampReader(const SwitchRoundPlan& plan, const SwitchRecord& record)
      : plan_(plan), record_(record) {}

  Result<double> at(int who, const char* name) const {
    auto p = record_.stamps.find(who);
    auto s = p == record_.stamps.end() ? Stamps::const_iterator() : p->second.find(name);
    if (p == record_.stamps.end() || s == p->second.end()) {
      return error(TM_ERROR_PROTOCOL, who_name(who, plan_.nranks), " reported no '", name,
                   "' timestamp");
    }
    return static_cast<double>(s->second - record_.t0) / kNsPerSecond;
  }

  Result<double> max_at(const std::vector<int>& whos, const char* name) const {
    double worst = std::numeric_limits<double>::lowest();  // times before t0 are negative
    for (int who : whos) {
      TM_ASSIGN_OR_RETURN(double t, at(who, name));
      worst = std::max(worst, t);
    }
    return worst;
  }

  // A duration a process reported ("..._ns"), in seconds.
  Result<double> duration(int who, const char* name) const {
    TM_ASSIGN_OR_RETURN(int64_t ns, reported(who, name));
    return static_cast<double>(ns) / kNsPerSecond;
  }

  // The sum over `whos` of a count they reported ("..._count").
  Result<double> sum(const std::vector<int>& whos, const char* name) const {
    int64_t total = 0;
    for (int who : whos) {
      TM_ASSIGN_OR_RETURN(int64_t n, reported(who, name));
      total += n;
    }
    return static_cast<double>(total);
  }

  Result<double> span(int who, const char* from, const char* to) const {
    TM_ASSIGN_OR_RETURN(double a, at(who, from));
    TM_ASSIGN_OR_RETURN(double b, at(who, to));
    return b - a;
  }

 private:
  Result<int64_t> reported(int who, const char* name) const {
    auto p = record_.stamps.find(who);
    auto s = p == record_.stamps.end() ? Stamps::const_iterator() : p->second.find(name);
    if (p == record_.stamps.end() || s == p->second.end()) {
      return error(TM_ERROR_PROTOCOL, who_name(who, plan_.nranks), " reported no '", name, "'");
    }
    return s->second;
  }

  const SwitchRoundPlan& plan_;
  const SwitchRecord& record_;
};

struct ProcessSets {
  std::vector<int> openers;    // open links at the switch
  std::vector<int> live;       // every process that reports timestamps
  std::vector<int> new_ring;   // the processes of the ring after the switch
  std::vector<int> survivors;  // slots that stay (unexpected: the detectors)
};

ProcessSets process_sets(const SwitchRoundPlan& plan) {
  ProcessSets sets;
  const int standby = plan.nranks;
  for (int who = 0; who <= plan.nranks; ++who) {
    bool victim = who == plan.victim;
    if (!victim || plan.mode == SwitchMode::kPlanned) sets.live.push_back(who);
    if (!victim) sets.new_ring.push_back(who);
    if (!victim && who != standby) sets.survivors.push_back(who);
  }
  if (plan.impl == SwitchImpl::kRebuild) {
    sets.openers = sets.new_ring;
  } else {
    sets.openers = ring_neighbours(plan.nranks, plan.victim);
    sets.openers.push_back(standby);
  }
  return sets;
}

// Max over `openers` of the time from being told to act (woken at t0 when
// planned, the view or decision read when unexpected) to links ready: the
// switch without the coordinator's and the scheduler's share.
Result<double> local_switch_time(const SwitchRoundPlan& plan, const StampReader& r,
                                 const std::vector<int>& openers) {
  const bool planned = plan.mode == SwitchMode::kPlanned;
  double worst = 0;
  for (int who : openers) {
    TM_ASSIGN_OR_RETURN(double t, r.span(who, planned ? "woke" : "view", "ready"));
    worst = std::max(worst, t);
  }
  return worst;
}

std::string format_ms(int64_t ns) {
  char value[32];
  std::snprintf(value, sizeof value, "%.3f", static_cast<double>(ns) / 1e6);
  return value;
}

}  // namespace

std::vector<int> ring_neighbours(int nranks, int victim) {
  int left = (victim + nranks - 1) % nranks;
  int right = (victim + 1) % nranks;
  if (left == right) return {left};
  return {left, right};
}

Result<SwitchMetrics> compute_switch_metrics(const SwitchRoundPlan& plan,
                                             const SwitchRecord& record) {
  StampReader r(plan, record);
  ProcessSets sets = process_sets(plan);
  SwitchMetrics m;
  TM_ASSIGN_OR_RETURN(m["switchover_s"], r.max_at(sets.openers, "ready"));
  TM_ASSIGN_OR_RETURN(m["switchover_all_s"], r.max_at(sets.live, "ready"));
  TM_ASSIGN_OR_RETURN(m["first_collective_s"], r.max_at(sets.new_ring, "first"));
  TM_ASSIGN_OR_RETURN(m["join_connect_s"], r.span(plan.nranks, "view", "linked"));
  TM_ASSIGN_OR_RETURN(m["switch_local_s"], local_switch_time(plan, r, sets.openers));
  double cpu = 0;
  for (int who : sets.openers) {
    TM_ASSIGN_OR_RETURN(double c, r.duration(who, "cpu_ns"));
    cpu = std::max(cpu, c);
  }
  m["switch_cpu_s"] = cpu;
  TM_ASSIGN_OR_RETURN(m["links_opened"], r.sum(sets.live, "links_opened_count"));
  TM_ASSIGN_OR_RETURN(m["links_closed"], r.sum(sets.live, "links_closed_count"));
  if (plan.mode == SwitchMode::kUnexpected) {
    TM_ASSIGN_OR_RETURN(m["detection_s"],
                        r.max_at(ring_neighbours(plan.nranks, plan.victim), "detect"));
    TM_ASSIGN_OR_RETURN(m["detection_all_s"], r.max_at(sets.survivors, "detect"));
  } else if (plan.impl == SwitchImpl::kDelta) {
    double published = static_cast<double>(record.view_published - record.t0) / kNsPerSecond;
    TM_ASSIGN_OR_RETURN(double prepared, r.max_at(sets.openers, "prepared"));
    m["prepare_s"] = prepared - published;
  }
  return m;
}

void print_switch_trace(const SwitchRoundPlan& plan, const SwitchRecord& record) {
  std::fprintf(stderr, "# trace %s %s N=%d victim=%d (ms after t0)\n", mode_name(plan.mode),
               impl_name(plan.impl), plan.nranks, plan.victim);
  if (record.view_published != 0) {
    std::fprintf(stderr, "  driver: view/decision published %.3f\n",
                 static_cast<double>(record.view_published - record.t0) / 1e6);
  }
  for (const auto& [who, stamps] : record.stamps) {
    std::string line = str_cat("  ", who_name(who, plan.nranks), ":");
    std::vector<std::pair<int64_t, std::string>> ordered;
    std::string durations;
    for (const auto& [name, ns] : stamps) {
      if (name.ends_with("_ns")) {
        durations += str_cat(" ", name.substr(0, name.size() - 3), "=", format_ms(ns));
      } else if (name.ends_with("_count")) {
        durations += str_cat(" ", name.substr(0, name.size() - 6), "=", ns);
      } else {
        ordered.emplace_back(ns, name);
      }
    }
    std::sort(ordered.begin(), ordered.end());
    for (const auto& [ns, name] : ordered)
      line += str_cat(" ", name, "=", format_ms(ns - record.t0));
    line += durations;
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace trainmover::bench
