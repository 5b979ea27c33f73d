#include "allreduce_options.h"

#include <getopt.h>

#include <algorithm>
#include <cstdio>

#include "common/parse.h"
#include "common/str.h"

namespace trainmover::bench {
namespace {

constexpr int kExitUsage = 2;

ParsedAllreduce usage_error(const std::string& message) {
  std::fprintf(stderr, "trainmover-bench allreduce: %s\nTry 'trainmover-bench allreduce --help'.\n",
               message.c_str());
  ParsedAllreduce parsed;
  parsed.exit_now = true;
  parsed.exit_code = kExitUsage;
  return parsed;
}

Status parse_impls(const std::string& text, std::vector<std::string>& out) {
  out.clear();
  for (std::string_view name : split(text, ',')) {
    if (name != kImplTrainmover && name != kImplGloo && name != kImplOpenmpiTcp) {
      return error(TM_ERROR_INVALID_ARGUMENT, "unknown implementation '", name,
                   "' (known: trainmover, gloo, openmpi-tcp)");
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
  }
  return Status::Ok();
}

Status parse_sizes(const std::string& text, std::vector<uint64_t>& out) {
  TM_ASSIGN_OR_RETURN(out, parse_size_list(text));
  for (uint64_t b : out) {
    if (b == 0 || b % 4 != 0) {
      return error(TM_ERROR_INVALID_ARGUMENT, "size ", b,
                   " is not a positive multiple of 4 bytes (float32)");
    }
    if (b > (1ull << 31)) return error(TM_ERROR_INVALID_ARGUMENT, "size ", b, " is over 2 GiB");
  }
  return Status::Ok();
}

// Applies one option; returns an error naming what was wrong with its value.
Status apply_option(int c, const std::string& value, AllreduceOptions& o) {
  switch (c) {
    case 'n': {
      TM_ASSIGN_OR_RETURN(int64_t n, parse_int(value, 1, 64));
      o.nranks = static_cast<int>(n);
      return Status::Ok();
    }
    case 'b':
      return parse_sizes(value, o.bytes);
    case 'i': {
      TM_ASSIGN_OR_RETURN(int64_t n, parse_int(value, 1, 1000000));
      o.iters = static_cast<int>(n);
      return Status::Ok();
    }
    case 'w': {
      TM_ASSIGN_OR_RETURN(int64_t n, parse_int(value, 0, 1000000));
      o.warmup = static_cast<int>(n);
      return Status::Ok();
    }
    case 'r': {
      TM_ASSIGN_OR_RETURN(int64_t n, parse_int(value, 1, 1000));
      o.rounds = static_cast<int>(n);
      return Status::Ok();
    }
    case 'm': {
      TM_ASSIGN_OR_RETURN(o.max_volume, parse_size(value));
      return Status::Ok();
    }
    case 'I':
      return parse_impls(value, o.impls);
    case 'T': {
      TM_ASSIGN_OR_RETURN(o.job_timeout_s, parse_seconds(value));
      if (!(o.job_timeout_s > 0)) return error(TM_ERROR_INVALID_ARGUMENT, "must be positive");
      return Status::Ok();
    }
  }
  return error(TM_ERROR_INTERNAL, "unhandled option");
}

// "--bytes" for 'b': errors name the option as the user knows it.
std::string option_name(const option* table, int c) {
  for (; table->name != nullptr; ++table) {
    if (table->val == c) return str_cat("--", table->name);
  }
  return str_cat("-", static_cast<char>(c));
}

}  // namespace

void print_allreduce_help() {
  std::printf(
      "Usage: trainmover-bench allreduce [OPTIONS]\n"
      "Measure float32 sum allreduce of N local ranks over TCP loopback, for\n"
      "trainmover and the peers built in (gloo, openmpi-tcp), interleaved.\n"
      "\n"
      "  -n, --nranks N        ranks, 1..64 (default 4)\n"
      "  -b, --bytes B[,B...]  message sizes, multiples of 4: 4K,1M,... (default "
      "4K,64K,1M,16M,64M)\n"
      "  -i, --iters K         timed iterations per size (default 20; see --max-volume)\n"
      "  -w, --warmup W        warm-up iterations per size (default 5; at most half the timed "
      "ones)\n"
      "  -r, --rounds R        interleaved rounds; the median is reported (default 3)\n"
      "      --max-volume B    cap a size's timed iterations at max(1, B/size) (default 512M)\n"
      "      --impl LIST       implementations: trainmover,gloo,openmpi-tcp (default all)\n"
      "      --job-timeout SEC limit for one job: one impl, one round, all sizes (default 600)\n"
      "      --json            one JSON object per line instead of a table\n"
      "  -h, --help            show this help\n"
      "\n"
      "time = max over ranks of the time of the timed iterations / iterations;\n"
      "busbw = bytes * 2(N-1)/N / time, in GB/s (1e9 bytes/s), as nccl-tests.\n");
}

ParsedAllreduce parse_allreduce_options(int argc, char** argv) {
  static const option kLong[] = {{"nranks", required_argument, nullptr, 'n'},
                                 {"bytes", required_argument, nullptr, 'b'},
                                 {"iters", required_argument, nullptr, 'i'},
                                 {"warmup", required_argument, nullptr, 'w'},
                                 {"rounds", required_argument, nullptr, 'r'},
                                 {"max-volume", required_argument, nullptr, 'm'},
                                 {"impl", required_argument, nullptr, 'I'},
                                 {"job-timeout", required_argument, nullptr, 'T'},
                                 {"json", no_argument, nullptr, 'j'},
                                 {"help", no_argument, nullptr, 'h'},
                                 {nullptr, 0, nullptr, 0}};
  ParsedAllreduce parsed;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":n:b:i:w:r:h", kLong, nullptr)) != -1) {
    if (c == 'h') {
      print_allreduce_help();
      parsed.exit_now = true;
      return parsed;
    }
    if (c == 'j') {
      parsed.options.json = true;
      continue;
    }
    if (c == ':') return usage_error(str_cat("option ", argv[optind - 1], " needs a value"));
    if (c == '?') return usage_error(str_cat("unknown option ", argv[optind - 1]));
    if (Status s = apply_option(c, optarg, parsed.options); !s.ok()) {
      return usage_error(str_cat(option_name(kLong, c), " '", optarg, "': ", s.message()));
    }
  }
  if (optind < argc) return usage_error(str_cat("unexpected argument '", argv[optind], "'"));
  if (parsed.options.impls.empty()) return usage_error("--impl: no implementation selected");
  return parsed;
}

std::vector<SizePlan> plan_sizes(const AllreduceOptions& options) {
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
