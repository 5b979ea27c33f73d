#include "comm/watchdog.h"

namespace trainmover {

Status Watchdog::expire(Clock::time_point now, int waiting_on, const PeerTable& peers,
                        const std::string& what, uint64_t collective) {
  const double waited = to_seconds(now - last_progress_);
  if (waiting_on < 0 || waiting_on >= peers.nslots()) {
    return Status(TM_ERROR_TIMEOUT, str_cat(what, " made no progress for ", waited, " s"));
  }
  const PeerTable::Liveness& p = peers.liveness(waiting_on);
  if (!p.heard || now - p.last_heard >= timeout_) {
    return Status(
        TM_ERROR_TIMEOUT,
        str_cat(what, " made no progress for ", waited, " s waiting for slot ", waiting_on,
                ", which has sent nothing for as long (hung, stopped or unreachable)"),
        waiting_on);
  }
  if (collective > 0 && p.ops_entered < collective) {
    return Status(TM_ERROR_TIMEOUT,
                  str_cat(what, " made no progress for ", waited, " s: slot ", waiting_on,
                          " has not entered it (it has entered ", p.ops_entered, " of the ",
                          collective, " collectives so far)"),
                  waiting_on);
  }
  if (!in_grace_) {
    in_grace_ = true;
    return Status::Ok();
  }
  int culprit = p.waiting_on >= 0 ? p.waiting_on : waiting_on;
  return Status(TM_ERROR_TIMEOUT,
                str_cat(what, " made no progress for ", waited, " s: slot ", waiting_on,
                        " is itself waiting for slot ", culprit),
                culprit);
}

}  // namespace trainmover
