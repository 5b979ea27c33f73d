// Transport: how a communicator gets links to peer slots. One per
// communicator; tcp/ implements it, and shm/, ibverbs/, nccl/ will be
// siblings with the same interface.
//
// Threading: engine thread only. Results come back through TransportListener
// from inside the event loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "transport/handshake.h"
#include "transport/link.h"

namespace trainmover::transport {

class TransportListener {
 public:
  // An authenticated peer of this job and communicator asks for a link in
  // the epoch of its hello. Return kAccepted to take it, the reason for
  // refusing (kWrongEpoch, kRefused...), or kDeferred to be asked again at
  // the next Transport::reconsider_deferred() (until the handshake's
  // deadline). The link gets the hello's epoch.
  virtual Verdict on_incoming(const Hello& peer) = 0;
  // A link is up: either an accepted incoming one or a completed connect().
  virtual void on_link_ready(std::unique_ptr<Link> link, const Hello& peer) = 0;
  // A connect() to `slot` failed. `verdict` is the acceptor's answer when it
  // gave one (kDuplicate: the peer's own link to us wins, wait for it).
  virtual void on_connect_failed(int slot, const Status& status, Verdict verdict) = 0;

 protected:
  ~TransportListener() = default;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Where peers reach this process: "host:port".
  virtual std::string local_endpoint() const = 0;
  // Opens a link to the process serving `slot` at `endpoint`; `instance_id`
  // (0: any) must match the process found there.
  virtual void connect(int slot, const std::string& endpoint, uint64_t instance_id) = 0;
  // The slot and epoch announced in handshakes from now on: a standby takes
  // its slot when it joins, every process the new epoch at a switch. Links
  // opened later start in this epoch; existing ones are not touched.
  virtual void set_identity(int slot, uint64_t epoch) = 0;
  // Asks the listener again about the incoming handshakes it deferred.
  virtual void reconsider_deferred() = 0;
  // Drops an outgoing connect to `slot` still in its handshake.
  virtual void cancel_connect(int slot) = 0;
  // Fails handshakes past their deadline and frees finished ones; call after
  // each batch of events (never from inside one).
  virtual void sweep() = 0;
};

}  // namespace trainmover::transport
