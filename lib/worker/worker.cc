#include "worker/worker.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "api/comm_handle.h"
#include "common/log.h"
#include "common/parse.h"
#include "rendezvous/tcp_store.h"

namespace trainmover::worker {
namespace {

using control::Order;
using control::OrderKind;

// How long a rank in recovery waits for the coordinator's next order; the
// coordinator's own order deadlines (10 s, 60 s for a transfer) are shorter,
// so this only ends a recovery whose coordinator went silent.
constexpr auto kOrderWait = std::chrono::seconds(120);
constexpr auto kStoreWait = std::chrono::seconds(30);

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// Resident set size of this process in KiB (VmRSS), 0 when unreadable.
uint64_t rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

Status api_status(tm_result_t rc, const std::string& what) {
  if (rc == TM_SUCCESS) return Status::Ok();
  return Status(rc, str_cat(what, ": ", tm_get_last_error()));
}

// CPU seconds (user + system) and minor page faults of the whole process:
// a joiner's first step runs on the training thread and on its
// communicators' progress threads.
struct ProcessUsage {
  double cpu_s = 0;
  uint64_t minflt = 0;
};
ProcessUsage process_usage() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return {};
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return {secs(u.ru_utime) + secs(u.ru_stime), static_cast<uint64_t>(u.ru_minflt)};
}

// The index of job slot `slot` among a communicator's slots, -1 if absent.
int comm_slot_of(const WorkerComm& c, int slot) {
  for (size_t i = 0; i < c.job_slots.size(); ++i) {
    if (c.job_slots[i] == slot) return static_cast<int>(i);
  }
  return -1;
}

Result<SwitchMode> switch_mode_from_env() {
  const std::string mode = get_env("TRAINMOVER_SWITCH").value_or("delta");
  if (mode == "delta" || mode.empty()) return SwitchMode::kDelta;
  if (mode == "rebuild") return SwitchMode::kRebuild;
  return error(TM_ERROR_INVALID_ARGUMENT, "TRAINMOVER_SWITCH must be delta or rebuild, not '", mode,
               "'");
}

// A rebuilt communicator's name in `epoch`: the original name (before any
// "@") with "@EPOCH", so each rebuild rendezvouses afresh.
std::string rebuilt_name(const std::string& name, uint64_t epoch) {
  return str_cat(name.substr(0, name.find('@')), "@", epoch);
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
  w->secret_ = secret;
  w->job_id_ = config.job_id;
  w->store_address_ = config.store_address;
  w->kind_ = get_env("TRAINMOVER_STANDBY").value_or("0") == "1" ? WorkerKind::kStandby
                                                                : WorkerKind::kActive;
  w->slot_ = w->kind_ == WorkerKind::kActive ? config.slot : -1;
  control::ControlClientOptions options;
  options.address = *address;
  options.job_id = config.job_id;
  options.identity.kind =
      w->kind_ == WorkerKind::kActive ? control::PeerKind::kActive : control::PeerKind::kStandby;
  options.identity.slot = w->slot_;
  TM_ASSIGN_OR_RETURN(options.identity.process.instance_id, random_u64());
  options.identity.process.pid = getpid();
  options.identity.process.host = host_name();
  // The worker outlives its client: ~Worker destroys client_ (and joins its
  // thread) before anything interrupt() touches.
  options.on_order = [raw = w.get()](const Order& order) { raw->interrupt(order); };
  auto client = control::ControlClient::connect(options, secret);
  if (!client.ok()) return client.status().with_context("connect to the coordinator");
  w->client_ = std::move(*client);
  return w;
}

Worker::~Worker() {
  client_.reset();  // no interrupt() runs from here on
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

Result<uint64_t> Worker::step_boundary(uint64_t next_step) {
  if (kind_ == WorkerKind::kAlone) return next_step;
  set_in_step(false);
  TM_ASSIGN_OR_RETURN(uint64_t run, boundary(next_step));
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
  abort_all(error(TM_ERROR_PEER_FAILED, "slot ", slot_, " is recovering"));
  return serve_orders(std::nullopt);
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
    if (!m.ok()) return m.status().with_context("waiting to be promoted");
    auto* order = std::get_if<Order>(&*m);
    if (order == nullptr) continue;
    if (order->kind == OrderKind::kStop)
      return error(TM_ERROR_PEER_FAILED, "stopped by the coordinator: ", order->reason);
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
    TM_ASSIGN_OR_RETURN(StateListener listener, StateListener::open("127.0.0.1"));
    TM_ASSIGN_OR_RETURN(
        auto store, rendezvous::TcpStore::connect(store_address_, *secret_, job_id_, kStoreWait));
    TM_RETURN_IF_ERROR(store->set(state_key(promote.epoch), listener.address()));
    state_listener_ = std::move(listener);
    for (const WorkerComm& c : comms_) {
      int s = comm_slot_of(c, promote.slot);
      if (s < 0)
        return error(TM_ERROR_INVALID_ARGUMENT, "a communicator registered by the joiner of slot ",
                     promote.slot, " does not contain that slot");
      if (switch_mode_ == SwitchMode::kRebuild) continue;  // created at the switch
      TM_RETURN_IF_ERROR(api_status(tm_comm_join(c.comm, promote.epoch, s), "tm_comm_join"));
    }
    return Status::Ok();
  }();
  TM_RETURN_IF_ERROR(ack(promote, joined));
  if (!joined.ok()) return joined;
  slot_ = promote.slot;
  TM_ASSIGN_OR_RETURN(uint64_t resume, serve_orders(std::nullopt));
  kind_ = WorkerKind::kActive;
  state_listener_.reset();
  measure_joiner_step_ = true;
  return resume;
}

Status Worker::measure_first_step(uint64_t next_step) {
  if (!first_step_) {
    ProcessUsage usage = process_usage();
    first_step_ = StepMeasure{next_step, Clock::now(), usage.cpu_s, usage.minflt};
    return Status::Ok();
  }
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
  TM_RETURN_IF_ERROR(client_->send(control::Goodbye{"training finished"}));
  // A status round trip: once its reply is here, the goodbye was handled, so
  // our exit is known to be no failure.
  TM_RETURN_IF_ERROR(client_->send(control::StatusRequest{}));
  Deadline deadline = Deadline::after(std::chrono::seconds(5));
  while (true) {
    auto m = client_->next(deadline.remaining());
    if (!m.ok()) return m.status().with_context("saying goodbye to the coordinator");
    if (std::holds_alternative<control::StatusReply>(*m)) return Status::Ok();
  }
}

Result<uint64_t> Worker::serve_orders(std::optional<Order> first) {
  while (true) {
    Order order;
    if (first) {
      order = *first;
      first.reset();
    } else {
      auto m = client_->next(kOrderWait);
      if (!m.ok()) return m.status().with_context("recovery: waiting for the coordinator");
      auto* o = std::get_if<Order>(&*m);
      if (o == nullptr) continue;
      order = *o;
    }
    bool switched = false;
    uint64_t resume = 0;
    TM_RETURN_IF_ERROR(carry_out(order, switched, resume));
    if (switched) {
      announce_steps_ = 2;  // the resume step's boundary and the next one's
      return resume;
    }
  }
}

Status Worker::carry_out(const Order& order, bool& switched, uint64_t& resume) {
  Status st;
  uint64_t step = 0, bytes = 0;
  switch (order.kind) {
    case OrderKind::kPrepare:
      st = prepare(order);
      step = last_boundary_.value_or(0);
      break;
    case OrderKind::kSendState:
      st = send_state(order, bytes);
      break;
    case OrderKind::kReceiveState:
      st = receive_state(order, bytes);
      break;
    case OrderKind::kRollback:
      st = rollback(order.step, step);
      break;
    case OrderKind::kSwitch:
      st = switch_over(order);
      switched = st.ok();
      resume = order.step;
      break;
    case OrderKind::kStop:
      return error(TM_ERROR_PEER_FAILED, "stopped by the coordinator: ", order.reason);
    case OrderKind::kPromote:
      st = error(TM_ERROR_PROTOCOL, "an active rank cannot be promoted");
      break;
    case OrderKind::kDrain:
      // Only step_boundary() can train on to a drain's boundary; here a step
      // of this rank failed, which a drain is there to prevent.
      st = error(TM_ERROR_PEER_FAILED, "a drain order reached a rank in recovery");
      break;
  }
  TM_RETURN_IF_ERROR(ack(order, st, step, bytes));
  return st;
}

Status Worker::prepare(const Order& order) {
  rolled_back_ = false;
  if (switch_mode_ == SwitchMode::kRebuild) return Status::Ok();  // nothing kept to prepare
  for (const WorkerComm& c : comms_) {
    if (comm_slot_of(c, order.slot) < 0 && c.job_slots.front() == slot_) {
      // No joiner in this communicator: its first slot publishes the same
      // membership under the new epoch, so every communicator of the job
      // switches together.
      TM_ASSIGN_OR_RETURN(Communicator * live, api::live_communicator(c.comm));
      TM_ASSIGN_OR_RETURN(View view, live->fetch_view(live->epoch()));
      view.epoch = order.epoch;
      TM_RETURN_IF_ERROR(live->publish_view(view));
    }
    TM_RETURN_IF_ERROR(
        api_status(tm_comm_prepare_switch(c.comm, order.epoch), "tm_comm_prepare_switch"));
  }
  return Status::Ok();
}

Status Worker::send_state(const Order& order, uint64_t& bytes) {
  TM_RETURN_IF_ERROR(restore(order.step));
  TM_ASSIGN_OR_RETURN(auto store,
                      rendezvous::TcpStore::connect(store_address_, *secret_, job_id_, kStoreWait));
  TM_ASSIGN_OR_RETURN(std::string address, store->get(state_key(order.epoch), kStoreWait));
  const uint64_t rss_before = rss_kib();
  const Clock::time_point start = Clock::now();
  TM_ASSIGN_OR_RETURN(bytes, worker::send_state(address, buffers_, order.step, *secret_, job_id_,
                                                Deadline::after(std::chrono::seconds(60))));
  const double ms = to_seconds(Clock::now() - start) * 1e3;
  std::fprintf(stderr,
               "trainmover: slot %d sent %" PRIu64 " bytes of state (step %" PRIu64
               ") to slot %d in %.1f ms; donor RSS %" PRIu64 " KiB before, %" PRIu64 " KiB after\n",
               slot_, bytes, order.step, order.joiner, ms, rss_before, rss_kib());
  return Status::Ok();
}

Status Worker::receive_state(const Order& order, uint64_t& bytes) {
  if (!state_listener_) return error(TM_ERROR_PROTOCOL, "receive_state before promotion");
  TM_ASSIGN_OR_RETURN(bytes, state_listener_->receive(buffers_, order.step, *secret_, job_id_,
                                                      Deadline::after(std::chrono::seconds(60))));
  return Status::Ok();
}

Status Worker::rollback(uint64_t at_most, uint64_t& step) {
  if (rollback_ == nullptr)
    return error(TM_ERROR_UNSUPPORTED,
                 "rollback ordered but the program registered no rollback function");
  step = at_most;
  tm_result_t rc = rollback_(rollback_context_, &step);
  TM_RETURN_IF_ERROR(api_status(rc, "rollback to the checkpoint"));
  rolled_back_ = true;
  return Status::Ok();
}

Status Worker::switch_over(const Order& order) {
  if (kind_ == WorkerKind::kActive && !rolled_back_) TM_RETURN_IF_ERROR(restore(order.step));
  rolled_back_ = false;
  if (switch_mode_ == SwitchMode::kRebuild) return rebuild_comms(order.epoch);
  for (const WorkerComm& c : comms_)
    TM_RETURN_IF_ERROR(api_status(tm_comm_wait_prepared(c.comm), "tm_comm_wait_prepared"));
  for (const WorkerComm& c : comms_)
    TM_RETURN_IF_ERROR(api_status(tm_comm_switchover(c.comm, order.epoch), "tm_comm_switchover"));
  return Status::Ok();
}

// The full rebuild: every member of every communicator replaces it with a
// new one of the epoch's name, in the order the program registered them (the
// same everywhere), each creation connecting all its links from scratch.
Status Worker::rebuild_comms(uint64_t epoch) {
  for (const WorkerComm& c : comms_) {
    TM_ASSIGN_OR_RETURN(Communicator * live, api::live_communicator(c.comm));
    const int s = comm_slot_of(c, slot_);
    if (s < 0) return error(TM_ERROR_INTERNAL, "slot ", slot_, " is not in a registered comm");
    TM_RETURN_IF_ERROR(api::rebuild_live(c.comm, rebuilt_name(live->config().name, epoch), s)
                           .with_context("rebuild the communicator"));
  }
  return Status::Ok();
}

Status Worker::restore(uint64_t step) {
  for (int i = 0; i < 2; ++i) {
    if (snapshot_step_[i] != step) continue;
    size_t at = 0;
    for (const StateBuffer& b : buffers_) {
      std::memcpy(b.data, snapshots_[i].data() + at, b.bytes);
      at += b.bytes;
    }
    return Status::Ok();
  }
  return error(TM_ERROR_INTERNAL, "cannot go back to step ", step, ": the snapshots hold steps ",
               snapshot_step_[0], " and ", snapshot_step_[1]);
}

void Worker::abort_all(const Status& why) {
  // A recovery during the joiner's first step: that step is measured no more.
  measure_joiner_step_ = false;
  first_step_.reset();
  for (const WorkerComm& c : comms_) {
    auto live = api::live_communicator(c.comm);
    if (live.ok()) (void)(*live)->abort(why);
  }
}

Status Worker::ack(const Order& order, const Status& result, uint64_t step, uint64_t bytes) {
  control::Ack a;
  a.order_id = order.order_id;
  a.ok = result.ok();
  a.error = result.ok() ? "" : result.message().substr(0, control::kMaxText - 1);
  a.step = step;
  a.bytes = bytes;
  return client_->send(a);
}

std::string Worker::state_key(uint64_t epoch) const { return str_cat("trainmover/state/", epoch); }

}  // namespace trainmover::worker
