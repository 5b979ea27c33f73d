// One data call as the CUDA layer sees it: the descriptor plus where its
// output goes and on which stream.
#pragma once

#include <nccl.h>

#include "record/nccl/call.h"

namespace trainmover::nccl {

struct DataCall {
  CallDesc desc;
  void* recvbuff = nullptr;  // null for ncclSend
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};

}  // namespace trainmover::nccl
