// Communicator: a slot-addressed collective communicator (the C++ core of
// the C API in trainmover.h; see there for the semantics of each call).
//
// Construction rendezvouses through the store, connects the ring and starts
// the progress engine. Calls block the calling thread until done; one thread
// at a time may call. Results depend only on slot numbers.
//
// Membership switch (docs/two-phase-switch.md): the process serving a slot
// can be replaced while the others keep theirs. A standby
// (create_standby) gets a slot from a view (join); the processes of the
// current view are told the same view (prepare_switch), and those whose
// links change open them in the background (phase 1). At an iteration
// boundary every process calls switchover(epoch) (phase 2): the processes
// named in the view's delta swap links, the others only move their links to
// the new epoch, and the leaver closes. Operation numbering restarts in each
// epoch, so a joiner needs no history.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "comm/algorithm.h"
#include "comm/collective_op.h"
#include "comm/collective_plan.h"
#include "comm/comm_groups.h"
#include "comm/config.h"
#include "comm/endpoint.h"
#include "comm/engine.h"
#include "comm/p2p_op.h"
#include "comm/peers.h"
#include "comm/staging.h"
#include "comm/switch_wait_op.h"
#include "comm/view.h"
#include "common/secret.h"
#include "rendezvous/store.h"
#include "transport/transport.h"

namespace trainmover {

class Communicator {
 public:
  static Result<std::unique_ptr<Communicator>> create(const CommConfig& config);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // A process that serves no slot yet: it listens (endpoint() says where)
  // until join() gives it one. config.slot is ignored.
  static Result<std::unique_ptr<Communicator>> create_standby(const CommConfig& config);

  // ---- membership switch ----
  // This process as a view names it.
  const Endpoint& endpoint() const { return self_; }
  uint64_t epoch() const { return epoch_; }
  // Phase 1 on a process of the current view; does not block. `next` must
  // have a later epoch and keep this process in its slot, or leave it out
  // (this process is then a leaver). Replaces an earlier prepared view.
  Status prepare_switch(const View& next);
  // Phase 1 on a standby: takes the slot `next` gives it and connects to its
  // new peers in the background (driven by wait_prepared / switchover).
  Status join(const View& next);
  // Until the links this process opens for the prepared view are up; ok at
  // once when it opens none. An error names the joining slot that failed:
  // the job can keep running on the current view.
  Status wait_prepared();
  // Phase 2. Every process of the old and the new view calls it at the same
  // point between operations. After it, this process is in `epoch` (or, for
  // a leaver, out of the communicator: every later call fails). An error
  // (a joiner missing) leaves the communicator failed in the new epoch,
  // naming the slot, ready for another switch.
  Status switchover(uint64_t epoch);
  // Views in the rendezvous store (comm/view_record.h), for callers that
  // coordinate a switch themselves. fetch_view(0) reads the first view as
  // slot 0 published it once connected, else assembles it from the endpoint
  // records (one store read per slot); later views are read as published,
  // waiting up to connect_timeout_s for them. publish_view() fails when the epoch
  // already has a different view (view_record.h: one epoch, one view).
  Result<View> fetch_view(uint64_t epoch);
  Status publish_view(const View& view);
  // The view of `epoch` if one is published already (one store read, no
  // wait), nullopt if not.
  Result<std::optional<View>> published_view(uint64_t epoch);
  // Bytes of data buffers (staging) allocated; fixed at creation: a switch
  // allocates none.
  size_t data_buffer_bytes() const { return staging_.slots() * staging_.slot_bytes(); }
  // Links this process has opened and closed so far (comm/link_counters.h):
  // the difference across a switch is what the switch changed here. With
  // config.link_counters, that shared count.
  LinkCounts link_counts() const { return link_counters_->read(); }

  int slot() const { return config_.slot; }
  int nslots() const { return config_.nslots; }
  const CommConfig& config() const { return config_; }
  // The status of the last failed call (ok if none failed).
  const Status& last_failure() const { return last_failure_; }

  Status allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                   tm_redop_t op);
  Status reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, tm_datatype_t type,
                        tm_redop_t op);
  Status allgather(const void* sendbuf, void* recvbuf, size_t sendcount, tm_datatype_t type);
  Status broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type, int root);
  Status barrier();
  Status send(const void* buf, size_t count, tm_datatype_t type, int peer);
  Status recv(void* buf, size_t count, tm_datatype_t type, int peer);

  // ---- abort (the C API's tm_comm_abort; see trainmover.h for the contract) ----
  // Any thread, also while another is inside a call (not during or after
  // destruction). Fails the communicator with TM_ERROR_ABORTED on its
  // progress thread, which ends the operation in flight and tells the peers.
  // Lock order: abort_mutex_, then the engine's own.
  Status abort();
  // The same with the failure to report: the runtime's worker (lib/worker)
  // ends every collective of a job in recovery with why it recovers; a
  // switch then clears the failure. A communicator already failed keeps its
  // first failure.
  Status abort(const Status& why);

  // ---- groups (docs/groups.md; the C API's tm_comm_split, see trainmover.h) ----
  static constexpr int kNoColor = -1;  // TM_SPLIT_NOCOLOR
  // MPI_Comm_split over this communicator, collective: every slot calls it,
  // and calls its splits in the same order. The slots that give the same
  // color >= 0 form one group, whose slots follow (key, slot of this one);
  // kNoColor gives no group (a null result). The group is a communicator of
  // its own, in this one's family: it aborts and switches with it. Every
  // slot gets the same error for a bad color (any slot's). On a standby: no
  // collective; the group is a standby, sized from the job's record of the
  // split, that join_groups() joins; `ring_pool`, when given, is the rings
  // made for its links (else it shares this one's).
  Result<std::unique_ptr<Communicator>> split(
      int color, int key, std::shared_ptr<transport::shm::RingPool> ring_pool = nullptr);
  // The parent's switch carried to its groups, each call after this
  // communicator's own (join, prepare_switch, wait_prepared, switchover):
  // each joiner of a group offers its endpoint for the new epoch, and the
  // group's view of that epoch is its view before with every replaced
  // slot taken from its joiner's offer (any number of them; assembled by
  // every joiner and every live member, the same bytes); a group
  // without a joiner gets its view again under the new epoch. So every
  // group switches in the parent's epoch and only links that touch a
  // replaced slot change. Recursive (groups of groups). join_groups()
  // runs on the joiner after join(): `slot` is the parent slot it joined,
  // `base_epoch` the parent's epoch the new view replaces (epoch - 1 in
  // tm_comm_join).
  Status join_groups(uint64_t epoch, int slot, uint64_t base_epoch);
  Status prepare_groups(const View& next);
  Status wait_groups_prepared();
  Status switchover_groups(uint64_t epoch);
  // Whether this communicator is a group split from `parent`.
  bool is_group_of(const Communicator& parent) const;
  // For a group: how it was split from its parent (seq, color, key);
  // TM_ERROR_INVALID_ARGUMENT for a communicator that is no group.
  Result<GroupSplit> split_of() const;

 private:
  enum class OpKind : uint8_t {
    kAllreduce = 1,
    kReduceScatter,
    kAllgather,
    kBroadcast,
    kBarrier,
    kP2P
  };

  enum class SwitchRole : uint8_t { kNone, kStayer, kJoiner, kLeaver };
  // Endpoint records of the first epoch are in the store; later views carry
  // every endpoint themselves.
  static constexpr uint64_t kFirstEpoch = 0;

  Communicator(CommConfig config, JobSecret secret, std::unique_ptr<rendezvous::Store> store);
  static Result<std::unique_ptr<Communicator>> open(const CommConfig& config);
  Status start(uint64_t instance_id);
  void add_spare_ring();
  Status connect();
  View known_view(const View& next);
  Status leave();
  void adopt(const View& view);
  Status check_live() const;
  Status catch_up_links();
  Status join_ring();
  Status publish_first_view();
  Status run_collective(OpKind kind, const void* in, void* out, tm_datatype_t type, tm_redop_t op,
                        const char* name);
  Status run_p2p(bool is_send, void* buf, size_t count, tm_datatype_t type, int peer);
  Result<Endpoint> endpoint_of(int slot);
  PlanGeometry geometry(tm_datatype_t type, size_t segment_bytes) const;
  PlanGeometry geometry(tm_datatype_t type) const;  // config_.segment_bytes
  // The ring's allgather: copy_segment_bytes(config_).
  PlanGeometry allgather_geometry(tm_datatype_t type) const;
  // The algorithm of a call of `kind` whose larger buffer has `bytes` bytes.
  Algorithm algorithm_for(CollectiveKind kind, size_t bytes) const;
  // Fills plan_ with the allgather the size calls for (also the barrier's).
  void plan_allgather_for(tm_datatype_t type, size_t sendcount, bool in_place);
  // A reduce_scatter by recursive doubling (its allreduce) or halving into
  // reduce_scatter_scratch_, then this slot's block of it.
  Status reduce_scatter_through_scratch(Algorithm algorithm, const void* sendbuf, void* recvbuf,
                                        size_t recvcount, tm_datatype_t type, tm_redop_t op);
  // Whether a reduce_scatter scratch of `bytes` is freed after its call.
  bool frees_reduce_scatter_scratch(size_t bytes) const;
  uint64_t tag(OpKind kind, uint64_t seq, tm_datatype_t type, tm_redop_t op) const;
  Status finish_call(Status status);
  void shut_down();
  CommConfig group_config(uint64_t seq, int color, int slot, int nslots) const;
  std::string split_key(uint64_t seq) const;
  Result<std::unique_ptr<Communicator>> split_standby(
      uint64_t seq, int color, int key, std::shared_ptr<transport::shm::RingPool> ring_pool);
  Status offer_group_endpoint(uint64_t epoch, int slot);
  Result<View> assemble_group_view(View before, uint64_t epoch, const std::vector<int>& replaced);

  CommConfig config_;
  JobSecret secret_;
  std::unique_ptr<rendezvous::Store> store_;
  std::shared_ptr<LinkCounters> link_counters_;  // outlives peers_
  // Held by abort() while it uses engine_, and by shut_down() while it stops
  // and releases it: the only member another thread touches.
  std::mutex abort_mutex_;
  std::unique_ptr<Engine> engine_;  // its loop outlives transport_ and the links
  PeerTable peers_;
  StagingPool staging_;
  std::unique_ptr<transport::Transport> transport_;
  CollectiveOp collective_op_;
  P2POp p2p_op_;
  CollectivePlan plan_;
  // Caller-thread state.
  uint64_t collectives_ = 0;
  std::vector<uint64_t> sends_to_;
  std::vector<uint64_t> recvs_from_;
  std::vector<std::optional<Endpoint>> endpoints_;
  std::vector<uint8_t> barrier_bytes_;
  // The whole buffer of a reduce_scatter run by recursive doubling or halving.
  // Chosen by size, it is at most the larger of the two thresholds, and a
  // larger one (thresholds raised only for that call's size) is freed after
  // the call. Forced by TRAINMOVER_ALGO, every call runs through it, so it is
  // kept at the largest call's size rather than made again at each call.
  std::vector<std::byte> reduce_scatter_scratch_;
  Status last_failure_;
  // Membership (caller thread).
  Endpoint self_;
  uint64_t epoch_ = 0;
  std::optional<View> next_;
  SwitchRole role_ = SwitchRole::kNone;
  std::vector<SwitchWaitOp::Target> join_targets_;
  bool opens_links_ = false;  // the prepared view gives this stayer links to open
  // A stayer outside the delta switched over without waking its engine; its
  // links move to the new epoch when its next operation starts.
  bool links_behind_ = false;
  bool left_ = false;
  // Groups (communicator_groups.cc): this one's, and its place in its parent's.
  std::shared_ptr<GroupFamily> groups_ = std::make_shared<GroupFamily>();
  std::unique_ptr<GroupMembership> membership_;
  uint64_t splits_ = 0;  // splits called so far (caller thread)
};

}  // namespace trainmover
