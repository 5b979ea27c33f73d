#include "worker/worker.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "api/comm_handle.h"
#include "common/log.h"
#include "common/parse.h"
#include "rendezvous/store_factory.h"
#include "transport/transport_factory.h"
#include "worker/join_view.h"
#include "worker/worker_support.h"

namespace trainmover::worker {
namespace {

using control::Order;
using control::OrderKind;

// The host this process names when it registers: TRAINMOVER_HOST when set
// (the Slurm node name: several nodes may share one host name), else the
// host name.
std::string host_name() {
  if (auto host = get_env("TRAINMOVER_HOST"); host && !host->empty()) return *host;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// Test-only delays (trainmover(7)) that widen a window of a recovery,
// otherwise about a millisecond, so that a test can kill a process inside
// it: TRAINMOVER_TEST_DONOR_DELAY, seconds a donor waits before it sends
// its state; TRAINMOVER_TEST_JOINER_SWITCH_DELAY, seconds a joiner waits
// before it carries out its switch order (the stayers switch meanwhile);
// TRAINMOVER_TEST_EXIT_DELAY, seconds a rank lingers in tm_worker_finish
// after its goodbye was handled (its exit then is no failure).
Result<Duration> test_delay_from_env(const char* name) {
  auto text = get_env(name);
  if (!text || text->empty()) return Duration::zero();
  auto delay = parse_seconds(*text);
  if (!delay.ok()) return delay.status().with_context(name);
  return seconds(*delay);
}

Result<SwitchMode> switch_mode_from_env() {
  const std::string mode = get_env("TRAINMOVER_SWITCH").value_or("delta");
  if (mode == "delta" || mode.empty()) return SwitchMode::kDelta;
  if (mode == "rebuild") return SwitchMode::kRebuild;
  return error(TM_ERROR_INVALID_ARGUMENT, "TRAINMOVER_SWITCH must be delta or rebuild, not '", mode,
               "'");
}

// Under a PMIx store the job's first wire-up is one fence of every process
// of the PMIx job, standbys included (pmix_store.h). A standby may create
// its communicators only once promoted (its slot decides its groups), long
// after the active ranks wait in that fence: it takes part now, publishing
// nothing. Its later communicators then wire up through the store's TCP
// part, as a joiner's must.
Status take_part_in_pmix_round(const rendezvous::StoreSpec& spec, const JobSecret& secret,
                               const tm_config_t& config) {
  const Duration timeout = seconds(config.connect_timeout_s);
  TM_ASSIGN_OR_RETURN(auto store, rendezvous::open_store(spec, secret, config.job_id, timeout));
  return store->sync(timeout).with_context("a standby's part in the PMIx first wire-up");
}

}  // namespace

Result<std::unique_ptr<Worker>> Worker::create() {
  std::unique_ptr<Worker> w(new Worker());
  auto address = get_env("TRAINMOVER_CONTROL");
  if (!address || address->empty()) return w;
  tm_config_t config = TM_CONFIG_INITIALIZER;
  TM_RETURN_IF_ERROR(api_status(tm_config_init(&config), "read the TRAINMOVER_* environment"));
  if (config.job_secret == nullptr || config.store_address == nullptr)
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "TRAINMOVER_CONTROL is set but TRAINMOVER_JOB_SECRET or TRAINMOVER_STORE is not");
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::from_hex(config.job_secret));
  TM_ASSIGN_OR_RETURN(w->switch_mode_, switch_mode_from_env());
  TM_ASSIGN_OR_RETURN(w->donor_delay_, test_delay_from_env("TRAINMOVER_TEST_DONOR_DELAY"));
  TM_ASSIGN_OR_RETURN(w->joiner_switch_delay_,
                      test_delay_from_env("TRAINMOVER_TEST_JOINER_SWITCH_DELAY"));
  TM_ASSIGN_OR_RETURN(w->exit_delay_, test_delay_from_env("TRAINMOVER_TEST_EXIT_DELAY"));
  w->secret_ = secret;
  w->job_id_ = config.job_id;
  w->store_address_ = config.store_address;
  TM_ASSIGN_OR_RETURN(auto store, rendezvous::StoreSpec::parse(w->store_address_));
  auto str = [](const char* s) { return std::string(s != nullptr ? s : ""); };
  TM_ASSIGN_OR_RETURN(w->state_host_, transport::choose_listen_host(str(config.listen_address),
                                                                    str(config.listen_interface),
                                                                    store.tcp_address));
  w->kind_ = get_env("TRAINMOVER_STANDBY").value_or("0") == "1" ? WorkerKind::kStandby
                                                                : WorkerKind::kActive;
  w->slot_ = w->kind_ == WorkerKind::kActive ? config.slot : -1;
  // Armed before the coordinator knows us: any death after registration is
  // heard early. Without it (a program that closed inherited descriptors)
  // the job runs on: its exits and connections still tell, only later.
  auto lifeline = control::LifelineHolder::from_env();
  if (lifeline.ok()) {
    w->lifeline_ = std::move(*lifeline);
  } else {
    log(LogLevel::kWarn, "no lifeline (", lifeline.status().message(),
        "): the launcher hears of this process's death only at the end of its exit");
  }
  control::ControlClientOptions options;
  options.address = *address;
  options.job_id = config.job_id;
  options.identity.kind =
      w->kind_ == WorkerKind::kActive ? control::PeerKind::kActive : control::PeerKind::kStandby;
  options.identity.slot = w->slot_;
  TM_ASSIGN_OR_RETURN(options.identity.process.instance_id, random_u64());
  options.identity.process.pid = getpid();
  options.identity.process.host = host_name();
  TM_ASSIGN_OR_RETURN(options.identity.task, PmixFailures::own_task());
  // The worker outlives its client: ~Worker destroys client_ (and joins its
  // thread) before anything interrupt() touches.
  options.on_order = [raw = w.get()](const Order& order) { raw->interrupt(order); };
  // The coordinator lost (killed, or its host gone; under Slurm it is not
  // this process's parent, so nothing else ends the rank): a collective in
  // flight ends at once, and the training thread stops with lost().
  options.on_lost = [raw = w.get()](const Status& why) { raw->abort_step(why); };
  auto client = control::ControlClient::connect(options, secret);
  if (!client.ok()) return client.status().with_context("connect to the coordinator");
  w->client_ = std::move(*client);
  // Connected now, off the critical path of the first recovery.
  TM_RETURN_IF_ERROR(w->state_store().status().with_context("connect to the job's store"));
  // The resource manager's word that a task is gone (under srun
  // --mpi=pmix): to the coordinator, which fails that task's process.
  auto pmix = PmixFailures::start([raw = w.get()](int task, const std::string& detail) {
    (void)raw->client_->send(control::TaskLost{task, detail});
  });
  if (!pmix.ok()) return pmix.status();
  w->pmix_failures_ = std::move(*pmix);
  // After the listener, whose PMIx session the round then shares.
  if (w->kind_ == WorkerKind::kStandby && store.kind == rendezvous::StoreSpec::Kind::kPmix)
    TM_RETURN_IF_ERROR(take_part_in_pmix_round(store, secret, config));
  return w;
}

Worker::~Worker() {
  pmix_failures_.reset();  // no report uses client_ from here on
  client_.reset();         // no interrupt() runs from here on
}

Status Worker::register_buffer(const std::string& name, void* data, size_t bytes) {
  if (data == nullptr || bytes == 0)
    return error(TM_ERROR_INVALID_ARGUMENT, "state buffer '", name, "' is NULL or empty");
  if (last_boundary_)
    return error(TM_ERROR_INVALID_ARGUMENT, "state buffer '", name,
                 "' registered after the first step boundary");
  buffers_.push_back({name, data, bytes});
  return Status::Ok();
}

Status Worker::add_comm(tm_comm_t comm, std::vector<int> job_slots) {
  if (comm == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "comm is NULL");
  int nslots = 0;
  TM_RETURN_IF_ERROR(api_status(tm_comm_nslots(comm, &nslots), "tm_comm_nslots"));
  if (static_cast<int>(job_slots.size()) != nslots)
    return error(TM_ERROR_INVALID_ARGUMENT, "the communicator has ", nslots, " slots but ",
                 job_slots.size(), " job slots were given");
  std::lock_guard<std::mutex> lock(comms_mutex_);
  comms_.push_back({comm, std::move(job_slots)});
  return Status::Ok();
}

void Worker::set_in_step(bool in_step) {
  std::lock_guard<std::mutex> lock(comms_mutex_);
  in_step_ = in_step;
}

void Worker::interrupt(const Order& order) {
  order_cpu_mark_.store(process_cpu_seconds());
  {
    // Any order during a receive means the coordinator moved on (a new
    // round, a stop): the donor is not coming.
    std::lock_guard<std::mutex> lock(comms_mutex_);
    if (receiving_) state_listener_->cancel();
  }
  if (order.kind != OrderKind::kPrepare && order.kind != OrderKind::kRollback &&
      order.kind != OrderKind::kStop)
    return;
  std::lock_guard<std::mutex> lock(comms_mutex_);
  if (!in_step_) return;  // the main thread sees the order at its boundary
  in_step_ = false;
  for (const WorkerComm& c : comms_) {
    auto live = api::live_communicator(c.comm);
    if (live.ok())
      (void)(*live)->abort(error(TM_ERROR_PEER_FAILED, "the coordinator ordered a recovery (",
                                 control::order_kind_name(order.kind), ")"));
  }
}

// The coordinator hears of failures from ranks too: each slot a failed
// communicator names (its job slot), once. It acts on a report only when the
// slot also went silent (coordinator.cc).
void Worker::report_failures() {
  std::set<int> reported;
  for (const WorkerComm& c : comms_) {
    int failed = -1;
    if (tm_comm_failed_slot(c.comm, &failed) != TM_SUCCESS || failed < 0 ||
        failed >= static_cast<int>(c.job_slots.size()))
      continue;
    const int job_slot = c.job_slots[static_cast<size_t>(failed)];
    if (job_slot == slot_ || !reported.insert(job_slot).second) continue;
    auto live = api::live_communicator(c.comm);
    const std::string name = live.ok() ? (*live)->config().name : "?";
    (void)client_->send(control::FailureReport{
        job_slot,
        str_cat("a collective of communicator '", name, "' failed at its slot ", failed)});
  }
}

void Worker::abort_step(const Status& why) {
  std::lock_guard<std::mutex> lock(comms_mutex_);
  if (receiving_) state_listener_->cancel();
  if (!in_step_) return;
  in_step_ = false;
  for (const WorkerComm& c : comms_) {
    auto live = api::live_communicator(c.comm);
    if (live.ok()) (void)(*live)->abort(why);
  }
}

Status Worker::lost(Status st) const {
  if (st.ok() || !client_) return st;
  Status health = client_->health();
  // Fenced: the stop order's reason says why, not the closed channel after it.
  if (health.ok() || stopped_) return st;
  // health() says "lost the coordinator at HOST:PORT: why".
  return Status(TM_ERROR_PEER_FAILED, health.message() + "; stopping");
}

Result<uint64_t> Worker::step_boundary(uint64_t next_step) {
  if (kind_ == WorkerKind::kAlone) return next_step;
  set_in_step(false);
  auto run = boundary(next_step);
  if (!run.ok()) return lost(run.status());
  set_in_step(true);
  return run;
}

Result<uint64_t> Worker::boundary(uint64_t next_step) {
  size_t total = 0;
  for (const StateBuffer& b : buffers_) total += b.bytes;
  std::vector<std::byte>& snap = snapshots_[next_step % 2];
  snap.resize(total);  // allocates at the first two boundaries only
  size_t at = 0;
  for (const StateBuffer& b : buffers_) {
    std::memcpy(snap.data() + at, b.data, b.bytes);
    at += b.bytes;
  }
  snapshot_step_[next_step % 2] = next_step;
  last_boundary_ = next_step;
  // Before set_step: the report must reach the coordinator ahead of any
  // heartbeat that says the first step is done.
  if (measure_joiner_step_) TM_RETURN_IF_ERROR(measure_first_step(next_step));
  client_->set_step(next_step);
  if (announce_steps_ > 0) {  // the coordinator times the first step after a switch
    --announce_steps_;
    TM_RETURN_IF_ERROR(client_->send(control::Heartbeat{next_step}));
  }
  // Held: a planned migration's drain reached this boundary; the process
  // waits here, with no collective in flight, for the coordinator's next order.
  bool held = false;
  while (true) {
    if (drain_ && drain_->step <= next_step) {
      TM_RETURN_IF_ERROR(ack(*drain_, Status::Ok(), next_step));
      drain_.reset();
      held = true;
    }
    auto m = client_->next(held ? Duration(kOrderWait) : Duration::zero());
    if (!m.ok()) {
      if (!held && m.status().code() == TM_ERROR_TIMEOUT) return next_step;
      return held ? m.status().with_context("held at a step boundary for a migration") : m.status();
    }
    auto* order = std::get_if<Order>(&*m);
    if (order == nullptr) continue;
    if (order->kind == OrderKind::kDrain) {
      drain_ = *order;
      held = held && drain_->step <= next_step;  // else train on to its boundary
      continue;
    }
    abort_all(error(TM_ERROR_PEER_FAILED, "the coordinator ordered a recovery (",
                    control::order_kind_name(order->kind), ")"));
    return serve_orders(*order);
  }
}

Result<uint64_t> Worker::recover() {
  if (kind_ == WorkerKind::kAlone)
    return error(TM_ERROR_UNSUPPORTED,
                 "no coordinator to recover with (not started by trainmover-launch)");
  if (!last_boundary_)
    return error(TM_ERROR_INVALID_ARGUMENT, "recovery before the first step boundary");
  set_in_step(false);
  report_failures();
  abort_all(error(TM_ERROR_PEER_FAILED, "slot ", slot_, " is recovering"));
  auto resume = serve_orders(std::nullopt);
  if (!resume.ok()) return lost(resume.status());
  return resume;
}

Status Worker::warmup_begin(control::StageRole role) {
  if (kind_ != WorkerKind::kStandby)
    return error(TM_ERROR_INVALID_ARGUMENT, "only a standby warms up");
  if (warmup_reported_) return error(TM_ERROR_INVALID_ARGUMENT, "the warm-up is already done");
  control::WarmupProgress progress;
  progress.state = control::WarmupState::kWarming;
  progress.warming = role;
  return client_->send(progress);
}

Status Worker::warmup_done(std::set<control::StageRole> warm, std::set<control::StageRole> cold,
                           const std::string& detail) {
  if (kind_ != WorkerKind::kStandby)
    return error(TM_ERROR_INVALID_ARGUMENT, "only a standby warms up");
  if (warmup_reported_) return error(TM_ERROR_INVALID_ARGUMENT, "the warm-up is already done");
  control::WarmupProgress ready;
  ready.state = control::WarmupState::kReady;
  for (control::StageRole r : cold) {
    if (warm.count(r))
      return error(TM_ERROR_INVALID_ARGUMENT, "role ", control::stage_role_name(r),
                   " is both warm and cold");
  }
  ready.ready_roles = warm;
  ready.ready_roles.insert(cold.begin(), cold.end());
  if (ready.ready_roles.empty())
    return error(TM_ERROR_INVALID_ARGUMENT, "a ready standby needs at least one role");
  ready.warm_roles = warm;
  ready.error = detail.substr(0, control::kMaxText - 1);
  TM_RETURN_IF_ERROR(client_->send(ready));
  warm_roles_ = std::move(warm);
  warmup_reported_ = true;
  return Status::Ok();
}

Result<int> Worker::wait_promotion(Duration timeout) {
  if (kind_ != WorkerKind::kStandby)
    return error(TM_ERROR_INVALID_ARGUMENT, "only a standby waits to be promoted");
  if (!warmup_reported_) {
    // No warm-up: it allocates its role when promoted, so it can serve any
    // role (a cold standby, docs/runtime.md).
    TM_RETURN_IF_ERROR(warmup_done({},
                                   {control::StageRole::kNone, control::StageRole::kFirst,
                                    control::StageRole::kMiddle, control::StageRole::kLast},
                                   ""));
  }
  Deadline deadline = Deadline::after(timeout);
  while (true) {
    auto m = client_->next(deadline.remaining());
    if (!m.ok()) return lost(m.status().with_context("waiting to be promoted"));
    auto* order = std::get_if<Order>(&*m);
    if (order == nullptr) continue;
    if (order->kind == OrderKind::kStop) {
      stopped_ = true;
      return error(TM_ERROR_PEER_FAILED, "stopped by the coordinator: ", order->reason);
    }
    if (order->kind != OrderKind::kPromote) {
      (void)ack(*order, error(TM_ERROR_PROTOCOL, "a standby cannot carry out ",
                              control::order_kind_name(order->kind)));
      continue;
    }
    promotion_ = *order;
    return order->slot;
  }
}

Result<uint64_t> Worker::join() {
  if (!promotion_) return error(TM_ERROR_INVALID_ARGUMENT, "join before wait_promotion");
  const Order promote = *promotion_;
  auto joined = [&]() -> Status {
    // Both step snapshots now, written (so resident), while the job is still
    // preparing: otherwise the boundaries of the joiner's first step would
    // allocate and fault them in, twice the state, inside its first step.
    size_t total = 0;
    for (const StateBuffer& b : buffers_) total += b.bytes;
    for (auto& snap : snapshots_) snap.assign(total, std::byte{0});
    for (const WorkerComm& c : comms_) {
      if (comm_slot_of(c, promote.slot) < 0)
        return error(TM_ERROR_INVALID_ARGUMENT, "a communicator registered by the joiner of slot ",
                     promote.slot, " does not contain that slot");
    }
    return offer(promote);
  }();
  TM_RETURN_IF_ERROR(ack(promote, joined));
  // Superseded (another slot failed meanwhile): the next order promotes it again.
  if (!joined.ok() && joined.code() != TM_ERROR_ABORTED) return joined;
  slot_ = promote.slot;
  auto served = serve_orders(std::nullopt);
  if (!served.ok()) return lost(served.status());
  uint64_t resume = *served;
  kind_ = WorkerKind::kActive;
  state_listener_.reset();
  measure_joiner_step_ = true;
  // The coordinator ends the recovery at the joiners' first step done: a
  // joiner heartbeats at the resume step's boundary and the next one's at
  // once. Stayers do not: 2 messages a rank that the coordinator would read
  // inside the recovery for nothing.
  announce_steps_ = 2;
  return resume;
}

// The joiner's part of a promotion to `promote.epoch`: where its state
// listener and each communicator's endpoint are (join_view.h). Promoted again
// when the recovery starts a new round (another slot failed meanwhile).
Status Worker::offer(const Order& promote) {
  // A fresh listener each round: the last one may have been cancelled.
  TM_ASSIGN_OR_RETURN(StateListener listener, StateListener::open(state_host_));
  state_listener_ = std::move(listener);
  TM_ASSIGN_OR_RETURN(auto store, state_store());
  TM_RETURN_IF_ERROR(
      store->set(state_key(promote.epoch, promote.slot), state_listener_->address()));
  if (switch_mode_ == SwitchMode::kRebuild) return Status::Ok();  // created at the switch
  if (joined_) TM_RETURN_IF_ERROR(restart_joined_comms());
  for (const WorkerComm& c : comms_) {
    if (driven_by_parent(c, comms_)) continue;  // joined by its parent (join_groups)
    TM_ASSIGN_OR_RETURN(Communicator * live, api::live_communicator(c.comm));
    TM_RETURN_IF_ERROR(offer_endpoint(*store, *live, promote.epoch, comm_slot_of(c, promote.slot)));
  }
  joined_ = false;
  TM_ASSIGN_OR_RETURN(JoinPlan plan, join_plan(promote));
  Deadline deadline = Deadline::after(kStoreWait);
  auto superseded = [this] { return client_->order_waiting(); };
  for (const WorkerComm& c : comms_) {
    if (driven_by_parent(c, comms_)) continue;
    TM_ASSIGN_OR_RETURN(Communicator * live, api::live_communicator(c.comm));
    TM_ASSIGN_OR_RETURN(View view,
                        publish_next_view(*store, *live, c.job_slots, plan, deadline, superseded));
    joined_ = true;
    TM_RETURN_IF_ERROR(
        live->join(view).with_context("join communicator '" + live->config().name + "'"));
    // Its split groups join in the same epoch.
    TM_RETURN_IF_ERROR(
        live->join_groups(promote.epoch, comm_slot_of(c, promote.slot), plan.base_epoch));
  }
  return Status::Ok();
}

// Joined in an earlier round of this recovery: fresh standby communicators
// join this one, each parent before its groups, and a parent's groups in
// the order they were split (standby splits are numbered).
Status Worker::restart_joined_comms() {
  const size_t n = comms_.size();
  std::vector<int> parent(n);
  std::vector<std::pair<uint64_t, size_t>> groups;  // (split number, index)
  for (size_t i = 0; i < n; ++i) {
    parent[i] = parent_index(comms_[i], comms_);
    if (parent[i] < 0) continue;
    TM_ASSIGN_OR_RETURN(Communicator * live, api::live_communicator(comms_[i].comm));
    TM_ASSIGN_OR_RETURN(GroupSplit split, live->split_of());
    groups.emplace_back(split.seq, i);
  }
  std::sort(groups.begin(), groups.end());
  std::vector<bool> restarted(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (parent[i] >= 0) continue;
    TM_RETURN_IF_ERROR(api::restart_standby(comms_[i].comm));
    restarted[i] = true;
  }
  // Groups of groups: a group once its parent is done.
  for (bool progress = true; progress;) {
    progress = false;
    for (auto [seq, i] : groups) {
      const auto p = static_cast<size_t>(parent[i]);
      if (restarted[i] || !restarted[p]) continue;
      TM_RETURN_IF_ERROR(api::restart_standby_group(comms_[i].comm, comms_[p].comm));
      restarted[i] = progress = true;
    }
  }
  return Status::Ok();
}

Status Worker::promoted_again(const Order& order) {
  if (kind_ != WorkerKind::kStandby || !promotion_ || !state_listener_)
    return error(TM_ERROR_PROTOCOL, "an active rank cannot be promoted");
  if (order.slot != promotion_->slot)
    return error(TM_ERROR_PROTOCOL, "the joiner of slot ", promotion_->slot,
                 " was promoted again to slot ", order.slot);
  TM_RETURN_IF_ERROR(offer(order));
  promotion_ = order;
  return Status::Ok();
}

Status Worker::measure_first_step(uint64_t next_step) {
  if (!first_step_) {
    ProcessUsage usage = process_usage();
    first_step_ = StepMeasure{next_step, Clock::now(), usage.cpu_s, usage.minflt};
    return Status::Ok();
  }
  return report_first_step();
}

Status Worker::report_first_step() {
  ProcessUsage usage = process_usage();
  control::FirstStep report;
  report.step = first_step_->step;
  report.wall_s = to_seconds(Clock::now() - first_step_->start);
  report.cpu_s = usage.cpu_s - first_step_->cpu_s;
  report.minflt = usage.minflt - first_step_->minflt;
  report.warm = promotion_ && warm_roles_.count(promotion_->role) > 0;
  measure_joiner_step_ = false;
  first_step_.reset();
  return client_->send(report);
}

Status Worker::finish() {
  if (kind_ == WorkerKind::kAlone) return Status::Ok();
  set_in_step(false);
  // A joiner whose first step was the job's last has no next boundary to
  // report it from: the report goes ahead of the goodbye that ends the
  // recovery.
  if (measure_joiner_step_ && first_step_) TM_RETURN_IF_ERROR(report_first_step());
  if (lifeline_) lifeline_->release();  // our exit from here on is no failure
  TM_RETURN_IF_ERROR(client_->send(control::Goodbye{"training finished"}));
  // A status round trip: once its reply is here, the goodbye was handled, so
  // our exit is known to be no failure.
  TM_RETURN_IF_ERROR(client_->send(control::StatusRequest{}));
  Deadline deadline = Deadline::after(std::chrono::seconds(5));
  while (true) {
    auto m = client_->next(deadline.remaining());
    if (!m.ok()) return m.status().with_context("saying goodbye to the coordinator");
    if (std::holds_alternative<control::StatusReply>(*m)) break;
  }
  if (exit_delay_ > Duration::zero()) std::this_thread::sleep_for(exit_delay_);
  return Status::Ok();
}

}  // namespace trainmover::worker
