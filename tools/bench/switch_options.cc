#include "switch_options.h"

#include <getopt.h>

#include <algorithm>
#include <cstdio>

#include "common/parse.h"
#include "common/status.h"
#include "common/str.h"

namespace trainmover::bench {
namespace {

constexpr int kExitUsage = 2;
constexpr int kMaxRanks = 64;

ParsedSwitch switch_usage_error(const std::string& message) {
  std::fprintf(stderr, "trainmover-bench switch: %s\nTry 'trainmover-bench switch --help'.\n",
               message.c_str());
  ParsedSwitch parsed;
  parsed.exit_now = true;
  parsed.exit_code = kExitUsage;
  return parsed;
}

// Parses a comma-separated list of names into the values `lookup` knows.
template <typename T, typename Lookup>
Status parse_names(const std::string& text, const char* what, const char* known, Lookup lookup,
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

Status parse_nranks(const std::string& text, std::vector<int>& out) {
  TM_ASSIGN_OR_RETURN(std::vector<int64_t> values, parse_int_list(text, 2, kMaxRanks));
  out.clear();
  for (int64_t n : values) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(static_cast<int>(n));
  }
  return Status::Ok();
}

Status apply_switch_option(int c, const std::string& value, SwitchOptions& o) {
  switch (c) {
    case 'n':
      return parse_nranks(value, o.nranks);
    case 'm':
      return parse_names(value, "mode", "planned, unexpected", parse_mode_name, o.modes);
    case 'I':
      return parse_names(value, "implementation", "delta, rebuild", parse_impl_name, o.impls);
    case 'v':
      return parse_int_option(value, 0, kMaxRanks - 1, o.victim);
    case 'b': {
      TM_ASSIGN_OR_RETURN(o.bytes, parse_size(value));
      if (o.bytes == 0 || o.bytes % 4 != 0 || o.bytes > (64u << 20)) {
        return error(TM_ERROR_INVALID_ARGUMENT,
                     "not a positive multiple of 4 bytes (float32) up to 64M");
      }
      return Status::Ok();
    }
    case 'w':
      return parse_int_option(value, 0, 1000, o.warmup);
    case 'r':
      return parse_int_option(value, 1, 1000, o.rounds);
    case 'T': {
      TM_ASSIGN_OR_RETURN(o.timeout_s, parse_seconds(value));
      if (!(o.timeout_s > 0)) return error(TM_ERROR_INVALID_ARGUMENT, "must be positive");
      return Status::Ok();
    }
  }
  return error(TM_ERROR_INTERNAL, "unhandled option");
}

std::string switch_option_name(const option* table, int c) {
  for (; table->name != nullptr; ++table) {
    if (table->val == c) return str_cat("--", table->name);
  }
  return str_cat("-", static_cast<char>(c));
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

void print_switch_help() {
  std::printf(
      "Usage: trainmover-bench switch [OPTIONS]\n"
      "Measure the replacement of one process of an N-slot ring by a standby:\n"
      "the two-phase delta switch against a full rebuild of the communicator,\n"
      "interleaved, with timestamps on the host's monotonic clock.\n"
      "\n"
      "  -n, --nranks LIST     communicator sizes, each 2..64 (default 4,8,16,32,64)\n"
      "  -m, --mode LIST       planned,unexpected (default planned)\n"
      "      --impl LIST       delta,rebuild (default both)\n"
      "      --victim SLOT     the slot replaced, below every N (default N/2)\n"
      "  -b, --bytes B         size of each allreduce, a multiple of 4 (default 4K)\n"
      "  -w, --warmup W        allreduces before the switch (default 5)\n"
      "  -r, --rounds R        rounds per (mode, impl, N); the median is reported (default 3)\n"
      "      --timeout SEC     limit of every wait of a round (default 60)\n"
      "      --trace           print every process's timestamps on stderr\n"
      "      --json            one JSON object per line instead of a table\n"
      "  -h, --help            show this help\n"
      "\n"
      "t0 is the switch request (planned) or the kill (unexpected).\n"
      "switchover_s: t0 until the last process that opens links has them up;\n"
      "first_collective_s: t0 until the first allreduce after it completed everywhere.\n"
      "See trainmover-bench(1) for every key.\n");
}

ParsedSwitch parse_switch_options(int argc, char** argv) {
  static const option kLong[] = {
      {"nranks", required_argument, nullptr, 'n'}, {"mode", required_argument, nullptr, 'm'},
      {"impl", required_argument, nullptr, 'I'},   {"victim", required_argument, nullptr, 'v'},
      {"bytes", required_argument, nullptr, 'b'},  {"warmup", required_argument, nullptr, 'w'},
      {"rounds", required_argument, nullptr, 'r'}, {"timeout", required_argument, nullptr, 'T'},
      {"trace", no_argument, nullptr, 't'},        {"json", no_argument, nullptr, 'j'},
      {"help", no_argument, nullptr, 'h'},         {nullptr, 0, nullptr, 0}};
  ParsedSwitch parsed;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":n:m:b:w:r:h", kLong, nullptr)) != -1) {
    if (c == 'h') {
      print_switch_help();
      parsed.exit_now = true;
      return parsed;
    }
    if (c == 'j' || c == 't') {
      (c == 'j' ? parsed.options.json : parsed.options.trace) = true;
      continue;
    }
    if (c == ':') return switch_usage_error(str_cat("option ", argv[optind - 1], " needs a value"));
    if (c == '?') return switch_usage_error(str_cat("unknown option ", argv[optind - 1]));
    if (Status s = apply_switch_option(c, optarg, parsed.options); !s.ok()) {
      return switch_usage_error(
          str_cat(switch_option_name(kLong, c), " '", optarg, "': ", s.message()));
    }
  }
  if (optind < argc) return switch_usage_error(str_cat("unexpected argument '", argv[optind], "'"));
  int smallest = *std::min_element(parsed.options.nranks.begin(), parsed.options.nranks.end());
  if (parsed.options.victim >= smallest) {
    return switch_usage_error(str_cat("--victim ", parsed.options.victim,
                                      " is not a slot of the smallest communicator (", smallest,
                                      " slots)"));
  }
  return parsed;
}

}  // namespace trainmover::bench
