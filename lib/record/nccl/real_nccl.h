// The real NCCL behind the interposer: every entry point the interposer
// defines, looked up with dlsym(RTLD_NEXT) so a call can be forwarded to the
// library the program was linked with.
//
// A pointer is null when that library does not define the function (an
// older NCCL) or when no NCCL is loaded at all; forwarding then fails with
// a message saying so. Loaded once; read-only afterwards, so thread-safe.
#pragma once

#include <nccl.h>

#include <string>

#include "common/status.h"
#include "record/nccl/nccl_optional.h"

// Every NCCL function the interposer defines, by name without "nccl": those
// every supported NCCL (2.18 and later) declares, then the optional ones.
#define TM_NCCL_FUNCTIONS(X)                                                                       \
  X(GetVersion)                                                                                    \
  X(GetUniqueId) X(CommInitRankConfig) X(CommInitRank) X(CommInitAll) X(CommFinalize)              \
      X(CommDestroy) X(CommAbort) X(CommSplit) X(GetErrorString) X(CommGetAsyncError) X(CommCount) \
          X(CommCuDevice) X(CommUserRank) X(RedOpCreatePreMulSum) X(RedOpDestroy) X(Reduce)        \
              X(Bcast) X(Broadcast) X(AllReduce) X(ReduceScatter) X(AllGather) X(Send) X(Recv)     \
                  X(GroupStart) X(GroupEnd) TM_NCCL_OPTIONAL_FUNCTIONS(X)

namespace trainmover::nccl {

struct RealNccl {
#define TM_NCCL_POINTER(name) decltype(&::nccl##name) name = nullptr;
  TM_NCCL_FUNCTIONS(TM_NCCL_POINTER)
#undef TM_NCCL_POINTER

  // Looks every function up in the libraries loaded after this one.
  static RealNccl load();
  // Whether any NCCL was found.
  bool present() const { return GetVersion != nullptr; }
};

// "ncclX: the real NCCL is not loaded ..." or "... does not define it".
Status missing_real(const RealNccl& real, const char* function);

}  // namespace trainmover::nccl
