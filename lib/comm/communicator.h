// Communicator: a slot-addressed collective communicator (the C++ core of
// the C API in trainmover.h; see there for the semantics of each call).
//
// Construction rendezvouses through the store, connects the ring and starts
// the progress engine. Calls block the calling thread until done; one thread
// at a time may call. Results depend only on slot numbers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/collective_op.h"
#include "comm/config.h"
#include "comm/endpoint.h"
#include "comm/engine.h"
#include "comm/p2p_op.h"
#include "comm/peers.h"
#include "comm/ring_plan.h"
#include "comm/staging.h"
#include "common/secret.h"
#include "rendezvous/store.h"
#include "transport/transport.h"

namespace trainmover {

class Communicator {
 public:
  static Result<std::unique_ptr<Communicator>> create(const CommConfig& config);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int slot() const { return config_.slot; }
  int nslots() const { return config_.nslots; }
  const CommConfig& config() const { return config_; }
  // The status of the last failed call (ok if none failed).
  const Status& last_failure() const { return last_failure_; }

  Status allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   tm_redop_t op);
  Status reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, tm_datatype_t type,
                        tm_redop_t op);
  Status allgather(const void* sendbuf, void* recvbuf, size_t sendcount, tm_datatype_t type);
  Status broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type, int root);
  Status barrier();
  Status send(const void* buf, size_t count, tm_datatype_t type, int peer);
  Status recv(void* buf, size_t count, tm_datatype_t type, int peer);

 private:
  enum class OpKind : uint8_t {
    kAllreduce = 1,
    kReduceScatter,
    kAllgather,
    kBroadcast,
    kBarrier,
    kP2P
  };

  Communicator(CommConfig config, JobSecret secret, std::unique_ptr<rendezvous::Store> store);
  Status connect(uint64_t instance_id);
  Status join_ring();
  Status run_collective(OpKind kind, const void* in, void* out, tm_datatype_t type, tm_redop_t op,
                        const char* name);
  Status run_p2p(bool is_send, void* buf, size_t count, tm_datatype_t type, int peer);
  Result<Endpoint> endpoint_of(int slot);
  RingGeometry geometry(tm_datatype_t type) const;
  uint64_t tag(OpKind kind, uint64_t seq, tm_datatype_t type, tm_redop_t op) const;
  Status finish_call(Status status);
  void shut_down();

  CommConfig config_;
  JobSecret secret_;
  std::unique_ptr<rendezvous::Store> store_;
  std::unique_ptr<Engine> engine_;  // its loop outlives transport_ and the links
  PeerTable peers_;
  StagingPool staging_;
  std::unique_ptr<transport::Transport> transport_;
  CollectiveOp collective_op_;
  P2POp p2p_op_;
  RingPlan plan_;
  // Caller-thread state.
  uint64_t collectives_ = 0;
  std::vector<uint64_t> sends_to_;
  std::vector<uint64_t> recvs_from_;
  std::vector<std::optional<Endpoint>> endpoints_;
  std::vector<uint8_t> barrier_bytes_;
  Status last_failure_;
};

}  // namespace trainmover
