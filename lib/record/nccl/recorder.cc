#include "record/nccl/recorder.h"

#include <utility>

namespace trainmover::nccl {

Recorder::Recorder(uint64_t calls_per_comm, std::unique_ptr<TraceSink> sink)
    : window_(calls_per_comm), sink_(std::move(sink)) {}

Status Recorder::fail(Status s) {
  if (!s.ok() && first_error_.ok()) first_error_ = s;
  return s;
}

Result<uint32_t> Recorder::add_comm(CommEntry entry) {
  std::lock_guard lock(mu_);
  entry.ordinal = static_cast<uint32_t>(comms_.size());
  comms_.push_back(entry);
  next_seq_.push_back(0);
  if (!first_error_.ok()) return first_error_;
  if (finished_) return entry.ordinal;  // created after the trace was complete: not recorded
  TM_RETURN_IF_ERROR(fail(sink_->put_comm(entry)));
  return entry.ordinal;
}

std::optional<CallEntry> Recorder::admit(uint32_t comm, const CallDesc& call, uint64_t group) {
  std::lock_guard lock(mu_);
  if (comm >= comms_.size()) return std::nullopt;
  uint64_t seq = next_seq_[comm]++;
  if (!window_.admit(comm, group) || finished_ || !first_error_.ok()) return std::nullopt;
  const CommEntry& c = comms_[comm];
  return CallEntry{comm, seq, call, output_bytes(call, c.rank, c.nranks)};
}

Status Recorder::put_call(const CallEntry& call, std::span<const std::byte> output) {
  std::lock_guard lock(mu_);
  if (!first_error_.ok()) return first_error_;
  if (finished_)
    return fail(error(TM_ERROR_INTERNAL, "NCCL call ", call.seq, " on communicator ", call.comm,
                      " completed after the trace was finished"));
  if (output.size() != call.output_bytes)
    return fail(error(TM_ERROR_INTERNAL, "NCCL call ", call.seq, ": ", output.size(),
                      " output bytes, expected ", call.output_bytes));
  return fail(sink_->put_call(call, output));
}

bool Recorder::windows_closed() const {
  std::lock_guard lock(mu_);
  for (uint32_t c = 0; c < comms_.size(); ++c)
    if (!window_.closed(c)) return false;
  return !comms_.empty();
}

Status Recorder::finish() {
  std::lock_guard lock(mu_);
  if (!first_error_.ok()) return first_error_;
  if (finished_) return Status::Ok();
  finished_ = true;
  return fail(sink_->finish());
}

bool Recorder::finished() const {
  std::lock_guard lock(mu_);
  return finished_;
}

size_t Recorder::comm_count() const {
  std::lock_guard lock(mu_);
  return comms_.size();
}

void Recorder::abort(const Status& why) {
  std::lock_guard lock(mu_);
  (void)fail(why);
}

Status Recorder::status() const {
  std::lock_guard lock(mu_);
  return first_error_;
}

}  // namespace trainmover::nccl
