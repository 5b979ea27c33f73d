// Mirrors NCCL's group semantics (ncclGroupStart/End nest; work issued in
// a group is launched when the outermost group ends) for the interposer's
// own deferred work: stream copies issued inside a group are held until the
// outermost ncclGroupEnd, exactly when NCCL itself enqueues the group.
// One per thread, like NCCL's group state; not thread-safe.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainmover::nccl {

template <typename T>
class GroupQueue {
 public:
  void start() {
    if (depth_++ == 0) ++serial_;
  }
  // Closes one level; when the outermost closes, hands back what was held.
  Result<std::vector<T>> end() {
    if (depth_ == 0) return error(TM_ERROR_INVALID_ARGUMENT, "ncclGroupEnd without ncclGroupStart");
    if (--depth_ > 0) return std::vector<T>{};
    return std::exchange(held_, {});
  }
  bool open() const { return depth_ > 0; }
  // Identifies the open outermost group (never 0), or 0 outside groups.
  uint64_t group_id() const { return open() ? serial_ : 0; }
  void defer(T item) { held_.push_back(std::move(item)); }

 private:
  int depth_ = 0;
  uint64_t serial_ = 0;
  std::vector<T> held_;
};

}  // namespace trainmover::nccl
