#include "collective_options.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include "cli/command_line.h"
#include "common/json.h"
#include "common/parse.h"
#include "common/str.h"

namespace trainmover::bench {
namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 31;
constexpr double kMaxJobTimeoutS = 7 * 24 * 3600;

Status parse_sizes(std::string_view text, std::vector<uint64_t>& out) {
  TM_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, parse_size_list(text));
  for (uint64_t b : sizes) {
    if (b == 0 || b % sizeof(float) != 0) {
      return error(TM_ERROR_INVALID_ARGUMENT, "size ", b,
                   " is not a positive multiple of 4 bytes (float32)");
    }
    if (b > kMaxBytes) return error(TM_ERROR_INVALID_ARGUMENT, "size ", b, " is over 2 GiB");
  }
  out = std::move(sizes);
  return Status::Ok();
}

// The one description of the options: it parses them into `o` and prints --help.
cli::CommandLine collective_command_line(CollectiveOptions& o) {
  const std::string name = collective_name(o.op);
  cli::CommandLine command_line(
      "trainmover-bench " + name, "trainmover-bench " + name + " [OPTIONS]",
      "Measure float32 " + name + (o.op == Collective::kBroadcast ? " from slot 0" : "") +
          (o.op == Collective::kAllgather || o.op == Collective::kBroadcast ? "" : " (sum)") +
          " of N local ranks, for trainmover and the peers\n"
          "built in (gloo and openmpi-tcp over TCP loopback; openmpi-shm, OpenMPI over\n"
          "shared memory, on request), interleaved.\n");
  command_line.integer("nranks,n", "N", 1, 64, o.nranks, "ranks, 1..64 (default 4)")
      .custom(
          "bytes,b", "B[,B...]", [&o](std::string_view text) { return parse_sizes(text, o.bytes); },
          "message sizes, multiples of 4: 4K,1M,... (default 4K,64K,1M,16M,64M)")
      .integer("iters,i", "K", 1, 1000000, o.iters,
               "timed iterations per size (default 20; see --max-volume)")
      .integer("warmup,w", "W", 0, 1000000, o.warmup,
               "warm-up iterations per size (default 5; at most half the timed ones)")
      .integer("rounds,r", "R", 1, 1000, o.rounds,
               "interleaved rounds; the median is reported (default 3)")
      .size("max-volume", "B", 1, uint64_t{1} << 50, o.max_volume,
            "cap a size's timed iterations at max(1, B/size) (default 512M)")
      .choice_list("impl", "LIST", {kImplTrainmover, kImplGloo, kImplOpenmpiTcp, kImplOpenmpiShm},
                   o.impls,
                   "implementations: trainmover,gloo,openmpi-tcp,openmpi-shm (default "
                   "trainmover,gloo,openmpi-tcp)")
      .custom(
          "transport", "KIND",
          [&o](std::string_view text) -> Status {
            if (text != "auto" && text != "tcp" && text != "shm")
              return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is not auto, tcp or shm");
            o.transport = std::string(text);
            return Status::Ok();
          },
          "trainmover's links: auto (shared memory: all ranks share this host), tcp "
          "(TCP loopback, as gloo and openmpi-tcp) or shm (default auto)")
      .from_env("TRAINMOVER_TRANSPORT")
      .duration("job-timeout", "SEC", 1e-3, kMaxJobTimeoutS, o.job_timeout_s,
                "limit for one job: one impl, one round, all sizes (default 600)")
      .flag("json", o.json, "one JSON object per line instead of a table")
      .epilog(
          "B is the larger buffer of a call, as in nccl-tests: the input of\n"
          "reduce_scatter, the output of allgather; each rank's block is B/4/N floats.\n"
          "time = max over ranks of the time of the timed iterations / iterations;\n"
          "busbw = B * F / time, in GB/s (1e9 bytes/s), as nccl-tests, with F =\n"
          "2(N-1)/N for allreduce, (N-1)/N for reduce_scatter and allgather, 1 for\n"
          "broadcast.\n");
  return command_line;
}

// Sizes too small for one element per rank's block (reduce_scatter, allgather).
std::optional<std::string> size_too_small(const CollectiveOptions& o) {
  const uint64_t least = collective_min_bytes(o.op, o.nranks);
  for (uint64_t b : o.bytes) {
    if (b < least) {
      return str_cat("--bytes ", b, " is too small for ", collective_name(o.op), " of ", o.nranks,
                     " ranks: at least ", least, " (one float per rank)");
    }
  }
  return std::nullopt;
}

}  // namespace

ParsedCollective parse_collective_options(int argc, char** argv) {
  ParsedCollective parsed;
  CollectiveOptions& o = parsed.options;
  if (argc > 0) o.op = collective_named(argv[0]).value_or(Collective::kAllreduce);
  cli::CommandLine command_line = collective_command_line(o);
  std::optional<int> exit_code = command_line.parse(argc, argv);
  if (!exit_code) {
    if (auto why = size_too_small(o)) exit_code = command_line.usage_error(*why);
  }
  if (exit_code) {
    parsed.exit_now = true;
    parsed.exit_code = *exit_code;
  }
  return parsed;
}

std::vector<SizePlan> plan_sizes(const CollectiveOptions& options) {
  std::vector<SizePlan> plans;
  for (uint64_t b : options.bytes) {
    SizePlan p;
    p.bytes = b;
    uint64_t cap = std::max<uint64_t>(1, options.max_volume / b);
    p.iters = static_cast<int>(std::min<uint64_t>(options.iters, cap));
    p.warmup = std::min(options.warmup, std::max(1, p.iters / 2));
    if (options.warmup == 0) p.warmup = 0;
    plans.push_back(p);
  }
  return plans;
}

}  // namespace trainmover::bench

namespace trainmover::bench {

std::string format_plan(const std::vector<SizePlan>& plans) {
  std::string out;
  for (const SizePlan& p : plans) {
    if (!out.empty()) out += ",";
    out += str_cat(p.bytes, ":", p.iters, ":", p.warmup);
  }
  return out;
}

std::string format_plan_json(const std::vector<SizePlan>& plans) {
  Json out = Json::array();
  for (const SizePlan& p : plans) out.push_back({p.bytes, p.iters, p.warmup});
  return json_line(out);
}

Result<std::vector<SizePlan>> parse_plan(std::string_view text) {
  std::vector<SizePlan> plans;
  for (std::string_view item : split(text, ',')) {
    auto fields = split(item, ':');
    if (fields.size() != 3) {
      return error(TM_ERROR_INVALID_ARGUMENT, "plan item '", item, "' is not bytes:iters:warmup");
    }
    SizePlan p;
    TM_ASSIGN_OR_RETURN(int64_t bytes, parse_int(fields[0], 4, int64_t{1} << 31));
    TM_ASSIGN_OR_RETURN(int64_t iters, parse_int(fields[1], 1, 1000000));
    TM_ASSIGN_OR_RETURN(int64_t warmup, parse_int(fields[2], 0, 1000000));
    if (bytes % 4 != 0)
      return error(TM_ERROR_INVALID_ARGUMENT, "plan size ", bytes, " is not a multiple of 4");
    p.bytes = static_cast<uint64_t>(bytes);
    p.iters = static_cast<int>(iters);
    p.warmup = static_cast<int>(warmup);
    plans.push_back(p);
  }
  return plans;
}

}  // namespace trainmover::bench
