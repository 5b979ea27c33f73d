#include "switch_options.h"

#include <algorithm>
#include <cstdio>

#include "cli/command_line.h"
#include "comm/config.h"
#include "common/parse.h"
#include "common/status.h"
#include "common/str.h"

namespace trainmover::bench {
namespace {

constexpr int kMaxRanks = 64;
constexpr uint64_t kMaxBytes = 64u << 20;
constexpr double kMaxTimeoutS = 24 * 3600;

// Parses a comma-separated list of names into the values `lookup` knows.
template <typename T, typename Lookup>
Status parse_names(std::string_view text, const char* what, const char* known, Lookup lookup,
                   std::vector<T>& out) {
  out.clear();
  for (std::string_view name : split(text, ',')) {
    T value{};
    if (!lookup(name, value)) {
      return error(TM_ERROR_INVALID_ARGUMENT, "unknown ", what, " '", name, "' (known: ", known,
                   ")");
    }
    if (std::find(out.begin(), out.end(), value) == out.end()) out.push_back(value);
  }
  if (out.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "no ", what, " given");
  return Status::Ok();
}

Status parse_nranks(std::string_view text, std::vector<int>& out) {
  TM_ASSIGN_OR_RETURN(std::vector<int64_t> values, parse_int_list(text, 2, kMaxRanks));
  out.clear();
  for (int64_t n : values) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(static_cast<int>(n));
  }
  return Status::Ok();
}

Status parse_bytes(std::string_view text, uint64_t& out) {
  TM_ASSIGN_OR_RETURN(uint64_t bytes, parse_size(text));
  if (bytes == 0 || bytes % sizeof(float) != 0 || bytes > kMaxBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text,
                 "' is not a positive multiple of 4 bytes (float32) up to 64M");
  }
  out = bytes;
  return Status::Ok();
}

// The one description of the options: it parses them into `o` and prints --help.
cli::CommandLine switch_command_line(SwitchOptions& o) {
  cli::CommandLine command_line(
      "trainmover-bench switch", "trainmover-bench switch [OPTIONS]",
      "Measure the replacement of one process of an N-slot ring by a standby:\n"
      "the two-phase delta switch against a full rebuild of the communicator,\n"
      "interleaved, with timestamps on the host's monotonic clock.\n");
  command_line
      .custom(
          "nranks,n", "LIST", [&o](std::string_view t) { return parse_nranks(t, o.nranks); },
          "communicator sizes, each 2..64 (default 4,8,16,32,64)")
      .custom(
          "mode,m", "LIST",
          [&o](std::string_view t) {
            return parse_names(t, "mode", "planned, unexpected", parse_mode_name, o.modes);
          },
          "planned,unexpected (default planned)")
      .custom(
          "impl", "LIST",
          [&o](std::string_view t) {
            return parse_names(t, "implementation", "delta, rebuild", parse_impl_name, o.impls);
          },
          "delta,rebuild (default both)")
      .integer("victim", "SLOT", 0, kMaxRanks - 1, o.victim,
               "the slot replaced, below every N (default N/2)")
      .custom(
          "bytes,b", "B", [&o](std::string_view t) { return parse_bytes(t, o.bytes); },
          "size of each allreduce, a multiple of 4 (default 4K)")
      .integer("warmup,w", "W", 0, 1000, o.warmup, "allreduces before the switch (default 5)")
      .integer("rounds,r", "R", 1, 1000, o.rounds,
               "rounds per (mode, impl, N); the median is reported (default 3)")
      .duration("timeout", "SEC", 1e-3, kMaxTimeoutS, o.timeout_s,
                "limit of every wait of a round (default 60)")
      .flag("trace", o.trace, "print every process's timestamps on stderr")
      .flag("json", o.json, "one JSON object per line instead of a table")
      .epilog(
          "t0 is the switch request (planned) or the kill (unexpected).\n"
          "switchover_s: t0 until the last process that opens links has them up;\n"
          "first_collective_s: t0 until the first allreduce after it completed everywhere.\n"
          "See trainmover-bench(1) for every key.\n");
  return command_line;
}

}  // namespace

const char* mode_name(SwitchMode mode) {
  return mode == SwitchMode::kPlanned ? "planned" : "unexpected";
}

const char* impl_name(SwitchImpl impl) { return impl == SwitchImpl::kDelta ? "delta" : "rebuild"; }

bool parse_mode_name(std::string_view name, SwitchMode& mode) {
  for (SwitchMode m : {SwitchMode::kPlanned, SwitchMode::kUnexpected}) {
    if (name == mode_name(m)) return (mode = m), true;
  }
  return false;
}

bool parse_impl_name(std::string_view name, SwitchImpl& impl) {
  for (SwitchImpl i : {SwitchImpl::kDelta, SwitchImpl::kRebuild}) {
    if (name == impl_name(i)) return (impl = i), true;
  }
  return false;
}

ParsedSwitch parse_switch_options(int argc, char** argv) {
  ParsedSwitch parsed;
  cli::CommandLine command_line = switch_command_line(parsed.options);
  std::optional<int> exit_code = command_line.parse(argc, argv);
  const SwitchOptions& o = parsed.options;
  int smallest = *std::min_element(o.nranks.begin(), o.nranks.end());
  if (!exit_code && o.victim >= smallest) {
    exit_code = command_line.usage_error(str_cat("--victim ", o.victim,
                                                 " is not a slot of the smallest communicator (",
                                                 smallest, " slots)"));
  }
  if (!exit_code) {
    // The workers inherit the environment: their links are the ones it names.
    tm_config_t c = TM_CONFIG_INITIALIZER;
    Status env = init_config(c);
    auto policy = env.ok() ? algorithm_policy(c) : Result<AlgorithmPolicy>(env);
    if (policy.ok()) {
      parsed.options.link_graph = policy.value().link_graph_name();
    } else {
      exit_code = command_line.usage_error(policy.status().message());
    }
  }
  parsed.exit_now = exit_code.has_value();
  parsed.exit_code = exit_code.value_or(0);
  return parsed;
}

}  // namespace trainmover::bench
