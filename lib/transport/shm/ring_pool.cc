#include "transport/shm/ring_pool.h"

namespace trainmover::transport::shm {

Status RingPool::fill(size_t count) {
  while (spare() < count) {
    TM_ASSIGN_OR_RETURN(SharedRing ring, SharedRing::create(ring_bytes_));
    std::lock_guard<std::mutex> lock(mutex_);
    spare_.push_back(std::move(ring));
  }
  return Status::Ok();
}

Status RingPool::grow(size_t more) {
  size_t target = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    target = target_ += more;
  }
  return fill(target);
}

std::optional<SharedRing> RingPool::take(size_t data_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty() || data_bytes != ring_bytes_) return std::nullopt;
  SharedRing ring = std::move(spare_.back());
  spare_.pop_back();
  return ring;
}

size_t RingPool::spare() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spare_.size();
}

}  // namespace trainmover::transport::shm
