// Which NCCL functions this build's nccl.h declares, for those that only
// some NCCL 2.x releases have (configure's AC_CHECK_DECLS). Each
// TM_NCCL_OPTIONAL_<name>(X) expands to X(<name>) when declared, else to
// nothing; the interposer defines and forwards only what it can declare.
#pragma once

#include "config.h"  // HAVE_DECL_NCCL*

#if HAVE_DECL_NCCLMEMALLOC
#define TM_NCCL_OPTIONAL_MemAlloc(X) X(MemAlloc)
#else
#define TM_NCCL_OPTIONAL_MemAlloc(X)
#endif
#if HAVE_DECL_NCCLMEMFREE
#define TM_NCCL_OPTIONAL_MemFree(X) X(MemFree)
#else
#define TM_NCCL_OPTIONAL_MemFree(X)
#endif
#if HAVE_DECL_NCCLGETLASTERROR
#define TM_NCCL_OPTIONAL_GetLastError(X) X(GetLastError)
#else
#define TM_NCCL_OPTIONAL_GetLastError(X)
#endif
#if HAVE_DECL_NCCLCOMMREGISTER
#define TM_NCCL_OPTIONAL_CommRegister(X) X(CommRegister)
#else
#define TM_NCCL_OPTIONAL_CommRegister(X)
#endif
#if HAVE_DECL_NCCLCOMMDEREGISTER
#define TM_NCCL_OPTIONAL_CommDeregister(X) X(CommDeregister)
#else
#define TM_NCCL_OPTIONAL_CommDeregister(X)
#endif
#if HAVE_DECL_NCCLCOMMSHRINK
#define TM_NCCL_OPTIONAL_CommShrink(X) X(CommShrink)
#else
#define TM_NCCL_OPTIONAL_CommShrink(X)
#endif
#if HAVE_DECL_NCCLCOMMREVOKE
#define TM_NCCL_OPTIONAL_CommRevoke(X) X(CommRevoke)
#else
#define TM_NCCL_OPTIONAL_CommRevoke(X)
#endif
#if HAVE_DECL_NCCLCOMMINITRANKSCALABLE
#define TM_NCCL_OPTIONAL_CommInitRankScalable(X) X(CommInitRankScalable)
#else
#define TM_NCCL_OPTIONAL_CommInitRankScalable(X)
#endif
#if HAVE_DECL_NCCLCOMMWINDOWREGISTER
#define TM_NCCL_OPTIONAL_CommWindowRegister(X) X(CommWindowRegister)
#else
#define TM_NCCL_OPTIONAL_CommWindowRegister(X)
#endif
#if HAVE_DECL_NCCLCOMMWINDOWDEREGISTER
#define TM_NCCL_OPTIONAL_CommWindowDeregister(X) X(CommWindowDeregister)
#else
#define TM_NCCL_OPTIONAL_CommWindowDeregister(X)
#endif
#if HAVE_DECL_NCCLALLTOALL
#define TM_NCCL_OPTIONAL_AlltoAll(X) X(AlltoAll)
#else
#define TM_NCCL_OPTIONAL_AlltoAll(X)
#endif
#if HAVE_DECL_NCCLGATHER
#define TM_NCCL_OPTIONAL_Gather(X) X(Gather)
#else
#define TM_NCCL_OPTIONAL_Gather(X)
#endif
#if HAVE_DECL_NCCLSCATTER
#define TM_NCCL_OPTIONAL_Scatter(X) X(Scatter)
#else
#define TM_NCCL_OPTIONAL_Scatter(X)
#endif
#if HAVE_DECL_NCCLGROUPSIMULATEEND
#define TM_NCCL_OPTIONAL_GroupSimulateEnd(X) X(GroupSimulateEnd)
#else
#define TM_NCCL_OPTIONAL_GroupSimulateEnd(X)
#endif

#define TM_NCCL_OPTIONAL_FUNCTIONS(X)                                                         \
  TM_NCCL_OPTIONAL_MemAlloc(X) TM_NCCL_OPTIONAL_MemFree(X) TM_NCCL_OPTIONAL_GetLastError(X)   \
      TM_NCCL_OPTIONAL_CommRegister(X) TM_NCCL_OPTIONAL_CommDeregister(X)                     \
          TM_NCCL_OPTIONAL_CommShrink(X) TM_NCCL_OPTIONAL_CommRevoke(X)                       \
              TM_NCCL_OPTIONAL_CommInitRankScalable(X) TM_NCCL_OPTIONAL_CommWindowRegister(X) \
                  TM_NCCL_OPTIONAL_CommWindowDeregister(X) TM_NCCL_OPTIONAL_AlltoAll(X)       \
                      TM_NCCL_OPTIONAL_Gather(X) TM_NCCL_OPTIONAL_Scatter(X)                  \
                          TM_NCCL_OPTIONAL_GroupSimulateEnd(X)
