// The view a communicator switches to in a recovery's epoch, composed the
// same way by every member, so that a recovery may replace several slots of
// one communicator at once (two joiners of the world communicator would
// otherwise publish two different views of one epoch, and the store's
// compare-and-set would refuse the second).
//
// The view of the recovery's epoch E is the view of its base epoch (the
// job's committed epoch, which every communicator is at) with the endpoint
// of each joining slot replaced by its joiner's. Each joiner writes its
// endpoint under join_key() when promoted, before it acks; the coordinator
// orders the prepare only once every joiner acked. Every member composes
// and publishes the same view (publishing it again succeeds), stayers in
// their prepare, joiners in their promotion, so a communicator whose members
// are all joiners (a whole pipeline stage replaced) gets its view too.
// A joiner joins in its promotion, once it has every joiner's offer: the
// stayers, which prepare after every joiner acked, may dial it at once.
//
// Threading: none; the training thread calls these.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "common/clock.h"
#include "common/status.h"
#include "control/control_protocol.h"
#include "rendezvous/store.h"

namespace trainmover::worker {

// A recovery's epoch as its orders carry it (Order::view: "joining",
// "base_epoch", coordinator.cc's view_json).
struct JoinPlan {
  uint64_t epoch = 0;
  uint64_t base_epoch = 0;
  std::vector<int> joining;  // job slots
};
Result<JoinPlan> join_plan(const control::Order& order);

std::string join_key(const std::string& comm_name, uint64_t epoch, int comm_slot);

// A joiner: offers its endpoint of `comm` as slot `comm_slot` in `epoch`.
Status offer_endpoint(rendezvous::Store& store, const Communicator& comm, uint64_t epoch,
                      int comm_slot);

// Composes `comm`'s view of plan.epoch (`job_slots`: the job slot of each of
// its slots) and publishes it. Waits for each joiner's offer until
// `deadline`, or until `superseded` says to give up (checked every 100 ms).
Result<View> publish_next_view(rendezvous::Store& store, Communicator& comm,
                               const std::vector<int>& job_slots, const JoinPlan& plan,
                               Deadline deadline, const std::function<bool()>& superseded);

// A stayer's view of plan.epoch: the one already published, read in one
// store call (the joiners publish theirs before the stayers are told to
// prepare, and an epoch never has two views: view_record.h), or else the
// one publish_next_view composes.
Result<View> next_view(rendezvous::Store& store, Communicator& comm,
                       const std::vector<int>& job_slots, const JoinPlan& plan, Deadline deadline,
                       const std::function<bool()>& superseded);

}  // namespace trainmover::worker
