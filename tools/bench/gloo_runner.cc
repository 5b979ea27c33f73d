// The gloo side of the benchmark: gloo::AllreduceRingChunked<float> over
// gloo's TCP transport on 127.0.0.1. gloo reduces in place.
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include <exception>
#include <vector>

#include "comm/config.h"
#include "common/secret.h"
#include "gloo_store.h"
#include "rendezvous/tcp_store.h"
#include "worker.h"

namespace trainmover::bench {
namespace {

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

double time_size(const std::shared_ptr<gloo::rendezvous::Context>& context, const SizePlan& p,
                 std::vector<float>& data) {
  const int count = static_cast<int>(p.bytes / sizeof(float));
  gloo::AllreduceRingChunked<float> allreduce(context, {data.data()}, count);
  for (int i = 0; i < p.warmup; ++i) allreduce.run();
  gloo::BarrierAllToAll(context).run();
  auto start = Clock::now();
  for (int i = 0; i < p.iters; ++i) allreduce.run();
  return to_seconds(Clock::now() - start);
}

// Checks one allreduce, then measures on zeros (in place, repeated sums of
// other values would grow without bound).
Result<double> measure_size(const std::shared_ptr<gloo::rendezvous::Context>& context,
                            const SizePlan& p) {
  const size_t count = p.bytes / sizeof(float);
  std::vector<float> data(count, static_cast<float>(context->rank + 1));
  gloo::AllreduceRingChunked<float>(context, {data.data()}, static_cast<int>(count)).run();
  TM_RETURN_IF_ERROR(check_sum(data.data(), count, context->size));
  std::fill(data.begin(), data.end(), 0.0f);
  return time_size(context, p, data);
}

}  // namespace

Result<Timings> run_gloo_allreduce(const std::vector<SizePlan>& plan) {
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
      TM_ASSIGN_OR_RETURN(double elapsed, measure_size(context, p));
      timings.push_back(elapsed);
    }
    return timings;
  } catch (const std::exception& e) {
    return error(TM_ERROR_PEER_FAILED, "gloo: ", e.what());
  }
}

}  // namespace trainmover::bench
