#include "record/nccl/event_pool.h"

#include "record/nccl/cuda_support.h"

namespace trainmover::nccl {

EventPool::~EventPool() {
  // At exit the CUDA runtime may already be gone; nothing to do about it.
  for (cudaEvent_t event : created_) (void)cudaEventDestroy(event);
}

Result<cudaEvent_t> EventPool::acquire() {
  std::lock_guard lock(mu_);
  if (!free_.empty()) {
    cudaEvent_t event = free_.back();
    free_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  TM_RETURN_IF_ERROR(cuda_status(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                                 "cudaEventCreateWithFlags for a recorded output"));
  created_.push_back(event);
  return event;
}

void EventPool::release(cudaEvent_t event) {
  std::lock_guard lock(mu_);
  free_.push_back(event);
}

Result<bool> event_reached(cudaEvent_t event) {
  cudaError_t err = cudaEventQuery(event);
  if (err == cudaErrorNotReady) return false;
  TM_RETURN_IF_ERROR(cuda_status(err, "cudaEventQuery on a recorded output's copy"));
  return true;
}

}  // namespace trainmover::nccl
