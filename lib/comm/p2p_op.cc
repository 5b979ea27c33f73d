#include "comm/p2p_op.h"

#include <algorithm>

namespace trainmover {

using transport::RequestState;

void P2POp::prepare(Params params) {
  params_ = std::move(params);
  phase_ = Phase::kStart;
  result_ = Status::Ok();
}

Clock::time_point P2POp::wake_at() const {
  return phase_ == Phase::kConnecting ? connect_deadline_ : watchdog_.deadline();
}

bool P2POp::finish(Status status) {
  phase_ = Phase::kDone;
  result_ = std::move(status);
  peers_.set_progress(peers_.ops_entered(), -1);
  return true;
}

bool P2POp::poll() {
  if (peers_.failed()) return finish(peers_.failure());
  transport::Link* link = peers_.link(params_.peer);
  switch (phase_) {
    case Phase::kStart:
      peers_.set_progress(peers_.ops_entered(), params_.peer);
      if (link == nullptr) {
        peers_.request_link(params_.peer, params_.endpoint.address, params_.endpoint.instance_id);
        connect_deadline_ = Clock::now() + connect_timeout_;
        phase_ = Phase::kConnecting;
        return poll();
      }
      return post(*link);
    case Phase::kConnecting:
      if (link != nullptr) return post(*link);
      if (!peers_.connect_error(params_.peer).ok())
        return finish(peers_.connect_error(params_.peer));
      if (Clock::now() >= connect_deadline_) {
        return finish(Status(TM_ERROR_TIMEOUT,
                             str_cat(params_.name, ": no link to slot ", params_.peer, " within ",
                                     to_seconds(connect_timeout_), " s"),
                             params_.peer));
      }
      return false;
    case Phase::kRunning:
      return run(*link);
    case Phase::kDone:
      return true;
  }
  return true;
}

bool P2POp::post(transport::Link& link) {
  if (link.failed()) {
    peers_.fail(link.status());
    return finish(peers_.failure());
  }
  phase_ = Phase::kRunning;
  watchdog_.start(Clock::now());
  frames_ = std::max<size_t>(1, (params_.bytes + max_frame_ - 1) / max_frame_);
  frames_posted_ = frames_done_ = 0;
  post_window(link);
  return run(link);
}

// Keeps at most kWindow frames queued, so a message of any size fits the
// link's bounded request queue.
void P2POp::post_window(transport::Link& link) {
  constexpr size_t kWindow = 4;
  while (frames_posted_ < frames_ && frames_posted_ - frames_done_ < kWindow) {
    size_t offset = frames_posted_ * max_frame_;
    size_t len = std::min(max_frame_, params_.bytes - std::min(offset, params_.bytes));
    transport::RequestHandle h = params_.is_send
                                     ? link.post_send(params_.tag, {params_.data + offset, len})
                                     : link.post_recv(params_.tag, {params_.data + offset, len});
    if (frames_posted_ == 0) first_ = h;
    ++frames_posted_;
  }
}

bool P2POp::run(transport::Link& link) {
  Clock::time_point now = Clock::now();
  while (frames_done_ < frames_posted_) {
    transport::RequestHandle h{first_.seq + frames_done_, first_.is_send};
    RequestState st = link.test(h);
    if (st == RequestState::kFailed) {
      if (link.failed()) peers_.fail(link.status());
      return finish(peers_.failed() ? peers_.failure() : link.status());
    }
    if (st != RequestState::kDone) break;
    ++frames_done_;
    watchdog_.progressed(now);
    post_window(link);  // may complete more at once: the loop tests them
  }
  if (frames_done_ == frames_) return finish(Status::Ok());
  if (now < watchdog_.deadline()) return false;
  Status timeout = watchdog_.expire(now, params_.peer, peers_, params_.name, 0);
  if (timeout.ok()) return false;
  peers_.fail(timeout);
  return finish(peers_.failure());
}

}  // namespace trainmover
