#include "commands.h"

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/call_names.h"
#include "common/parse.h"
#include "record/trace.h"

namespace trainmover::trace_tool {
namespace {

using record::Trace;

int usage_error(const std::string& message) {
  std::fprintf(stderr, "trainmover-trace: %s\nTry 'trainmover-trace --help'.\n", message.c_str());
  return kExitUsage;
}

// Unreadable files are usage-class trouble (2); files that are not sound
// traces, or not the trace asked for, are bad (1).
int load_error(const std::string& path, const Status& status) {
  std::string text = status.message();
  if (text.rfind("trace ", 0) != 0) text = str_cat(path, ": ", text);
  std::fprintf(stderr, "trainmover-trace: %s\n", text.c_str());
  bool unreadable = status.code() == TM_ERROR_NOT_FOUND || status.code() == TM_ERROR_SYSTEM;
  return unreadable ? kExitUsage : kExitBad;
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

size_t output_bytes(std::span<const record::CallView> calls) {
  size_t n = 0;
  for (const auto& c : calls) n += c.output.size();
  return n;
}

void print_header(const Trace& t) {
  const auto& m = t.meta();
  std::printf("format:      version %u, %s, %zu bytes (body %llu bytes raw)\n",
              record::kTraceVersion, t.compressed() ? "zstd" : "uncompressed", t.file_bytes(),
              static_cast<unsigned long long>(t.header().raw_body_bytes));
  std::printf("job:         %llu\n", static_cast<unsigned long long>(m.job_id));
  std::printf("api:         %s\n", m.api.c_str());
  std::printf("role:        %s\n", m.role.canonical().c_str());
  std::printf("recorded by: slot %d of %d\n", m.slot, m.nslots);
  std::printf("iterations:  %u\n", t.iterations());
  std::printf("calls:       %zu (%zu output bytes)\n", t.calls().size(), output_bytes(t.calls()));
}

}  // namespace

int show_main(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::printf(
        "Usage: trainmover-trace show [--summary] FILE\n"
        "Print a trace's header, then every call per iteration (index, call, output bytes).\n"
        "  --summary   the header and one line per iteration only\n");
    return kExitOk;
  }
  bool summary = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--summary") {
      summary = true;
    } else if (a.starts_with("-")) {
      return usage_error(str_cat("show: unknown option '", a, "'"));
    } else {
      files.emplace_back(a);
    }
  }
  if (files.size() != 1) return usage_error("show: give exactly one trace file");
  auto trace = Trace::load(files[0]);
  if (!trace.ok()) return load_error(files[0], trace.status());
  std::printf("trace:       %s\n", files[0].c_str());
  print_header(trace.value());
  for (uint32_t it = 0; it < trace->iterations(); ++it) {
    auto calls = trace->iteration(it);
    std::printf("iteration %u: %zu calls, %zu output bytes\n", it, calls.size(),
                output_bytes(calls));
    if (summary) continue;
    for (const auto& c : calls) {
      std::printf("  %4u  %s -> %zu bytes\n", c.info.index,
                  api::describe_call(c.info, trace->meta().api).c_str(), c.output.size());
    }
  }
  return kExitOk;
}

int check_main(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::printf(
        "Usage: trainmover-trace check [--job ID] [--role ROLE] [--api NAME] FILE...\n"
        "Verify each trace: header, every record and the file checksum, and optionally\n"
        "that it is of job ID, of role ROLE (e.g. stage=first,tp=0) and of api NAME.\n"
        "Exit status: 0 all sound, 1 one is not, 2 usage error or unreadable file.\n");
    return kExitOk;
  }
  record::TraceExpect expect;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    bool has_value = i + 1 < argc;
    if ((a == "--job" || a == "--role" || a == "--api") && !has_value) {
      return usage_error(str_cat("check: ", a, " needs a value"));
    }
    if (a == "--job") {
      auto id = parse_int(argv[++i], 0, INT64_MAX);
      if (!id.ok()) return usage_error(str_cat("check: --job: ", id.status().message()));
      expect.job_id = static_cast<uint64_t>(id.value());
    } else if (a == "--role") {
      auto role = record::Role::parse(argv[++i]);
      if (!role.ok()) return usage_error(str_cat("check: --role: ", role.status().message()));
      expect.role = role.value();
    } else if (a == "--api") {
      expect.api = argv[++i];
    } else if (a.starts_with("-")) {
      return usage_error(str_cat("check: unknown option '", a, "'"));
    } else {
      files.emplace_back(a);
    }
  }
  if (files.empty()) return usage_error("check: no trace file given");
  int worst = kExitOk;
  for (const auto& f : files) {
    auto trace = Trace::load(f, expect);
    if (!trace.ok()) {
      worst = std::max(worst, load_error(f, trace.status()));
      continue;
    }
    std::printf("%s: ok: role %s, job %llu, %u iterations, %zu calls\n", f.c_str(),
                trace->meta().role.canonical().c_str(),
                static_cast<unsigned long long>(trace->meta().job_id), trace->iterations(),
                trace->calls().size());
  }
  return worst;
}

namespace {

constexpr size_t kMaxListed = 20;

// Prints how a and b differ; returns the number of differences found.
size_t print_differences(const Trace& a, const Trace& b) {
  size_t n = 0;
  auto field = [&](const char* name, const std::string& x, const std::string& y) {
    if (x == y) return;
    ++n;
    std::printf("%s: %s | %s\n", name, x.c_str(), y.c_str());
  };
  field("job", str_cat(a.meta().job_id), str_cat(b.meta().job_id));
  field("api", a.meta().api, b.meta().api);
  field("role", a.meta().role.canonical(), b.meta().role.canonical());
  field("nslots", str_cat(a.meta().nslots), str_cat(b.meta().nslots));
  field("iterations", str_cat(a.iterations()), str_cat(b.iterations()));
  uint32_t iterations = std::max(a.iterations(), b.iterations());
  size_t listed = 0;
  for (uint32_t it = 0; it < iterations; ++it) {
    auto x = a.iteration(it), y = b.iteration(it);
    for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
      std::string dx = i < x.size() ? api::describe_call(x[i].info, a.meta().api) : "(none)";
      std::string dy = i < y.size() ? api::describe_call(y[i].info, b.meta().api) : "(none)";
      bool same_call = i < x.size() && i < y.size() && x[i].info == y[i].info;
      bool same_output = same_call && std::equal(x[i].output.begin(), x[i].output.end(),
                                                 y[i].output.begin(), y[i].output.end());
      if (same_output) continue;
      ++n;
      if (++listed > kMaxListed) continue;
      if (same_call) {
        std::printf("iteration %u, call %zu: %s: outputs differ\n", it, i, dx.c_str());
      } else {
        std::printf("iteration %u, call %zu: %s | %s\n", it, i, dx.c_str(), dy.c_str());
      }
    }
  }
  if (listed > kMaxListed) std::printf("... %zu more differing calls\n", listed - kMaxListed);
  return n;
}

}  // namespace

int diff_main(int argc, char** argv) {
  if (wants_help(argc, argv)) {
    std::printf(
        "Usage: trainmover-trace diff A B\n"
        "Compare two traces: job, api, role, slots, iterations, then call by call (op,\n"
        "datatype, count, root/peer, output bytes). The recording slot and compression\n"
        "are not compared. Exit status: 0 identical, 1 different, 2 usage error or a\n"
        "file that is unreadable; 1 also when a file is not a sound trace.\n");
    return kExitOk;
  }
  if (argc != 3) return usage_error("diff: give exactly two trace files");
  auto a = Trace::load(argv[1]);
  if (!a.ok()) return load_error(argv[1], a.status());
  auto b = Trace::load(argv[2]);
  if (!b.ok()) return load_error(argv[2], b.status());
  size_t n = print_differences(a.value(), b.value());
  if (n == 0) {
    std::printf("identical: %zu calls in %u iterations\n", a->calls().size(), a->iterations());
    return kExitOk;
  }
  std::printf("%zu differences\n", n);
  return kExitBad;
}

}  // namespace trainmover::trace_tool
