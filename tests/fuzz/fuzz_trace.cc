// libFuzzer target: the trace parser (record::Trace::parse) and the replay
// cursor. With the reseal flag every CRC is fixed first, so mutations reach
// the checks behind the checksums. Invariants: a rejection is one of the
// documented codes; an accepted trace walks cleanly with the cursor and
// re-encodes to a trace of the same content.
#include "record/trace.h"
#include "trace_seeds.h"

using namespace trainmover;  // NOLINT: fuzz target

namespace {

void check_accepted(const record::Trace& t) {
  if (t.calls().size() != t.header().calls) __builtin_trap();
  record::TraceCursor cursor(t);
  record::TraceBuilder again(t.meta());
  for (uint32_t it = 0; it < t.iterations(); ++it) {
    if (!cursor.begin_iteration().ok()) __builtin_trap();
    for (size_t i = 0; i < t.iteration(it).size(); ++i) {
      auto call = cursor.next();
      if (!call.ok() || call.value()->info.iteration != it) __builtin_trap();
      if (!again.append(call.value()->info, call.value()->output).ok()) __builtin_trap();
    }
    if (cursor.next().ok() || !cursor.end_iteration().ok()) __builtin_trap();
  }
  if (cursor.begin_iteration().ok()) __builtin_trap();
  auto file = again.finish(t.iterations(), record::Compression::kNone);
  if (!file.ok()) __builtin_trap();
  auto reparsed = record::Trace::parse(std::move(file.value()));
  if (!reparsed.ok() || !reparsed->same_content(t)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (data[0] & fuzz::kTraceReseal) fuzz::reseal_trace(bytes);
  record::TraceExpect expect;
  if (data[0] & fuzz::kTraceExpect) {
    expect.job_id = fuzz::kTraceJob;
    expect.role = record::Role{record::Stage::kFirst, {}};
  }
  const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
  auto trace = record::Trace::parse(std::vector<std::byte>(p, p + bytes.size()), expect,
                                    fuzz::kTraceMaxBody);
  if (!trace.ok()) {
    tm_result_t code = trace.status().code();
    if (code != TM_ERROR_PROTOCOL && code != TM_ERROR_INVALID_ARGUMENT &&
        code != TM_ERROR_UNSUPPORTED)
      __builtin_trap();
    if (trace.status().message().empty()) __builtin_trap();
    return 0;
  }
  check_accepted(trace.value());
  return 0;
}
