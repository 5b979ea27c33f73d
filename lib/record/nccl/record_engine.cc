#include "record/nccl/record_engine.h"

#include <thread>

#include "common/log.h"
#include "record/nccl/cuda_support.h"

namespace trainmover::nccl {
namespace {

bool forwarded_ok(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

}  // namespace

RecordEngine::RecordEngine(const Settings& settings, const RealNccl& real,
                           std::unique_ptr<TraceSink> sink)
    : real_(real),
      recorder_(settings.record_calls, std::move(sink)),
      pool_(pinned_allocate(), pinned_free()),
      writer_(recorder_) {}

GroupQueue<RecordEngine::Pending>& RecordEngine::group() {
  thread_local GroupQueue<Pending> queue;
  return queue;
}

void RecordEngine::stop(const Status& why) {
  log(LogLevel::kError, "nccl: recording stopped, the trace stays incomplete: ", why.message());
  recorder_.abort(why);
}

std::optional<uint32_t> RecordEngine::ordinal(ncclComm_t comm) {
  std::lock_guard lock(mu_);
  auto it = ordinals_.find(comm);
  if (it == ordinals_.end()) return std::nullopt;
  return it->second;
}

Status RecordEngine::wait_ready(ncclComm_t comm) {
  Deadline deadline = Deadline::after(seconds(60));
  for (;;) {
    ncclResult_t state = ncclInProgress;
    ncclResult_t r = real_.CommGetAsyncError(comm, &state);
    if (r != ncclSuccess || (state != ncclSuccess && state != ncclInProgress))
      return error(TM_ERROR_PEER_FAILED, "NCCL communicator failed while recording: ",
                   real_.GetErrorString(r != ncclSuccess ? r : state));
    if (state == ncclSuccess) return Status::Ok();
    if (deadline.expired())
      return error(TM_ERROR_TIMEOUT, "a non-blocking NCCL communicator stayed in progress 60 s");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void RecordEngine::comm_created(ncclResult_t result, ncclComm_t comm, CommEntry entry,
                                ncclComm_t parent) {
  if (!forwarded_ok(result) || comm == nullptr) return;
  PendingComm pending{comm, entry, parent};
  if (group().open())
    group().defer(pending);
  else
    register_comm(pending);
}

void RecordEngine::register_comm(const PendingComm& pending) {
  CommEntry entry = pending.entry;
  if (pending.parent != nullptr) {
    auto parent = ordinal(pending.parent);
    if (!parent) return;  // split from a communicator that is not recorded
    entry.parent = static_cast<int32_t>(*parent);
    Status ready = wait_ready(pending.comm);
    if (ready.ok() && (real_.CommCount(pending.comm, &entry.nranks) != ncclSuccess ||
                       real_.CommUserRank(pending.comm, &entry.rank) != ncclSuccess))
      ready = error(TM_ERROR_INTERNAL, "cannot ask NCCL the size of a split communicator");
    if (!ready.ok()) return stop(ready);
  }
  auto ordinal = recorder_.add_comm(entry);
  if (!ordinal.ok()) return stop(ordinal.status());
  std::lock_guard lock(mu_);
  ordinals_[pending.comm] = *ordinal;
}

void RecordEngine::data_call_done(ncclResult_t result, const DataCall& call) {
  if (!forwarded_ok(result)) return;
  auto comm = ordinal(call.comm);
  if (!comm) return;  // a communicator created before recording (ncclCommInitAll)
  auto entry = recorder_.admit(*comm, call.desc, group().group_id());
  if (!entry) return;
  // Only a call inside the window matters: graphs captured after it are fine.
  auto capturing = stream_capturing(call.stream);
  if (!capturing.ok()) return stop(capturing.status());
  if (*capturing)
    return stop(error(TM_ERROR_UNSUPPORTED, describe(call.desc),
                      " is captured into a CUDA graph; such calls cannot be recorded"));
  PendingCopy copy{*entry, call.recvbuff, call.comm, call.stream};
  if (group().open()) return group().defer(copy);
  if (result == ncclInProgress) {
    Status ready = wait_ready(call.comm);
    if (!ready.ok()) return stop(ready);
  }
  issue_copy(copy);
  check_windows();
}

void RecordEngine::group_start() { group().start(); }

void RecordEngine::group_end_done(ncclResult_t result) {
  auto held = group().end();
  if (!held.ok() || held->empty()) return;
  if (!forwarded_ok(result))
    return stop(error(TM_ERROR_PEER_FAILED, "ncclGroupEnd failed with a recorded call in it: ",
                      real_.GetErrorString(result)));
  for (const Pending& pending : *held) {
    if (const auto* copy = std::get_if<PendingCopy>(&pending); copy && result == ncclInProgress) {
      Status ready = wait_ready(copy->comm);
      if (!ready.ok()) return stop(ready);
    }
    issue(pending);
  }
  if (!group().open()) check_windows();
}

void RecordEngine::issue(const Pending& pending) {
  if (const auto* copy = std::get_if<PendingCopy>(&pending))
    issue_copy(*copy);
  else
    register_comm(std::get<PendingComm>(pending));
}

void RecordEngine::issue_copy(const PendingCopy& copy) {
  writer_.expect();
  uint64_t bytes = copy.entry.output_bytes;
  if (bytes == 0) return writer_.complete(copy.entry, {}, nullptr, nullptr);
  auto buffer = pool_.acquire(bytes);
  if (!buffer.ok()) return writer_.abandon(buffer.status());
  auto event = events_.acquire();
  if (!event.ok()) {
    pool_.release(*buffer);
    return writer_.abandon(event.status());
  }
  Status s = cuda_status(
      cudaMemcpyAsync(buffer->data(), copy.src, bytes, cudaMemcpyDeviceToHost, copy.stream),
      "cudaMemcpyAsync of a recorded output");
  if (!s.ok()) {
    pool_.release(*buffer);
    events_.release(*event);
    return writer_.abandon(s);
  }
  s = cuda_status(cudaEventRecord(*event, copy.stream), "cudaEventRecord after a recorded output");
  if (!s.ok()) {
    // The copy may still write the buffer, so it stays out of the pool.
    events_.release(*event);
    return writer_.abandon(s);
  }
  cudaEvent_t landed = *event;
  std::span<std::byte> staged = *buffer;
  writer_.complete(
      copy.entry, staged, [landed] { return event_reached(landed); },
      [this, staged, landed] {
        pool_.release(staged);
        events_.release(landed);
      });
}

void RecordEngine::check_windows() {
  if (recorder_.windows_closed()) writer_.finish_when_idle();
}

void RecordEngine::flush(Deadline deadline) {
  // Nothing is written for a process that created no communicator.
  if (recorder_.comm_count() == 0 || recorder_.finished() || !recorder_.status().ok()) return;
  if (!writer_.drain(deadline)) {
    stop(error(TM_ERROR_TIMEOUT, "recorded copies still in flight at exit"));
    return;
  }
  Status s = recorder_.finish();
  if (!s.ok()) log(LogLevel::kError, "nccl: cannot finish the trace: ", s.message());
}

}  // namespace trainmover::nccl
