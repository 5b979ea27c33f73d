#include "api/sandbox_backend.h"

#include <cstring>

#include "api/call_names.h"
#include "comm/datatype.h"

namespace trainmover::api {

using record::CallInfo;
using record::TraceOp;

namespace {

std::string describe(const CallInfo& c) { return describe_trainmover_call(c); }

bool same_call(const CallInfo& a, const CallInfo& b) {
  return a.op == b.op && a.redop == b.redop && a.dtype == b.dtype && a.count == b.count &&
         a.peer == b.peer && a.comm == b.comm;
}

}  // namespace

Result<std::unique_ptr<SandboxBackend>> SandboxBackend::create(record::Trace trace, int slot) {
  if (trace.meta().api != record::kApiTrainmover) {
    return error(TM_ERROR_INVALID_ARGUMENT, "wrong api: the trace records ", trace.meta().api,
                 " calls; a sandbox communicator replays trainmover calls");
  }
  if (slot < 0 || slot >= trace.meta().nslots) {
    return error(TM_ERROR_INVALID_ARGUMENT, "slot (TRAINMOVER_SLOT): ", slot,
                 " is not a slot of the recorded job of ", trace.meta().nslots, " slots");
  }
  auto owned = std::make_unique<record::Trace>(std::move(trace));
  return std::unique_ptr<SandboxBackend>(new SandboxBackend(std::move(owned), slot));
}

const Status& SandboxBackend::failure() {
  if (aborted_.load() && failure_.ok())
    failure_ = error(TM_ERROR_ABORTED, "the sandbox was aborted (tm_comm_abort)");
  return failure_;
}

Status SandboxBackend::abort() {
  aborted_.store(true);
  return Status::Ok();
}

Status SandboxBackend::stick(Status status) {
  if (!status.ok() && failure_.ok()) failure_ = status;
  return status;
}

Status SandboxBackend::replay(TraceOp op, uint16_t redop, tm_datatype_t type, size_t count,
                              int peer, void* out, size_t output_elems) {
  if (!failure().ok()) return failure_;
  TM_RETURN_IF_ERROR(stick(check_datatype(type)));
  CallInfo asked;
  asked.op = static_cast<uint16_t>(op);
  asked.redop = redop;
  asked.dtype = static_cast<uint16_t>(type);
  asked.elem_size = static_cast<uint16_t>(datatype_size(type));
  asked.count = count;
  asked.peer = peer;
  size_t bytes = output_elems * asked.elem_size;
  if (bytes > 0 && out == nullptr) {
    return error(TM_ERROR_INVALID_ARGUMENT, "the output buffer is NULL");
  }
  return stick(match(asked, bytes, out));
}

Status SandboxBackend::match(const CallInfo& asked, size_t output_bytes, void* out) {
  auto next = cursor_.next();
  if (!next.ok()) {
    return next.status().with_context(str_cat("sandbox: the program asked for ", describe(asked)));
  }
  const record::CallView& recorded = *next.value();
  if (!same_call(recorded.info, asked)) {
    return error(TM_ERROR_PROTOCOL, "sandbox: iteration ", recorded.info.iteration, ", call ",
                 recorded.info.index, ": the trace expects ", describe(recorded.info),
                 ", the program asked for ", describe(asked));
  }
  if (recorded.output.size() != output_bytes) {
    return error(TM_ERROR_PROTOCOL, "sandbox: iteration ", recorded.info.iteration, ", call ",
                 recorded.info.index, ": the trace holds ", recorded.output.size(),
                 " output bytes for ", describe(asked), ", which writes ", output_bytes);
  }
  if (output_bytes > 0) std::memcpy(out, recorded.output.data(), output_bytes);
  return Status::Ok();
}

Status SandboxBackend::allreduce(const void*, void* recvbuf, size_t count, tm_datatype_t type,
                                 tm_redop_t op) {
  return replay(TraceOp::kAllreduce, static_cast<uint16_t>(op), type, count, record::kNoPeer,
                recvbuf, count);
}

Status SandboxBackend::reduce_scatter(const void*, void* recvbuf, size_t recvcount,
                                      tm_datatype_t type, tm_redop_t op) {
  return replay(TraceOp::kReduceScatter, static_cast<uint16_t>(op), type, recvcount,
                record::kNoPeer, recvbuf, recvcount);
}

Status SandboxBackend::allgather(const void*, void* recvbuf, size_t sendcount, tm_datatype_t type) {
  return replay(TraceOp::kAllgather, record::kNoRedop, type, sendcount, record::kNoPeer, recvbuf,
                sendcount * static_cast<size_t>(nslots()));
}

Status SandboxBackend::broadcast(const void*, void* recvbuf, size_t count, tm_datatype_t type,
                                 int root) {
  return replay(TraceOp::kBroadcast, record::kNoRedop, type, count, root, recvbuf, count);
}

Status SandboxBackend::barrier() {
  return replay(TraceOp::kBarrier, record::kNoRedop, TM_UINT8, 0, record::kNoPeer, nullptr, 0);
}

Status SandboxBackend::send(const void*, size_t count, tm_datatype_t type, int peer) {
  return replay(TraceOp::kSend, record::kNoRedop, type, count, peer, nullptr, 0);
}

Status SandboxBackend::recv(void* buf, size_t count, tm_datatype_t type, int peer) {
  return replay(TraceOp::kRecv, record::kNoRedop, type, count, peer, buf, count);
}

Status SandboxBackend::declare_role(const record::Role& role) {
  if (role == trace_->meta().role) return Status::Ok();
  return error(TM_ERROR_INVALID_ARGUMENT, "wrong role: the sandbox replays role '",
               trace_->meta().role.canonical(), "', the program declared '", role.canonical(), "'");
}

Status SandboxBackend::iteration_begin(uint32_t) {
  if (!failure().ok()) return failure_;
  return stick(cursor_.begin_iteration().with_context("sandbox"));
}

Status SandboxBackend::iteration_end(uint32_t) {
  if (!failure().ok()) return failure_;
  return stick(cursor_.end_iteration().with_context("sandbox"));
}

}  // namespace trainmover::api
