#include "commands.h"

#include <sys/stat.h>

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/call_names.h"
#include "cli/command_line.h"
#include "common/parse.h"
#include "record/trace.h"

namespace trainmover::trace_tool {
namespace {

using record::Trace;

// Unreadable files are usage-class trouble (2); files that are not sound
// traces, or not the trace asked for, are bad (1).
int load_error(const std::string& path, const Status& status) {
  std::string text = status.message();
  if (text.rfind("trace ", 0) != 0) text = str_cat(path, ": ", text);
  std::fprintf(stderr, "trainmover-trace: %s\n", text.c_str());
  bool unreadable = status.code() == TM_ERROR_NOT_FOUND || status.code() == TM_ERROR_SYSTEM;
  return unreadable ? kExitUsage : kExitBad;
}

// Trace::load, where a path that is not a regular file (a directory, a
// device) cannot be read as one, like a missing file.
Result<Trace> load_trace(const std::string& path, const record::TraceExpect& expect = {}) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return error(TM_ERROR_SYSTEM, "not a regular file");
  return Trace::load(path, expect);
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
  bool summary = false;
  std::vector<std::string> files;
  cli::CommandLine command_line(
      "trainmover-trace show", "trainmover-trace show [--summary] FILE",
      "Print a trace's header, then every call per iteration (index, call, output bytes).\n");
  command_line.flag("summary", summary, "the header and one line per iteration only")
      .operands(cli::Operands::kAny, "FILE", files);
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  if (files.size() != 1) return command_line.usage_error("give exactly one trace file");
  auto trace = load_trace(files[0]);
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
  record::TraceExpect expect;
  int64_t job_id = -1;
  std::vector<std::string> files;
  cli::CommandLine command_line(
      "trainmover-trace check",
      "trainmover-trace check [--job ID] [--role ROLE] [--api NAME] FILE...",
      "Verify each trace: header, every record and the file checksum, and optionally\n"
      "that it is of job ID, of role ROLE (e.g. stage=first,tp=0) and of api NAME.\n");
  command_line.integer("job", "ID", 0, INT64_MAX, job_id, "the job the traces must be of")
      .custom(
          "role", "ROLE",
          [&expect](std::string_view text) -> Status {
            TM_ASSIGN_OR_RETURN(expect.role, record::Role::parse(text));
            return Status::Ok();
          },
          "the role the traces must be of")
      .custom(
          "api", "NAME",
          [&expect](std::string_view text) -> Status {
            if (text.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "empty value");
            expect.api = std::string(text);
            return Status::Ok();
          },
          "the api the traces must be of (e.g. nccl)")
      .operands(cli::Operands::kAny, "FILE", files)
      .epilog("Exit status: 0 all sound, 1 one is not, 2 usage error or unreadable file.\n");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  if (job_id >= 0) expect.job_id = static_cast<uint64_t>(job_id);
  if (files.empty()) return command_line.usage_error("no trace file given");
  int worst = kExitOk;
  for (const auto& f : files) {
    auto trace = load_trace(f, expect);
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
  std::vector<std::string> files;
  cli::CommandLine command_line(
      "trainmover-trace diff", "trainmover-trace diff A B",
      "Compare two traces: job, api, role, slots, iterations, then call by call (op,\n"
      "datatype, count, root/peer, output bytes). The recording slot and compression\n"
      "are not compared.\n");
  command_line.operands(cli::Operands::kAny, "FILE", files)
      .epilog(
          "Exit status: 0 identical, 1 different, 2 usage error or a file that is\n"
          "unreadable; 1 also when a file is not a sound trace.\n");
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  if (files.size() != 2) return command_line.usage_error("give exactly two trace files");
  auto a = load_trace(files[0]);
  if (!a.ok()) return load_error(files[0], a.status());
  auto b = load_trace(files[1]);
  if (!b.ok()) return load_error(files[1], b.status());
  size_t n = print_differences(a.value(), b.value());
  if (n == 0) {
    std::printf("identical: %zu calls in %u iterations\n", a->calls().size(), a->iterations());
    return kExitOk;
  }
  std::printf("%zu differences\n", n);
  return kExitBad;
}

}  // namespace trainmover::trace_tool
