// RecordingBackend: a live backend wrapped so that every call of the first
// K iterations is appended, with its output bytes, to a trace. At the end of
// iteration K-1 it starts saving the trace to the trace directory under the
// process's role, in the background (take_trace_saver()), and hands its live
// backend back (take_successor()), so the handle stops paying for recording
// altogether.
//
// Calls outside iterations pass through unrecorded. A call that fails is not
// recorded (the communicator has failed anyway). Owns the live backend until
// it hands it back. Not thread-safe (one caller thread, as the handle).
//
// Page faults: the recorded iterations' copies must not take them, whatever
// the host charges for one and whether or not a CPU is idle. The reserve
// (RecordConfig::reserve_bytes) is made resident in the constructor, during
// tm_comm_init(); after each recorded iteration but the last, room for one
// more like it is made resident synchronously, which costs nothing while the
// reserve lasts.
#pragma once

#include <memory>
#include <span>

#include "api/comm_backend.h"
#include "api/record_config.h"
#include "record/trace_builder.h"
#include "record/trace_format.h"

namespace trainmover::api {

class RecordingBackend final : public CommBackend {
 public:
  RecordingBackend(std::unique_ptr<CommBackend> live, const RecordConfig& config);

  tm_comm_mode_t mode() const override { return TM_MODE_RECORDING; }
  Communicator* live() override { return live_->live(); }
  int slot() const override { return live_->slot(); }
  int nslots() const override { return live_->nslots(); }
  int failed_slot() const override { return live_->failed_slot(); }

  Status allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   tm_redop_t op) override;
  Status reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, tm_datatype_t type,
                        tm_redop_t op) override;
  Status allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                   tm_datatype_t type) override;
  Status broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   int root) override;
  Status barrier() override;
  Status abort() override { return live_->abort(); }
  Status send(const void* buf, size_t count, tm_datatype_t type, int peer) override;
  Status recv(void* buf, size_t count, tm_datatype_t type, int peer) override;

  Status declare_role(const record::Role& role) override;
  Status iteration_begin(uint32_t iteration) override;
  Status iteration_end(uint32_t iteration) override;
  std::unique_ptr<CommBackend> take_successor() override;
  std::unique_ptr<record::TraceSaver> take_trace_saver() override;

 private:
  // Appends the call when inside an iteration and `done` succeeded.
  Status capture(Status done, record::TraceOp op, uint16_t redop, tm_datatype_t type, size_t count,
                 int peer, const void* output, size_t output_elems);

  // Makes the arena's next `bytes` resident now, on the calling thread
  // (see record/prefault.h), so that captures copy into memory already
  // mapped; what is resident already costs nothing.
  void make_resident(size_t bytes);

  std::unique_ptr<CommBackend> live_;
  RecordConfig config_;
  record::TraceBuilder builder_;
  std::span<std::byte> resident_;  // the arena's room last made resident
  size_t iteration_start_bytes_ = 0;
  bool in_iteration_ = false;
  uint32_t iteration_ = 0;
  bool finished_ = false;
  std::unique_ptr<record::TraceSaver> saver_;
};

}  // namespace trainmover::api
