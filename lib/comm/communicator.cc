#include "comm/communicator.h"

#include <cstring>
#include <limits>

#include "comm/algorithm.h"
#include "comm/datatype.h"
#include "comm/doubling_plan.h"
#include "comm/halving_plan.h"
#include "comm/link_wait_op.h"
#include "comm/ring_plan.h"
#include "comm/view_record.h"
#include "common/log.h"
#include "rendezvous/store_factory.h"
#include "transport/transport_factory.h"

namespace trainmover {
namespace {

constexpr size_t kMaxOutstanding = 256;
constexpr Duration kFlushTimeout = std::chrono::milliseconds(500);
constexpr Duration kAcceptTimeout = std::chrono::seconds(10);

Duration grace_for(Duration timeout) {
  return std::min<Duration>(timeout / 2, std::chrono::seconds(5));
}

// Waits for a condition on the engine thread, up to a deadline.
class UntilOp final : public Operation {
 public:
  UntilOp(std::function<bool()> done, Duration timeout)
      : done_(std::move(done)), deadline_(Clock::now() + timeout) {}
  bool poll() override { return done_() || Clock::now() >= deadline_; }
  Status result() const override { return Status::Ok(); }
  Clock::time_point wake_at() const override { return deadline_; }

 private:
  std::function<bool()> done_;
  Clock::time_point deadline_;
};

// The address that reaches the store's host reaches the other nodes too.
Result<std::string> listen_host(const CommConfig& c) {
  TM_ASSIGN_OR_RETURN(auto spec, rendezvous::StoreSpec::parse(c.store_address));
  return transport::choose_listen_host(c.listen_address, c.listen_interface, spec.tcp_address);
}

Status check_buffers(const void* in, const void* out, size_t in_elems, size_t out_elems,
                     tm_datatype_t type) {
  TM_RETURN_IF_ERROR(check_datatype(type));
  size_t size = datatype_size(type);
  size_t limit = std::numeric_limits<size_t>::max() / size;
  if (in_elems > limit || out_elems > limit)
    return error(TM_ERROR_INVALID_ARGUMENT, "count overflows size_t");
  if (in_elems > 0 && in == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "sendbuf is NULL");
  if (out_elems > 0 && out == nullptr) return error(TM_ERROR_INVALID_ARGUMENT, "recvbuf is NULL");
  return Status::Ok();
}

}  // namespace

Communicator::Communicator(CommConfig config, JobSecret secret,
                           std::unique_ptr<rendezvous::Store> store)
    : config_(std::move(config)),
      secret_(std::move(secret)),
      store_(std::move(store)),
      link_counters_(config_.link_counters ? config_.link_counters
                                           : std::make_shared<LinkCounters>()),
      peers_(config_.nslots, config_.slot),
      staging_(static_cast<size_t>(config_.staging_buffers), config_.segment_bytes),
      collective_op_(peers_, staging_, seconds(config_.timeout_s),
                     grace_for(seconds(config_.timeout_s)), kMaxOutstanding),
      p2p_op_(peers_, seconds(config_.timeout_s), grace_for(seconds(config_.timeout_s)),
              seconds(config_.connect_timeout_s), kMaxP2PFrameBytes),
      sends_to_(static_cast<size_t>(config_.nslots)),
      recvs_from_(static_cast<size_t>(config_.nslots)),
      endpoints_(static_cast<size_t>(config_.nslots)),
      barrier_bytes_(static_cast<size_t>(config_.nslots)) {}

namespace {
bool shared_memory_possible(const std::string& transport_kind) {
  return transport_kind == "auto" || transport_kind == "shm";
}
}  // namespace

Result<std::unique_ptr<Communicator>> Communicator::open(const CommConfig& config) {
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::from_hex(config.job_secret));
  TM_ASSIGN_OR_RETURN(auto spec, rendezvous::StoreSpec::parse(config.store_address));
  TM_ASSIGN_OR_RETURN(auto store, rendezvous::open_store(spec, secret, config.job_id,
                                                         seconds(config.connect_timeout_s)));
  CommConfig c = config;
  if (auto id = store->identity(); id && c.slot == -1 && c.nslots == 0) {
    c.slot = id->rank;  // left unset under PMIx: the PMIx server's rank and size
    c.nslots = id->size;
  }
  std::unique_ptr<Communicator> comm(new Communicator(c, std::move(secret), std::move(store)));
  TM_ASSIGN_OR_RETURN(uint64_t instance_id, random_u64());
  TM_RETURN_IF_ERROR(comm->start(instance_id));
  return comm;
}

Result<std::unique_ptr<Communicator>> Communicator::create(const CommConfig& config) {
  TM_RETURN_IF_ERROR(config.validate());
  auto context = [&](const Status& st) {
    return st.with_context(
        str_cat("slot ", config.slot, " joining communicator '", config.name, "'"));
  };
  auto comm = open(config);
  if (!comm.ok()) return context(comm.status());
  Status st = comm.value()->connect();
  if (!st.ok()) return context(st);
  comm.value()->add_spare_ring();  // once the first links have their own rings
  return std::move(comm).value();
}

Result<std::unique_ptr<Communicator>> Communicator::create_standby(const CommConfig& config) {
  CommConfig c = config;
  c.slot = 0;  // any valid slot: a standby has none yet
  TM_RETURN_IF_ERROR(c.validate());
  c.slot = -1;
  auto comm = open(c);
  // A store whose first round is collective (PMIx) counts on standbys too.
  Status st = comm.ok() ? comm.value()->store_->sync(seconds(c.connect_timeout_s)) : comm.status();
  if (!st.ok()) return st.with_context(str_cat("standby for communicator '", config.name, "'"));
  return std::move(comm).value();
}

Status Communicator::start(uint64_t instance_id) {
  TM_ASSIGN_OR_RETURN(engine_, Engine::create());
  TM_ASSIGN_OR_RETURN(std::string host, listen_host(config_));
  transport::TransportOptions to;
  to.job_id = config_.job_id;
  to.comm_id = comm_id_of(config_.name);
  to.epoch = kFirstEpoch;
  to.slot = config_.slot;
  to.instance_id = instance_id;
  to.listen_host = host;
  to.socket_buffer_bytes = config_.socket_buffer_bytes;
  to.max_frame_bytes = std::max(config_.segment_bytes, kMaxP2PFrameBytes);
  to.max_outstanding = kMaxOutstanding;
  to.handshake_timeout = seconds(config_.connect_timeout_s);
  // A real peer proves the secret in one round trip once connected.
  to.accept_timeout = std::min(to.handshake_timeout, kAcceptTimeout);
  if (!config_.ring_pool && config_.slot >= 0 && shared_memory_possible(config_.transport))
    config_.ring_pool = std::make_shared<transport::shm::RingPool>(to.shm_ring_bytes);
  to.ring_pool = config_.ring_pool;
  TM_ASSIGN_OR_RETURN(auto transport,
                      transport::create_transport(config_.transport, engine_->loop(), secret_, to,
                                                  &peers_, &peers_));
  transport_ = std::move(transport);
  peers_.set_transport(transport_.get());
  peers_.set_link_counters(link_counters_.get());
  Engine::Hooks hooks;
  hooks.after_events = [this] { transport_->sweep(); };
  hooks.on_tick = [this] { peers_.send_heartbeats(); };
  hooks.tick_period = seconds(config_.heartbeat_interval_s);
  engine_->start(std::move(hooks));
  self_ = Endpoint{transport_->local_endpoint(), instance_id};
  // A standby is in no epoch until it joins one.
  log_set_identity(config_.slot, config_.slot < 0 ? -1 : static_cast<int64_t>(kFirstEpoch));
  return Status::Ok();
}

// An active communicator adds one spare ring to the pool it shares with its
// groups (start() made it), once its first links are open: a stayer next
// to a leaver then opens its link to the joiner without making a ring on
// the recovery's critical path. A standby draws on what its sandbox made; a
// transport without shared memory has no pool. Only a saving: a ring that
// cannot be made (no memory, no descriptor) is made when needed, or fails
// that link then.
void Communicator::add_spare_ring() {
  if (!config_.ring_pool || config_.slot < 0) return;
  Status st = config_.ring_pool->grow(1);
  if (!st.ok()) log(LogLevel::kWarn, "no spare shared-memory ring: ", st.message());
}

Status Communicator::connect() {
  TM_RETURN_IF_ERROR(
      store_->set(endpoint_key(config_.name, kFirstEpoch, config_.slot), encode_endpoint(self_)));
  TM_RETURN_IF_ERROR(store_->sync(seconds(config_.connect_timeout_s)));
  TM_RETURN_IF_ERROR(join_ring());
  return publish_first_view();
}

// Slot 0 publishes the first view as one record, at creation, off any
// recovery's path: a recovery's every stayer and joiner reads the view of
// the epoch it switches from, and assembling the first one from its N
// endpoint records cost each of them N store round trips (N^2 at the
// store). The store's reads wait for the slots that have not published
// their endpoint yet. Only an optimisation: a store that cannot take it
// (PMIx alone serves one round) or a slot that never comes leaves
// fetch_view(0) to assemble the view as before.
Status Communicator::publish_first_view() {
  if (config_.slot != 0) return Status::Ok();
  auto view =
      fetch_first_view(*store_, config_.name, config_.nslots, seconds(config_.connect_timeout_s));
  Status st = view.status();
  if (st.ok()) {
    view->epoch = kFirstEpoch;
    st = publish_view(*view);
  }
  if (!st.ok())
    log(LogLevel::kInfo, "the first view of '", config_.name,
        "' is not published as one record (a recovery assembles it): ", st.message());
  return Status::Ok();
}

// Links this slot to every slot its algorithms exchange with (comm/algorithm.h).
Status Communicator::join_ring() {
  std::vector<int> peers;
  for (auto [a, b] : algorithm_pairs(config_.algorithms, config_.nslots)) {
    if (a == config_.slot) peers.push_back(b);
    if (b == config_.slot) peers.push_back(a);
  }
  if (peers.empty()) return Status::Ok();
  // The lower slot of each pair connects; the higher one waits for it.
  for (int peer : peers) {
    if (peer < config_.slot) continue;
    TM_ASSIGN_OR_RETURN(Endpoint ep, endpoint_of(peer));
    TM_RETURN_IF_ERROR(engine_->call([&] {
      peers_.request_link(peer, ep.address, ep.instance_id);
      return Status::Ok();
    }));
  }
  LinkWaitOp wait(peers_, peers, seconds(config_.connect_timeout_s));
  return engine_->execute(wait);
}

Result<Endpoint> Communicator::endpoint_of(int slot) {
  auto& cached = endpoints_[static_cast<size_t>(slot)];
  if (!cached) {
    auto record = store_->get(endpoint_key(config_.name, kFirstEpoch, slot),
                              seconds(config_.connect_timeout_s));
    if (!record.ok()) {
      return Status(record.status().code(),
                    str_cat("endpoint of slot ", slot, ": ", record.status().message()), slot);
    }
    TM_ASSIGN_OR_RETURN(cached, parse_endpoint(record.value()));
  }
  return *cached;
}

Communicator::~Communicator() {
  membership_.reset();  // out of the parent's family before anything stops
  shut_down();
}

void Communicator::shut_down() {
  if (engine_ == nullptr) return;
  if (transport_ != nullptr) {
    Status st = engine_->call([this] {
      peers_.close_all();
      return Status::Ok();
    });
    UntilOp flush([this] { return peers_.all_flushed(); }, kFlushTimeout);
    if (st.ok()) (void)engine_->execute(flush);
    (void)engine_->call([this] {
      peers_.drain_all();
      return Status::Ok();
    });
  }
  // Stop the thread first: it is the only user of the links and transport,
  // which deregister from its loop as they go.
  std::lock_guard<std::mutex> lock(abort_mutex_);
  engine_->stop();
  transport_.reset();
  peers_.clear();
  engine_.reset();
}

Status Communicator::abort() {
  return abort(error(TM_ERROR_ABORTED, "communicator '", config_.name, "' was aborted"));
}

Status Communicator::abort(const Status& why) {
  Status st;
  {
    std::lock_guard<std::mutex> lock(abort_mutex_);
    if (engine_ != nullptr) {  // else left: nothing runs any more
      st = engine_->call([&] {
        if (!peers_.failed()) peers_.fail(why);
        return Status::Ok();
      });
    }
  }
  groups_->abort_all(why);  // after abort_mutex_: see comm/comm_groups.h for the order
  return st;
}

Algorithm Communicator::algorithm_for(CollectiveKind kind, size_t bytes) const {
  return choose_algorithm(config_.algorithms, kind, bytes, config_.nslots);
}

void Communicator::plan_allgather_for(tm_datatype_t type, size_t sendcount, bool in_place) {
  const size_t output_bytes = sendcount * static_cast<size_t>(config_.nslots) * datatype_size(type);
  if (algorithm_for(CollectiveKind::kAllgather, output_bytes) == Algorithm::kRing) {
    plan_allgather(plan_, allgather_geometry(type), sendcount, in_place);
  } else {
    plan_allgather_doubling(plan_, geometry(type), sendcount, in_place);
  }
}

PlanGeometry Communicator::geometry(tm_datatype_t type, size_t segment_bytes) const {
  PlanGeometry g;
  g.nslots = config_.nslots;
  g.slot = config_.slot;
  g.segment_elems = std::max<size_t>(1, segment_bytes / datatype_size(type));
  return g;
}

PlanGeometry Communicator::geometry(tm_datatype_t type) const {
  return geometry(type, config_.segment_bytes);
}

PlanGeometry Communicator::allgather_geometry(tm_datatype_t type) const {
  return geometry(type, copy_segment_bytes(config_));
}

uint64_t Communicator::tag(OpKind kind, uint64_t seq, tm_datatype_t type, tm_redop_t op) const {
  return seq << 24 | static_cast<uint64_t>(kind) << 16 | static_cast<uint64_t>(type) << 8 |
         static_cast<uint64_t>(op);
}

Status Communicator::finish_call(Status status) {
  if (!status.ok()) last_failure_ = status;
  return status;
}

Status Communicator::run_collective(OpKind kind, const void* in, void* out, tm_datatype_t type,
                                    tm_redop_t op, const char* name) {
  ++collectives_;
  CollectiveOp::Params p;
  p.plan = &plan_;
  p.buffers.input = static_cast<const std::byte*>(in);
  p.buffers.output = static_cast<std::byte*>(out);
  p.buffers.type = type;
  p.buffers.op = op;
  p.buffers.nslots = config_.nslots;
  p.tag = tag(kind, collectives_, type, op);
  p.number = collectives_;
  p.name = str_cat(name, " #", collectives_);
  collective_op_.prepare(std::move(p));
  TM_RETURN_IF_ERROR(finish_call(catch_up_links()));
  return finish_call(engine_->execute(collective_op_));
}

Status Communicator::allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                               tm_redop_t op) {
  TM_RETURN_IF_ERROR(finish_call(check_live()));
  TM_RETURN_IF_ERROR(finish_call(check_buffers(sendbuf, recvbuf, count, count, type)));
  TM_RETURN_IF_ERROR(finish_call(check_redop(op)));
  switch (algorithm_for(CollectiveKind::kAllreduce, count * datatype_size(type))) {
    case Algorithm::kRing:
      plan_allreduce(plan_, geometry(type), count, op == TM_AVG);
      break;
    case Algorithm::kDoubling:
      plan_allreduce_doubling(plan_, geometry(type), count, op == TM_AVG);
      break;
    case Algorithm::kHalving:
      plan_allreduce_halving(plan_, geometry(type), count, op == TM_AVG);
      break;
  }
  return run_collective(OpKind::kAllreduce, sendbuf, recvbuf, type, op, "allreduce");
}

Status Communicator::reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                    tm_datatype_t type, tm_redop_t op) {
  TM_RETURN_IF_ERROR(finish_call(check_live()));
  size_t n = static_cast<size_t>(config_.nslots);
  if (recvcount > std::numeric_limits<size_t>::max() / n) {
    return finish_call(error(TM_ERROR_INVALID_ARGUMENT, "recvcount * nslots overflows size_t"));
  }
  TM_RETURN_IF_ERROR(finish_call(check_buffers(sendbuf, recvbuf, recvcount * n, recvcount, type)));
  TM_RETURN_IF_ERROR(finish_call(check_redop(op)));
  const Algorithm algorithm =
      algorithm_for(CollectiveKind::kReduceScatter, recvcount * n * datatype_size(type));
  if (algorithm != Algorithm::kRing)
    return reduce_scatter_through_scratch(algorithm, sendbuf, recvbuf, recvcount, type, op);
  plan_reduce_scatter(plan_, geometry(type), recvcount, op == TM_AVG);
  return run_collective(OpKind::kReduceScatter, sendbuf, recvbuf, type, op, "reduce_scatter");
}

// Both leave partial or whole values of the other slots' blocks beside this
// slot's: the scratch holds them. Recursive doubling's log2 N exchanges of
// the whole buffer beat the ring's N - 1 dependent steps while the buffer is
// small; recursive halving's sends what the ring sends in log2 N.
Status Communicator::reduce_scatter_through_scratch(Algorithm algorithm, const void* sendbuf,
                                                    void* recvbuf, size_t recvcount,
                                                    tm_datatype_t type, tm_redop_t op) {
  const size_t esize = datatype_size(type);
  const size_t count = recvcount * static_cast<size_t>(config_.nslots);
  reduce_scatter_scratch_.resize(count * esize);
  if (algorithm == Algorithm::kHalving) {
    plan_reduce_scatter_halving(plan_, geometry(type), recvcount, op == TM_AVG);
  } else {
    plan_allreduce_doubling(plan_, geometry(type), count, op == TM_AVG);
  }
  Status st = run_collective(OpKind::kReduceScatter, sendbuf, reduce_scatter_scratch_.data(), type,
                             op, "reduce_scatter");
  if (st.ok() && recvcount > 0) {
    std::memcpy(
        recvbuf,
        reduce_scatter_scratch_.data() + static_cast<size_t>(config_.slot) * recvcount * esize,
        recvcount * esize);
  }
  if (frees_reduce_scatter_scratch(reduce_scatter_scratch_.size())) {
    reduce_scatter_scratch_.clear();
    reduce_scatter_scratch_.shrink_to_fit();
  }
  return st;
}

// A scratch a forced algorithm needs at every call is kept (freeing it made
// each call allocate and fault in its whole input again); one that only a
// call beyond the size thresholds needed is not.
bool Communicator::frees_reduce_scatter_scratch(size_t bytes) const {
  const AlgorithmPolicy& policy = config_.algorithms;
  if (policy.force == AlgorithmPolicy::Force::kDoubling ||
      policy.force == AlgorithmPolicy::Force::kHalving)
    return false;
  const CollectiveKind kind = CollectiveKind::kReduceScatter;
  return bytes > std::max(policy.doubling_max(kind), policy.halving_max(kind));
}

Status Communicator::allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                               tm_datatype_t type) {
  TM_RETURN_IF_ERROR(finish_call(check_live()));
  size_t n = static_cast<size_t>(config_.nslots);
  if (sendcount > std::numeric_limits<size_t>::max() / n) {
    return finish_call(error(TM_ERROR_INVALID_ARGUMENT, "sendcount * nslots overflows size_t"));
  }
  TM_RETURN_IF_ERROR(finish_call(check_buffers(sendbuf, recvbuf, sendcount, sendcount * n, type)));
  const auto* own = static_cast<const std::byte*>(recvbuf) +
                    sendcount * static_cast<size_t>(config_.slot) * datatype_size(type);
  plan_allgather_for(type, sendcount, sendbuf == own);
  return run_collective(OpKind::kAllgather, sendbuf, recvbuf, type, TM_SUM, "allgather");
}

Status Communicator::broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t type,
                               int root) {
  TM_RETURN_IF_ERROR(finish_call(check_live()));
  if (root < 0 || root >= config_.nslots) {
    return finish_call(error(TM_ERROR_INVALID_ARGUMENT, "root ", root,
                             " is not a slot of this communicator (0..", config_.nslots - 1, ")"));
  }
  const void* in = config_.slot == root ? sendbuf : recvbuf;
  TM_RETURN_IF_ERROR(finish_call(check_buffers(in, recvbuf, count, count, type)));
  const size_t bytes = count * datatype_size(type);
  if (algorithm_for(CollectiveKind::kBroadcast, bytes) == Algorithm::kRing) {
    plan_broadcast(plan_, geometry(type, broadcast_segment_bytes(config_, bytes)), count, root,
                   in == recvbuf);
  } else {
    plan_broadcast_doubling(plan_, geometry(type), count, root, in == recvbuf);
  }
  return run_collective(OpKind::kBroadcast, in, recvbuf, type, TM_SUM, "broadcast");
}

Status Communicator::barrier() {
  TM_RETURN_IF_ERROR(finish_call(check_live()));
  barrier_bytes_[static_cast<size_t>(config_.slot)] = 1;
  plan_allgather_for(TM_UINT8, 1, true);
  uint8_t* own = barrier_bytes_.data() + config_.slot;
  return run_collective(OpKind::kBarrier, own, barrier_bytes_.data(), TM_UINT8, TM_SUM, "barrier");
}

Status Communicator::send(const void* buf, size_t count, tm_datatype_t type, int peer) {
  return run_p2p(true, const_cast<void*>(buf), count, type, peer);
}

Status Communicator::recv(void* buf, size_t count, tm_datatype_t type, int peer) {
  return run_p2p(false, buf, count, type, peer);
}

Status Communicator::run_p2p(bool is_send, void* buf, size_t count, tm_datatype_t type, int peer) {
  TM_RETURN_IF_ERROR(finish_call(check_live()));
  if (peer < 0 || peer >= config_.nslots || peer == config_.slot) {
    return finish_call(error(TM_ERROR_INVALID_ARGUMENT, "peer ", peer,
                             " is not another slot of this communicator (0..", config_.nslots - 1,
                             ", not ", config_.slot, ")"));
  }
  TM_RETURN_IF_ERROR(finish_call(check_buffers(buf, buf, count, count, type)));
  TM_ASSIGN_OR_RETURN(Endpoint ep, endpoint_of(peer));
  uint64_t& seq = (is_send ? sends_to_ : recvs_from_)[static_cast<size_t>(peer)];
  P2POp::Params p;
  p.is_send = is_send;
  p.peer = peer;
  p.data = static_cast<std::byte*>(buf);
  p.bytes = count * datatype_size(type);
  p.tag = tag(OpKind::kP2P, ++seq, type, TM_SUM);
  p.endpoint = std::move(ep);
  p.name = str_cat(is_send ? "send to slot " : "receive from slot ", peer);
  p2p_op_.prepare(std::move(p));
  TM_RETURN_IF_ERROR(finish_call(catch_up_links()));
  return finish_call(engine_->execute(p2p_op_));
}

}  // namespace trainmover
