// Human-readable calls of the "trainmover" trace api, with the C API's
// names: "allreduce(sum) of 1024 float32", "broadcast of 4 int32, root 0".
// Used by sandbox errors and trainmover-trace.
#pragma once

#include <string>

#include "record/trace_format.h"

namespace trainmover::api {

std::string describe_trainmover_call(const record::CallInfo& call);
// describe_trainmover_call() for the trainmover api, else the generic form.
std::string describe_call(const record::CallInfo& call, const std::string& api);

}  // namespace trainmover::api
