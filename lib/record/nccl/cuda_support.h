// CUDA runtime helpers shared by record and replay mode.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/status.h"
#include "record/nccl/host_pool.h"

namespace trainmover::nccl {

// ok, or TM_ERROR_SYSTEM "<what>: CUDA error <name>: <text>".
Status cuda_status(cudaError_t err, const char* what);

// A pool of pinned host buffers (cudaHostAlloc / cudaFreeHost).
HostPool::Allocate pinned_allocate();
HostPool::Free pinned_free();

// Whether `stream` is capturing a CUDA graph (work issued now would run at
// every launch of the graph, not once).
Result<bool> stream_capturing(cudaStream_t stream);

}  // namespace trainmover::nccl
