#include "comm/peers.h"

#include "common/log.h"

namespace trainmover {

using transport::ControlMessage;
using transport::FrameKind;
using transport::Verdict;

PeerTable::PeerTable(int nslots, int slot) : slot_(slot), peers_(static_cast<size_t>(nslots)) {}

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
  if (!valid_peer(hello.slot)) return Verdict::kRefused;
  if (failed()) return Verdict::kRefused;
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
  Peer& p = peer(hello.slot);
  p.connecting = false;
  if (p.link) {
    log(LogLevel::kInfo, "dropping a second link to slot ", hello.slot);
    return;
  }
  p.link = std::move(link);
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
  Peer& p = peer(from);
  p.liveness.heard = true;
  p.liveness.last_heard = Clock::now();
  if (message.kind == FrameKind::kHeartbeat) {
    p.liveness.ops_entered = message.ops_entered;
    p.liveness.waiting_on = message.waiting_on;
  } else if (message.kind == FrameKind::kAbort && !failed()) {
    fail(Status(static_cast<tm_result_t>(message.code),
                str_cat(message.reason, " (reported by slot ", from, ")"), message.failed_slot));
  }
}

void PeerTable::on_link_failed(transport::Link& link) {
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
  return true;
}

void PeerTable::drain_all() {
  for (Peer& p : peers_) {
    if (p.link && !p.link->failed()) p.link->cancel_pending();
  }
}

void PeerTable::clear() {
  for (Peer& p : peers_) p.link.reset();
}

}  // namespace trainmover
