// PeerTable: what a communicator knows about every other slot — its link,
// a connect in progress, what its heartbeats said — and the communicator's
// failure state.
//
// Connections: for a pair of slots, either side may connect when it needs
// the link. When both do at once, the connection opened by the lower slot
// wins (on_incoming decides, consistently on both sides).
//
// Failure: the first failure recorded (a link that broke, a timeout, or an
// abort from a peer) is the communicator's failure. Recording it detaches
// every link from user buffers (Link::cancel_pending) and sends an abort
// naming the slot at fault to every peer, which records it in turn — so a
// slot that is not a neighbour of a dead process learns of it within
// microseconds, with the dead slot's number.
//
// Epochs (the two-phase switch, docs/two-phase-switch.md): links belong to
// the current membership epoch. prepare_next() lets the processes a new view
// names open links of the next epoch while the current ones carry on;
// switch_to_next() swaps them in, moves every link to the new epoch and
// forgets the old epoch's failure. Incoming handshakes are accepted only for
// the current epoch (from the process the view names, when known) or for the
// prepared one (only the links this process must open); messages of older
// epochs are dropped, an abort of a newer epoch is kept until the switch.
//
// Threading: engine thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/link_counters.h"
#include "common/clock.h"
#include "common/status.h"
#include "transport/link.h"
#include "transport/transport.h"

namespace trainmover {

class PeerTable final : public transport::TransportListener, public transport::LinkObserver {
 public:
  struct Liveness {
    bool heard = false;  // any heartbeat yet
    Clock::time_point last_heard;
    uint64_t ops_entered = 0;  // from its last heartbeat
    int waiting_on = -1;
  };

  PeerTable(int nslots, int slot);
  void set_transport(transport::Transport* transport) { transport_ = transport; }
  // Where links opened and closed are counted (comm/link_counters.h); not
  // owned, outlives this table; null: not counted.
  void set_link_counters(LinkCounters* counters) { counters_ = counters; }

  int nslots() const { return static_cast<int>(peers_.size()); }
  int slot() const { return slot_; }
  uint64_t epoch() const { return epoch_; }

  // A standby takes `slot` and starts in `epoch`, where `instances` (index:
  // slot) are the processes it may link with.
  void start_as(int slot, uint64_t epoch, std::vector<uint64_t> instances);
  // Phase 1: accept links of `epoch` from the processes `instances` names
  // for the peer slots in `open`. Replaces an earlier prepared epoch.
  void prepare_next(uint64_t epoch, std::vector<int> open, std::vector<uint64_t> instances);
  bool next_prepared() const { return next_.active; }
  uint64_t next_epoch() const { return next_.epoch; }
  // Peer slots of the prepared epoch that have no live link yet.
  std::vector<int> next_missing() const;
  // Why the prepared epoch cannot be switched to (a joiner died); ok if it can.
  const Status& next_error() const { return next_.error; }
  // Phase 2 (see above). Fails, after switching, when a link to open is
  // missing: the communicator is then failed in the new epoch.
  Status switch_to_next();

  // The link to `slot`, or nullptr when there is none (yet). It may be dead.
  transport::Link* link(int slot) const;
  // Connects to `slot` unless a link exists or is being made.
  void request_link(int slot, const std::string& endpoint, uint64_t instance_id);
  bool connecting(int slot) const { return peers_[static_cast<size_t>(slot)].connecting; }
  // Why the last connect to `slot` failed; ok when none did.
  const Status& connect_error(int slot) const;

  const Status& failure() const { return failure_; }
  bool failed() const { return !failure_.ok(); }
  void fail(const Status& why);

  const Liveness& liveness(int slot) const { return peers_[static_cast<size_t>(slot)].liveness; }
  // What this process tells its peers in heartbeats.
  void set_progress(uint64_t ops_entered, int waiting_on);
  uint64_t ops_entered() const { return ops_entered_; }
  void send_heartbeats();

  // Goodbye on every link after its queued data; then all_flushed() turns true.
  void close_all();
  bool all_flushed() const;
  // Reads and drops what peers have sent but nobody will receive, so that
  // closing sends FIN, not a reset that could overtake our abort or goodbye.
  void drain_all();
  // Releases links and the transport's pending handshakes (not during dispatch).
  void clear();

  // transport::TransportListener
  transport::Verdict on_incoming(const transport::Hello& peer) override;
  void on_link_ready(std::unique_ptr<transport::Link> link, const transport::Hello& peer) override;
  void on_connect_failed(int slot, const Status& status, transport::Verdict verdict) override;
  // transport::LinkObserver
  void on_control(transport::Link& link, const transport::ControlMessage& message) override;
  void on_link_failed(transport::Link& link) override;

 private:
  struct Peer {
    std::unique_ptr<transport::Link> link;
    bool connecting = false;
    Status connect_error;
    Liveness liveness;
  };
  struct NextEpoch {
    bool active = false;
    uint64_t epoch = 0;
    std::vector<int> open;
    std::vector<uint64_t> instances;  // index: slot
    std::vector<std::unique_ptr<transport::Link>> links;
    Status error;
  };
  bool valid_peer(int slot) const { return slot >= 0 && slot < nslots() && slot != slot_; }
  Peer& peer(int slot) { return peers_[static_cast<size_t>(slot)]; }
  bool is_current(const transport::Link& link) const;
  bool is_next(const transport::Link& link) const;
  bool opens_next(int slot) const;
  transport::Verdict incoming_current(const transport::Hello& hello);
  transport::Verdict incoming_next(const transport::Hello& hello);
  void on_next_failed(int slot, const Status& why);
  void retire_replaced();
  void retire(std::unique_ptr<transport::Link> link);
  void count_opened() {
    if (counters_ != nullptr) counters_->count_opened();
  }
  // Counts the links that exist, before they are dropped.
  void count_closed(const std::unique_ptr<transport::Link>& link) {
    if (link && counters_ != nullptr) counters_->count_closed();
  }
  void count_closed(const std::vector<std::unique_ptr<transport::Link>>& links) {
    for (const auto& link : links) count_closed(link);
  }
  void prune_retiring();

  int slot_;
  uint64_t epoch_ = 0;
  std::vector<uint64_t> instances_;  // index: slot; 0 while unknown
  transport::Transport* transport_ = nullptr;
  LinkCounters* counters_ = nullptr;
  std::vector<Peer> peers_;
  NextEpoch next_;
  // Links to processes replaced at a switch, closing gracefully: a planned
  // leaver may still be finishing the operation before the switch, so its
  // link sends what is queued, says goodbye, and reads until the leaver
  // closes (no reset that could cut the leaver's last frames).
  struct Retiring {
    std::unique_ptr<transport::Link> link;
    Clock::time_point since;
  };
  std::vector<Retiring> retiring_;
  std::optional<transport::ControlMessage> deferred_abort_;  // of a newer epoch
  Status failure_;
  uint64_t ops_entered_ = 0;
  int waiting_on_ = -1;
};

}  // namespace trainmover
