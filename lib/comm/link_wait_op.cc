#include "comm/link_wait_op.h"

namespace trainmover {

bool LinkWaitOp::poll() {
  if (peers_.failed()) {
    result_ = peers_.failure();
    return true;
  }
  std::string missing;
  int first_missing = -1;
  for (int slot : slots_) {
    transport::Link* link = peers_.link(slot);
    if (link != nullptr && link->failed()) {
      result_ = link->status();
      return true;
    }
    if (link != nullptr) continue;
    if (!peers_.connect_error(slot).ok()) {
      result_ = peers_.connect_error(slot);
      return true;
    }
    missing += str_cat(missing.empty() ? "" : ", ", slot);
    if (first_missing < 0) first_missing = slot;
  }
  if (missing.empty()) return true;
  if (Clock::now() < deadline_) return false;
  result_ = Status(TM_ERROR_TIMEOUT,
                   str_cat("no link to slot(s) ", missing, " within ", to_seconds(timeout_),
                           " s: they did not join the communicator"),
                   first_missing);
  return true;
}

}  // namespace trainmover
