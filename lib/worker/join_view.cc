#include "worker/join_view.h"

#include <algorithm>

#include "comm/endpoint.h"

namespace trainmover::worker {

Result<JoinPlan> join_plan(const control::Order& order) {
  const nlohmann::json& v = order.view;
  if (!v.is_object() || !v.contains("joining") || !v["joining"].is_array() ||
      !v.contains("base_epoch") || !v["base_epoch"].is_number_unsigned())
    return error(TM_ERROR_PROTOCOL, "the ", control::order_kind_name(order.kind),
                 " order carries no joining slots and base epoch");
  JoinPlan plan;
  plan.epoch = order.epoch;
  plan.base_epoch = v["base_epoch"].get<uint64_t>();
  for (const auto& s : v["joining"]) {
    if (!s.is_number_integer()) return error(TM_ERROR_PROTOCOL, "a joining slot is not a number");
    plan.joining.push_back(s.get<int>());
  }
  if (plan.epoch <= plan.base_epoch)
    return error(TM_ERROR_PROTOCOL, "epoch ", plan.epoch, " is not after its base epoch ",
                 plan.base_epoch);
  return plan;
}

std::string join_key(const std::string& comm_name, uint64_t epoch, int comm_slot) {
  return str_cat("trainmover/join/", comm_name, "/", epoch, "/", comm_slot);
}

Status offer_endpoint(rendezvous::Store& store, const Communicator& comm, uint64_t epoch,
                      int comm_slot) {
  return store.set(join_key(comm.config().name, epoch, comm_slot),
                   encode_endpoint(comm.endpoint()));
}

namespace {
Result<std::string> wait_offer(rendezvous::Store& store, const std::string& key, Deadline deadline,
                               const std::function<bool()>& superseded) {
  while (true) {
    Duration slice = std::min<Duration>(deadline.remaining(), std::chrono::milliseconds(100));
    auto record = store.get(key, slice);
    if (record.ok() || record.status().code() != TM_ERROR_TIMEOUT) return record;
    if (deadline.expired()) return record.status().with_context("waiting for a joiner's endpoint");
    if (superseded && superseded())
      return error(TM_ERROR_ABORTED, "superseded by a new order while waiting for ", key);
  }
}
}  // namespace

Result<View> publish_next_view(rendezvous::Store& store, Communicator& comm,
                               const std::vector<int>& job_slots, const JoinPlan& plan,
                               Deadline deadline, const std::function<bool()>& superseded) {
  TM_ASSIGN_OR_RETURN(View view, comm.fetch_view(plan.base_epoch));
  view.epoch = plan.epoch;
  for (size_t s = 0; s < job_slots.size(); ++s) {
    if (std::find(plan.joining.begin(), plan.joining.end(), job_slots[s]) == plan.joining.end())
      continue;
    const std::string key = join_key(comm.config().name, plan.epoch, static_cast<int>(s));
    TM_ASSIGN_OR_RETURN(std::string record, wait_offer(store, key, deadline, superseded));
    TM_ASSIGN_OR_RETURN(view.slots[s], parse_endpoint(record));
  }
  TM_RETURN_IF_ERROR(comm.publish_view(view));
  return view;
}

Result<View> next_view(rendezvous::Store& store, Communicator& comm,
                       const std::vector<int>& job_slots, const JoinPlan& plan, Deadline deadline,
                       const std::function<bool()>& superseded) {
  TM_ASSIGN_OR_RETURN(std::optional<View> published, comm.published_view(plan.epoch));
  if (published) return std::move(*published);
  return publish_next_view(store, comm, job_slots, plan, deadline, superseded);
}

}  // namespace trainmover::worker
