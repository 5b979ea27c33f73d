// The C API (include/trainmover/trainmover.h) over the C++ core. Every entry
// point converts the C++ Status into a tm_result_t, records the detail for
// tm_get_last_error(), and lets no C++ exception cross into C.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "api/comm_backend.h"
#include "api/comm_handle.h"
#include "api/live_backend.h"
#include "api/record_config.h"
#include "api/recording_backend.h"
#include "api/sandbox_backend.h"
#include "comm/config.h"
#include "comm/datatype.h"
#include "common/log.h"
#include "common/parse.h"
#include "record/trace_dir.h"
#include "rendezvous/store_factory.h"
#include "trainmover/trainmover.h"
#include "transport/shm/ring_pool.h"
#include "transport/transport_factory.h"

// The handle keeps its identity while its backend changes (live, recording,
// sandbox), so a sandbox goes live in place.
struct tm_comm {
  explicit tm_comm(std::unique_ptr<trainmover::api::CommBackend> b) : backend(std::move(b)) {}
  // The calling thread replaces `backend` only under `backend_mutex`, which
  // tm_comm_abort() (from another thread) holds while it aborts.
  void replace_backend(std::unique_ptr<trainmover::api::CommBackend> next) {
    std::unique_ptr<trainmover::api::CommBackend> old;
    std::lock_guard<std::mutex> lock(backend_mutex);
    old = std::exchange(backend, std::move(next));
  }
  // The same for a backend that hands over to a successor (a recorder done).
  void adopt_successor() {
    std::unique_ptr<trainmover::api::CommBackend> old;
    std::lock_guard<std::mutex> lock(backend_mutex);
    if (auto next = backend->take_successor()) old = std::exchange(backend, std::move(next));
  }
  std::mutex backend_mutex;
  std::unique_ptr<trainmover::api::CommBackend> backend;
  std::unique_ptr<trainmover::record::TraceSaver> trace_saver;  // a recording being saved
  // A sandbox's rings for the links it will open once it goes standby
  // (spare_rings_for), made while the standby waits, not when promoted.
  std::shared_ptr<trainmover::transport::shm::RingPool> spare_rings;
  uint32_t iterations_begun = 0;
  bool in_iteration = false;
};

struct tm_store_server {
  std::unique_ptr<trainmover::rendezvous::StoreServer> impl;
};

namespace {

thread_local std::string last_error;

tm_result_t record(const trainmover::Status& status) {
  last_error = status.ok() ? std::string() : status.message();
  return status.code();
}

template <typename F>
tm_result_t guarded(F&& body) {
  try {
    return record(body());
  } catch (const std::bad_alloc&) {
    return record(trainmover::Status(TM_ERROR_SYSTEM, "out of memory"));
  } catch (const std::exception& e) {
    return record(
        trainmover::Status(TM_ERROR_INTERNAL, std::string("unexpected exception: ") + e.what()));
  }
}

trainmover::Status need(const void* p, const char* what) {
  if (p == nullptr) return trainmover::error(TM_ERROR_INVALID_ARGUMENT, what, " is NULL");
  return trainmover::Status::Ok();
}

// The real communicator behind a handle, for the membership switch.
trainmover::Result<trainmover::Communicator*> live_of(tm_comm_t comm) {
  TM_RETURN_IF_ERROR(need(comm, "comm"));
  trainmover::Communicator* live = comm->backend->live();
  if (live == nullptr) {
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                             "this handle replays a trace (sandbox): tm_comm_go_live() first");
  }
  return live;
}

// A sandbox handle may turn live (or standby) only between iterations.
trainmover::Status leaving_sandbox(tm_comm_t comm, const char* call) {
  if (comm->backend->mode() != TM_MODE_SANDBOX)
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, call,
                             ": the communicator is not a sandbox");
  if (comm->in_iteration) {
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, call, ": iteration ",
                             comm->iterations_begun - 1, " has not ended");
  }
  return trainmover::Status::Ok();
}

// A live backend for a process that serves no slot yet.
trainmover::Result<std::unique_ptr<trainmover::api::CommBackend>> standby_backend(
    const tm_config_t& config,
    std::shared_ptr<trainmover::transport::shm::RingPool> ring_pool = nullptr) {
  TM_ASSIGN_OR_RETURN(tm_config_t copy, trainmover::complete_config(config));
  copy.slot = 0;  // a standby has none; any valid value passes the checks
  TM_ASSIGN_OR_RETURN(trainmover::CommConfig c, trainmover::CommConfig::from_c(copy));
  c.ring_pool = std::move(ring_pool);
  TM_ASSIGN_OR_RETURN(auto impl, trainmover::Communicator::create_standby(c));
  return std::unique_ptr<trainmover::api::CommBackend>(
      std::make_unique<trainmover::api::LiveBackend>(std::move(impl)));
}

// The rings a slot of an `nslots` communicator opens links with, at most:
// its two ring neighbours, its recursive-doubling partners and two
// point-to-point neighbours (a pipeline's), each a link of its own. Made
// for a sandbox, which turns into a standby of that communicator: a
// promotion then takes them instead of making them (about 0.3 ms of CPU
// each, docs/shm-transport.md). Memory: 1 MiB each, 4 MiB for the world
// and DP group of a 4-slot job, 15 MiB for a 16-slot one. Only a saving:
// when they cannot be made the links make their own, as without it.
std::shared_ptr<trainmover::transport::shm::RingPool> spare_rings_for(int nslots) {
  const trainmover::transport::TransportOptions defaults;
  auto pool = std::make_shared<trainmover::transport::shm::RingPool>(defaults.shm_ring_bytes);
  int log2 = 0;
  while ((1 << log2) < nslots) ++log2;
  const int links = std::min(nslots - 1, 2 + log2 + 2);
  trainmover::Status st = pool->fill(static_cast<size_t>(std::max(links, 0)));
  if (!st.ok())
    trainmover::log(trainmover::LogLevel::kWarn,
                    "sandbox: no spare shared-memory rings: ", st.message());
  return pool;
}

}  // namespace

extern "C" {

tm_result_t tm_config_init(tm_config_t* config) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(config, "config"));
    return trainmover::init_caller_config(*config);
  });
}

tm_result_t tm_comm_init(tm_comm_t* comm, const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    *comm = nullptr;
    TM_ASSIGN_OR_RETURN(auto record, trainmover::api::RecordConfig::from_c(*config));
    TM_ASSIGN_OR_RETURN(auto backend, trainmover::api::LiveBackend::create(*config));
    if (record.recording()) {
      backend = std::make_unique<trainmover::api::RecordingBackend>(std::move(backend), record);
    }
    *comm = new tm_comm(std::move(backend));
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_init_standby(tm_comm_t* comm, const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    *comm = nullptr;
    TM_ASSIGN_OR_RETURN(auto backend, standby_backend(*config));
    *comm = new tm_comm(std::move(backend));
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_destroy(tm_comm_t comm) {
  return guarded([&] {
    delete comm;
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_slot(tm_comm_t comm, int* slot) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(slot, "slot"));
    *slot = comm->backend->slot();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_nslots(tm_comm_t comm, int* nslots) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(nslots, "nslots"));
    *nslots = comm->backend->nslots();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_join(tm_comm_t comm, uint64_t epoch, int slot) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * live, live_of(comm));
    trainmover::Communicator& c = *live;
    if (c.slot() >= 0) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                               "tm_comm_join: this process already serves slot ", c.slot());
    }
    if (epoch == 0)
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "epoch 0 is the first view");
    if (slot < 0 || slot >= c.nslots()) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is not in [0, ",
                               c.nslots(), ")");
    }
    TM_ASSIGN_OR_RETURN(trainmover::View view, c.fetch_view(epoch - 1));
    view.epoch = epoch;
    view.slots[static_cast<size_t>(slot)] = c.endpoint();
    TM_RETURN_IF_ERROR(c.publish_view(view));
    TM_RETURN_IF_ERROR(c.join(view));
    return c.join_groups(epoch, slot, epoch - 1);
  });
}

tm_result_t tm_comm_prepare_switch(tm_comm_t comm, uint64_t epoch) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * live, live_of(comm));
    TM_ASSIGN_OR_RETURN(trainmover::View view, live->fetch_view(epoch));
    TM_RETURN_IF_ERROR(live->prepare_switch(view));
    return live->prepare_groups(view);
  });
}

tm_result_t tm_comm_wait_prepared(tm_comm_t comm) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * live, live_of(comm));
    TM_RETURN_IF_ERROR(live->wait_prepared());
    return live->wait_groups_prepared();
  });
}

tm_result_t tm_comm_switchover(tm_comm_t comm, uint64_t epoch) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * live, live_of(comm));
    trainmover::Status st = live->switchover(epoch);
    trainmover::Status groups = live->switchover_groups(epoch);  // whatever the parent said
    return st.ok() ? groups : st;
  });
}

tm_result_t tm_comm_split(tm_comm_t comm, int color, int key, tm_comm_t* newcomm) {
  return tm_comm_split_config(comm, color, key, newcomm, nullptr);
}

tm_result_t tm_comm_split_config(tm_comm_t comm, int color, int key, tm_comm_t* newcomm,
                                 const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(newcomm, "newcomm"));
    *newcomm = nullptr;
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * parent, live_of(comm));
    trainmover::api::RecordConfig record;
    if (config != nullptr) {
      TM_ASSIGN_OR_RETURN(record, trainmover::api::RecordConfig::from_c(*config));
    }
    TM_ASSIGN_OR_RETURN(auto group, parent->split(color, key));
    if (group == nullptr) return trainmover::Status::Ok();  // TM_SPLIT_NOCOLOR
    std::unique_ptr<trainmover::api::CommBackend> backend =
        std::make_unique<trainmover::api::LiveBackend>(std::move(group));
    if (record.recording()) {
      backend = std::make_unique<trainmover::api::RecordingBackend>(std::move(backend), record);
    }
    *newcomm = new tm_comm(std::move(backend));
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_go_split(tm_comm_t comm, tm_comm_t parent, int color, int key) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(leaving_sandbox(comm, "tm_comm_go_split"));
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * live, live_of(parent));
    if (color == TM_SPLIT_NOCOLOR)
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                               "tm_comm_go_split: TM_SPLIT_NOCOLOR would leave no communicator");
    TM_ASSIGN_OR_RETURN(auto group, live->split(color, key, comm->spare_rings));
    comm->replace_backend(std::make_unique<trainmover::api::LiveBackend>(std::move(group)));
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_epoch(tm_comm_t comm, uint64_t* epoch) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(epoch, "epoch"));
    TM_ASSIGN_OR_RETURN(trainmover::Communicator * live, live_of(comm));
    *epoch = live->epoch();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_abort(tm_comm_t comm) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    std::lock_guard<std::mutex> lock(comm->backend_mutex);
    return comm->backend->abort();
  });
}

tm_result_t tm_comm_failed_slot(tm_comm_t comm, int* slot) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(slot, "slot"));
    *slot = comm->backend->failed_slot();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t datatype,
                         tm_redop_t op, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->allreduce(sendbuf, recvbuf, count, datatype, op);
  });
}

tm_result_t tm_reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                              tm_datatype_t datatype, tm_redop_t op, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->reduce_scatter(sendbuf, recvbuf, recvcount, datatype, op);
  });
}

tm_result_t tm_allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                         tm_datatype_t datatype, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->allgather(sendbuf, recvbuf, sendcount, datatype);
  });
}

tm_result_t tm_broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t datatype,
                         int root, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->broadcast(sendbuf, recvbuf, count, datatype, root);
  });
}

tm_result_t tm_barrier(tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->barrier();
  });
}

tm_result_t tm_send(const void* buf, size_t count, tm_datatype_t datatype, int peer,
                    tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->send(buf, count, datatype, peer);
  });
}

tm_result_t tm_recv(void* buf, size_t count, tm_datatype_t datatype, int peer, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->backend->recv(buf, count, datatype, peer);
  });
}

tm_result_t tm_comm_set_role(tm_comm_t comm, tm_stage_t stage, const char* attributes) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    if (comm->iterations_begun > 0) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                               "the role must be declared before the first tm_iteration_begin");
    }
    std::string text = attributes != nullptr ? attributes : "";
    TM_ASSIGN_OR_RETURN(auto role, trainmover::record::Role::parse(text));
    if (text.starts_with("stage=") || text.find(",stage=") != std::string::npos) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "attributes '", text,
                               "': the stage is the separate stage argument");
    }
    TM_ASSIGN_OR_RETURN(role.stage, trainmover::api::stage_from_c(stage));
    return comm->backend->declare_role(role);
  });
}

tm_result_t tm_iteration_begin(tm_comm_t comm) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    if (comm->in_iteration) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "tm_iteration_begin: iteration ",
                               comm->iterations_begun - 1, " has not ended");
    }
    TM_RETURN_IF_ERROR(comm->backend->iteration_begin(comm->iterations_begun));
    comm->in_iteration = true;
    ++comm->iterations_begun;
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_iteration_end(tm_comm_t comm) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    if (!comm->in_iteration) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                               "tm_iteration_end without tm_iteration_begin");
    }
    trainmover::Status st = comm->backend->iteration_end(comm->iterations_begun - 1);
    comm->in_iteration = false;  // a sandbox's error sticks; nothing to keep open
    if (auto saver = comm->backend->take_trace_saver()) comm->trace_saver = std::move(saver);
    comm->adopt_successor();
    return st;
  });
}

tm_result_t tm_comm_wait_trace(tm_comm_t comm) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    if (comm->trace_saver == nullptr) return trainmover::Status::Ok();
    const auto& saved = comm->trace_saver->wait();
    if (!saved.ok()) return saved.status();
    if (saved->outcome == trainmover::record::StoreOutcome::kConflict) {
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                               "the trace was not kept: ", saved->detail);
    }
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_init_sandbox(tm_comm_t* comm, const tm_config_t* config,
                                 const char* trace_path) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    *comm = nullptr;
    TM_ASSIGN_OR_RETURN(auto record, trainmover::api::RecordConfig::from_c(*config));
    trainmover::record::TraceExpect expect;
    expect.job_id = record.job_id;
    if (record.role_given) expect.role = record.role;
    std::string path = trace_path != nullptr ? std::string(trace_path) : std::string();
    if (path.empty()) {
      if (record.trace_dir.empty()) {
        return trainmover::error(TM_ERROR_INVALID_ARGUMENT,
                                 "no trace path given and trace_dir (TRAINMOVER_TRACE_DIR) "
                                 "is not set");
      }
      path = trainmover::record::TraceDirectory(record.trace_dir).path_for(record.role);
      expect.role = record.role;
    }
    TM_ASSIGN_OR_RETURN(auto trace, trainmover::record::Trace::load(path, expect));
    TM_ASSIGN_OR_RETURN(auto sandbox,
                        trainmover::api::SandboxBackend::create(std::move(trace), record.slot));
    auto rings = spare_rings_for(sandbox->nslots());
    *comm = new tm_comm(std::move(sandbox));
    (*comm)->spare_rings = std::move(rings);
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_go_live(tm_comm_t comm, const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    TM_RETURN_IF_ERROR(leaving_sandbox(comm, "tm_comm_go_live"));
    // The one place a live communicator is made for a warmed-up standby.
    TM_ASSIGN_OR_RETURN(auto live, trainmover::api::LiveBackend::create(*config));
    comm->replace_backend(std::move(live));
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_go_standby(tm_comm_t comm, const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    TM_RETURN_IF_ERROR(leaving_sandbox(comm, "tm_comm_go_standby"));
    TM_ASSIGN_OR_RETURN(auto standby, standby_backend(*config, comm->spare_rings));
    comm->replace_backend(std::move(standby));
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_mode(tm_comm_t comm, tm_comm_mode_t* mode) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(mode, "mode"));
    *mode = comm->backend->mode();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_store_server_start(tm_store_server_t* server, const char* address,
                                  const char* job_secret) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(server, "server"));
    TM_RETURN_IF_ERROR(need(address, "address"));
    TM_RETURN_IF_ERROR(need(job_secret, "job_secret"));
    *server = nullptr;
    TM_ASSIGN_OR_RETURN(auto secret, trainmover::JobSecret::from_hex(job_secret));
    uint64_t job_id = 0;
    if (const char* id = std::getenv("TRAINMOVER_JOB_ID"); id != nullptr && *id != '\0') {
      TM_ASSIGN_OR_RETURN(int64_t parsed, trainmover::parse_int(id, 0, INT64_MAX));
      job_id = static_cast<uint64_t>(parsed);
    }
    TM_ASSIGN_OR_RETURN(auto impl,
                        trainmover::rendezvous::start_store_server(address, secret, job_id));
    *server = new tm_store_server{std::move(impl)};
    return trainmover::Status::Ok();
  });
}

const char* tm_store_server_address(tm_store_server_t server) {
  return server != nullptr ? server->impl->address().c_str() : "";
}

tm_result_t tm_store_server_stop(tm_store_server_t server) {
  return guarded([&] {
    delete server;
    return trainmover::Status::Ok();
  });
}

const char* tm_get_error_string(tm_result_t result) {
  switch (result) {
    case TM_SUCCESS:
      return "success";
    case TM_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case TM_ERROR_SYSTEM:
      return "system error";
    case TM_ERROR_TIMEOUT:
      return "timeout";
    case TM_ERROR_PEER_FAILED:
      return "peer failed";
    case TM_ERROR_PROTOCOL:
      return "protocol error";
    case TM_ERROR_AUTH:
      return "authentication failed";
    case TM_ERROR_INTERNAL:
      return "internal error";
    case TM_ERROR_UNSUPPORTED:
      return "unsupported";
    case TM_ERROR_NOT_FOUND:
      return "not found";
    case TM_ERROR_ABORTED:
      return "aborted";
  }
  return "unknown error code";
}

const char* tm_get_last_error(void) { return last_error.c_str(); }

size_t tm_datatype_size(tm_datatype_t datatype) { return trainmover::datatype_size(datatype); }

void tm_get_version(int* major, int* minor, int* patch) {
  if (major != nullptr) *major = TM_VERSION_MAJOR;
  if (minor != nullptr) *minor = TM_VERSION_MINOR;
  if (patch != nullptr) *patch = TM_VERSION_PATCH;
}

}  // extern "C"

namespace trainmover::api {
Result<Communicator*> live_communicator(tm_comm_t comm) { return live_of(comm); }

Status rebuild_live(tm_comm_t comm, const std::string& name, int slot) {
  TM_ASSIGN_OR_RETURN(Communicator * old, live_of(comm));
  CommConfig config = old->config();
  config.name = name;
  config.slot = slot;
  TM_ASSIGN_OR_RETURN(auto fresh, Communicator::create(config));
  comm->replace_backend(std::make_unique<LiveBackend>(std::move(fresh)));
  return Status::Ok();
}
Status restart_standby(tm_comm_t comm) {
  TM_ASSIGN_OR_RETURN(Communicator * old, live_of(comm));
  CommConfig config = old->config();
  config.slot = 0;  // as standby_backend(): a standby has none
  TM_ASSIGN_OR_RETURN(auto fresh, Communicator::create_standby(config));
  comm->replace_backend(std::make_unique<LiveBackend>(std::move(fresh)));
  return Status::Ok();
}
Status restart_standby_group(tm_comm_t group, tm_comm_t parent) {
  TM_ASSIGN_OR_RETURN(Communicator * old, live_of(group));
  TM_ASSIGN_OR_RETURN(GroupSplit split, old->split_of());
  TM_ASSIGN_OR_RETURN(Communicator * fresh_parent, live_of(parent));
  TM_ASSIGN_OR_RETURN(auto fresh, fresh_parent->split(split.color, split.key));
  group->replace_backend(std::make_unique<LiveBackend>(std::move(fresh)));
  return Status::Ok();
}
tm_result_t c_call(const std::function<Status()>& body) { return guarded(body); }
}  // namespace trainmover::api
