// The trainmover side of the benchmark: the Communicator's collectives, out
// of place (their natural form, as nccl-tests measures NCCL by default).
#include <vector>

#include "comm/communicator.h"
#include "comm/config.h"
#include "worker.h"

namespace trainmover::bench {
namespace {

// One call of `op` with the shape's counts.
Status call(Communicator& comm, Collective op, const CollectiveShape& shape, const float* send,
            float* recv) {
  switch (op) {
    case Collective::kAllreduce:
      return comm.allreduce(send, recv, shape.recv_count, TM_FLOAT32, TM_SUM);
    case Collective::kReduceScatter:
      return comm.reduce_scatter(send, recv, shape.recv_count, TM_FLOAT32, TM_SUM);
    case Collective::kAllgather:
      return comm.allgather(send, recv, shape.send_count, TM_FLOAT32);
    case Collective::kBroadcast:
      return comm.broadcast(send, recv, shape.recv_count, TM_FLOAT32, 0);
  }
  return error(TM_ERROR_INVALID_ARGUMENT, "unknown collective");
}

Status time_size(Communicator& comm, Collective op, const SizePlan& p, const CollectiveShape& shape,
                 const std::vector<float>& send, std::vector<float>& recv, double& elapsed) {
  for (int i = 0; i < p.warmup; ++i)
    TM_RETURN_IF_ERROR(call(comm, op, shape, send.data(), recv.data()));
  TM_RETURN_IF_ERROR(comm.barrier());
  auto start = Clock::now();
  for (int i = 0; i < p.iters; ++i)
    TM_RETURN_IF_ERROR(call(comm, op, shape, send.data(), recv.data()));
  elapsed = to_seconds(Clock::now() - start);
  return Status::Ok();
}

}  // namespace

Result<Timings> run_trainmover_collective(Collective op, const std::vector<SizePlan>& plan) {
  tm_config_t c_config{};
  TM_RETURN_IF_ERROR(init_config(c_config));
  TM_ASSIGN_OR_RETURN(CommConfig config, CommConfig::from_c(c_config));
  TM_ASSIGN_OR_RETURN(auto comm, Communicator::create(config));
  Timings timings;
  for (const SizePlan& p : plan) {
    const CollectiveShape shape = collective_shape(op, p.bytes, comm->nslots());
    std::vector<float> send(shape.send_count, static_cast<float>(comm->slot() + 1));
    std::vector<float> recv(shape.recv_count);
    const std::string what = str_cat(collective_name(op), " of ", p.bytes, " bytes");
    TM_RETURN_IF_ERROR(call(*comm, op, shape, send.data(), recv.data()).with_context(what));
    TM_RETURN_IF_ERROR(check_output(op, recv.data(), recv.size(), comm->nslots()));
    double elapsed = 0;
    TM_RETURN_IF_ERROR(time_size(*comm, op, p, shape, send, recv, elapsed).with_context(what));
    timings.push_back(elapsed);
  }
  return timings;
}

}  // namespace trainmover::bench
