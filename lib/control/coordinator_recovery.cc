// The recovery state machine (recovery.h): one recovery at a time, the
// others queued in order of detection.
#include <algorithm>

#include "common/log.h"
#include "control/coordinator_impl.h"

namespace trainmover::control {

using nlohmann::json;

const char* recovery_state_name(RecoveryState state) {
  switch (state) {
    case RecoveryState::kChooseJoiner:
      return "choose_joiner";
    case RecoveryState::kWaitStandby:
      return "wait_standby";
    case RecoveryState::kPromote:
      return "promote";
    case RecoveryState::kDrain:
      return "drain";
    case RecoveryState::kPrepare:
      return "prepare";
    case RecoveryState::kTransfer:
      return "transfer";
    case RecoveryState::kRollback:
      return "rollback";
    case RecoveryState::kSwitch:
      return "switch";
    case RecoveryState::kFirstStep:
      return "first_step";
    case RecoveryState::kDone:
      return "done";
    case RecoveryState::kAbandoned:
      return "abandoned";
  }
  return "unknown";
}

namespace {
const char* cause_name(RecoveryCause cause) {
  return cause == RecoveryCause::kMigration ? "migration" : "failure";
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
    r.leaver = p.slot;
    r.cause = p.cause;
    r.failed_at = p.failed_at;
    r.detected_at = p.detected_at;
    recovery_ = r;
    emit("recovery_started", {{"recovery", r.id},
                              {"slot", r.leaver},
                              {"cause", cause_name(r.cause)},
                              {"role", stage_role_name(membership_.layout().role(r.leaver))}});
    choose_joiner();
  }
}

void Coordinator::Impl::enter(RecoveryState state, Duration timeout) {
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
  StageRole role = membership_.layout().role(r.leaver);
  auto standby = membership_.pick_standby(role, r.failed_joiners);
  if (!standby) {
    if (r.state == RecoveryState::kWaitStandby) return;  // still waiting
    if (config_.standby_wait <= Duration::zero())
      return abandon(str_cat("no standby is ready for slot ", r.leaver, " (role ",
                             stage_role_name(role), ")"));
    emit("no_standby", {{"slot", r.leaver},
                        {"role", stage_role_name(role)},
                        {"pool", membership_.usable_standbys()},
                        {"waiting_s", to_seconds(config_.standby_wait)}});
    return enter(RecoveryState::kWaitStandby, config_.standby_wait);
  }
  r.joiner = *standby;
  // Every attempt gets a fresh epoch: a view once published is never reused.
  last_epoch_used_ = std::max(last_epoch_used_, membership_.epoch()) + 1;
  r.epoch = last_epoch_used_;
  emit("joiner_chosen",
       {{"recovery", r.id}, {"slot", r.leaver}, {"standby", r.joiner}, {"epoch", r.epoch}});
  enter(RecoveryState::kPromote, config_.order_timeout);
  Order promote;
  promote.kind = OrderKind::kPromote;
  promote.epoch = r.epoch;
  promote.slot = r.leaver;
  promote.role = role;
  send_order({-1, r.joiner}, promote);
}

std::vector<int> Coordinator::Impl::participants() const {
  std::vector<int> out;
  for (int s = 0; s < membership_.layout().nslots(); ++s) {
    if (membership_.served(s)) out.push_back(s);
  }
  return out;
}

json Coordinator::Impl::view_json() const {
  const Recovery& r = *recovery_;
  json slots = json::array();
  for (int s = 0; s < membership_.layout().nslots(); ++s) {
    const ProcessId* p = nullptr;
    if (s == r.leaver) {
      p = &membership_.standby(r.joiner)->process;
    } else if (membership_.served(s)) {
      p = &*membership_.slot(s).process;
    }
    json entry = {{"slot", s}};
    if (p) entry.update({{"pid", p->pid}, {"host", p->host}, {"instance", p->instance_id}});
    slots.push_back(std::move(entry));
  }
  return {{"epoch", r.epoch}, {"slots", std::move(slots)}};
}

Order Coordinator::Impl::recovery_order(OrderKind kind) const {
  Order order;
  order.kind = kind;
  order.epoch = recovery_->epoch;
  order.slot = recovery_->leaver;
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
  emit("view_published",
       {{"recovery", r.id}, {"epoch", r.epoch}, {"slot", r.leaver}, {"standby", r.joiner}});
  enter(RecoveryState::kPrepare, config_.order_timeout);
  r.resume_step = UINT64_MAX;
  r.last_step = 0;
  for (int s : participants()) {
    Order prepare = recovery_order(OrderKind::kPrepare);
    prepare.view = view;
    send_order({s, -1}, prepare);
  }
  if (r.awaiting.empty()) on_all_acked();
}

void Coordinator::Impl::choose_donor() {
  Recovery& r = *recovery_;
  if (r.cause == RecoveryCause::kMigration && membership_.served(r.leaver)) {
    r.donor = r.leaver;
    r.path = "leaver";
    return start_transfer();
  }
  auto replicas = membership_.replicas_of(r.leaver);
  if (replicas.empty()) return start_rollback(UINT64_MAX);
  r.donor = replicas.front();
  r.path = "replica";
  start_transfer();
}

void Coordinator::Impl::start_transfer() {
  Recovery& r = *recovery_;
  r.transfer_started = Clock::now();
  emit("state_transfer_started", {{"recovery", r.id},
                                  {"path", r.path},
                                  {"donor", r.donor},
                                  {"slot", r.leaver},
                                  {"standby", r.joiner}});
  enter(RecoveryState::kTransfer, config_.transfer_timeout);
  Order send;
  send.kind = OrderKind::kSendState;
  send.epoch = r.epoch;
  send.slot = r.leaver;
  send.donor = r.donor;
  send.joiner = r.leaver;
  send.step = r.resume_step;  // the donor sends the state of the agreed step
  Order receive = send;
  receive.kind = OrderKind::kReceiveState;
  receive.role = membership_.layout().role(r.leaver);
  send_order({r.donor, -1}, send);
  send_order({-1, r.joiner}, receive);
}

void Coordinator::Impl::start_rollback(uint64_t at_most) {
  Recovery& r = *recovery_;
  r.donor = -1;
  r.path = "rollback";
  if (at_most == UINT64_MAX) r.transfer_started = Clock::now();
  json fields = {{"recovery", r.id}, {"slot", r.leaver}};
  if (at_most == UINT64_MAX) {
    fields["why"] =
        str_cat("no live DP replica of pipeline stage ", membership_.layout().pp_index(r.leaver));
  } else {
    fields["why"] = str_cat("the ranks loaded checkpoints of steps ", r.resume_step, " to ",
                            r.rollback_high, ": again, of a step at most ", at_most);
    fields["at_most"] = at_most;
  }
  emit("rollback_started", std::move(fields));
  enter(RecoveryState::kRollback, config_.order_timeout);
  r.resume_step = UINT64_MAX;
  r.rollback_high = 0;
  Order rollback;
  rollback.kind = OrderKind::kRollback;
  rollback.epoch = r.epoch;
  rollback.slot = r.leaver;
  rollback.step = at_most;
  for (int s : participants()) send_order({s, -1}, rollback);
  send_order({-1, r.joiner}, rollback);
}

void Coordinator::Impl::start_switch() {
  Recovery& r = *recovery_;
  if (r.resume_step == UINT64_MAX) r.resume_step = 0;
  enter(RecoveryState::kSwitch, config_.order_timeout);
  Order order;
  order.kind = OrderKind::kSwitch;
  order.epoch = r.epoch;
  order.slot = r.leaver;
  order.step = r.resume_step;
  for (int s : participants()) {
    if (s != r.leaver) send_order({s, -1}, order);
  }
  send_order({-1, r.joiner}, order);
}

void Coordinator::Impl::on_ack(const Peer& peer, const Ack& ack) {
  if (!recovery_) return;
  auto it = recovery_->awaiting.find(ack.order_id);
  if (it == recovery_->awaiting.end()) return;  // an order of a phase already left
  OrderTarget target = it->second;
  if (target.slot != peer.slot || target.standby != peer.standby) return;  // not its order
  if (!ack.ok) {
    std::string detail =
        str_cat(recovery_state_name(recovery_->state), " order failed: ", ack.error);
    if (target.standby >= 0) return standby_lost(target.standby, detail);
    return slot_failed(target.slot, "order", detail, Clock::now());
  }
  Recovery& r = *recovery_;
  if (r.state == RecoveryState::kPrepare || r.state == RecoveryState::kRollback)
    r.resume_step = std::min(r.resume_step, ack.step);
  if (r.state == RecoveryState::kPrepare) r.last_step = std::max(r.last_step, ack.step);
  if (r.state == RecoveryState::kRollback) r.rollback_high = std::max(r.rollback_high, ack.step);
  if (r.state == RecoveryState::kTransfer) r.bytes = std::max(r.bytes, ack.bytes);
  r.awaiting.erase(it);
  if (r.state == RecoveryState::kDrain) {
    r.held_at[target.slot] = ack.step;
    raise_drain_step(ack.step);  // and a rank held below it moves on to it
  }
  if (r.awaiting.empty()) on_all_acked();
}

void Coordinator::Impl::on_all_acked() {
  Recovery& r = *recovery_;
  Clock::time_point now = Clock::now();
  switch (r.state) {
    case RecoveryState::kPromote:
      emit("standby_promoted", {{"recovery", r.id}, {"standby", r.joiner}, {"slot", r.leaver}});
      if (r.cause == RecoveryCause::kMigration) return start_drain();
      return publish_and_prepare();
    case RecoveryState::kDrain:
      emit("drained", {{"recovery", r.id}, {"slot", r.leaver}, {"step", r.drain_step}});
      return publish_and_prepare();
    case RecoveryState::kPrepare:
      return choose_donor();
    case RecoveryState::kRollback:
      // Every rank must resume from the same step: when they loaded
      // different ones, all load again, at most the oldest (the stages keep
      // their two newest, so they all hold it; else the next round goes lower).
      if (r.resume_step != UINT64_MAX && r.rollback_high > r.resume_step)
        return start_rollback(r.resume_step);
      [[fallthrough]];
    case RecoveryState::kTransfer:
      r.transfer_done = now;
      emit(r.state == RecoveryState::kTransfer ? "state_transferred" : "rolled_back",
           {{"recovery", r.id},
            {"path", r.path},
            {"donor", r.donor},
            {"bytes", r.bytes},
            {"seconds", to_seconds(now - r.transfer_started)},
            {"resume_step", r.resume_step}});
      return start_switch();
    case RecoveryState::kSwitch: {
      r.switched_at = now;
      if (membership_.served(r.leaver)) {  // a planned migration: the leaver retires
        if (auto id = connection_of_slot(r.leaver)) {
          peers_[*id].finished = true;
          peers_[*id].slot = -1;
          Order stop;
          stop.order_id = next_order_id_++;
          stop.kind = OrderKind::kStop;
          stop.reason = str_cat("slot ", r.leaver, " migrated to standby ", r.joiner);
          server_->send(*id, stop);
        }
        membership_.vacate(r.leaver);
      }
      if (auto id = connection_of_standby(r.joiner)) {
        peers_[*id].standby = -1;
        peers_[*id].slot = r.leaver;
        peers_[*id].kind = PeerKind::kActive;
      }
      Status st = membership_.promote(r.joiner, r.leaver);
      if (!st.ok()) return abandon("promoting the joiner failed: " + st.message());
      membership_.set_step(r.leaver, r.resume_step);
      membership_.commit_epoch(r.epoch);
      emit("switchover", {{"recovery", r.id},
                          {"epoch", r.epoch},
                          {"slot", r.leaver},
                          {"standby", r.joiner},
                          {"resume_step", r.resume_step}});
      return enter(RecoveryState::kFirstStep, config_.first_step_timeout);
    }
    default:
      return;
  }
}

void Coordinator::Impl::recovery_saw_step(int slot, uint64_t step) {
  Recovery& r = *recovery_;
  if (r.state == RecoveryState::kFirstStep && slot == r.leaver && step > r.resume_step)
    finish_recovery(true);
  if (r.state == RecoveryState::kDrain && r.drain_step > 0 && step >= r.drain_step &&
      !r.held_at.contains(slot)) {
    // The rank passed the boundary before it saw the order: it is inside
    // step `step` and needs the held ranks to finish it. Every rank moves on
    // to the boundary after it.
    raise_drain_step(step + 1);
  }
}

json Coordinator::Impl::breakdown() const {
  const Recovery& r = *recovery_;
  Clock::time_point now = Clock::now();
  double transfer = to_seconds(r.transfer_done - r.transfer_started);
  return {{"recovery", r.id},
          {"slot", r.leaver},
          {"cause", cause_name(r.cause)},
          {"standby", r.joiner},
          {"epoch", r.epoch},
          {"path", r.path},
          {"donor", r.donor},
          {"bytes", r.bytes},
          {"resume_step", r.resume_step},
          {"last_step", r.last_step},
          // Steps some rank had finished and does again: at most the step in
          // flight, unless the recovery rolled back to a checkpoint.
          {"redone_steps", r.last_step > r.resume_step ? r.last_step - r.resume_step : 0},
          {"downtime_s", to_seconds(now - r.failed_at)},
          {"detection_s", to_seconds(r.detected_at - r.failed_at)},
          {"switch_s", to_seconds(r.switched_at - r.detected_at) - transfer},
          {"state_transfer_s", transfer},
          {"first_step_s", to_seconds(now - r.switched_at)}};
}

void Coordinator::Impl::finish_recovery(bool first_step_seen) {
  json fields = breakdown();
  fields["first_step_seen"] = first_step_seen;
  // The joiner reports them right before the heartbeat that ends the
  // recovery, on the same connection: they are here unless it died.
  const json& js = recovery_->joiner_step;
  if (js.is_object()) {
    fields["joiner_warm"] = js["warm"];
    fields["joiner_step_wall_s"] = js["wall_s"];
    fields["joiner_step_cpu_s"] = js["cpu_s"];
    fields["joiner_step_minflt"] = js["minflt"];
  }
  emit("recovery_done", std::move(fields));
  recovery_.reset();
  begin_next_recovery();
}

void Coordinator::Impl::abandon(const std::string& reason) {
  emit("recovery_abandoned",
       {{"recovery", recovery_->id}, {"slot", recovery_->leaver}, {"reason", reason}});
  recovery_.reset();
  pending_.clear();
  stop_job(reason);
}

void Coordinator::Impl::recovery_lost_slot(int slot) {
  Recovery& r = *recovery_;
  if (r.state == RecoveryState::kFirstStep) {
    if (slot == r.leaver) finish_recovery(false);
    return;
  }
  std::erase_if(r.awaiting, [&](const auto& entry) { return entry.second.slot == slot; });
  if (r.state == RecoveryState::kTransfer && slot == r.donor) {
    emit("donor_failed", {{"recovery", r.id}, {"donor", slot}});
    return choose_donor();
  }
  r.held_at.erase(slot);
  bool collecting = r.state == RecoveryState::kDrain || r.state == RecoveryState::kPrepare ||
                    r.state == RecoveryState::kTransfer || r.state == RecoveryState::kRollback ||
                    r.state == RecoveryState::kSwitch;
  if (collecting && r.awaiting.empty()) on_all_acked();
}

void Coordinator::Impl::recovery_lost_joiner(const std::string& detail) {
  Recovery& r = *recovery_;
  emit("joiner_failed", {{"recovery", r.id},
                         {"standby", r.joiner},
                         {"state", recovery_state_name(r.state)},
                         {"detail", detail}});
  r.failed_joiners.insert(r.joiner);
  r.joiner = -1;
  r.state = RecoveryState::kChooseJoiner;
  r.deadline = Clock::time_point::max();
  r.awaiting.clear();
  choose_joiner();
}

void Coordinator::Impl::recovery_deadline_passed() {
  Recovery& r = *recovery_;
  r.deadline = Clock::time_point::max();  // each case below sets the next one
  switch (r.state) {
    case RecoveryState::kWaitStandby:
      return abandon(str_cat("no standby became ready for slot ", r.leaver, " within ",
                             to_seconds(config_.standby_wait), " s"));
    case RecoveryState::kFirstStep:
      return finish_recovery(false);
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
                               {"slot", r.leaver},
                               {"standby", r.joiner},
                               {"why", str_cat("slot ", finished_slot, " finished training")}});
  recovery_.reset();
  begin_next_recovery();
}

void Coordinator::Impl::recovery_standby_ready() {
  if (recovery_ && recovery_->state == RecoveryState::kWaitStandby) choose_joiner();
}

}  // namespace trainmover::control
