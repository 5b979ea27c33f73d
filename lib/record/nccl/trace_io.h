// The trace file of a role, through lib/record's trace format (api "nccl").
#pragma once

#include <memory>

#include "common/status.h"
#include "record/nccl/replay_book.h"
#include "record/nccl/settings.h"
#include "record/nccl/sink.h"

namespace trainmover::nccl {

// A sink that assembles the trace in memory and writes the file (mode
// 0640, atomically) when the recorder finishes it.
Result<std::unique_ptr<TraceSink>> open_trace_sink(const Settings& settings);
// Loads this role's trace and checks it: format, version, job, role, api,
// then the NCCL entries. Errors say which check failed.
Result<ReplayBook> load_replay_book(const Settings& settings);

}  // namespace trainmover::nccl
