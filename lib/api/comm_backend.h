// CommBackend: what a tm_comm_t handle dispatches its calls to. The handle
// keeps its identity while its backend changes: a live communicator, a
// recorder wrapped around one, or a sandbox replaying a trace.
//
// Contract: the same semantics as trainmover::Communicator (see
// trainmover.h); one thread at a time; iteration markers are numbered by the
// handle from 0 and always come in begin/end pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "comm/communicator.h"
#include "common/status.h"
#include "record/role.h"
#include "record/trace_saver.h"
#include "trainmover/trainmover.h"

namespace trainmover::api {

class CommBackend {
 public:
  virtual ~CommBackend() = default;

  virtual tm_comm_mode_t mode() const = 0;
  virtual int slot() const = 0;
  virtual int nslots() const = 0;
  virtual int failed_slot() const = 0;

  virtual Status allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                           tm_redop_t op) = 0;
  virtual Status reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                tm_datatype_t type, tm_redop_t op) = 0;
  virtual Status allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                           tm_datatype_t type) = 0;
  virtual Status broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                           int root) = 0;
  virtual Status barrier() = 0;
  virtual Status send(const void* buf, size_t count, tm_datatype_t type, int peer) = 0;
  virtual Status recv(void* buf, size_t count, tm_datatype_t type, int peer) = 0;

  // tm_comm_abort(): may be called from another thread than the caller's
  // (the handle serialises it with backend replacement).
  virtual Status abort() = 0;

  // The real communicator behind this backend (for the membership switch),
  // or nullptr for a sandbox.
  virtual Communicator* live() { return nullptr; }

  virtual Status declare_role(const record::Role& /*role*/) { return Status::Ok(); }
  virtual Status iteration_begin(uint32_t /*iteration*/) { return Status::Ok(); }
  virtual Status iteration_end(uint32_t /*iteration*/) { return Status::Ok(); }
  // After iteration_end(): a backend whose work is over (the recorder after
  // its last iteration) returns the one to use from now on; else nullptr.
  virtual std::unique_ptr<CommBackend> take_successor() { return nullptr; }
  // After iteration_end(): the save of a finished recording, running in the
  // background, for the handle to own (and wait for) from now on.
  virtual std::unique_ptr<record::TraceSaver> take_trace_saver() { return nullptr; }
};

}  // namespace trainmover::api
