#include "comm/peers.h"

#include <algorithm>

#include "common/log.h"

namespace trainmover {

using transport::ControlMessage;
using transport::FrameKind;
using transport::Verdict;

PeerTable::PeerTable(int nslots, int slot)
    : slot_(slot), instances_(static_cast<size_t>(nslots)), peers_(static_cast<size_t>(nslots)) {}

bool PeerTable::is_current(const transport::Link& link) const {
  return valid_peer(link.peer_slot()) &&
         peers_[static_cast<size_t>(link.peer_slot())].link.get() == &link;
}

bool PeerTable::is_next(const transport::Link& link) const {
  return next_.active && valid_peer(link.peer_slot()) &&
         next_.links[static_cast<size_t>(link.peer_slot())].get() == &link;
}

bool PeerTable::opens_next(int slot) const {
  return next_.active && std::find(next_.open.begin(), next_.open.end(), slot) != next_.open.end();
}

void PeerTable::start_as(int slot, uint64_t epoch, std::vector<uint64_t> instances) {
  slot_ = slot;
  epoch_ = epoch;
  instances_ = std::move(instances);
  transport_->set_identity(slot, epoch);
}

void PeerTable::prepare_next(uint64_t epoch, std::vector<int> open,
                             std::vector<uint64_t> instances) {
  count_closed(next_.links);
  next_ = NextEpoch{};  // an earlier prepared epoch's links go
  next_.active = true;
  next_.epoch = epoch;
  next_.open = std::move(open);
  next_.instances = std::move(instances);
  next_.links.resize(peers_.size());
  transport_->reconsider_deferred();
}

std::vector<int> PeerTable::next_missing() const {
  std::vector<int> missing;
  for (int s : next_.open) {
    const auto& link = next_.links[static_cast<size_t>(s)];
    if (!link || link->failed()) missing.push_back(s);
  }
  return missing;
}

void PeerTable::on_next_failed(int slot, const Status& why) {
  if (!next_.error.ok()) return;
  next_.error = Status(why.code(),
                       str_cat("the process joining slot ", slot, " for epoch ", next_.epoch,
                               " failed: ", why.message()),
                       slot);
  log(LogLevel::kInfo, next_.error.message());
}

// Closes the links (and connects) to slots served by another process in the
// next epoch. Their operations are over: this runs between operations.
void PeerTable::retire_replaced() {
  for (int s = 0; s < nslots(); ++s) {
    if (!valid_peer(s)) continue;
    Peer& p = peer(s);
    uint64_t next_instance = next_.instances[static_cast<size_t>(s)];
    uint64_t known = p.link ? p.link->peer_instance() : instances_[static_cast<size_t>(s)];
    bool replaced = known != 0 && known != next_instance;
    if (!replaced) continue;
    if (p.connecting) transport_->cancel_connect(s);
    count_closed(p.link);
    retire(std::move(p.link));
    p = Peer{};
  }
}

// A dead link goes too, at the next prune rather than here: it is retired
// in the switch, and freeing its buffers (a shm link unmaps its two rings,
// the last mapping of the dead peer's pages) would lengthen phase 2.
void PeerTable::retire(std::unique_ptr<transport::Link> link) {
  if (!link) return;
  if (!link->failed()) link->close_gracefully();
  retiring_.push_back({std::move(link), Clock::now()});
}

// Drops retired links once the other end has closed too, or after a while.
void PeerTable::prune_retiring() {
  constexpr Duration kLinger = std::chrono::seconds(10);
  const auto now = Clock::now();
  std::erase_if(retiring_, [&](const Retiring& r) {
    return r.link->failed() || (r.link->flushed() && r.link->peer_left()) ||
           now - r.since > kLinger;
  });
}

Status PeerTable::switch_to_next() {
  if (!next_.active) return error(TM_ERROR_INVALID_ARGUMENT, "no switch prepared");
  Status result = next_.error;
  if (result.ok()) {
    std::vector<int> missing = next_missing();
    if (!missing.empty()) {
      result =
          Status(TM_ERROR_PEER_FAILED,
                 str_cat("switch to epoch ", next_.epoch, ": no link to the process joining slot ",
                         missing.front(), " (it did not connect, or died)"),
                 missing.front());
    }
  }
  retire_replaced();
  for (int s : next_.open) {
    auto& link = next_.links[static_cast<size_t>(s)];
    if (!link) continue;
    Peer& p = peer(s);
    p.link = std::move(link);
    p.liveness.heard = true;
    p.liveness.last_heard = Clock::now();
  }
  epoch_ = next_.epoch;
  instances_ = std::move(next_.instances);
  next_ = NextEpoch{};
  transport_->set_identity(slot_, epoch_);
  failure_ = Status::Ok();  // the old epoch's failure; dead links stay dead
  ops_entered_ = 0;
  waiting_on_ = -1;
  for (Peer& p : peers_) {
    p.liveness.ops_entered = 0;
    p.liveness.waiting_on = -1;
    if (p.link) p.link->advance_epoch(epoch_);
  }
  if (deferred_abort_ && deferred_abort_->epoch == epoch_) {
    const auto& a = *deferred_abort_;
    fail(Status(static_cast<tm_result_t>(a.code), a.reason, a.failed_slot));
  }
  deferred_abort_.reset();
  if (!result.ok()) fail(result);
  for (Peer& p : peers_) {
    if (p.link) p.link->resume();
  }
  transport_->reconsider_deferred();  // hellos of the epoch just entered
  return result;
}

transport::Link* PeerTable::link(int slot) const {
  if (slot < 0 || slot >= nslots()) return nullptr;
  return peers_[static_cast<size_t>(slot)].link.get();
}

const Status& PeerTable::connect_error(int slot) const {
  return peers_[static_cast<size_t>(slot)].connect_error;
}

void PeerTable::request_link(int slot, const std::string& endpoint, uint64_t instance_id) {
  Peer& p = peer(slot);
  if (p.link || p.connecting) return;
  p.connecting = true;
  p.connect_error = Status::Ok();
  transport_->connect(slot, endpoint, instance_id);
}

Verdict PeerTable::on_incoming(const transport::Hello& hello) {
  if (!valid_peer(hello.slot) || slot_ < 0) return Verdict::kRefused;  // slot_ < 0: a standby
  if (hello.epoch == epoch_) return incoming_current(hello);
  if (next_.active && hello.epoch == next_.epoch) return incoming_next(hello);
  // A joiner of an epoch not prepared here yet: decide once it is.
  if (hello.epoch > epoch_ && (!next_.active || hello.epoch > next_.epoch))
    return Verdict::kDeferred;
  return Verdict::kWrongEpoch;  // a zombie of an old epoch
}

Verdict PeerTable::incoming_next(const transport::Hello& hello) {
  size_t s = static_cast<size_t>(hello.slot);
  if (hello.instance_id != next_.instances[s]) return Verdict::kRefused;  // not in the view
  // A link of the next epoch that is not one to open now (a lazy link from a
  // process that switched first): decided once this process has switched.
  if (!opens_next(hello.slot)) return Verdict::kDeferred;
  if (next_.links[s]) return Verdict::kDuplicate;
  return Verdict::kAccepted;
}

Verdict PeerTable::incoming_current(const transport::Hello& hello) {
  if (failed()) return Verdict::kRefused;
  uint64_t expected = instances_[static_cast<size_t>(hello.slot)];
  // Another process than the one the view names for the slot: a zombie.
  if (expected != 0 && hello.instance_id != expected) return Verdict::kRefused;
  Peer& p = peer(hello.slot);
  // A link, even a dead one, is never replaced within an epoch: an operation
  // may still hold it. Replacing processes is the membership switch's job.
  if (p.link) return Verdict::kDuplicate;
  if (p.connecting) {
    if (slot_ < hello.slot) return Verdict::kDuplicate;  // our own connect wins
    transport_->cancel_connect(hello.slot);
    p.connecting = false;
  }
  return Verdict::kAccepted;
}

void PeerTable::on_link_ready(std::unique_ptr<transport::Link> link,
                              const transport::Hello& hello) {
  if (!valid_peer(hello.slot)) return;
  int slot = hello.slot;
  if (link->epoch() != epoch_) {
    if (next_.active && link->epoch() == next_.epoch && opens_next(slot) &&
        !next_.links[static_cast<size_t>(slot)]) {
      next_.links[static_cast<size_t>(slot)] = std::move(link);
      count_opened();
    } else {
      log(LogLevel::kInfo, "dropping a link of epoch ", link->epoch(), " to slot ", slot);
    }
    return;
  }
  Peer& p = peer(hello.slot);
  p.connecting = false;
  if (p.link) {
    log(LogLevel::kInfo, "dropping a second link to slot ", hello.slot);
    return;
  }
  p.link = std::move(link);
  count_opened();
  instances_[static_cast<size_t>(slot)] = p.link->peer_instance();
  p.connect_error = Status::Ok();
  p.liveness.heard = true;
  p.liveness.last_heard = Clock::now();
  if (failed()) p.link->cancel_pending();
}

void PeerTable::on_connect_failed(int slot, const Status& status, Verdict verdict) {
  if (!valid_peer(slot)) return;
  Peer& p = peer(slot);
  p.connecting = false;
  // kDuplicate: the peer's own connection to us wins; it arrives on its own.
  if (verdict == Verdict::kDuplicate) return;
  p.connect_error = Status(status.code(), status.message(), slot);
  log(LogLevel::kInfo, "connect to slot ", slot, " failed: ", status.message());
}

void PeerTable::on_control(transport::Link& link, const ControlMessage& message) {
  int from = link.peer_slot();
  if (is_next(link)) {
    if (message.kind == FrameKind::kAbort)
      on_next_failed(from, Status(static_cast<tm_result_t>(message.code), message.reason));
    return;
  }
  if (!is_current(link)) return;
  Peer& p = peer(from);
  p.liveness.heard = true;  // in any epoch: the peer is alive
  p.liveness.last_heard = Clock::now();
  if (message.epoch < epoch_) return;  // the old epoch's news
  if (message.epoch > epoch_) {
    if (message.kind == FrameKind::kAbort && !deferred_abort_) deferred_abort_ = message;
    return;
  }
  if (message.kind == FrameKind::kHeartbeat) {
    p.liveness.ops_entered = message.ops_entered;
    p.liveness.waiting_on = message.waiting_on;
  } else if (message.kind == FrameKind::kAbort && !failed()) {
    fail(Status(static_cast<tm_result_t>(message.code),
                str_cat(message.reason, " (reported by slot ", from, ")"), message.failed_slot));
  }
}

void PeerTable::on_link_failed(transport::Link& link) {
  if (is_next(link)) return on_next_failed(link.peer_slot(), link.status());
  if (!is_current(link)) return;
  if (link.peer_left() || failed()) return;
  fail(link.status());
}

void PeerTable::fail(const Status& why) {
  if (failed() || why.ok()) return;
  failure_ = why;
  log(LogLevel::kInfo, "communicator failed: ", why.message());
  ControlMessage abort;
  abort.kind = FrameKind::kAbort;
  abort.failed_slot = why.failed_slot();
  abort.code = static_cast<uint32_t>(why.code());
  abort.reason = why.message();
  for (Peer& p : peers_) {
    if (!p.link || p.link->failed()) continue;
    p.link->cancel_pending();
    p.link->send_control(abort);
  }
}

void PeerTable::set_progress(uint64_t ops_entered, int waiting_on) {
  ops_entered_ = ops_entered;
  waiting_on_ = waiting_on;
}

void PeerTable::send_heartbeats() {
  prune_retiring();
  ControlMessage hb;
  hb.kind = FrameKind::kHeartbeat;
  hb.ops_entered = ops_entered_;
  hb.waiting_on = waiting_on_;
  for (Peer& p : peers_) {
    if (p.link && !p.link->failed()) p.link->send_control(hb);
  }
}

void PeerTable::close_all() {
  for (Peer& p : peers_) {
    if (p.link && !p.link->failed()) p.link->close_gracefully();
  }
}

bool PeerTable::all_flushed() const {
  for (const Peer& p : peers_) {
    if (p.link && !p.link->failed() && !p.link->flushed()) return false;
  }
  for (const Retiring& r : retiring_) {
    if (!r.link->failed() && !r.link->flushed()) return false;
  }
  return true;
}

void PeerTable::drain_all() {
  for (Peer& p : peers_) {
    if (p.link && !p.link->failed()) p.link->cancel_pending();
  }
  for (Retiring& r : retiring_) {
    if (!r.link->failed()) r.link->cancel_pending();
  }
}

void PeerTable::clear() {
  for (Peer& p : peers_) {
    count_closed(p.link);
    p.link.reset();
  }
  count_closed(next_.links);
  retiring_.clear();
  next_ = NextEpoch{};
}

}  // namespace trainmover
