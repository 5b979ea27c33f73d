// The NCCL entry points that libtrainmover-nccl.so exports (nccl.h of NCCL
// 2.28: including it makes the compiler check every signature). Each one
// dispatches on the mode: off and record forward to the real NCCL (record
// then copies outputs), replay answers from the trace. No exception leaves
// this file.
#include <nccl.h>

#include <exception>
#include <random>
#include <string>

#include "common/log.h"
#include "record/nccl/cuda_support.h"
#include "record/nccl/interposer.h"
#include "record/nccl/nccl_optional.h"

namespace trainmover::nccl {
namespace {

static_assert(ncclInt8 == static_cast<int>(DataType::kInt8) &&
                  ncclUint8 == static_cast<int>(DataType::kUint8) &&
                  ncclInt32 == static_cast<int>(DataType::kInt32) &&
                  ncclUint32 == static_cast<int>(DataType::kUint32) &&
                  ncclInt64 == static_cast<int>(DataType::kInt64) &&
                  ncclUint64 == static_cast<int>(DataType::kUint64) &&
                  ncclFloat16 == static_cast<int>(DataType::kFloat16) &&
                  ncclFloat32 == static_cast<int>(DataType::kFloat32) &&
                  ncclFloat64 == static_cast<int>(DataType::kFloat64) &&
                  ncclBfloat16 == static_cast<int>(DataType::kBfloat16) &&
                  ncclFloat8e4m3 == static_cast<int>(DataType::kFloat8e4m3) &&
                  ncclFloat8e5m2 == static_cast<int>(DataType::kFloat8e5m2) &&
                  ncclNumTypes == kNumDataTypes,
              "datatype codes differ from nccl.h");
static_assert(ncclSum == static_cast<int>(RedOp::kSum) &&
                  ncclProd == static_cast<int>(RedOp::kProd) &&
                  ncclMax == static_cast<int>(RedOp::kMax) &&
                  ncclMin == static_cast<int>(RedOp::kMin) &&
                  ncclAvg == static_cast<int>(RedOp::kAvg) && ncclNumOps == kNumBuiltinOps,
              "reduction codes differ from nccl.h");

// ncclGetLastError's text for errors of the interposer itself; per thread,
// like the C API's last error, since NCCL calls come from any thread.
thread_local std::string t_last_error;

ncclResult_t to_nccl(const Status& s) {
  switch (s.code()) {
    case TM_SUCCESS:
      return ncclSuccess;
    case TM_ERROR_SYSTEM:
      return ncclUnhandledCudaError;  // the interposer's system calls are CUDA's
    case TM_ERROR_TIMEOUT:
    case TM_ERROR_PEER_FAILED:
      return ncclSystemError;
    case TM_ERROR_INTERNAL:
      return ncclInternalError;
    default:
      return ncclInvalidUsage;
  }
}

ncclResult_t report(const Status& s) {
  if (s.ok()) return ncclSuccess;
  t_last_error = s.message();
  log(LogLevel::kError, "nccl: ", s.message());
  return to_nccl(s);
}

template <typename F>
ncclResult_t guarded(const char* name, F body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return report(error(TM_ERROR_INTERNAL, name, ": ", e.what()));
  } catch (...) {
    return report(error(TM_ERROR_INTERNAL, name, ": unknown exception"));
  }
}

template <auto Member, typename... Args>
ncclResult_t forward(const char* name, Args... args) {
  const RealNccl& real = Interposer::get().real();
  auto fn = real.*Member;
  if (fn == nullptr) return report(missing_real(real, name));
  return fn(args...);
}

bool replaying() { return Interposer::get().mode() == Mode::kReplay; }

// The replay engine, or the reason replay could not start.
Result<ReplayEngine*> replay_engine() {
  Interposer& ip = Interposer::get();
  if (ip.replay() == nullptr) return ip.startup();
  return ip.replay();
}

template <auto Member, typename... Args>
ncclResult_t data_call(const char* name, Result<CallDesc> desc, void* recvbuff, ncclComm_t comm,
                       cudaStream_t stream, Args... args) {
  return guarded(name, [&]() -> ncclResult_t {
    if (replaying()) {
      if (!desc.ok()) return report(desc.status().with_context(name));
      auto engine = replay_engine();
      if (!engine.ok()) return report(engine.status().with_context(name));
      return report((*engine)->data_call(DataCall{*desc, recvbuff, comm, stream}));
    }
    ncclResult_t r = forward<Member>(name, args...);
    RecordEngine* recorder = Interposer::get().record();
    if (recorder != nullptr && desc.ok())
      recorder->data_call_done(r, DataCall{*desc, recvbuff, comm, stream});
    return r;
  });
}

// Functions that are forwarded in record mode but not recorded, and that a
// replay cannot answer.
template <auto Member, typename... Args>
ncclResult_t not_replayed(const char* name, Args... args) {
  return guarded(name, [&]() -> ncclResult_t {
    if (replaying())
      return report(error(TM_ERROR_UNSUPPORTED, name, " is not supported in replay mode"));
    if (Interposer::get().mode() == Mode::kRecord)
      Interposer::get().warn_once(name, str_cat(name, " is forwarded but not recorded: a replay ",
                                                "of this trace will stop at it"));
    return forward<Member>(name, args...);
  });
}

// ncclCommInitRank and its variants: `forward_init` calls the real one.
template <typename F>
ncclResult_t init_comm(const char* name, ncclComm_t* comm, int nranks, int rank, F forward_init) {
  return guarded(name, [&]() -> ncclResult_t {
    if (comm == nullptr) return report(error(TM_ERROR_INVALID_ARGUMENT, name, ": comm is null"));
    Interposer& ip = Interposer::get();
    // A misconfigured interposer fails where the program can see it.
    if (!ip.startup().ok()) return report(ip.startup().with_context(name));
    if (ip.replay() != nullptr) {
      auto handle = ip.replay()->init_comm(nranks, rank);
      if (!handle.ok()) return report(handle.status().with_context(name));
      *comm = *handle;
      return ncclSuccess;
    }
    ncclResult_t r = forward_init();
    if (ip.record() != nullptr)
      ip.record()->comm_created(r, *comm, CommEntry{0, CommOrigin::kInit, nranks, rank, -1, 0, 0},
                                nullptr);
    return r;
  });
}

// Replay answers for the communicator queries.
template <typename F>
ncclResult_t query(const char* name, ncclComm_t comm, F answer) {
  return guarded(name, [&]() -> ncclResult_t {
    auto engine = replay_engine();
    if (!engine.ok()) return report(engine.status().with_context(name));
    auto view = (*engine)->view(comm);
    if (!view.ok()) return report(view.status().with_context(name));
    answer(*view);
    return ncclSuccess;
  });
}

const char* error_string(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

Result<CallDesc> desc(CallKind kind, ncclDataType_t dtype, int op, int peer, size_t count) {
  return make_call(kind, static_cast<int32_t>(dtype), op, peer, count);
}

}  // namespace
}  // namespace trainmover::nccl

using namespace trainmover;        // NOLINT: the C entry points below only
using namespace trainmover::nccl;  // NOLINT

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return data_call<&RealNccl::AllReduce>(
      "ncclAllReduce", desc(CallKind::kAllReduce, datatype, op, -1, count), recvbuff, comm, stream,
      sendbuff, recvbuff, count, datatype, op, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return data_call<&RealNccl::AllGather>(
      "ncclAllGather", desc(CallKind::kAllGather, datatype, -1, -1, sendcount), recvbuff, comm,
      stream, sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return data_call<&RealNccl::ReduceScatter>(
      "ncclReduceScatter", desc(CallKind::kReduceScatter, datatype, op, -1, recvcount), recvbuff,
      comm, stream, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return data_call<&RealNccl::Broadcast>(
      "ncclBroadcast", desc(CallKind::kBroadcast, datatype, -1, root, count), recvbuff, comm,
      stream, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return data_call<&RealNccl::Bcast>("ncclBcast",
                                     desc(CallKind::kBroadcast, datatype, -1, root, count), buff,
                                     comm, stream, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return data_call<&RealNccl::Reduce>(
      "ncclReduce", desc(CallKind::kReduce, datatype, op, root, count), recvbuff, comm, stream,
      sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return data_call<&RealNccl::Send>("ncclSend", desc(CallKind::kSend, datatype, -1, peer, count),
                                    nullptr, comm, stream, sendbuff, count, datatype, peer, comm,
                                    stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return data_call<&RealNccl::Recv>("ncclRecv", desc(CallKind::kRecv, datatype, -1, peer, count),
                                    recvbuff, comm, stream, recvbuff, count, datatype, peer, comm,
                                    stream);
}

ncclResult_t ncclGroupStart() {
  return guarded("ncclGroupStart", []() -> ncclResult_t {
    Interposer& ip = Interposer::get();
    if (replaying()) {
      auto engine = replay_engine();
      if (!engine.ok()) return report(engine.status().with_context("ncclGroupStart"));
      (*engine)->group_start();
      return ncclSuccess;
    }
    ncclResult_t r = forward<&RealNccl::GroupStart>("ncclGroupStart");
    if (r == ncclSuccess && ip.record() != nullptr) ip.record()->group_start();
    return r;
  });
}

ncclResult_t ncclGroupEnd() {
  return guarded("ncclGroupEnd", []() -> ncclResult_t {
    Interposer& ip = Interposer::get();
    if (replaying()) {
      auto engine = replay_engine();
      if (!engine.ok()) return report(engine.status().with_context("ncclGroupEnd"));
      return report((*engine)->group_end());
    }
    ncclResult_t r = forward<&RealNccl::GroupEnd>("ncclGroupEnd");
    if (ip.record() != nullptr) ip.record()->group_end_done(r);
    return r;
  });
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return init_comm("ncclCommInitRank", comm, nranks, rank, [&] {
    return forward<&RealNccl::CommInitRank>("ncclCommInitRank", comm, nranks, commId, rank);
  });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  return init_comm("ncclCommInitRankConfig", comm, nranks, rank, [&] {
    return forward<&RealNccl::CommInitRankConfig>("ncclCommInitRankConfig", comm, nranks, commId,
                                                  rank, config);
  });
}

#if HAVE_DECL_NCCLCOMMINITRANKSCALABLE
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId* commIds, ncclConfig_t* config) {
  return init_comm("ncclCommInitRankScalable", newcomm, nranks, myrank, [&] {
    return forward<&RealNccl::CommInitRankScalable>("ncclCommInitRankScalable", newcomm, nranks,
                                                    myrank, nId, commIds, config);
  });
}
#endif

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  return guarded("ncclCommSplit", [&]() -> ncclResult_t {
    if (newcomm == nullptr)
      return report(error(TM_ERROR_INVALID_ARGUMENT, "ncclCommSplit: newcomm is null"));
    Interposer& ip = Interposer::get();
    if (!ip.startup().ok()) return report(ip.startup().with_context("ncclCommSplit"));
    if (ip.replay() != nullptr) {
      auto handle = ip.replay()->split_comm(comm, color, key);
      if (!handle.ok()) return report(handle.status().with_context("ncclCommSplit"));
      *newcomm = *handle;
      return ncclSuccess;
    }
    ncclResult_t r =
        forward<&RealNccl::CommSplit>("ncclCommSplit", comm, color, key, newcomm, config);
    if (ip.record() != nullptr)
      ip.record()->comm_created(r, *newcomm, CommEntry{0, CommOrigin::kSplit, 0, 0, -1, color, key},
                                comm);
    return r;
  });
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (!replaying()) return forward<&RealNccl::CommFinalize>("ncclCommFinalize", comm);
  return query("ncclCommFinalize", comm, [](const ReplayEngine::CommView&) {});
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!replaying()) return forward<&RealNccl::CommDestroy>("ncclCommDestroy", comm);
  auto engine = replay_engine();
  if (!engine.ok()) return report(engine.status().with_context("ncclCommDestroy"));
  return report((*engine)->destroy(comm).with_context("ncclCommDestroy"));
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!replaying()) return forward<&RealNccl::CommAbort>("ncclCommAbort", comm);
  auto engine = replay_engine();
  if (!engine.ok()) return report(engine.status().with_context("ncclCommAbort"));
  return report((*engine)->destroy(comm).with_context("ncclCommAbort"));
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (!replaying()) return forward<&RealNccl::CommCount>("ncclCommCount", comm, count);
  return query("ncclCommCount", comm,
               [&](const ReplayEngine::CommView& v) { *count = v.entry.nranks; });
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (!replaying()) return forward<&RealNccl::CommUserRank>("ncclCommUserRank", comm, rank);
  return query("ncclCommUserRank", comm,
               [&](const ReplayEngine::CommView& v) { *rank = v.entry.rank; });
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (!replaying()) return forward<&RealNccl::CommCuDevice>("ncclCommCuDevice", comm, device);
  return query("ncclCommCuDevice", comm,
               [&](const ReplayEngine::CommView& v) { *device = v.device; });
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (!replaying())
    return forward<&RealNccl::CommGetAsyncError>("ncclCommGetAsyncError", comm, asyncError);
  return query("ncclCommGetAsyncError", comm,
               [&](const ReplayEngine::CommView&) { *asyncError = ncclSuccess; });
}

#if HAVE_DECL_NCCLCOMMREGISTER
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  if (!replaying())
    return forward<&RealNccl::CommRegister>("ncclCommRegister", comm, buff, size, handle);
  // Nothing to register without a network; the buffer's address is the token.
  return query("ncclCommRegister", comm, [&](const ReplayEngine::CommView&) { *handle = buff; });
}
#endif

#if HAVE_DECL_NCCLCOMMDEREGISTER
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  if (!replaying()) return forward<&RealNccl::CommDeregister>("ncclCommDeregister", comm, handle);
  return query("ncclCommDeregister", comm, [](const ReplayEngine::CommView&) {});
}
#endif

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (!replaying()) return forward<&RealNccl::GetUniqueId>("ncclGetUniqueId", uniqueId);
  // Replay needs no bootstrap; a random id is never used to connect.
  return guarded("ncclGetUniqueId", [&]() -> ncclResult_t {
    std::random_device random;
    for (char& c : uniqueId->internal) c = static_cast<char>(random());
    return ncclSuccess;
  });
}

ncclResult_t ncclGetVersion(int* version) {
  if (!replaying()) return forward<&RealNccl::GetVersion>("ncclGetVersion", version);
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

#if HAVE_DECL_NCCLMEMALLOC
ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (!replaying()) return forward<&RealNccl::MemAlloc>("ncclMemAlloc", ptr, size);
  return report(cuda_status(cudaMalloc(ptr, size), "ncclMemAlloc (replay: cudaMalloc)"));
}
#endif

#if HAVE_DECL_NCCLMEMFREE
ncclResult_t ncclMemFree(void* ptr) {
  if (!replaying()) return forward<&RealNccl::MemFree>("ncclMemFree", ptr);
  return report(cuda_status(cudaFree(ptr), "ncclMemFree (replay: cudaFree)"));
}
#endif

const char* ncclGetErrorString(ncclResult_t result) {
  const RealNccl& real = Interposer::get().real();
  if (!replaying() && real.GetErrorString != nullptr) return real.GetErrorString(result);
  return error_string(result);
}

#if HAVE_DECL_NCCLGETLASTERROR
const char* ncclGetLastError(ncclComm_t comm) {
  const RealNccl& real = Interposer::get().real();
  if (t_last_error.empty() && !replaying() && real.GetLastError != nullptr)
    return real.GetLastError(comm);
  return t_last_error.c_str();
}
#endif

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return not_replayed<&RealNccl::CommInitAll>("ncclCommInitAll", comm, ndev, devlist);
}

#if HAVE_DECL_NCCLCOMMREVOKE
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return not_replayed<&RealNccl::CommRevoke>("ncclCommRevoke", comm, revokeFlags);
}
#endif

#if HAVE_DECL_NCCLCOMMSHRINK
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return not_replayed<&RealNccl::CommShrink>("ncclCommShrink", comm, excludeRanksList,
                                             excludeRanksCount, newcomm, config, shrinkFlags);
}
#endif

#if HAVE_DECL_NCCLCOMMWINDOWREGISTER
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  return not_replayed<&RealNccl::CommWindowRegister>("ncclCommWindowRegister", comm, buff, size,
                                                     win, winFlags);
}
#endif

#if HAVE_DECL_NCCLCOMMWINDOWDEREGISTER
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return not_replayed<&RealNccl::CommWindowDeregister>("ncclCommWindowDeregister", comm, win);
}
#endif

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  return not_replayed<&RealNccl::RedOpCreatePreMulSum>("ncclRedOpCreatePreMulSum", op, scalar,
                                                       datatype, residence, comm);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return not_replayed<&RealNccl::RedOpDestroy>("ncclRedOpDestroy", op, comm);
}

#if HAVE_DECL_NCCLALLTOALL
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return not_replayed<&RealNccl::AlltoAll>("ncclAlltoAll", sendbuff, recvbuff, count, datatype,
                                           comm, stream);
}
#endif

#if HAVE_DECL_NCCLGATHER
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return not_replayed<&RealNccl::Gather>("ncclGather", sendbuff, recvbuff, count, datatype, root,
                                         comm, stream);
}
#endif

#if HAVE_DECL_NCCLSCATTER
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  return not_replayed<&RealNccl::Scatter>("ncclScatter", sendbuff, recvbuff, count, datatype, root,
                                          comm, stream);
}
#endif

#if HAVE_DECL_NCCLGROUPSIMULATEEND
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return not_replayed<&RealNccl::GroupSimulateEnd>("ncclGroupSimulateEnd", simInfo);
}
#endif

}  // extern "C"
