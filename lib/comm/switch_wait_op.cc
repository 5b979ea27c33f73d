#include "comm/switch_wait_op.h"

#include <algorithm>

namespace trainmover {
namespace {
// How soon a joiner dials again after a refusal: short, since the refusal
// only means the stayer has not prepared the epoch yet.
constexpr Duration kRedialDelay = std::chrono::microseconds(200);
}  // namespace

SwitchWaitOp::SwitchWaitOp(PeerTable& peers, Duration timeout)
    : peers_(peers), deadline_(Clock::now() + timeout), timeout_(timeout) {}

SwitchWaitOp::SwitchWaitOp(PeerTable& peers, std::vector<Target> targets, Duration timeout)
    : peers_(peers),
      joiner_(true),
      targets_(std::move(targets)),
      retry_at_(targets_.size()),
      deadline_(Clock::now() + timeout),
      timeout_(timeout) {}

bool SwitchWaitOp::poll() { return joiner_ ? poll_joiner() : poll_stayer(); }

Clock::time_point SwitchWaitOp::wake_at() const {
  Clock::time_point at = deadline_;
  for (size_t i = 0; i < targets_.size(); ++i) {
    // Only a target waiting to be dialled again needs a timer; a connect in
    // progress reports through events.
    const int slot = targets_[i].slot;
    if (targets_[i].dial && peers_.link(slot) == nullptr && !peers_.connecting(slot))
      at = std::min(at, retry_at_[i]);
  }
  return at;
}

Status SwitchWaitOp::timed_out(int slot, const std::string& detail) const {
  return Status(TM_ERROR_TIMEOUT,
                str_cat("epoch ", peers_.next_prepared() ? peers_.next_epoch() : peers_.epoch(),
                        ": no link to slot ", slot, " within ", to_seconds(timeout_), " s",
                        detail.empty() ? "" : ": ", detail),
                slot);
}

bool SwitchWaitOp::poll_stayer() {
  if (!peers_.next_error().ok()) {
    result_ = peers_.next_error();
    return true;
  }
  std::vector<int> missing = peers_.next_missing();
  if (missing.empty()) return true;
  if (Clock::now() < deadline_) return false;
  result_ = timed_out(missing.front(), "the joining process did not connect");
  return true;
}

bool SwitchWaitOp::poll_joiner() {
  if (peers_.failed()) {
    result_ = peers_.failure();
    return true;
  }
  const auto now = Clock::now();
  int missing = -1;
  for (size_t i = 0; i < targets_.size(); ++i) {
    const Target& t = targets_[i];
    transport::Link* link = peers_.link(t.slot);
    if (link != nullptr && link->failed()) {
      result_ = link->status();
      return true;
    }
    if (link != nullptr) continue;
    if (missing < 0) missing = t.slot;
    if (t.dial && !peers_.connecting(t.slot) && now >= retry_at_[i]) {
      peers_.request_link(t.slot, t.endpoint.address, t.endpoint.instance_id);
      retry_at_[i] = now + kRedialDelay;
    }
  }
  if (missing < 0) return true;
  if (now < deadline_) return false;
  result_ = timed_out(missing, peers_.connect_error(missing).message());
  return true;
}

}  // namespace trainmover
