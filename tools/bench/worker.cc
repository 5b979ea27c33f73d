#include "worker.h"

#include <getopt.h>

#include <cstdio>
#include <string>

#include "common/json.h"

namespace trainmover::bench {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailed = 1;

Result<Timings> run_impl(const std::string& impl, const std::vector<SizePlan>& plan) {
  if (impl == kImplTrainmover) return run_trainmover_allreduce(plan);
#ifdef HAVE_GLOO
  if (impl == kImplGloo) return run_gloo_allreduce(plan);
#endif
  return error(TM_ERROR_UNSUPPORTED, "implementation '", impl, "' is not built into this worker");
}

}  // namespace

Status check_sum(const float* data, size_t count, int nranks) {
  const float expected = static_cast<float>(nranks) * static_cast<float>(nranks + 1) / 2;
  for (size_t i = 0; i < count; ++i) {
    if (data[i] != expected) {
      return error(TM_ERROR_INTERNAL, "wrong allreduce result at element ", i, " of ", count, ": ",
                   data[i], " instead of ", expected);
    }
  }
  return Status::Ok();
}

int worker_main(int argc, char** argv) {
  static const option kLong[] = {{"impl", required_argument, nullptr, 'I'},
                                 {"plan", required_argument, nullptr, 'p'},
                                 {nullptr, 0, nullptr, 0}};
  std::string impl;
  std::string plan_text;
  optind = 1;
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, "", kLong, nullptr)) != -1;) {
    if (c == 'I') {
      impl = optarg;
    } else if (c == 'p') {
      plan_text = optarg;
    } else {
      std::fprintf(stderr, "trainmover-bench worker: bad option %s\n", argv[optind - 1]);
      return kExitUsage;
    }
  }
  auto plan = parse_plan(plan_text);
  if (impl.empty() || !plan.ok()) {
    std::fprintf(stderr, "trainmover-bench worker: needs --impl and a valid --plan (%s)\n",
                 plan.ok() ? "" : plan.status().message().c_str());
    return kExitUsage;
  }
  auto timings = run_impl(impl, plan.value());
  if (!timings.ok()) {
    std::fprintf(stderr, "trainmover-bench worker (%s): %s\n", impl.c_str(),
                 timings.status().message().c_str());
    return kExitFailed;
  }
  for (size_t i = 0; i < plan->size(); ++i) {
    const SizePlan& p = plan.value()[i];
    const Json line = {{"bytes", p.bytes}, {"iters", p.iters}, {"elapsed_s", timings.value()[i]}};
    std::printf("%s\n", json_line(line).c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace trainmover::bench
