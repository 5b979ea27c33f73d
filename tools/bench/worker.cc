#include "worker.h"

#include <cstdio>
#include <string>

#include "cli/command_line.h"
#include "common/json.h"

namespace trainmover::bench {
namespace {

constexpr int kExitFailed = 1;

Result<Timings> run_impl(const std::string& impl, Collective op,
                         const std::vector<SizePlan>& plan) {
  if (impl == kImplTrainmover) return run_trainmover_collective(op, plan);
#ifdef HAVE_GLOO
  if (impl == kImplGloo) return run_gloo_collective(op, plan);
#endif
  return error(TM_ERROR_UNSUPPORTED, "implementation '", impl, "' is not built into this worker");
}

}  // namespace

Status check_output(Collective op, const float* out, size_t recv_count, int nranks) {
  int64_t wrong = first_wrong_output(op, out, recv_count, nranks);
  if (wrong < 0) return Status::Ok();
  size_t i = static_cast<size_t>(wrong);
  return error(TM_ERROR_INTERNAL, "wrong ", collective_name(op), " result at element ", i, " of ",
               recv_count, ": ", out[i], " instead of ",
               expected_output(op, i, recv_count, nranks));
}

int worker_main(int argc, char** argv) {
  std::string impl;
  Collective op = Collective::kAllreduce;
  std::vector<SizePlan> plan;
  cli::CommandLine command_line("trainmover-bench worker",
                                "trainmover-bench worker --impl IMPL --op OP --plan PLAN",
                                "One rank of a `trainmover-bench OP` job.\n");
  command_line.text("impl", "IMPL", impl, "the implementation measured")
      .required()
      .custom(
          "op", "OP",
          [&op](std::string_view text) -> Status {
            auto named = collective_named(text);
            if (!named) return error(TM_ERROR_INVALID_ARGUMENT, "unknown collective '", text, "'");
            op = *named;
            return Status::Ok();
          },
          "allreduce, reduce_scatter, allgather or broadcast")
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
  auto timings = run_impl(impl, op, plan);
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
