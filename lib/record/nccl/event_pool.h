// CUDA events that mark where a recorded output has reached host memory.
//
// Record mode records one event behind each output copy; the completion
// writer polls it. Events are created without timing (the cheapest to
// record and query) and reused, since a training loop records the same
// calls every iteration. Thread-safe: acquire() on application threads,
// release() on the completion writer. The destructor destroys every event
// the pool created.
#pragma once

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "common/status.h"

namespace trainmover::nccl {

class EventPool {
 public:
  EventPool() = default;
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // A free event, or a new one; TM_ERROR_SYSTEM when CUDA cannot create it.
  Result<cudaEvent_t> acquire();
  // Gives back an event acquire() returned, once nothing waits for it.
  void release(cudaEvent_t event);

 private:
  std::mutex mu_;
  std::vector<cudaEvent_t> free_;
  std::vector<cudaEvent_t> created_;
};

// Whether the work before `event` on its stream has completed: true, false
// (not yet), or TM_ERROR_SYSTEM naming the CUDA error.
Result<bool> event_reached(cudaEvent_t event);

}  // namespace trainmover::nccl
