// Communicator: the membership switch (prepare_switch, join, wait_prepared,
// switchover). See communicator.h and docs/two-phase-switch.md.
#include <algorithm>

#include "comm/communicator.h"
#include "comm/view_record.h"
#include "common/log.h"

namespace trainmover {

Status Communicator::check_live() const {
  if (left_) {
    return error(TM_ERROR_INVALID_ARGUMENT, "this process left communicator '", config_.name,
                 "' at epoch ", epoch_);
  }
  if (config_.slot < 0) {
    return error(TM_ERROR_INVALID_ARGUMENT, "this process is a standby of communicator '",
                 config_.name, "': it serves no slot until join() and switchover()");
  }
  return Status::Ok();
}

namespace {

Status check_next(const View& next, int nslots, uint64_t epoch) {
  TM_RETURN_IF_ERROR(next.validate());
  if (next.nslots() != nslots) {
    return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", next.epoch, " has ", next.nslots(),
                 " slots; the communicator has ", nslots);
  }
  if (next.epoch <= epoch) {
    return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", next.epoch,
                 " is not after the current epoch ", epoch);
  }
  return Status::Ok();
}

int slot_of(const View& view, uint64_t instance_id) {
  for (int s = 0; s < view.nslots(); ++s) {
    if (view.slots[static_cast<size_t>(s)].instance_id == instance_id) return s;
  }
  return -1;
}

}  // namespace

// The current view as far as this process knows it: the processes it has
// links to or endpoints of; a slot it knows nothing of is taken as unchanged
// (it has no link there, so nothing of it changes here).
View Communicator::known_view(const View& next) {
  std::vector<uint64_t> linked(static_cast<size_t>(config_.nslots));
  (void)engine_->call([&] {
    for (int s = 0; s < config_.nslots; ++s) {
      if (const transport::Link* link = peers_.link(s))
        linked[static_cast<size_t>(s)] = link->peer_instance();
    }
    return Status::Ok();
  });
  View v;
  v.epoch = epoch_;
  v.extra_pairs = next.extra_pairs;
  for (int s = 0; s < config_.nslots; ++s) {
    size_t i = static_cast<size_t>(s);
    Endpoint e = next.slots[i];
    if (s == config_.slot) {
      e = self_;
    } else if (endpoints_[i]) {
      e = *endpoints_[i];
    } else if (linked[i] != 0) {
      e.instance_id = linked[i];
    }
    v.slots.push_back(e);
  }
  return v;
}

Status Communicator::prepare_switch(const View& next) {
  TM_RETURN_IF_ERROR(check_live());
  TM_RETURN_IF_ERROR(catch_up_links());
  if (role_ == SwitchRole::kJoiner)
    return error(TM_ERROR_INVALID_ARGUMENT, "a joining process prepares with join()");
  TM_RETURN_IF_ERROR(check_next(next, config_.nslots, epoch_));
  int slot = slot_of(next, self_.instance_id);
  if (slot >= 0 && slot != config_.slot) {
    return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", next.epoch,
                 " moves this process from slot ", config_.slot, " to slot ", slot,
                 ": a process keeps its slot or leaves");
  }
  std::vector<int> open;
  if (slot >= 0) {
    TM_ASSIGN_OR_RETURN(auto changes, delta(known_view(next), next, config_.algorithms));
    for (const ProcessDelta& d : changes) {
      if (d.instance_id == self_.instance_id) open = d.open;
    }
  }
  std::vector<uint64_t> instances;
  for (const Endpoint& e : next.slots) instances.push_back(e.instance_id);
  TM_RETURN_IF_ERROR(engine_->call([&] {
    peers_.prepare_next(next.epoch, open, std::move(instances));
    return Status::Ok();
  }));
  next_ = next;
  role_ = slot >= 0 ? SwitchRole::kStayer : SwitchRole::kLeaver;
  opens_links_ = !open.empty();
  return Status::Ok();
}

Status Communicator::join(const View& next) {
  if (config_.slot >= 0 || role_ != SwitchRole::kNone)
    return error(TM_ERROR_INVALID_ARGUMENT, "join() is for a standby that has not joined yet");
  TM_RETURN_IF_ERROR(check_next(next, config_.nslots, epoch_));
  int slot = slot_of(next, self_.instance_id);
  if (slot < 0) {
    return error(TM_ERROR_INVALID_ARGUMENT, "view epoch ", next.epoch,
                 " does not name this standby (instance ", encode_endpoint(self_), ")");
  }
  // Every link of the joiner is new, so it dials them all; two joiners that
  // dial each other are sorted out by PeerTable's tie-break.
  join_targets_.clear();
  for (auto [a, b] : linked_pairs(next, config_.algorithms)) {
    if (a != slot && b != slot) continue;
    int peer = a == slot ? b : a;
    join_targets_.push_back({peer, next.slots[static_cast<size_t>(peer)], true});
  }
  std::vector<uint64_t> instances;
  for (const Endpoint& e : next.slots) instances.push_back(e.instance_id);
  config_.slot = slot;
  adopt(next);
  next_ = next;
  role_ = SwitchRole::kJoiner;
  return engine_->call([&] {
    peers_.start_as(slot, next.epoch, std::move(instances));
    for (const auto& t : join_targets_)
      peers_.request_link(t.slot, t.endpoint.address, t.endpoint.instance_id);
    return Status::Ok();
  });
}

Status Communicator::wait_prepared() {
  Duration timeout = seconds(config_.connect_timeout_s);
  if (role_ == SwitchRole::kStayer) {
    SwitchWaitOp wait(peers_, timeout);
    return engine_->execute(wait);
  }
  if (role_ == SwitchRole::kJoiner) {
    SwitchWaitOp wait(peers_, join_targets_, timeout);
    return engine_->execute(wait);
  }
  return Status::Ok();
}

// Starts the epoch of `view` on the caller's side: operation numbers restart.
void Communicator::adopt(const View& view) {
  epoch_ = view.epoch;
  log_set_identity(config_.slot, static_cast<int64_t>(epoch_));
  for (int s = 0; s < view.nslots(); ++s)
    endpoints_[static_cast<size_t>(s)] = view.slots[static_cast<size_t>(s)];
  collectives_ = 0;
  std::fill(sends_to_.begin(), sends_to_.end(), 0);
  std::fill(recvs_from_.begin(), recvs_from_.end(), 0);
  last_failure_ = Status::Ok();
}

Status Communicator::catch_up_links() {
  if (!links_behind_) return Status::Ok();
  links_behind_ = false;
  Status st = engine_->call([&] { return peers_.switch_to_next(); });
  if (!st.ok()) log(LogLevel::kInfo, "switch to epoch ", epoch_, ": ", st.message());
  return st;
}

Status Communicator::leave() {
  shut_down();
  left_ = true;
  next_.reset();
  role_ = SwitchRole::kNone;
  return Status::Ok();
}

namespace {
// The view a record published under view_key(name, epoch) holds.
Result<View> parse_view_of_epoch(const std::string& record, uint64_t epoch) {
  TM_ASSIGN_OR_RETURN(View view, parse_view(record));
  if (view.epoch != epoch)
    return error(TM_ERROR_PROTOCOL, "the view published as epoch ", epoch, " says epoch ",
                 view.epoch);
  return view;
}
}  // namespace

Result<View> Communicator::fetch_view(uint64_t epoch) {
  Duration timeout = seconds(config_.connect_timeout_s);
  if (epoch > 0) {
    TM_ASSIGN_OR_RETURN(std::string record, store_->get(view_key(config_.name, epoch), timeout));
    return parse_view_of_epoch(record, epoch);
  }
  // As slot 0 published it (connect()), else from the endpoint records: a
  // slot 0 that died before publishing, or a communicator being created.
  auto published = store_->get(view_key(config_.name, epoch), Duration::zero());
  if (published.ok()) {
    TM_ASSIGN_OR_RETURN(View view, parse_view(*published));
    if (view.epoch == epoch && view.nslots() == config_.nslots) return view;
  }
  return fetch_first_view(*store_, config_.name, config_.nslots, timeout);
}

Result<std::optional<View>> Communicator::published_view(uint64_t epoch) {
  auto record = store_->get(view_key(config_.name, epoch), Duration::zero());
  if (!record.ok() && record.status().code() == TM_ERROR_TIMEOUT) return std::optional<View>();
  if (!record.ok()) return record.status();
  TM_ASSIGN_OR_RETURN(View view, parse_view_of_epoch(*record, epoch));
  return std::optional<View>(std::move(view));
}

Status Communicator::publish_view(const View& view) {
  return trainmover::publish_view(*store_, config_.name, view);
}

Status Communicator::switchover(uint64_t epoch) {
  if (left_) return check_live();
  if (!next_ || next_->epoch != epoch) {
    return error(TM_ERROR_INVALID_ARGUMENT, "switchover to epoch ", epoch,
                 ": no view of that epoch was prepared (prepare_switch or join first)");
  }
  switch (role_) {
    case SwitchRole::kLeaver:
      return leave();
    case SwitchRole::kJoiner: {
      Status st = wait_prepared();
      if (!st.ok()) {
        (void)engine_->call([&] {
          peers_.fail(st);
          return Status::Ok();
        });
      }
      next_.reset();
      role_ = SwitchRole::kNone;
      return finish_call(st);
    }
    case SwitchRole::kStayer:
    case SwitchRole::kNone:
      break;
  }
  if (!opens_links_) {
    // Outside the delta nothing changes but the epoch: do it when the next
    // operation starts, so that the switch point costs these processes (the
    // many) no wake-up of their progress thread.
    links_behind_ = true;
    adopt(*next_);
    next_.reset();
    role_ = SwitchRole::kNone;
    return Status::Ok();
  }
  (void)wait_prepared();  // bounded; what is missing, switch_to_next reports
  Status st = engine_->call([&] { return peers_.switch_to_next(); });
  adopt(*next_);
  next_.reset();
  role_ = SwitchRole::kNone;
  if (!st.ok()) log(LogLevel::kInfo, "switch to epoch ", epoch, ": ", st.message());
  return finish_call(st);
}

}  // namespace trainmover
