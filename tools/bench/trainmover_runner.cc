// The trainmover side of the benchmark: Communicator::allreduce, out of
// place (its natural form, as nccl-tests measures NCCL by default).
#include <vector>

#include "comm/communicator.h"
#include "comm/config.h"
#include "worker.h"

namespace trainmover::bench {
namespace {

Status time_size(Communicator& comm, const SizePlan& p, std::vector<float>& send,
                 std::vector<float>& recv, double& elapsed) {
  const size_t count = p.bytes / sizeof(float);
  for (int i = 0; i < p.warmup; ++i) {
    TM_RETURN_IF_ERROR(comm.allreduce(send.data(), recv.data(), count, TM_FLOAT32, TM_SUM));
  }
  TM_RETURN_IF_ERROR(comm.barrier());
  auto start = Clock::now();
  for (int i = 0; i < p.iters; ++i) {
    TM_RETURN_IF_ERROR(comm.allreduce(send.data(), recv.data(), count, TM_FLOAT32, TM_SUM));
  }
  elapsed = to_seconds(Clock::now() - start);
  return Status::Ok();
}

}  // namespace

Result<Timings> run_trainmover_allreduce(const std::vector<SizePlan>& plan) {
  tm_config_t c_config{};
  TM_RETURN_IF_ERROR(init_config(c_config));
  TM_ASSIGN_OR_RETURN(CommConfig config, CommConfig::from_c(c_config));
  TM_ASSIGN_OR_RETURN(auto comm, Communicator::create(config));
  Timings timings;
  for (const SizePlan& p : plan) {
    const size_t count = p.bytes / sizeof(float);
    std::vector<float> send(count, static_cast<float>(comm->slot() + 1));
    std::vector<float> recv(count);
    TM_RETURN_IF_ERROR(comm->allreduce(send.data(), recv.data(), count, TM_FLOAT32, TM_SUM)
                           .with_context(str_cat("allreduce of ", p.bytes, " bytes")));
    TM_RETURN_IF_ERROR(check_sum(recv.data(), count, comm->nslots()));
    double elapsed = 0;
    TM_RETURN_IF_ERROR(time_size(*comm, p, send, recv, elapsed)
                           .with_context(str_cat("allreduce of ", p.bytes, " bytes")));
    timings.push_back(elapsed);
  }
  return timings;
}

}  // namespace trainmover::bench
