#include "record/nccl/cuda_support.h"

namespace trainmover::nccl {

Status cuda_status(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return error(TM_ERROR_SYSTEM, what, ": CUDA error ", cudaGetErrorName(err), ": ",
               cudaGetErrorString(err));
}

HostPool::Allocate pinned_allocate() {
  return [](size_t bytes) -> Result<void*> {
    void* p = nullptr;
    TM_RETURN_IF_ERROR(cuda_status(cudaHostAlloc(&p, bytes, cudaHostAllocDefault),
                                   "cudaHostAlloc of the record staging buffer"));
    return p;
  };
}

HostPool::Free pinned_free() {
  return [](void* p) { (void)cudaFreeHost(p); };  // at exit the runtime may be gone already
}

Result<bool> stream_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TM_RETURN_IF_ERROR(cuda_status(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing"));
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace trainmover::nccl
