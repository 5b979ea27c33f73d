#include "record/nccl/host_pool.h"

namespace trainmover::nccl {

HostPool::~HostPool() {
  for (auto& [buffer, capacity] : capacity_) free_(buffer);
}

Result<std::span<std::byte>> HostPool::acquire(size_t bytes) {
  std::unique_lock lock(mu_);
  auto it = free_list_.lower_bound(bytes);
  if (it != free_list_.end()) {
    std::byte* buffer = it->second;
    free_list_.erase(it);
    return std::span<std::byte>(buffer, bytes);
  }
  lock.unlock();
  TM_ASSIGN_OR_RETURN(void* raw, allocate_(bytes == 0 ? 1 : bytes));
  lock.lock();
  auto* buffer = static_cast<std::byte*>(raw);
  capacity_[buffer] = bytes;
  held_ += bytes;
  return std::span<std::byte>(buffer, bytes);
}

void HostPool::release(std::span<std::byte> buffer) {
  std::lock_guard lock(mu_);
  auto it = capacity_.find(buffer.data());
  if (it != capacity_.end()) free_list_.emplace(it->second, buffer.data());
}

size_t HostPool::bytes_held() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace trainmover::nccl
