// The gloo side of the benchmark, over gloo's TCP transport on 127.0.0.1:
// AllreduceRingChunked, ReduceScatterHalvingDoubling (its result lands at
// the start of each rank's buffer), AllgatherRing and BroadcastOneToAll.
// Every one but allgather works in place.
#include <gloo/allgather_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <vector>

#include "comm/config.h"
#include "common/secret.h"
#include "gloo_store.h"
#include "rendezvous/tcp_store.h"
#include "worker.h"

namespace trainmover::bench {
namespace {

using Context = std::shared_ptr<gloo::rendezvous::Context>;

std::shared_ptr<gloo::rendezvous::Context> connect_gloo(const CommConfig& config,
                                                        rendezvous::Store& store) {
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(config.slot, config.nslots);
  context->setTimeout(std::chrono::milliseconds(static_cast<int64_t>(config.timeout_s * 1000)));
  GlooStore gloo_store(store, seconds(config.connect_timeout_s));
  context->connectFullMesh(gloo_store, device);
  return context;
}

// A rank's buffers for one size: `data` is the input (and the output of the
// in-place algorithms), `out` the output of allgather.
struct GlooBuffers {
  std::vector<float> data;
  std::vector<float> out;
};

std::unique_ptr<gloo::Algorithm> make_algorithm(const Context& context, Collective op,
                                                const CollectiveShape& shape, GlooBuffers& b) {
  const int n = context->size;
  switch (op) {
    case Collective::kAllreduce:
      return std::make_unique<gloo::AllreduceRingChunked<float>>(
          context, std::vector<float*>{b.data.data()}, static_cast<int>(shape.send_count));
    case Collective::kReduceScatter:
      return std::make_unique<gloo::ReduceScatterHalvingDoubling<float>>(
          context, std::vector<float*>{b.data.data()}, static_cast<int>(shape.send_count),
          std::vector<int>(static_cast<size_t>(n), static_cast<int>(shape.recv_count)));
    case Collective::kAllgather:
      return std::make_unique<gloo::AllgatherRing<float>>(
          context, std::vector<const float*>{b.data.data()}, b.out.data(),
          static_cast<int>(shape.send_count));
    case Collective::kBroadcast:
      return std::make_unique<gloo::BroadcastOneToAll<float>>(
          context, std::vector<float*>{b.data.data()}, shape.send_count, 0);
  }
  return nullptr;
}

// Checks one call, then measures. The in-place reductions are measured on
// zeros: repeated sums of other values would grow without bound.
Result<double> measure_size(const Context& context, Collective op, const SizePlan& p) {
  const CollectiveShape shape = collective_shape(op, p.bytes, context->size);
  GlooBuffers b{std::vector<float>(shape.send_count, static_cast<float>(context->rank + 1)),
                std::vector<float>(op == Collective::kAllgather ? shape.recv_count : 0)};
  auto algorithm = make_algorithm(context, op, shape, b);
  algorithm->run();
  const float* out = op == Collective::kAllgather ? b.out.data() : b.data.data();
  TM_RETURN_IF_ERROR(check_output(op, out, shape.recv_count, context->size));
  if (op == Collective::kAllreduce || op == Collective::kReduceScatter)
    std::fill(b.data.begin(), b.data.end(), 0.0f);
  for (int i = 0; i < p.warmup; ++i) algorithm->run();
  gloo::BarrierAllToAll(context).run();
  auto start = Clock::now();
  for (int i = 0; i < p.iters; ++i) algorithm->run();
  return to_seconds(Clock::now() - start);
}

// gloo treats a peer's closed connection as an error even after the last
// operation: a root whose broadcast sends are buffered can exit while a
// receiver still waits on its pair. So no rank tears its context down until
// every rank has finished, and the store, not gloo, says so.
Status wait_for_every_rank_to_finish(const CommConfig& config, rendezvous::Store& store) {
  const std::string prefix = "bench/gloo-finished/";
  TM_RETURN_IF_ERROR(store.set(prefix + std::to_string(config.slot), "1"));
  Deadline deadline = Deadline::after(seconds(config.timeout_s));
  for (int r = 0; r < config.nslots; ++r)
    TM_RETURN_IF_ERROR(store.get(prefix + std::to_string(r), deadline.remaining()).status());
  return Status::Ok();
}

}  // namespace

Result<Timings> run_gloo_collective(Collective op, const std::vector<SizePlan>& plan) {
  tm_config_t c_config{};
  TM_RETURN_IF_ERROR(init_config(c_config));
  TM_ASSIGN_OR_RETURN(CommConfig config, CommConfig::from_c(c_config));
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::from_hex(config.job_secret));
  TM_ASSIGN_OR_RETURN(auto store,
                      rendezvous::TcpStore::connect(config.store_address, secret, config.job_id,
                                                    seconds(config.connect_timeout_s)));
  try {
    auto context = connect_gloo(config, *store);
    Timings timings;
    for (const SizePlan& p : plan) {
      TM_ASSIGN_OR_RETURN(double elapsed, measure_size(context, op, p));
      timings.push_back(elapsed);
    }
    TM_RETURN_IF_ERROR(wait_for_every_rank_to_finish(config, *store));
    return timings;
  } catch (const std::exception& e) {
    return error(TM_ERROR_PEER_FAILED, "gloo: ", e.what());
  }
}

}  // namespace trainmover::bench
