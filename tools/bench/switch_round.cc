#include "switch_round.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/endpoint.h"
#include "comm/view_record.h"
#include "common/parse.h"
#include "common/secret.h"
#include "job_runner.h"
#include "launcher/child_env.h"
#include "launcher/spawn.h"
#include "rendezvous/tcp_store.h"
#include "rendezvous/tcp_store_server.h"

namespace trainmover::bench {
namespace {

// How far ahead of now the planned switch is set: every process must have
// read it and be asleep before it comes.
constexpr int64_t kGoLeadNs = 50'000'000;
// How long the workers loop allreduces before the kill.
constexpr auto kLoopBeforeKill = std::chrono::milliseconds(200);
// Waits on the store in slices this long, looking at the workers between.
constexpr double kWaitSliceS = 0.1;

// The worker processes of a round and the store they meet at. Waits watch
// the workers: one that exits with an error ends the wait with that error
// (its message from the store when it left one). The destructor kills and
// reaps every worker still running. Driver thread only.
class RoundProcesses {
 public:
  explicit RoundProcesses(const SwitchRoundPlan& plan) : plan_(plan) {}
  ~RoundProcesses();
  RoundProcesses(const RoundProcesses&) = delete;
  RoundProcesses& operator=(const RoundProcesses&) = delete;

  Status start();
  rendezvous::Store& store() { return *store_; }
  // The value of `key`, waiting at most the round's timeout.
  Result<std::string> wait_key(const std::string& key);
  // SIGKILLs process `who`; its death is then expected. Returns the time
  // taken just before kill().
  Result<int64_t> kill_now(int who);
  // Tells the workers they are done and waits (bounded) for all to exit.
  Status finish();

 private:
  struct Worker {
    pid_t pid = -1;
    bool running = false;
    bool killed = false;  // by us, on purpose
  };
  std::vector<std::string> worker_argv(bool standby) const;
  Status spawn(int who, const std::string& program, const JobSecret& secret, uint64_t job_id);
  Status check_workers();
  Status worker_ended(int who, int wstatus);

  const SwitchRoundPlan& plan_;
  std::unique_ptr<rendezvous::TcpStoreServer> server_;
  std::unique_ptr<rendezvous::TcpStore> store_;
  std::vector<Worker> workers_;  // index: who
};

RoundProcesses::~RoundProcesses() {
  for (Worker& w : workers_) {
    if (w.running) launcher::kill_and_reap(w.pid, Duration::zero());
  }
}

std::vector<std::string> RoundProcesses::worker_argv(bool standby) const {
  std::vector<std::string> argv = {"trainmover-bench", "switch-worker",
                                   "--mode",           mode_name(plan_.mode),
                                   "--impl",           impl_name(plan_.impl),
                                   "--victim",         std::to_string(plan_.victim),
                                   "--bytes",          std::to_string(plan_.bytes),
                                   "--warmup",         std::to_string(plan_.warmup),
                                   "--timeout",        std::to_string(plan_.timeout_s)};
  if (standby) argv.emplace_back("--standby");
  if (plan_.trace) argv.emplace_back("--trace");
  return argv;
}

Status RoundProcesses::spawn(int who, const std::string& program, const JobSecret& secret,
                             uint64_t job_id) {
  const bool standby = who == plan_.nranks;
  launcher::SpawnRequest request;
  request.path = program;
  request.argv = worker_argv(standby);
  // The standby's slot is the victim's: its rebuild creates that slot.
  request.env = launcher::child_environment(
      {standby ? plan_.victim : who, plan_.nranks, job_id, secret.to_hex(), server_->address()});
  TM_ASSIGN_OR_RETURN(launcher::SpawnedChild child, launcher::spawn_child(request));
  workers_[static_cast<size_t>(who)] = {child.pid, true, false};
  return Status::Ok();
}

Status RoundProcesses::start() {
  TM_ASSIGN_OR_RETURN(std::string program, self_executable());
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::generate());
  TM_ASSIGN_OR_RETURN(uint64_t job_id, random_u64());
  job_id >>= 1;  // printable as a positive signed number too
  TM_ASSIGN_OR_RETURN(server_, rendezvous::TcpStoreServer::start("127.0.0.1:0", secret, job_id));
  TM_ASSIGN_OR_RETURN(store_, rendezvous::TcpStore::connect(server_->address(), secret, job_id,
                                                            seconds(plan_.timeout_s)));
  workers_.resize(static_cast<size_t>(plan_.nranks) + 1);
  for (int who = 0; who <= plan_.nranks; ++who) {
    TM_RETURN_IF_ERROR(spawn(who, program, secret, job_id)
                           .with_context(str_cat("starting ", who_name(who, plan_.nranks))));
  }
  return Status::Ok();
}

Status RoundProcesses::worker_ended(int who, int wstatus) {
  Worker& w = workers_[static_cast<size_t>(who)];
  w.running = false;
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return Status::Ok();
  if (w.killed && WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) return Status::Ok();
  std::string how = WIFEXITED(wstatus) ? str_cat("exited with status ", WEXITSTATUS(wstatus))
                                       : str_cat("was killed by signal ", WTERMSIG(wstatus), " (",
                                                 strsignal(WTERMSIG(wstatus)), ")");
  auto message = store_->get(error_key(who), Duration::zero());
  return error(TM_ERROR_PEER_FAILED, who_name(who, plan_.nranks), " (pid ", w.pid, ") ", how,
               message.ok() ? ": " + message.value() : std::string());
}

Status RoundProcesses::check_workers() {
  for (size_t who = 0; who < workers_.size(); ++who) {
    Worker& w = workers_[who];
    if (!w.running) continue;
    int wstatus = 0;
    pid_t r = waitpid(w.pid, &wstatus, WNOHANG);
    if (r == w.pid) TM_RETURN_IF_ERROR(worker_ended(static_cast<int>(who), wstatus));
  }
  return Status::Ok();
}

Result<std::string> RoundProcesses::wait_key(const std::string& key) {
  Deadline deadline = Deadline::after(seconds(plan_.timeout_s));
  for (;;) {
    auto value = store_->get(key, seconds(kWaitSliceS));
    if (value.ok() || value.status().code() != TM_ERROR_TIMEOUT) return value;
    TM_RETURN_IF_ERROR(check_workers().with_context(str_cat("waiting for '", key, "'")));
    if (deadline.expired()) {
      return error(TM_ERROR_TIMEOUT, "store key '", key, "' did not appear within --timeout ",
                   plan_.timeout_s, " s");
    }
  }
}

Result<int64_t> RoundProcesses::kill_now(int who) {
  Worker& w = workers_[static_cast<size_t>(who)];
  if (!w.running) return error(TM_ERROR_INTERNAL, who_name(who, plan_.nranks), " is not running");
  w.killed = true;
  int64_t t = monotonic_now_ns();
  if (kill(w.pid, SIGKILL) != 0) return system_error("kill", errno);
  return t;
}

Status RoundProcesses::finish() {
  TM_RETURN_IF_ERROR(store_->set(kDoneKey, "1"));
  Deadline deadline = Deadline::after(seconds(plan_.timeout_s));
  while (std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.running; })) {
    TM_RETURN_IF_ERROR(check_workers().with_context("after the round"));
    if (deadline.expired())
      return error(TM_ERROR_TIMEOUT, "workers did not exit within --timeout after the round");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return Status::Ok();
}

// ---- the driver's side of the protocol ----

Status wait_all(RoundProcesses& procs, int nranks, std::string (*key)(int)) {
  for (int who = 0; who <= nranks; ++who) TM_RETURN_IF_ERROR(procs.wait_key(key(who)).status());
  return Status::Ok();
}

// The view of epoch 1: the endpoints every slot published, the victim's
// slot served by the standby.
Result<View> next_view(RoundProcesses& procs, const SwitchRoundPlan& plan) {
  View view;
  view.epoch = 1;
  for (int s = 0; s < plan.nranks; ++s) {
    std::string key =
        s == plan.victim ? std::string(kStandbyEndpointKey) : endpoint_key(kSwitchCommName, 0, s);
    TM_ASSIGN_OR_RETURN(std::string record, procs.wait_key(key));
    TM_ASSIGN_OR_RETURN(Endpoint e, parse_endpoint(record));
    view.slots.push_back(std::move(e));
  }
  return view;
}

Status drive_planned(RoundProcesses& procs, const SwitchRoundPlan& plan, SwitchRecord& record) {
  TM_RETURN_IF_ERROR(wait_all(procs, plan.nranks, up_key));
  if (plan.impl == SwitchImpl::kDelta) {
    TM_ASSIGN_OR_RETURN(View view, next_view(procs, plan));
    record.view_published = monotonic_now_ns();
    TM_RETURN_IF_ERROR(publish_view(procs.store(), kSwitchCommName, view));
    TM_RETURN_IF_ERROR(wait_all(procs, plan.nranks, prepared_key));
  }
  record.t0 = monotonic_now_ns() + kGoLeadNs;
  return procs.store().set(kGoKey, std::to_string(record.t0));
}

// The iteration to issue again: the earliest any stayer failed in (one can
// complete the collective the victim died in and fail the next).
Result<int64_t> resume_point(RoundProcesses& procs, const SwitchRoundPlan& plan) {
  int64_t resume = INT64_MAX;
  for (int s = 0; s < plan.nranks; ++s) {
    if (s == plan.victim) continue;
    TM_ASSIGN_OR_RETURN(std::string value, procs.wait_key(failed_at_key(s)));
    TM_ASSIGN_OR_RETURN(int64_t it, parse_int(value, 0, INT64_MAX));
    resume = std::min(resume, it);
  }
  return resume;
}

Status drive_unexpected(RoundProcesses& procs, const SwitchRoundPlan& plan, SwitchRecord& record) {
  TM_RETURN_IF_ERROR(wait_all(procs, plan.nranks, up_key));
  // The coordinator knows the membership before the failure.
  View view;
  if (plan.impl == SwitchImpl::kDelta) {
    TM_ASSIGN_OR_RETURN(view, next_view(procs, plan));
  }
  TM_RETURN_IF_ERROR(procs.store().set(kStartKey, "1"));
  std::this_thread::sleep_for(kLoopBeforeKill);
  TM_ASSIGN_OR_RETURN(record.t0, procs.kill_now(plan.victim));
  TM_ASSIGN_OR_RETURN(std::string failed, procs.wait_key(kFailedSlotKey));
  if (failed != std::to_string(plan.victim)) {
    return error(TM_ERROR_INTERNAL, "the first failure reported names slot ", failed,
                 ", not the killed slot ", plan.victim);
  }
  record.view_published = monotonic_now_ns();
  if (plan.impl == SwitchImpl::kDelta) {
    TM_RETURN_IF_ERROR(publish_view(procs.store(), kSwitchCommName, view));
  } else {
    TM_RETURN_IF_ERROR(procs.store().set(kRebuildKey, "1"));
  }
  TM_ASSIGN_OR_RETURN(int64_t resume, resume_point(procs, plan));
  return procs.store().set(kResumeKey, std::to_string(resume));
}

Status collect(RoundProcesses& procs, const SwitchRoundPlan& plan, SwitchRecord& record) {
  for (int who = 0; who <= plan.nranks; ++who) {
    if (who == plan.victim && plan.mode == SwitchMode::kUnexpected) continue;
    TM_ASSIGN_OR_RETURN(std::string text, procs.wait_key(times_key(who)));
    TM_ASSIGN_OR_RETURN(record.stamps[who], parse_stamps(text));
  }
  return Status::Ok();
}

}  // namespace

Result<SwitchRecord> run_switch_round(const SwitchRoundPlan& plan) {
  RoundProcesses procs(plan);
  TM_RETURN_IF_ERROR(procs.start());
  SwitchRecord record;
  TM_RETURN_IF_ERROR(plan.mode == SwitchMode::kPlanned ? drive_planned(procs, plan, record)
                                                       : drive_unexpected(procs, plan, record));
  TM_RETURN_IF_ERROR(collect(procs, plan, record));
  TM_RETURN_IF_ERROR(procs.finish());
  return record;
}

}  // namespace trainmover::bench
