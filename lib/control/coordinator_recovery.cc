// The recovery state machine (recovery.h): one recovery at a time. Failures
// that come while it runs join it as seats until its switch; later ones, and
// migrations, queue in order of detection.
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "control/coordinator_impl.h"

namespace trainmover::control {

using nlohmann::json;

namespace {

// A new seat may join the recovery in these states: nothing is switched yet.
bool foldable(RecoveryState state) {
  switch (state) {
    case RecoveryState::kChooseJoiner:
    case RecoveryState::kWaitStandby:
    case RecoveryState::kPromote:
    case RecoveryState::kPrepare:
    case RecoveryState::kTransfer:
    case RecoveryState::kRollback:
      return true;
    default:
      return false;
  }
}
Seat new_seat(int slot, Clock::time_point failed_at, Clock::time_point detected_at) {
  Seat seat;
  seat.slot = slot;
  seat.failed_at = failed_at;
  seat.detected_at = detected_at;
  return seat;
}
}  // namespace

void Coordinator::Impl::enqueue_recovery(PendingRecovery pending) {
  if (stopped_reason()) return;
  pending_.push_back(pending);
  if (!recovery_) begin_next_recovery();
}

void Coordinator::Impl::begin_next_recovery() {
  while (!recovery_ && !pending_.empty()) {
    PendingRecovery p = pending_.front();
    pending_.pop_front();
    if (p.cause == RecoveryCause::kMigration && !membership_.served(p.slot)) continue;
    Recovery r;
    r.id = next_recovery_id_++;
    r.coordinator_cpu_start = thread_cpu_seconds();
    r.cause = p.cause;
    r.seats.push_back(new_seat(p.slot, p.failed_at, p.detected_at));
    // Failures that waited meanwhile are replaced in the same epoch.
    if (r.cause == RecoveryCause::kFailure) {
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->cause != RecoveryCause::kFailure || r.seat_of_slot(it->slot)) {
          ++it;
          continue;
        }
        r.seats.push_back(new_seat(it->slot, it->failed_at, it->detected_at));
        it = pending_.erase(it);
      }
    }
    recovery_ = r;
    for (const Seat& seat : r.seats) {
      emit("recovery_started", {{"recovery", r.id},
                                {"slot", seat.slot},
                                {"slots", r.slots()},
                                {"cause", recovery_cause_name(r.cause)},
                                {"role", stage_role_name(membership_.layout().role(seat.slot))}});
    }
    choose_joiner();
  }
}

bool Coordinator::Impl::fold_failure(int slot, Clock::time_point failed_at,
                                     Clock::time_point detected_at) {
  if (!recovery_ || recovery_->cause != RecoveryCause::kFailure || !foldable(recovery_->state))
    return false;
  Recovery& r = *recovery_;
  if (!r.seat_of_slot(slot)) r.seats.push_back(new_seat(slot, failed_at, detected_at));
  emit("recovery_folded", {{"recovery", r.id},
                           {"slot", slot},
                           {"slots", r.slots()},
                           {"state", recovery_state_name(r.state)},
                           {"role", stage_role_name(membership_.layout().role(slot))}});
  new_round();
  return true;
}

void Coordinator::Impl::new_round() {
  Recovery& r = *recovery_;
  r.state = RecoveryState::kChooseJoiner;
  r.deadline = Clock::time_point::max();
  r.awaiting.clear();
  r.path.clear();
  for (Seat& seat : r.seats) {
    seat.donor = -1;
    seat.bytes = 0;
    seat.receive_error.clear();
    seat.send_error.clear();
  }
  choose_joiner();
}

void Coordinator::Impl::enter(RecoveryState state, Duration timeout) {
  close_cpu_phase();
  recovery_->state = state;
  recovery_->deadline = Clock::now() + timeout;
  recovery_->awaiting.clear();
}

uint64_t Coordinator::Impl::send_order(OrderTarget target, Order order) {
  order.order_id = next_order_id_++;
  auto id =
      target.slot >= 0 ? connection_of_slot(target.slot) : connection_of_standby(target.standby);
  if (id) server_->send(*id, order);
  // Without a connection the order cannot be answered: the deadline fails it.
  recovery_->awaiting[order.order_id] = target;
  return order.order_id;
}

void Coordinator::Impl::choose_joiner() {
  Recovery& r = *recovery_;
  std::set<int> taken = r.failed_joiners;
  for (const Seat& seat : r.seats) {
    if (seat.joiner >= 0) taken.insert(seat.joiner);
  }
  for (Seat& seat : r.seats) {
    if (seat.joiner >= 0) continue;
    StageRole role = membership_.layout().role(seat.slot);
    auto standby = membership_.pick_standby(role, taken);
    if (standby) {
      seat.joiner = *standby;
      taken.insert(*standby);
      continue;
    }
    if (r.state == RecoveryState::kWaitStandby) return;  // still waiting
    if (config_.standby_wait <= Duration::zero())
      return abandon(str_cat("no standby is ready for slot ", seat.slot, " (role ",
                             stage_role_name(role), ")"));
    emit("no_standby", {{"slot", seat.slot},
                        {"role", stage_role_name(role)},
                        {"pool", membership_.usable_standbys()},
                        {"waiting_s", to_seconds(config_.standby_wait)}});
    return enter(RecoveryState::kWaitStandby, config_.standby_wait);
  }
  // Every attempt gets a fresh epoch: a view once published is never reused.
  last_epoch_used_ = std::max(last_epoch_used_, membership_.epoch()) + 1;
  r.epoch = last_epoch_used_;
  for (const Seat& seat : r.seats) {
    emit("joiner_chosen",
         {{"recovery", r.id}, {"slot", seat.slot}, {"standby", seat.joiner}, {"epoch", r.epoch}});
  }
  enter(RecoveryState::kPromote, config_.order_timeout);
  for (const Seat& seat : r.seats) {
    Order promote = recovery_order(OrderKind::kPromote);
    promote.slot = seat.slot;
    promote.role = membership_.layout().role(seat.slot);
    send_order({-1, seat.joiner}, promote);
  }
}

std::vector<int> Coordinator::Impl::participants() const {
  std::vector<int> out;
  for (int s = 0; s < membership_.layout().nslots(); ++s) {
    if (membership_.served(s)) out.push_back(s);
  }
  return out;
}

// "joining": the slots a joiner takes; "base_epoch": the epoch every
// communicator is at now, whose members the other slots keep. An order
// carries only this (worker/join_view.h): the whole view, every slot's
// process, is the publisher's; sent in each of N orders it made every
// phase's work at the coordinator grow with N squared.
json Coordinator::Impl::join_plan_json() const {
  return {{"epoch", recovery_->epoch},
          {"joining", recovery_->slots()},
          {"base_epoch", membership_.epoch()}};
}

json Coordinator::Impl::view_json() const {
  const Recovery& r = *recovery_;
  json slots = json::array();
  for (int s = 0; s < membership_.layout().nslots(); ++s) {
    const ProcessId* p = nullptr;
    const Seat* seat = r.seat_of_slot(s);
    if (seat && seat->joiner >= 0) {
      p = &membership_.standby(seat->joiner)->process;
    } else if (membership_.served(s)) {
      p = &*membership_.slot(s).process;
    }
    json entry = {{"slot", s}};
    if (p) entry.update({{"pid", p->pid}, {"host", p->host}, {"instance", p->instance_id}});
    slots.push_back(std::move(entry));
  }
  json view = join_plan_json();
  view["slots"] = std::move(slots);
  return view;
}

Order Coordinator::Impl::recovery_order(OrderKind kind) const {
  Order order;
  order.kind = kind;
  order.epoch = recovery_->epoch;
  order.slot = recovery_->leaver();
  order.view = join_plan_json();
  return order;
}

void Coordinator::Impl::start_drain() {
  Recovery& r = *recovery_;
  enter(RecoveryState::kDrain, config_.order_timeout);
  r.drain_step = 0;
  r.held_at.clear();
  Order drain = recovery_order(OrderKind::kDrain);
  drain.step = 0;  // the next boundary: where each rank is is not known yet
  for (int s : participants()) send_order({s, -1}, drain);
  if (r.awaiting.empty()) on_all_acked();
}

void Coordinator::Impl::raise_drain_step(uint64_t step) {
  Recovery& r = *recovery_;
  if (step > r.drain_step) {
    r.drain_step = step;
    r.deadline = Clock::now() + config_.order_timeout;  // the ranks still move
  }
  step = r.drain_step;
  for (const auto& [slot, at] : r.held_at) {
    bool ordered = std::any_of(r.awaiting.begin(), r.awaiting.end(),
                               [&](const auto& e) { return e.second.slot == slot; });
    if (at >= step || ordered) continue;
    Order drain = recovery_order(OrderKind::kDrain);
    drain.step = step;
    send_order({slot, -1}, drain);
  }
}

void Coordinator::Impl::publish_and_prepare() {
  Recovery& r = *recovery_;
  json view = view_json();
  Status st = publisher_->publish(r.epoch, view);
  if (!st.ok())
    return abandon("publishing the view of epoch " + std::to_string(r.epoch) +
                   " failed: " + st.message());
  json standbys = json::array();
  for (const Seat& seat : r.seats) standbys.push_back(seat.joiner);
  emit("view_published", {{"recovery", r.id},
                          {"epoch", r.epoch},
                          {"slot", r.leaver()},
                          {"standby", r.seats.front().joiner},
                          {"slots", r.slots()},
                          {"standbys", standbys}});
  enter(RecoveryState::kPrepare, config_.order_timeout);
  r.resume_step = UINT64_MAX;
  r.last_step = 0;
  const Order prepare = recovery_order(OrderKind::kPrepare);
  for (int s : participants()) send_order({s, -1}, prepare);
  if (r.awaiting.empty()) on_all_acked();
}

void Coordinator::Impl::choose_donor() {
  Recovery& r = *recovery_;
  if (r.cause == RecoveryCause::kMigration && membership_.served(r.leaver())) {
    r.seats.front().donor = r.leaver();
    r.path = "leaver";
    return start_transfer();
  }
  // Each seat from a live replica of its stage, spreading the seats of one
  // stage over its replicas; one seat without a replica rolls every rank back.
  std::map<int, int> load;
  for (Seat& seat : r.seats) {
    auto replicas = membership_.replicas_of(seat.slot);
    if (replicas.empty()) return start_rollback(UINT64_MAX);
    seat.donor = *std::min_element(replicas.begin(), replicas.end(),
                                   [&](int a, int b) { return load[a] < load[b]; });
    ++load[seat.donor];
  }
  r.path = "replica";
  start_transfer();
}

void Coordinator::Impl::start_transfer() {
  Recovery& r = *recovery_;
  r.transfer_started = Clock::now();
  enter(RecoveryState::kTransfer, config_.transfer_timeout);
  for (Seat& seat : r.seats) {
    seat.receive_error.clear();
    seat.send_error.clear();
    emit("state_transfer_started", {{"recovery", r.id},
                                    {"path", r.path},
                                    {"donor", seat.donor},
                                    {"slot", seat.slot},
                                    {"standby", seat.joiner}});
    Order send = recovery_order(OrderKind::kSendState);
    send.slot = seat.slot;
    send.donor = seat.donor;
    send.joiner = seat.slot;
    send.step = r.resume_step;  // the donor sends the state of the agreed step
    Order receive = send;
    receive.kind = OrderKind::kReceiveState;
    receive.role = membership_.layout().role(seat.slot);
    send_order({seat.donor, -1}, send);
    send_order({-1, seat.joiner}, receive);
  }
}

void Coordinator::Impl::start_rollback(uint64_t at_most) {
  Recovery& r = *recovery_;
  for (Seat& seat : r.seats) seat.donor = -1;
  r.path = "rollback";
  if (at_most == UINT64_MAX) r.transfer_started = Clock::now();
  json fields = {{"recovery", r.id}, {"slot", r.leaver()}, {"slots", r.slots()}};
  if (at_most == UINT64_MAX) {
    int stage = -1;
    for (const Seat& seat : r.seats) {
      if (membership_.replicas_of(seat.slot).empty())
        stage = membership_.layout().pp_index(seat.slot);
    }
    fields["why"] = str_cat("no live DP replica of pipeline stage ", stage);
  } else {
    fields["why"] = str_cat("the ranks loaded checkpoints of steps ", r.resume_step, " to ",
                            r.rollback_high, ": again, of a step at most ", at_most);
    fields["at_most"] = at_most;
  }
  emit("rollback_started", std::move(fields));
  enter(RecoveryState::kRollback, config_.order_timeout);
  r.resume_step = UINT64_MAX;
  r.rollback_high = 0;
  Order rollback = recovery_order(OrderKind::kRollback);
  rollback.step = at_most;
  for (int s : participants()) send_order({s, -1}, rollback);
  for (const Seat& seat : r.seats) send_order({-1, seat.joiner}, rollback);
}

void Coordinator::Impl::start_switch() {
  Recovery& r = *recovery_;
  if (r.resume_step == UINT64_MAX) r.resume_step = 0;
  enter(RecoveryState::kSwitch, config_.order_timeout);
  Order order = recovery_order(OrderKind::kSwitch);
  order.step = r.resume_step;
  for (int s : participants()) {
    if (!r.seat_of_slot(s)) send_order({s, -1}, order);  // a migration's leaver retires
  }
  for (const Seat& seat : r.seats) {
    order.slot = seat.slot;
    send_order({-1, seat.joiner}, order);
  }
}

void Coordinator::Impl::on_ack(const Peer& peer, const Ack& ack) {
  if (!recovery_) return;
  auto it = recovery_->awaiting.find(ack.order_id);
  if (it == recovery_->awaiting.end()) return;  // an order of a phase already left
  OrderTarget target = it->second;
  if (target.slot != peer.slot || target.standby != peer.standby) return;  // not its order
  Recovery& r = *recovery_;
  r.phase_cpu_s = std::max(r.phase_cpu_s, ack.cpu_s);
  Seat* joiner_seat = r.seat_of_joiner(target.standby);
  if (!ack.ok && r.state == RecoveryState::kTransfer && joiner_seat) {
    // A receive fails when its donor dies too: the donor's fate (its ack,
    // or its failure, which starts a new round) says whose fault it was.
    joiner_seat->receive_error = ack.error;
    r.awaiting.erase(it);
    if (r.awaiting.empty()) on_all_acked();
    return;
  }
  Seat* donor_seat = r.state == RecoveryState::kTransfer && target.slot >= 0
                         ? r.seat_of_donor(target.slot)
                         : nullptr;
  if (!ack.ok && donor_seat) {
    // A send fails when its joiner dies: the joiner's fate (its lost
    // connection, which starts a new round, or its ack) says whose fault it
    // was, as for a failed receive.
    donor_seat->send_error = ack.error;
    r.awaiting.erase(it);
    if (r.awaiting.empty()) on_all_acked();
    return;
  }
  if (!ack.ok) {
    std::string detail = str_cat(recovery_state_name(r.state), " order failed: ", ack.error);
    if (target.standby >= 0) return standby_lost(target.standby, detail);
    return slot_failed(target.slot, "order", detail, Clock::now());
  }
  if (r.state == RecoveryState::kPrepare || r.state == RecoveryState::kRollback)
    r.resume_step = std::min(r.resume_step, ack.step);
  if (r.state == RecoveryState::kPrepare) r.last_step = std::max(r.last_step, ack.step);
  if (r.state == RecoveryState::kRollback) r.rollback_high = std::max(r.rollback_high, ack.step);
  if (r.state == RecoveryState::kTransfer && joiner_seat) joiner_seat->bytes = ack.bytes;
  r.awaiting.erase(it);
  if (r.state == RecoveryState::kDrain) {
    r.held_at[target.slot] = ack.step;
    raise_drain_step(ack.step);  // and a rank held below it moves on to it
  }
  if (r.awaiting.empty()) on_all_acked();
}

void Coordinator::Impl::transfer_acked() {
  Recovery& r = *recovery_;
  for (const Seat& seat : r.seats) {
    if (!seat.receive_error.empty()) {
      // Its donor answered: the joiner is at fault.
      return standby_lost(seat.joiner, "receive_state order failed: " + seat.receive_error);
    }
    if (!seat.send_error.empty()) {
      // The joiner answered, having received nothing whole: it cannot
      // serve, and a new round tries another standby (the donor stays).
      return standby_lost(seat.joiner, "the donor's send_state failed: " + seat.send_error);
    }
  }
  r.transfer_done = Clock::now();
  for (const Seat& seat : r.seats) {
    emit("state_transferred", {{"recovery", r.id},
                               {"path", r.path},
                               {"slot", seat.slot},
                               {"donor", seat.donor},
                               {"bytes", seat.bytes},
                               {"seconds", to_seconds(r.transfer_done - r.transfer_started)},
                               {"resume_step", r.resume_step}});
  }
  start_switch();
}

void Coordinator::Impl::switched() {
  Recovery& r = *recovery_;
  r.switched_at = Clock::now();
  for (const Seat& seat : r.seats) {
    if (membership_.served(seat.slot)) {  // a planned migration: the leaver retires
      if (auto id = connection_of_slot(seat.slot)) {
        peers_[*id].finished = true;
        peers_[*id].slot = -1;
        Order stop;
        stop.order_id = next_order_id_++;
        stop.kind = OrderKind::kStop;
        stop.reason = str_cat("slot ", seat.slot, " migrated to standby ", seat.joiner);
        server_->send(*id, stop);
      }
      membership_.vacate(seat.slot);
    }
    if (seat.joiner_lost_at) continue;  // its slot fails below, in the new epoch
    if (auto id = connection_of_standby(seat.joiner)) {
      peers_[*id].standby = -1;
      peers_[*id].slot = seat.slot;
      peers_[*id].kind = PeerKind::kActive;
    }
    Status st = membership_.promote(seat.joiner, seat.slot);
    if (!st.ok()) return abandon("promoting the joiner failed: " + st.message());
    membership_.set_step(seat.slot, r.resume_step);
  }
  membership_.commit_epoch(r.epoch);
  for (const Seat& seat : r.seats) {
    if (seat.joiner_lost_at) {
      emit("joiner_lost_in_switch",
           {{"recovery", r.id}, {"epoch", r.epoch}, {"slot", seat.slot}, {"standby", seat.joiner}});
      enqueue_recovery({seat.slot, RecoveryCause::kFailure, *seat.joiner_lost_at, Clock::now()});
      continue;
    }
    emit("switchover", {{"recovery", r.id},
                        {"epoch", r.epoch},
                        {"slot", seat.slot},
                        {"standby", seat.joiner},
                        {"resume_step", r.resume_step}});
  }
  enter(RecoveryState::kFirstStep, config_.first_step_timeout);
  // A failure during the switch waits in the queue; its collectives would
  // keep the joiners' first step from completing: it goes next, now.
  if (std::any_of(pending_.begin(), pending_.end(),
                  [](const PendingRecovery& p) { return p.cause == RecoveryCause::kFailure; }))
    finish_recovery();
}

void Coordinator::Impl::on_all_acked() {
  Recovery& r = *recovery_;
  switch (r.state) {
    case RecoveryState::kPromote:
      for (const Seat& seat : r.seats)
        emit("standby_promoted",
             {{"recovery", r.id}, {"standby", seat.joiner}, {"slot", seat.slot}});
      if (r.cause == RecoveryCause::kMigration) return start_drain();
      return publish_and_prepare();
    case RecoveryState::kDrain:
      emit("drained", {{"recovery", r.id}, {"slot", r.leaver()}, {"step", r.drain_step}});
      return publish_and_prepare();
    case RecoveryState::kPrepare:
      return choose_donor();
    case RecoveryState::kRollback:
      // Every rank must resume from the same step: when they loaded
      // different ones, all load again, at most the oldest (the stages keep
      // their two newest, so they all hold it; else the next round goes lower).
      if (r.resume_step != UINT64_MAX && r.rollback_high > r.resume_step)
        return start_rollback(r.resume_step);
      r.transfer_done = Clock::now();
      emit("rolled_back", {{"recovery", r.id},
                           {"path", r.path},
                           {"slot", r.leaver()},
                           {"slots", r.slots()},
                           {"donor", -1},
                           {"bytes", 0},
                           {"seconds", to_seconds(r.transfer_done - r.transfer_started)},
                           {"resume_step", r.resume_step}});
      return start_switch();
    case RecoveryState::kTransfer:
      return transfer_acked();
    case RecoveryState::kSwitch:
      return switched();
    default:
      return;
  }
}

void Coordinator::Impl::recovery_saw_step(int slot, uint64_t step) {
  Recovery& r = *recovery_;
  if (r.state == RecoveryState::kFirstStep && step > r.resume_step) seat_first_step(slot);
  if (recovery_ && r.state == RecoveryState::kDrain && r.drain_step > 0 && step >= r.drain_step &&
      !r.held_at.contains(slot)) {
    // The rank passed the boundary before it saw the order: it is inside
    // step `step` and needs the held ranks to finish it. Every rank moves on
    // to the boundary after it.
    raise_drain_step(step + 1);
  }
}

void Coordinator::Impl::seat_first_step(int slot) {
  Recovery& r = *recovery_;
  Seat* seat = r.seat_of_slot(slot);
  if (r.state != RecoveryState::kFirstStep || !seat) return;
  seat->first_step_seen = true;
  if (std::all_of(r.seats.begin(), r.seats.end(),
                  [](const Seat& s) { return s.first_step_seen || s.joiner_lost_at; }))
    finish_recovery();
}

void Coordinator::Impl::finish_recovery() {
  close_cpu_phase();
  const std::map<std::string, double> cpu_parts = critical_cpu_parts();
  double critical_cpu = 0;
  for (const auto& [part, seconds] : cpu_parts) critical_cpu += seconds;
  for (const Seat& seat : recovery_->seats) {
    if (seat.joiner_lost_at) continue;  // its slot has a recovery of its own
    json fields = breakdown(seat);
    fields["first_step_seen"] = seat.first_step_seen;
    fields["critical_cpu_s"] = critical_cpu;
    fields["critical_cpu_parts"] = cpu_parts;
    // The joiner reports them right before the heartbeat that ends the
    // recovery, on the same connection: they are here unless it died.
    const json& js = seat.joiner_step;
    if (js.is_object()) {
      fields["joiner_warm"] = js["warm"];
      fields["joiner_step_wall_s"] = js["wall_s"];
      fields["joiner_step_cpu_s"] = js["cpu_s"];
      fields["joiner_step_minflt"] = js["minflt"];
    }
    emit("recovery_done", std::move(fields));
  }
  recovery_.reset();
  begin_next_recovery();
}

void Coordinator::Impl::abandon(const std::string& reason) {
  emit("recovery_abandoned", {{"recovery", recovery_->id},
                              {"slot", recovery_->leaver()},
                              {"slots", recovery_->slots()},
                              {"reason", reason}});
  recovery_.reset();
  pending_.clear();
  stop_job(reason);
}

bool Coordinator::Impl::recovery_lost_slot(int slot, Clock::time_point failed_at,
                                           Clock::time_point detected_at) {
  Recovery& r = *recovery_;
  if (r.state == RecoveryState::kFirstStep) {
    // Switched already: the recovery ends, and the failure gets its own
    // (its collectives would keep the others' first step from completing).
    finish_recovery();
    return false;
  }
  std::erase_if(r.awaiting, [&](const auto& entry) { return entry.second.slot == slot; });
  bool donor =
      r.state == RecoveryState::kTransfer &&
      std::any_of(r.seats.begin(), r.seats.end(), [&](const Seat& s) { return s.donor == slot; });
  if (donor) emit("donor_failed", {{"recovery", r.id}, {"donor", slot}});
  if (fold_failure(slot, failed_at, detected_at)) return true;
  // A migration (its leaver may be this slot: choose_donor takes a replica).
  if (donor) {
    choose_donor();
    return false;
  }
  r.held_at.erase(slot);
  bool collecting = r.state == RecoveryState::kDrain || r.state == RecoveryState::kPrepare ||
                    r.state == RecoveryState::kTransfer || r.state == RecoveryState::kRollback ||
                    r.state == RecoveryState::kSwitch;
  if (collecting && r.awaiting.empty()) on_all_acked();
  return false;
}

void Coordinator::Impl::recovery_lost_joiner(int standby, const std::string& detail) {
  Recovery& r = *recovery_;
  Seat* seat = r.seat_of_joiner(standby);
  if (!seat) return;
  emit("joiner_failed", {{"recovery", r.id},
                         {"slot", seat->slot},
                         {"standby", standby},
                         {"state", recovery_state_name(r.state)},
                         {"detail", detail}});
  r.failed_joiners.insert(standby);
  if (r.state == RecoveryState::kSwitch) {
    // Ranks that switched already serve the new epoch, with this joiner in
    // it: no new round can start from the old one. The switch completes
    // without it, and its slot fails in the new epoch (switched()).
    seat->joiner_lost_at = Clock::now();
    std::erase_if(r.awaiting, [&](const auto& entry) { return entry.second.standby == standby; });
    if (r.awaiting.empty()) on_all_acked();
    return;
  }
  seat->joiner = -1;
  new_round();
}

void Coordinator::Impl::recovery_deadline_passed() {
  Recovery& r = *recovery_;
  r.deadline = Clock::time_point::max();  // each case below sets the next one
  switch (r.state) {
    case RecoveryState::kWaitStandby: {
      std::vector<int> waiting;
      for (const Seat& seat : r.seats) {
        if (seat.joiner < 0) waiting.push_back(seat.slot);
      }
      std::string which =
          waiting.size() == 1 ? " " + std::to_string(waiting.front()) : "s " + json(waiting).dump();
      return abandon(str_cat("no standby became ready for slot", which, " within ",
                             to_seconds(config_.standby_wait), " s"));
    }
    case RecoveryState::kFirstStep:
      return finish_recovery();
    default:
      break;
  }
  std::vector<OrderTarget> silent;
  for (const auto& [id, target] : r.awaiting) silent.push_back(target);
  std::string detail = str_cat("no answer to the ", recovery_state_name(r.state), " order in time");
  emit(
      "order_timeout",
      {{"recovery", r.id}, {"state", recovery_state_name(r.state)}, {"unanswered", silent.size()}});
  uint64_t id = r.id;
  for (const OrderTarget& t : silent) {
    if (!recovery_ || recovery_->id != id) return;
    if (t.standby >= 0) standby_lost(t.standby, detail);
  }
  for (const OrderTarget& t : silent) {
    if (t.slot >= 0) slot_failed(t.slot, "order", detail, Clock::now());
  }
}

void Coordinator::Impl::migration_overtaken(int finished_slot) {
  Recovery& r = *recovery_;
  bool before_hold = r.state == RecoveryState::kChooseJoiner ||
                     r.state == RecoveryState::kWaitStandby || r.state == RecoveryState::kPromote ||
                     r.state == RecoveryState::kDrain;
  if (r.cause != RecoveryCause::kMigration || !before_hold) return;
  // A rank finished training before it could be held: nothing is left to
  // migrate. A rank held meanwhile trains on (a drain it never reaches).
  for (const auto& [slot, at] : r.held_at) {
    Order go_on = recovery_order(OrderKind::kDrain);
    go_on.step = UINT64_MAX;
    send_order({slot, -1}, go_on);
  }
  emit("migration_cancelled", {{"recovery", r.id},
                               {"slot", r.leaver()},
                               {"standby", r.seats.front().joiner},
                               {"why", str_cat("slot ", finished_slot, " finished training")}});
  recovery_.reset();
  begin_next_recovery();
}

void Coordinator::Impl::recovery_standby_ready() {
  if (recovery_ && recovery_->state == RecoveryState::kWaitStandby) choose_joiner();
}

}  // namespace trainmover::control
