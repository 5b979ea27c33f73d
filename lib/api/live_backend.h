// LiveBackend: a handle's backend that is a real Communicator.
#pragma once

#include <memory>

#include "api/comm_backend.h"
#include "comm/communicator.h"

namespace trainmover::api {

class LiveBackend final : public CommBackend {
 public:
  explicit LiveBackend(std::unique_ptr<Communicator> comm) : comm_(std::move(comm)) {}
  // Rendezvous and connect, as tm_comm_init() does.
  static Result<std::unique_ptr<CommBackend>> create(const tm_config_t& config);

  tm_comm_mode_t mode() const override { return TM_MODE_LIVE; }
  Communicator* live() override { return comm_.get(); }
  int slot() const override { return comm_->slot(); }
  int nslots() const override { return comm_->nslots(); }
  int failed_slot() const override { return comm_->last_failure().failed_slot(); }

  Status allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   tm_redop_t op) override {
    return comm_->allreduce(sendbuf, recvbuf, count, type, op);
  }
  Status reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, tm_datatype_t type,
                        tm_redop_t op) override {
    return comm_->reduce_scatter(sendbuf, recvbuf, recvcount, type, op);
  }
  Status allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                   tm_datatype_t type) override {
    return comm_->allgather(sendbuf, recvbuf, sendcount, type);
  }
  Status broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   int root) override {
    return comm_->broadcast(sendbuf, recvbuf, count, type, root);
  }
  Status barrier() override { return comm_->barrier(); }
  Status abort() override { return comm_->abort(); }
  Status send(const void* buf, size_t count, tm_datatype_t type, int peer) override {
    return comm_->send(buf, count, type, peer);
  }
  Status recv(void* buf, size_t count, tm_datatype_t type, int peer) override {
    return comm_->recv(buf, count, type, peer);
  }

 private:
  std::unique_ptr<Communicator> comm_;
};

}  // namespace trainmover::api
