// The worker's side of a recovery: the coordinator's orders (prepare,
// transfer, rollback, switch, restore) carried out on the program's
// communicators and state buffers, each acknowledged.
#include "worker/worker.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "api/comm_handle.h"
#include "common/log.h"
#include "rendezvous/store_factory.h"
#include "worker/join_view.h"
#include "worker/worker_support.h"

namespace trainmover::worker {
namespace {

using control::Order;
using control::OrderKind;

// Resident set size of this process in KiB (VmRSS), 0 when unreadable.
uint64_t rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

// A rebuilt communicator's name in `epoch`: the original name (before any
// "@") with "@EPOCH", so each rebuild rendezvouses afresh.
std::string rebuilt_name(const std::string& name, uint64_t epoch) {
  return str_cat(name.substr(0, name.find('@')), "@", epoch);
}

// A failure a dead or hung peer causes, as opposed to a fault of this rank
// or of the orders (a bad argument, a bug).
bool peer_fault(const Status& st) {
  switch (st.code()) {
    case TM_ERROR_SYSTEM:
    case TM_ERROR_TIMEOUT:
    case TM_ERROR_PEER_FAILED:
    case TM_ERROR_PROTOCOL:
    case TM_ERROR_ABORTED:
      return true;
    default:
      return false;
  }
}

}  // namespace

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
    if (switched) return resume;
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
      stopped_ = true;
      return error(TM_ERROR_PEER_FAILED, "stopped by the coordinator: ", order.reason);
    case OrderKind::kPromote:
      st = promoted_again(order);
      break;
    case OrderKind::kDrain:
      // Only step_boundary() can train on to a drain's boundary; here a step
      // of this rank failed, which a drain is there to prevent.
      st = error(TM_ERROR_PEER_FAILED, "a drain order reached a rank in recovery");
      break;
  }
  TM_RETURN_IF_ERROR(ack(order, st, step, bytes));
  // A joiner's failed receive is no end of it: its donor may have died, and
  // the coordinator's next order (a new round, or a stop) says which; nor
  // a donor's failed send, its joiner may have died. Nor is a promotion
  // superseded by the next.
  if (order.kind == OrderKind::kReceiveState || order.kind == OrderKind::kSendState)
    return Status::Ok();
  if (order.kind == OrderKind::kPromote && st.code() == TM_ERROR_ABORTED) return Status::Ok();
  return st;
}

Status Worker::prepare(const Order& order) {
  rolled_back_ = false;
  if (switch_mode_ == SwitchMode::kRebuild) return Status::Ok();  // nothing kept to prepare
  TM_ASSIGN_OR_RETURN(JoinPlan plan, join_plan(order));
  TM_ASSIGN_OR_RETURN(auto store, state_store());
  for (const WorkerComm& c : comms_) {
    // Every communicator switches, those without a joiner too, so that all
    // of the job's stay in one epoch; split groups with their parent.
    if (driven_by_parent(c, comms_)) continue;
    TM_ASSIGN_OR_RETURN(Communicator * live, api::live_communicator(c.comm));
    if (live->epoch() != plan.base_epoch)
      return error(TM_ERROR_PROTOCOL, "communicator '", live->config().name, "' is at epoch ",
                   live->epoch(), ", the recovery's base epoch is ", plan.base_epoch);
    // The view straight to the communicator: tm_comm_prepare_switch would
    // read it from the store again.
    TM_ASSIGN_OR_RETURN(
        View view, next_view(*store, *live, c.job_slots, plan, Deadline::after(kStoreWait), {}));
    TM_RETURN_IF_ERROR(live->prepare_switch(view).with_context("prepare communicator '" +
                                                               live->config().name + "'"));
    TM_RETURN_IF_ERROR(live->prepare_groups(view));
  }
  return Status::Ok();
}

Status Worker::send_state(const Order& order, uint64_t& bytes) {
  TM_RETURN_IF_ERROR(restore(order.step));
  if (donor_delay_ > Duration::zero()) {
    std::fprintf(stderr, "trainmover: slot %d waits %.1f s before it sends its state (test-only)\n",
                 slot_, to_seconds(donor_delay_));
    std::this_thread::sleep_for(donor_delay_);
  }
  TM_ASSIGN_OR_RETURN(auto store, state_store());
  TM_ASSIGN_OR_RETURN(std::string address,
                      store->get(state_key(order.epoch, order.joiner), kStoreWait));
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
  set_receiving(true);
  auto received = state_listener_->receive(buffers_, order.step, *secret_, job_id_,
                                           Deadline::after(std::chrono::seconds(60)));
  set_receiving(false);
  TM_ASSIGN_OR_RETURN(bytes, std::move(received));
  return Status::Ok();
}

void Worker::set_receiving(bool receiving) {
  std::lock_guard<std::mutex> lock(comms_mutex_);
  receiving_ = receiving;
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
  if (kind_ == WorkerKind::kStandby && joiner_switch_delay_ > Duration::zero()) {
    std::fprintf(stderr,
                 "trainmover: joiner of slot %d waits %.1f s before it switches (test-only)\n",
                 slot_, to_seconds(joiner_switch_delay_));
    std::this_thread::sleep_for(joiner_switch_delay_);
  }
  if (kind_ == WorkerKind::kActive && !rolled_back_) TM_RETURN_IF_ERROR(restore(order.step));
  rolled_back_ = false;
  if (switch_mode_ == SwitchMode::kRebuild) return rebuild_comms(order.epoch);
  // Every communicator switches, even when a link of the new epoch failed:
  // ranks that switched serve the new epoch already, so this one must too.
  // A peer that died in the switch (a joiner or a stayer) is the
  // coordinator's to recover in the new epoch; this rank's next collective
  // with it fails and recovers as after any failure. Groups of a registered
  // parent switch with it (driven_by_parent).
  Status missing;
  for (const WorkerComm& c : comms_) {
    if (driven_by_parent(c, comms_)) continue;
    Status st = api_status(tm_comm_wait_prepared(c.comm), "tm_comm_wait_prepared");
    if (!st.ok() && !peer_fault(st)) return st;
    if (missing.ok()) missing = st;
  }
  for (const WorkerComm& c : comms_) {
    if (driven_by_parent(c, comms_)) continue;
    Status st = api_status(tm_comm_switchover(c.comm, order.epoch), "tm_comm_switchover");
    if (!st.ok() && !peer_fault(st)) return st;
    if (missing.ok()) missing = st;
  }
  if (!missing.ok())
    log(LogLevel::kInfo, "switched to epoch ", order.epoch,
        " with a link of it missing (its peer's slot is recovered next): ", missing.message());
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
  a.cpu_s = std::max(0.0, process_cpu_seconds() - order_cpu_mark_.load());
  return client_->send(a);
}

std::string Worker::state_key(uint64_t epoch, int slot) const {
  return str_cat("trainmover/state/", epoch, "/", slot);
}

// The state rendezvous happens mid-job: it needs the store part that answers
// at any time, and must not open PMIx (the communicator holds it). Opened at
// the first recovery and kept: a connection and its handshake per order cost
// every stayer's prepare a round trip more, on the recovery's critical path.
Result<rendezvous::Store*> Worker::state_store() {
  if (!state_store_) {
    TM_ASSIGN_OR_RETURN(auto spec, rendezvous::StoreSpec::parse(store_address_));
    TM_ASSIGN_OR_RETURN(state_store_,
                        rendezvous::open_any_time_store(spec, *secret_, job_id_, kStoreWait));
  }
  return state_store_.get();
}

}  // namespace trainmover::worker
