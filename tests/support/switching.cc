#include "support/switching.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "comm/endpoint.h"
#include "comm/view_record.h"
#include "common/event_loop.h"
#include "support/reference.h"
#include "transport/tcp/tcp_transport.h"

namespace trainmover::testing {

std::unique_ptr<rendezvous::TcpStore> connect_store(const TestJob& job) {
  auto s = rendezvous::TcpStore::connect(job.store_address(), job.secret(), job.job_id(),
                                         std::chrono::seconds(10));
  return s.ok() ? std::move(s).value() : nullptr;
}

Result<View> initial_view(rendezvous::Store& store, const std::string& name, int nslots) {
  return fetch_first_view(store, name, nslots, std::chrono::seconds(20));
}

View replace_slot(View view, uint64_t epoch, int slot, const Endpoint& joiner) {
  view.epoch = epoch;
  view.slots[static_cast<size_t>(slot)] = joiner;
  return view;
}

Status switch_to(Communicator& comm, const View& next) {
  TM_RETURN_IF_ERROR(comm.prepare_switch(next));
  TM_RETURN_IF_ERROR(comm.wait_prepared());
  return comm.switchover(next.epoch);
}

Status join_view(Communicator& comm, const View& next) {
  TM_RETURN_IF_ERROR(comm.join(next));
  return comm.switchover(next.epoch);
}

namespace {

// Records how one outgoing connect ended.
class HandshakeOutcome final : public transport::TransportListener, public transport::LinkObserver {
 public:
  transport::Verdict on_incoming(const transport::Hello&) override {
    return transport::Verdict::kRefused;
  }
  void on_link_ready(std::unique_ptr<transport::Link> link, const transport::Hello&) override {
    link_ = std::move(link);
    verdict_ = transport::Verdict::kAccepted;
  }
  void on_connect_failed(int, const Status& status, transport::Verdict verdict) override {
    verdict_ = verdict;
    status_ = status;
  }
  void on_control(transport::Link&, const transport::ControlMessage&) override {}
  void on_link_failed(transport::Link&) override {}

  std::optional<transport::Verdict> verdict_;
  Status status_;
  std::unique_ptr<transport::Link> link_;
};

}  // namespace

Result<transport::Verdict> try_handshake(const TestJob& job, const std::string& name, int slot,
                                         uint64_t epoch, uint64_t instance, int target_slot,
                                         const Endpoint& target) {
  TM_ASSIGN_OR_RETURN(auto loop, EventLoop::create());
  HandshakeOutcome outcome;
  transport::tcp::TcpTransport::Options o;
  o.job_id = job.job_id();
  o.comm_id = comm_id_of(name);
  o.epoch = epoch;
  o.slot = slot;
  o.instance_id = instance;
  TM_ASSIGN_OR_RETURN(auto transport, transport::tcp::TcpTransport::create(
                                          *loop, job.secret(), o, transport::tcp::LocalLinks::kTcp,
                                          &outcome, &outcome));
  transport->connect(target_slot, target.address, target.instance_id);
  Deadline deadline = Deadline::after(std::chrono::seconds(10));
  while (!outcome.verdict_ && !deadline.expired()) {
    TM_RETURN_IF_ERROR(loop->run_once(std::chrono::milliseconds(10)));
    transport->sweep();
  }
  outcome.link_.reset();
  if (!outcome.verdict_) return error(TM_ERROR_TIMEOUT, "handshake did not finish");
  return *outcome.verdict_;
}

Status publish_endpoint(rendezvous::Store& store, const std::string& key, const Endpoint& e) {
  return store.set(key, encode_endpoint(e));
}

Result<Endpoint> fetch_endpoint(rendezvous::Store& store, const std::string& key) {
  TM_ASSIGN_OR_RETURN(std::string record, store.get(key, std::chrono::seconds(20)));
  return parse_endpoint(record);
}

Result<uint64_t> run_iteration(Communicator& comm, int iteration, size_t count) {
  Bytes input =
      make_input(TM_FLOAT32, TM_SUM, comm.slot(), count, static_cast<uint64_t>(iteration));
  Bytes output(input.size());
  TM_RETURN_IF_ERROR(comm.allreduce(input.data(), output.data(), count, TM_FLOAT32, TM_SUM));
  Algorithm algorithm = choose_algorithm(comm.config().algorithms, CollectiveKind::kAllreduce,
                                         count * sizeof(float), comm.nslots());
  Bytes expected = reference_allreduce(TM_FLOAT32, TM_SUM, comm.nslots(), count,
                                       static_cast<uint64_t>(iteration), algorithm);
  if (std::memcmp(output.data(), expected.data(), output.size()) != 0) {
    return error(TM_ERROR_INTERNAL, "slot ", comm.slot(), ": iteration ", iteration,
                 " differs from the serial reference");
  }
  return fnv1a(output.data(), output.size());
}

Status exchange_across(Communicator& comm) {
  const int n = comm.nslots();
  const int to = (comm.slot() + 2) % n, from = (comm.slot() + n - 2) % n;
  if (to == comm.slot()) return Status::Ok();
  int64_t out = comm.slot() * 1000 + static_cast<int64_t>(comm.epoch()), in = -1;
  TM_RETURN_IF_ERROR(comm.send(&out, 1, TM_INT64, to));
  TM_RETURN_IF_ERROR(comm.recv(&in, 1, TM_INT64, from));
  if (in != from * 1000 + static_cast<int64_t>(comm.epoch()))
    return error(TM_ERROR_INTERNAL, "slot ", comm.slot(), " received ", in, " from slot ", from);
  return Status::Ok();
}

int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int complain(int slot, const std::string& what) {
  std::fprintf(stderr, "slot %d: %s\n", slot, what.c_str());
  return 3;
}

}  // namespace trainmover::testing
