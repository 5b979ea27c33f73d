#include "simulation.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <random>

#include "failure_model.h"
#include "statistics.h"

namespace trainmover::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kSecondsPerDay = 86400.0;
constexpr double kSecondsPerWeek = 7 * kSecondsPerDay;

std::uint64_t split_mix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One generator per kind of randomness, so that adding a policy option that
// draws (say) stragglers does not shift the failure times other runs see.
struct RandomStreams {
  explicit RandomStreams(std::uint64_t seed)
      : failures(split_mix64(seed)),
        maintenance(split_mix64(seed)),
        causes(split_mix64(seed)),
        stragglers(split_mix64(seed)) {}

  std::mt19937_64 failures;
  std::mt19937_64 maintenance;
  std::mt19937_64 causes;
  std::mt19937_64 stragglers;
};

double draw_after(double now, std::mt19937_64& rng, double mean_s) {
  if (!(mean_s > 0) || std::isinf(mean_s)) return kNever;
  return now + std::exponential_distribution<double>(1.0 / mean_s)(rng);
}

class JobRun {
 public:
  JobRun(const ScenarioConfig& config, const PolicyModel& policy, std::uint64_t seed)
      : config_(config), policy_(policy), rng_(seed), end_(config.weeks * kSecondsPerWeek) {
    stats_.cause_counts.assign(llama3_unexpected_causes().size(), 0);
    next_failure_ = draw_after(0, rng_.failures, config.mttf_s);
    next_maintenance_ = draw_after(0, rng_.maintenance, maintenance_mean());
    next_rebalance_ = config.rebalance_every_s > 0 ? config.rebalance_every_s : kNever;
    next_straggler_ = draw_after(0, rng_.stragglers, straggler_mean());
    if (policy.uses_checkpoints()) phase_end_ = policy.checkpoint_interval_s;
  }

  RunStats run() {
    while (now_ < end_) {
      const double next = std::min(next_event_time(), end_);
      accrue(next - now_);
      now_ = next;
      if (now_ < end_) dispatch();
    }
    stats_.wall_s = end_;
    return stats_;
  }

 private:
  double maintenance_mean() const {
    return config_.planned_per_unexpected > 0 ? config_.mttf_s / config_.planned_per_unexpected
                                              : kNever;
  }

  double straggler_mean() const {
    const double per_day = config_.stragglers.per_day_at_16k * config_.gpus / 16384.0;
    return per_day > 0 ? kSecondsPerDay / per_day : kNever;
  }

  double next_event_time() const {
    double next = std::min({next_failure_, next_maintenance_, next_rebalance_, next_straggler_,
                            straggler_detect_, next_standby_return()});
    if (down_) return std::min(next, down_until_);
    if (degraded_until_ > now_) next = std::min(next, degraded_until_);
    return std::min(next, phase_end_);
  }

  double next_standby_return() const {
    return standby_returns_.empty() ? kNever : standby_returns_.top();
  }

  double rate() const {
    double rate = 1.0;
    if (straggler_present_) rate *= 1.0 - config_.stragglers.slowdown;
    if (now_ < degraded_until_) rate *= 1.0 - policy_.degraded_fraction;
    return rate;
  }

  void accrue(double elapsed) {
    if (down_ || saving_ || elapsed <= 0) return;
    const double work = rate() * elapsed;
    stats_.useful_s += work;
    uncommitted_ += work;
    since_recovery_ += work;
  }

  // Handles one event due now; simultaneous events are handled on later
  // iterations, which advance time by zero.
  void dispatch() {
    if (down_ && now_ >= down_until_) return recover();
    if (!down_ && now_ >= phase_end_) return advance_checkpoint_phase();
    if (now_ >= next_failure_) return on_failure();
    if (now_ >= next_maintenance_) return on_maintenance();
    if (now_ >= next_rebalance_) return on_rebalance();
    if (now_ >= next_straggler_) return on_straggler_appears();
    if (now_ >= straggler_detect_) return on_straggler_detected();
    if (now_ >= next_standby_return()) standby_returns_.pop();
    // Otherwise the end of a degraded period: a rate change, nothing to do.
  }

  void recover() {
    down_ = false;
    since_recovery_ = 0;
    if (policy_.uses_checkpoints()) {
      saving_ = false;
      phase_end_ = now_ + policy_.checkpoint_interval_s;
    }
    if (policy_.degraded_s > 0) degraded_until_ = now_ + policy_.degraded_s;
  }

  void advance_checkpoint_phase() {
    if (!saving_) {
      saving_ = true;
      phase_end_ = now_ + policy_.checkpoint_save_s;
      return;
    }
    saving_ = false;
    uncommitted_ = 0;
    phase_end_ = now_ + policy_.checkpoint_interval_s;
  }

  void on_failure() {
    next_failure_ = draw_after(now_, rng_.failures, config_.mttf_s);
    ++stats_.unexpected;
    const std::size_t cause = cause_sampler_.draw(rng_.causes);
    ++stats_.cause_counts[cause];
    lose_work();
    double downtime = policy_.unexpected_down_s + config_.infra_s;
    if (llama3_unexpected_causes()[cause].removes_machine) downtime += replace_machine();
    // A failure during recovery starts the recovery over.
    go_down(downtime);
  }

  void lose_work() {
    if (policy_.uses_checkpoints()) {
      stats_.useful_s -= uncommitted_;
      uncommitted_ = 0;
    } else if (!down_) {
      const double lost = std::min(policy_.lost_work_s, since_recovery_);
      stats_.useful_s -= lost;
      since_recovery_ -= lost;
    }
  }

  // Extra downtime for bringing in a replacement machine.
  double replace_machine() {
    if (policy_.no_standby_extra_s <= 0) return 0;
    const int available = policy_.standby_machines - static_cast<int>(standby_returns_.size());
    if (available > 0) {
      standby_returns_.push(now_ + policy_.standby_replenish_s);
      return 0;
    }
    ++stats_.standby_misses;
    return policy_.no_standby_extra_s;
  }

  void on_maintenance() {
    next_maintenance_ = draw_after(now_, rng_.maintenance, maintenance_mean());
    // Maintenance that falls due while the job is down is done in that window.
    if (down_) return;
    ++stats_.planned;
    planned_stop(policy_.planned_down_s + config_.infra_s);
  }

  // Rebalancing is started by the job on machines it holds, so no scheduler or
  // failure-detection (infrastructure) cost is paid.
  void on_rebalance() {
    next_rebalance_ = now_ + config_.rebalance_every_s;
    if (down_) return;
    ++stats_.rebalances;
    planned_stop(policy_.rebalance_down_s);
  }

  void on_straggler_appears() {
    next_straggler_ = draw_after(now_, rng_.stragglers, straggler_mean());
    if (straggler_present_) return;
    straggler_present_ = true;
    straggler_detect_ = now_ + config_.stragglers.detect_s;
  }

  void on_straggler_detected() {
    straggler_detect_ = kNever;
    straggler_present_ = false;
    if (down_) return;  // swapped out during the ongoing recovery
    ++stats_.planned;
    planned_stop(policy_.planned_down_s + config_.infra_s);
  }

  // A planned stop saves state first (checkpoint-restart saves a checkpoint as
  // part of planned_down_s), so nothing is lost.
  void planned_stop(double downtime) {
    uncommitted_ = 0;
    go_down(downtime);
  }

  void go_down(double downtime) {
    down_until_ = down_ ? std::max(down_until_, now_ + downtime) : now_ + downtime;
    down_ = true;
    saving_ = false;
    phase_end_ = kNever;
    degraded_until_ = std::min(degraded_until_, now_);
  }

  const ScenarioConfig& config_;
  const PolicyModel& policy_;
  RandomStreams rng_;
  CauseSampler cause_sampler_;
  RunStats stats_;
  const double end_;
  double now_ = 0;

  double next_failure_ = kNever;
  double next_maintenance_ = kNever;
  double next_rebalance_ = kNever;
  double next_straggler_ = kNever;
  double straggler_detect_ = kNever;
  std::priority_queue<double, std::vector<double>, std::greater<>> standby_returns_;

  bool down_ = false;
  double down_until_ = 0;
  bool saving_ = false;
  double phase_end_ = kNever;
  double degraded_until_ = 0;
  double uncommitted_ = 0;
  double since_recovery_ = 0;
  bool straggler_present_ = false;
};

}  // namespace

RunStats simulate_once(const ScenarioConfig& config, const PolicyModel& policy,
                       std::uint64_t seed) {
  return JobRun(config, policy, seed).run();
}

std::uint64_t replication_seed(std::uint64_t seed, double gpus, int replication) {
  std::uint64_t state = seed;
  state ^= split_mix64(state) ^ std::bit_cast<std::uint64_t>(gpus);
  state ^= split_mix64(state) ^ static_cast<std::uint64_t>(replication);
  return split_mix64(state);
}

Summary simulate(const ScenarioConfig& config, const PolicyModel& policy, std::uint64_t seed,
                 int replications) {
  std::vector<double> ettrs;
  Summary summary;
  for (int r = 0; r < replications; ++r) {
    const RunStats stats = simulate_once(config, policy, replication_seed(seed, config.gpus, r));
    ettrs.push_back(stats.ettr());
    summary.interruptions += stats.interruptions();
    summary.unexpected += stats.unexpected;
    summary.standby_misses += stats.standby_misses;
  }
  const MeanInterval interval = mean_with_interval(ettrs);
  summary.replications = replications;
  summary.ettr_mean = interval.mean;
  summary.ettr_ci95 = interval.half_width_95;
  summary.ettr_stddev = interval.stddev;
  summary.interruptions /= replications;
  summary.unexpected /= replications;
  summary.standby_misses /= replications;
  return summary;
}

}  // namespace trainmover::sim
