#include "api/recording_backend.h"

#include "comm/datatype.h"
#include "common/clock.h"
#include "common/log.h"
#include "record/prefault.h"

namespace trainmover::api {

using record::TraceOp;

RecordingBackend::RecordingBackend(std::unique_ptr<CommBackend> live, const RecordConfig& config)
    : live_(std::move(live)), config_(config), builder_(record::TraceMeta{}) {
  record::TraceMeta& meta = builder_.meta();
  meta.job_id = config.job_id;
  meta.api = record::kApiTrainmover;
  meta.role = config.role;
  meta.slot = live_->slot();
  meta.nslots = live_->nslots();
  // Before the first iteration nothing tells how much it records: the
  // configured reserve, made resident here, while the program sets up (a
  // helper thread at idle priority never ran where every CPU was busy).
  if (config.iterations > 0) {
    const auto start = Clock::now();
    make_resident(config.reserve_bytes);
    log(LogLevel::kDebug, "trace reserve of ", config.reserve_bytes, " bytes made resident in ",
        to_seconds(Clock::now() - start) * 1e3, " ms");
  }
}

void RecordingBackend::make_resident(size_t bytes) {
  if (bytes == 0) return;
  auto room = builder_.reserve(bytes);
  if (!room.ok()) return;  // the capture reports the error
  std::span<std::byte> missing = *room;
  const std::byte* resident_end = resident_.data() + resident_.size();
  if (!resident_.empty() && missing.data() >= resident_.data() && missing.data() <= resident_end) {
    // The same block as last time: only what lies past the resident room.
    const auto resident_part = static_cast<size_t>(resident_end - missing.data());
    if (resident_part >= missing.size()) return;
    missing = missing.subspan(resident_part);
    resident_ = {resident_.data(), resident_.size() + missing.size()};
  } else {
    resident_ = missing;
  }
  record::populate(missing);
}

Status RecordingBackend::capture(Status done, TraceOp op, uint16_t redop, tm_datatype_t type,
                                 size_t count, int peer, const void* output, size_t output_elems) {
  if (!done.ok() || !in_iteration_) return done;
  record::CallInfo call;
  call.iteration = iteration_;
  call.index = builder_.next_index(iteration_);
  call.op = static_cast<uint16_t>(op);
  call.redop = redop;
  call.dtype = static_cast<uint16_t>(type);
  call.elem_size = static_cast<uint16_t>(datatype_size(type));
  call.count = count;
  call.peer = peer;
  size_t bytes = output_elems * call.elem_size;
  return builder_.append(call, {static_cast<const std::byte*>(output), bytes});
}

Status RecordingBackend::allreduce(const void* sendbuf, void* recvbuf, size_t count,
                                   tm_datatype_t type, tm_redop_t op) {
  return capture(live_->allreduce(sendbuf, recvbuf, count, type, op), TraceOp::kAllreduce,
                 static_cast<uint16_t>(op), type, count, record::kNoPeer, recvbuf, count);
}

Status RecordingBackend::reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                        tm_datatype_t type, tm_redop_t op) {
  return capture(live_->reduce_scatter(sendbuf, recvbuf, recvcount, type, op),
                 TraceOp::kReduceScatter, static_cast<uint16_t>(op), type, recvcount,
                 record::kNoPeer, recvbuf, recvcount);
}

Status RecordingBackend::allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                                   tm_datatype_t type) {
  return capture(live_->allgather(sendbuf, recvbuf, sendcount, type), TraceOp::kAllgather,
                 record::kNoRedop, type, sendcount, record::kNoPeer, recvbuf,
                 sendcount * static_cast<size_t>(live_->nslots()));
}

Status RecordingBackend::broadcast(const void* sendbuf, void* recvbuf, size_t count,
                                   tm_datatype_t type, int root) {
  return capture(live_->broadcast(sendbuf, recvbuf, count, type, root), TraceOp::kBroadcast,
                 record::kNoRedop, type, count, root, recvbuf, count);
}

Status RecordingBackend::barrier() {
  return capture(live_->barrier(), TraceOp::kBarrier, record::kNoRedop, TM_UINT8, 0,
                 record::kNoPeer, nullptr, 0);
}

Status RecordingBackend::send(const void* buf, size_t count, tm_datatype_t type, int peer) {
  return capture(live_->send(buf, count, type, peer), TraceOp::kSend, record::kNoRedop, type, count,
                 peer, nullptr, 0);
}

Status RecordingBackend::recv(void* buf, size_t count, tm_datatype_t type, int peer) {
  return capture(live_->recv(buf, count, type, peer), TraceOp::kRecv, record::kNoRedop, type, count,
                 peer, buf, count);
}

Status RecordingBackend::declare_role(const record::Role& role) {
  builder_.meta().role = role;
  return Status::Ok();
}

Status RecordingBackend::iteration_begin(uint32_t iteration) {
  in_iteration_ = iteration < config_.iterations;
  iteration_ = iteration;
  iteration_start_bytes_ = builder_.body_bytes();
  return Status::Ok();
}

Status RecordingBackend::iteration_end(uint32_t iteration) {
  in_iteration_ = false;
  if (finished_) return Status::Ok();
  if (iteration + 1 < config_.iterations) {
    // The next iteration is likely shaped like this one. Where the reserve
    // was too small this pays the faults here rather than in its copies:
    // no cheaper, but deterministic.
    make_resident(builder_.body_bytes() - iteration_start_bytes_);
    return Status::Ok();
  }
  finished_ = true;
  saver_ = std::make_unique<record::TraceSaver>(std::move(builder_), config_.iterations,
                                                config_.compression, config_.trace_dir);
  return Status::Ok();
}

std::unique_ptr<record::TraceSaver> RecordingBackend::take_trace_saver() {
  return std::move(saver_);
}

std::unique_ptr<CommBackend> RecordingBackend::take_successor() {
  if (!finished_) return nullptr;
  return std::move(live_);
}

}  // namespace trainmover::api
