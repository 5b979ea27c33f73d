// SandboxBackend: a handle's backend that replays a recorded trace. Every
// call is matched against the next recorded call of the current iteration
// and gets the recorded output; nothing leaves the process.
//
// Errors (TM_ERROR_PROTOCOL): a call that differs from the recorded one in
// op, reduction, datatype, count, root or peer, or that comes outside an
// iteration or past the trace's end; the message names the iteration, the
// call index, what was expected and what was asked. The first error sticks:
// every later call returns it, so no program runs on after a mismatch.
// After abort() (from any thread) every later call fails with
// TM_ERROR_ABORTED unless an earlier error stuck first.
// Owns its trace. Not thread-safe (one caller thread, as the handle), but
// for abort().
#pragma once

#include <atomic>
#include <memory>

#include "api/comm_backend.h"
#include "record/trace.h"
#include "record/trace_format.h"

namespace trainmover::api {

class SandboxBackend final : public CommBackend {
 public:
  // Fails when the trace is not of the "trainmover" api or `slot` is not
  // one of the recorded job's slots.
  static Result<std::unique_ptr<SandboxBackend>> create(record::Trace trace, int slot);

  tm_comm_mode_t mode() const override { return TM_MODE_SANDBOX; }
  int slot() const override { return slot_; }
  int nslots() const override { return trace_->meta().nslots; }
  int failed_slot() const override { return -1; }
  const record::Trace& trace() const { return *trace_; }

  Status allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   tm_redop_t op) override;
  Status reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, tm_datatype_t type,
                        tm_redop_t op) override;
  Status allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                   tm_datatype_t type) override;
  Status broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   int root) override;
  Status barrier() override;
  Status send(const void* buf, size_t count, tm_datatype_t type, int peer) override;
  Status recv(void* buf, size_t count, tm_datatype_t type, int peer) override;
  Status abort() override;

  Status declare_role(const record::Role& role) override;
  Status iteration_begin(uint32_t iteration) override;
  Status iteration_end(uint32_t iteration) override;

 private:
  SandboxBackend(std::unique_ptr<record::Trace> trace, int slot)
      : trace_(std::move(trace)), cursor_(*trace_), slot_(slot) {}
  // Matches the asked call against the next recorded one and copies its
  // output (output_elems elements) to `out`.
  Status replay(record::TraceOp op, uint16_t redop, tm_datatype_t type, size_t count, int peer,
                void* out, size_t output_elems);
  Status match(const record::CallInfo& asked, size_t output_bytes, void* out);
  Status stick(Status status);
  // failure_, with an abort that came in since folded in.
  const Status& failure();

  std::unique_ptr<record::Trace> trace_;  // the cursor points into it
  record::TraceCursor cursor_;
  int slot_;
  Status failure_;
  std::atomic<bool> aborted_{false};
};

}  // namespace trainmover::api
