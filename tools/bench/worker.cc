#include "worker.h"

#include <cstdio>
#include <string>

#include "cli/command_line.h"
#include "common/json.h"

namespace trainmover::bench {
namespace {

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
  std::string impl;
  std::vector<SizePlan> plan;
  cli::CommandLine command_line("trainmover-bench worker",
                                "trainmover-bench worker --impl IMPL --plan PLAN",
                                "One rank of a `trainmover-bench allreduce` job.\n");
  command_line.text("impl", "IMPL", impl, "the implementation measured")
      .required()
      .custom(
          "plan", "PLAN",
          [&plan](std::string_view text) -> Status {
            TM_ASSIGN_OR_RETURN(plan, parse_plan(text));
            return Status::Ok();
          },
          "bytes:iters:warmup,... per size")
      .required();
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  auto timings = run_impl(impl, plan);
  if (!timings.ok()) {
    std::fprintf(stderr, "trainmover-bench worker (%s): %s\n", impl.c_str(),
                 timings.status().message().c_str());
    return kExitFailed;
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    const SizePlan& p = plan[i];
    const Json line = {{"bytes", p.bytes}, {"iters", p.iters}, {"elapsed_s", timings.value()[i]}};
    std::printf("%s\n", json_line(line).c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace trainmover::bench
