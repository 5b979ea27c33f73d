#include "switch_worker.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "comm/communicator.h"
#include "comm/config.h"
#include "comm/view_record.h"
#include "common/parse.h"
#include "rendezvous/tcp_store.h"
#include "switch_options.h"
#include "switch_protocol.h"
#include "worker.h"

namespace trainmover::bench {
namespace {

constexpr int kExitFailed = 1;

struct WorkerArgs {
  SwitchMode mode = SwitchMode::kPlanned;
  SwitchImpl impl = SwitchImpl::kDelta;
  int victim = -1;
  uint64_t bytes = 4096;
  int warmup = 5;
  double timeout_s = 60;
  bool standby = false;
  bool trace = false;  // also measure the run-queue wait (runq_ns)
};

// One process of a round. Owns its communicator (replaced by a rebuild) and
// its store client; single-threaded. Every wait is bounded by timeout_s;
// errors name the step that failed.
class SwitchWorker {
 public:
  SwitchWorker(const WorkerArgs& args, CommConfig config,
               std::unique_ptr<rendezvous::TcpStore> store)
      : args_(args),
        config_(std::move(config)),
        store_(std::move(store)),
        send_(args.bytes / sizeof(float)),
        recv_(send_.size()) {}

  int who() const { return args_.standby ? config_.nslots : config_.slot; }
  std::string name() const { return who_name(who(), config_.nslots); }
  Status run() { return args_.standby ? run_standby() : run_slot(); }
  rendezvous::Store& store() { return *store_; }

 private:
  Status run_slot();
  Status planned_slot();
  Status unexpected_slot();
  Status run_standby();
  Status standby_takes_slot();
  Status loop_until_failure(Status& failure, int& iteration);
  Status report_failure(const Status& failure);
  Status report_failed_iteration(int iteration);
  Status prepare_delta();
  Status rebuild(int slot);
  Status collective(const char* what);
  Status warm_up();
  Status sleep_until_go();
  Status finish();
  Result<std::string> wait(const std::string& key) {
    return store_->get(key, seconds(args_.timeout_s));
  }
  Result<View> read_view();
  void stamp(const char* name) { stamps_[name] = monotonic_now_ns(); }
  // From begin_runq() to end_runq(): the CPU time this process's threads
  // used ("cpu_ns") and the time they waited for a CPU ("runq_ns").
  // (The wait is per live thread: when the communicator's threads end, as
  // in a rebuild, it is not reported.)
  void begin_runq() {
    sched_start_ = sched_times();
    cpu_start_ = process_cpu_ns();
  }
  void end_runq() {
    stamps_["cpu_ns"] = process_cpu_ns() - cpu_start_;
    SchedTimes now = sched_times();
    if (sched_start_.waiting_ns >= 0 && now.waiting_ns >= sched_start_.waiting_ns)
      stamps_["runq_ns"] = now.waiting_ns - sched_start_.waiting_ns;
  }
  // The links this process opened and closed from begin_link_count() (its
  // ring up, before the switch) to count_links() (links ready after it), as
  // its communicators counted them: the rebuild's two share one counter.
  void begin_link_count() { links_before_ = config_.link_counters->read(); }
  void count_links() {
    const LinkCounts now = config_.link_counters->read();
    stamps_["links_opened_count"] = static_cast<int64_t>(now.opened - links_before_.opened);
    stamps_["links_closed_count"] = static_cast<int64_t>(now.closed - links_before_.closed);
  }
  // Links ready: the switch is over for this process.
  void end_switch() {
    stamp("ready");
    end_runq();
    count_links();
  }
  bool planned() const { return args_.mode == SwitchMode::kPlanned; }
  bool delta() const { return args_.impl == SwitchImpl::kDelta; }

  WorkerArgs args_;
  CommConfig config_;
  std::unique_ptr<rendezvous::TcpStore> store_;
  std::unique_ptr<Communicator> comm_;
  Stamps stamps_;
  SchedTimes sched_start_;
  int64_t cpu_start_ = 0;
  LinkCounts links_before_;
  std::vector<float> send_;
  std::vector<float> recv_;
};

// One allreduce of (slot + 1), checked, so a broken switch cannot post a
// fast time.
Status SwitchWorker::collective(const char* what) {
  std::fill(send_.begin(), send_.end(), static_cast<float>(comm_->slot() + 1));
  Status st = comm_->allreduce(send_.data(), recv_.data(), send_.size(), TM_FLOAT32, TM_SUM);
  if (st.ok())
    st = check_output(Collective::kAllreduce, recv_.data(), recv_.size(), comm_->nslots());
  return st.with_context(what);
}

Status SwitchWorker::warm_up() {
  for (int i = 0; i < args_.warmup; ++i) TM_RETURN_IF_ERROR(collective("warm-up allreduce"));
  return Status::Ok();
}

Result<View> SwitchWorker::read_view() {
  TM_ASSIGN_OR_RETURN(std::string record, wait(view_key(kSwitchCommName, 1)));
  return parse_view(record);
}

// The full-rebuild baseline: this process's communicator goes, and (unless
// `slot` is -1: the leaver) a new one is created under another name, which
// rendezvouses through the store and connects the whole ring again.
Status SwitchWorker::rebuild(int slot) {
  comm_.reset();
  if (slot < 0) return Status::Ok();
  CommConfig config = config_;
  config.name = kRebuildCommName;
  config.slot = slot;
  TM_ASSIGN_OR_RETURN(comm_, Communicator::create(config));
  return Status::Ok();
}

// Phase 1 of a planned delta switch on a stayer or the leaver.
Status SwitchWorker::prepare_delta() {
  TM_ASSIGN_OR_RETURN(View next, read_view());
  stamp("view");
  TM_RETURN_IF_ERROR(comm_->prepare_switch(next).with_context("prepare_switch"));
  TM_RETURN_IF_ERROR(comm_->wait_prepared().with_context("wait_prepared"));
  stamp("prepared");
  return store_->set(prepared_key(who()), "1");
}

// Planned mode: sleeps until the switch time the driver set.
Status SwitchWorker::sleep_until_go() {
  TM_ASSIGN_OR_RETURN(std::string go, wait(kGoKey));
  TM_ASSIGN_OR_RETURN(int64_t t0, parse_int(go, 0, INT64_MAX));
  begin_runq();
  sleep_until_ns(t0, one_cpu_each(config_.nslots + 1));
  stamp("woke");
  return Status::Ok();
}

Status SwitchWorker::finish() {
  TM_RETURN_IF_ERROR(store_->set(times_key(who()), encode_stamps(stamps_)));
  // Exit only when every process is done: a process leaving the ring early
  // could look like a failure to a neighbour still finishing its collective.
  return wait(kDoneKey).status();
}

Status SwitchWorker::run_slot() {
  TM_ASSIGN_OR_RETURN(comm_, Communicator::create(config_));
  TM_RETURN_IF_ERROR(warm_up());
  begin_link_count();
  TM_RETURN_IF_ERROR(store_->set(up_key(who()), "1"));
  return planned() ? planned_slot() : unexpected_slot();
}

Status SwitchWorker::planned_slot() {
  const bool leaver = config_.slot == args_.victim;
  if (delta()) TM_RETURN_IF_ERROR(prepare_delta());
  TM_RETURN_IF_ERROR(sleep_until_go());
  if (delta()) {
    TM_RETURN_IF_ERROR(comm_->switchover(1).with_context("switchover"));
  } else {
    TM_RETURN_IF_ERROR(rebuild(leaver ? -1 : config_.slot).with_context("rebuild"));
  }
  end_switch();
  if (!leaver) {
    TM_RETURN_IF_ERROR(collective("first allreduce after the switch"));
    stamp("first");
  }
  return finish();
}

Status SwitchWorker::loop_until_failure(Status& failure, int& iteration) {
  Deadline deadline = Deadline::after(seconds(args_.timeout_s));
  for (iteration = 0;; ++iteration) {
    Status st = comm_->allreduce(send_.data(), recv_.data(), send_.size(), TM_FLOAT32, TM_SUM);
    if (!st.ok()) {
      stamp("detect");
      failure = st;
      return Status::Ok();
    }
    if (deadline.expired()) {
      return error(TM_ERROR_TIMEOUT, "no allreduce failed within ", args_.timeout_s,
                   " s of the loop: the victim was not killed");
    }
  }
}

// The failure report the coordinator waits for: from the failed slot's two
// ring neighbours only (they see the broken links themselves; the others
// learn of it from them), one counter increment each, and the failed slot
// from the first. The iteration to issue again is reported later
// (report_failed_iteration), off the path to the switch.
Status SwitchWorker::report_failure(const Status& failure) {
  if (failure.failed_slot() != args_.victim) {
    return error(TM_ERROR_INTERNAL, "the failure names slot ", failure.failed_slot(),
                 ", not the killed slot ", args_.victim, ": ", failure.message());
  }
  const int n = config_.nslots;
  const bool neighbour =
      config_.slot == (args_.victim + 1) % n || config_.slot == (args_.victim + n - 1) % n;
  if (!neighbour) return Status::Ok();
  TM_ASSIGN_OR_RETURN(int64_t reports, store_->add(kFailuresKey, 1));
  if (reports == 1) {
    TM_RETURN_IF_ERROR(store_->set(kFailedSlotKey, std::to_string(failure.failed_slot())));
  }
  return Status::Ok();
}

Status SwitchWorker::report_failed_iteration(int iteration) {
  return store_->set(failed_at_key(config_.slot), std::to_string(iteration));
}

Status SwitchWorker::unexpected_slot() {
  TM_RETURN_IF_ERROR(wait(kStartKey).status());
  Status failure;
  int iteration = 0;
  TM_RETURN_IF_ERROR(loop_until_failure(failure, iteration));
  begin_runq();
  TM_RETURN_IF_ERROR(report_failure(failure));
  if (delta()) {
    TM_ASSIGN_OR_RETURN(View next, read_view());
    stamp("view");
    TM_RETURN_IF_ERROR(comm_->prepare_switch(next).with_context("prepare_switch"));
    // While the standby connects in the background.
    TM_RETURN_IF_ERROR(report_failed_iteration(iteration));
    TM_RETURN_IF_ERROR(comm_->switchover(1).with_context("switchover"));
  } else {
    TM_RETURN_IF_ERROR(wait(kRebuildKey).status());
    stamp("view");
    TM_RETURN_IF_ERROR(rebuild(config_.slot).with_context("rebuild"));
  }
  end_switch();
  if (!delta()) TM_RETURN_IF_ERROR(report_failed_iteration(iteration));
  TM_RETURN_IF_ERROR(wait(kResumeKey).status());
  TM_RETURN_IF_ERROR(collective("allreduce issued again after the switch"));
  stamp("first");
  return finish();
}

// The standby becomes the victim's slot: `view` is when it learns it
// should, `linked` when its links are up.
Status SwitchWorker::standby_takes_slot() {
  if (!delta()) {
    stamp("view");
    if (!planned()) begin_runq();
    TM_RETURN_IF_ERROR(rebuild(args_.victim).with_context("rebuild"));
    end_switch();
    stamp("linked");
    return Status::Ok();
  }
  TM_ASSIGN_OR_RETURN(View next, read_view());
  stamp("view");
  if (!planned()) begin_runq();
  TM_RETURN_IF_ERROR(comm_->join(next).with_context("join"));
  if (!planned()) {
    TM_RETURN_IF_ERROR(comm_->switchover(1).with_context("switchover"));
    end_switch();
    stamp("linked");
    return Status::Ok();
  }
  TM_RETURN_IF_ERROR(comm_->wait_prepared().with_context("wait_prepared"));
  stamp("prepared");
  stamp("linked");
  return store_->set(prepared_key(who()), "1");
}

Status SwitchWorker::run_standby() {
  begin_link_count();
  if (delta()) {
    TM_ASSIGN_OR_RETURN(comm_, Communicator::create_standby(config_));
    TM_RETURN_IF_ERROR(store_->set(kStandbyEndpointKey, encode_endpoint(comm_->endpoint())));
  }
  TM_RETURN_IF_ERROR(store_->set(up_key(who()), "1"));
  if (planned()) {
    if (delta()) TM_RETURN_IF_ERROR(standby_takes_slot());
    TM_RETURN_IF_ERROR(sleep_until_go());
    if (delta()) {
      TM_RETURN_IF_ERROR(comm_->switchover(1).with_context("switchover"));
      end_switch();
    } else {
      TM_RETURN_IF_ERROR(standby_takes_slot());
    }
  } else {
    if (!delta()) TM_RETURN_IF_ERROR(wait(kRebuildKey).status());
    TM_RETURN_IF_ERROR(standby_takes_slot());
    TM_RETURN_IF_ERROR(wait(kResumeKey).status());
  }
  TM_RETURN_IF_ERROR(collective("first allreduce after joining"));
  stamp("first");
  return finish();
}

// A name that `lookup` (parse_mode_name, parse_impl_name) knows.
template <typename T>
cli::CommandLine::Parser name_parser(bool (*lookup)(std::string_view, T&), T& out) {
  return [lookup, &out](std::string_view text) -> Status {
    if (!lookup(text, out)) return error(TM_ERROR_INVALID_ARGUMENT, "unknown name '", text, "'");
    return Status::Ok();
  };
}

// The hidden mode's options, as `trainmover-bench switch` passes them.
cli::CommandLine worker_command_line(WorkerArgs& a) {
  cli::CommandLine command_line("trainmover-bench switch-worker",
                                "trainmover-bench switch-worker --victim SLOT [OPTIONS]",
                                "One process of a `trainmover-bench switch` round.\n");
  command_line.custom("mode", "MODE", name_parser(parse_mode_name, a.mode), "planned, unexpected")
      .custom("impl", "IMPL", name_parser(parse_impl_name, a.impl), "delta, rebuild")
      .integer("victim", "SLOT", 0, 4095, a.victim, "the slot replaced")
      .required()
      .size("bytes", "B", 4, uint64_t{64} << 20, a.bytes, "size of each allreduce")
      .integer("warmup", "W", 0, 1000, a.warmup, "allreduces before the switch")
      .duration("timeout", "SEC", 1e-3, 24 * 3600, a.timeout_s, "limit of every wait")
      .flag("standby", a.standby, "this process is the standby")
      .flag("trace", a.trace, "also measure the run-queue wait");
  return command_line;
}

Result<std::unique_ptr<SwitchWorker>> connect_worker(const WorkerArgs& args) {
  tm_config_t c_config{};
  TM_RETURN_IF_ERROR(init_config(c_config));
  TM_ASSIGN_OR_RETURN(CommConfig config, CommConfig::from_c(c_config));
  config.name = kSwitchCommName;
  config.link_counters = std::make_shared<LinkCounters>();
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::from_hex(config.job_secret));
  TM_ASSIGN_OR_RETURN(auto store,
                      rendezvous::TcpStore::connect(config.store_address, secret, config.job_id,
                                                    seconds(args.timeout_s)));
  return std::make_unique<SwitchWorker>(args, std::move(config), std::move(store));
}

}  // namespace

int switch_worker_main(int argc, char** argv) {
  WorkerArgs args;
  cli::CommandLine command_line = worker_command_line(args);
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  if (args.bytes % sizeof(float) != 0)
    return command_line.usage_error(str_cat("--bytes: ", args.bytes, " is not a multiple of 4"));
  auto worker = connect_worker(args);
  if (!worker.ok()) {
    std::fprintf(stderr, "trainmover-bench switch-worker: %s\n", worker.status().message().c_str());
    return kExitFailed;
  }
  Status st = worker.value()->run();
  if (st.ok()) return 0;
  (void)worker.value()->store().set(error_key(worker.value()->who()), st.message());
  std::fprintf(stderr, "trainmover-bench switch-worker (%s): %s\n", worker.value()->name().c_str(),
               st.message().c_str());
  return kExitFailed;
}

}  // namespace trainmover::bench
