#include "api/call_names.h"

#include "comm/datatype.h"

namespace trainmover::api {

using record::TraceOp;

std::string describe_trainmover_call(const record::CallInfo& c) {
  std::string text = record::trace_op_name(c.op);
  if (c.redop != record::kNoRedop) {
    text += str_cat("(", redop_name(static_cast<tm_redop_t>(c.redop)), ")");
  }
  auto op = static_cast<TraceOp>(c.op);
  if (op != TraceOp::kBarrier) {
    text += str_cat(" of ", c.count, " ", datatype_name(static_cast<tm_datatype_t>(c.dtype)));
  }
  if (op == TraceOp::kBroadcast) text += str_cat(", root ", c.peer);
  if (op == TraceOp::kSend) text += str_cat(" to slot ", c.peer);
  if (op == TraceOp::kRecv) text += str_cat(" from slot ", c.peer);
  return text;
}

std::string describe_call(const record::CallInfo& call, const std::string& api) {
  if (api == record::kApiTrainmover) return describe_trainmover_call(call);
  return record::describe_call(call, api);
}

}  // namespace trainmover::api
