// ViewPublisher: where the coordinator publishes each epoch's view before it
// orders the switch to it. The coordinator is the only publisher of views;
// an implementation must still refuse to replace a view of an epoch that
// holds a different one (the store's compare-and-set), so two coordinators
// of one job, by mistake or in a split brain, can never publish two
// different views of the same epoch.
//
// A view is {"epoch": E, "slots": [{"slot", "pid", "host", "instance"}...]}.
//
// Threading: publish() is called from the coordinator's loop thread only,
// and may block for at most the time a store round trip takes.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace trainmover::control {

class ViewPublisher {
 public:
  virtual ~ViewPublisher() = default;
  // Publishes `view` as the view of `epoch`. Fails with TM_ERROR_PROTOCOL
  // when the epoch already holds a different view; publishing the same view
  // again succeeds.
  virtual Status publish(uint64_t epoch, const nlohmann::json& view) = 0;
};

// Views kept in the coordinator's memory, with the same compare-and-set
// rule: what a coordinator without a store (tests, a job whose ranks learn
// views from their orders only) uses.
class MemoryViewPublisher final : public ViewPublisher {
 public:
  Status publish(uint64_t epoch, const nlohmann::json& view) override {
    auto [it, inserted] = views_.emplace(epoch, view);
    if (!inserted && it->second != view)
      return error(TM_ERROR_PROTOCOL, "epoch ", epoch, " already holds a different view");
    return Status::Ok();
  }

 private:
  std::map<uint64_t, nlohmann::json> views_;
};

}  // namespace trainmover::control
