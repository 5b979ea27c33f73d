// The C API (include/trainmover/trainmover.h) over the C++ core. Every entry
// point converts the C++ Status into a tm_result_t, records the detail for
// tm_get_last_error(), and lets no C++ exception cross into C.
#include <cstdlib>
#include <new>
#include <string>

#include "comm/communicator.h"
#include "comm/config.h"
#include "comm/datatype.h"
#include "common/parse.h"
#include "rendezvous/tcp_store_server.h"
#include "trainmover/trainmover.h"

struct tm_comm {
  std::unique_ptr<trainmover::Communicator> impl;
};

struct tm_store_server {
  std::unique_ptr<trainmover::rendezvous::TcpStoreServer> impl;
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

}  // namespace

extern "C" {

tm_result_t tm_config_init(tm_config_t* config) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(config, "config"));
    return trainmover::init_config(*config);
  });
}

tm_result_t tm_comm_init(tm_comm_t* comm, const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    *comm = nullptr;
    TM_ASSIGN_OR_RETURN(trainmover::CommConfig c, trainmover::CommConfig::from_c(*config));
    TM_ASSIGN_OR_RETURN(auto impl, trainmover::Communicator::create(c));
    *comm = new tm_comm{std::move(impl)};
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_init_standby(tm_comm_t* comm, const tm_config_t* config) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(config, "config"));
    *comm = nullptr;
    tm_config_t copy = *config;
    copy.slot = 0;  // a standby has none; any valid value passes the checks
    TM_ASSIGN_OR_RETURN(trainmover::CommConfig c, trainmover::CommConfig::from_c(copy));
    TM_ASSIGN_OR_RETURN(auto impl, trainmover::Communicator::create_standby(c));
    *comm = new tm_comm{std::move(impl)};
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
    *slot = comm->impl->slot();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_nslots(tm_comm_t comm, int* nslots) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(nslots, "nslots"));
    *nslots = comm->impl->nslots();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_join(tm_comm_t comm, uint64_t epoch, int slot) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    trainmover::Communicator& c = *comm->impl;
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
    return c.join(view);
  });
}

tm_result_t tm_comm_prepare_switch(tm_comm_t comm, uint64_t epoch) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_ASSIGN_OR_RETURN(trainmover::View view, comm->impl->fetch_view(epoch));
    return comm->impl->prepare_switch(view);
  });
}

tm_result_t tm_comm_wait_prepared(tm_comm_t comm) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->wait_prepared();
  });
}

tm_result_t tm_comm_switchover(tm_comm_t comm, uint64_t epoch) {
  return guarded([&]() -> trainmover::Status {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->switchover(epoch);
  });
}

tm_result_t tm_comm_epoch(tm_comm_t comm, uint64_t* epoch) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(epoch, "epoch"));
    *epoch = comm->impl->epoch();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_comm_failed_slot(tm_comm_t comm, int* slot) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    TM_RETURN_IF_ERROR(need(slot, "slot"));
    *slot = comm->impl->last_failure().failed_slot();
    return trainmover::Status::Ok();
  });
}

tm_result_t tm_allreduce(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t datatype,
                         tm_redop_t op, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->allreduce(sendbuf, recvbuf, count, datatype, op);
  });
}

tm_result_t tm_reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                              tm_datatype_t datatype, tm_redop_t op, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->reduce_scatter(sendbuf, recvbuf, recvcount, datatype, op);
  });
}

tm_result_t tm_allgather(const void* sendbuf, void* recvbuf, size_t sendcount,
                         tm_datatype_t datatype, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->allgather(sendbuf, recvbuf, sendcount, datatype);
  });
}

tm_result_t tm_broadcast(const void* sendbuf, void* recvbuf, size_t count, tm_datatype_t datatype,
                         int root, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->broadcast(sendbuf, recvbuf, count, datatype, root);
  });
}

tm_result_t tm_barrier(tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->barrier();
  });
}

tm_result_t tm_send(const void* buf, size_t count, tm_datatype_t datatype, int peer,
                    tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->send(buf, count, datatype, peer);
  });
}

tm_result_t tm_recv(void* buf, size_t count, tm_datatype_t datatype, int peer, tm_comm_t comm) {
  return guarded([&] {
    TM_RETURN_IF_ERROR(need(comm, "comm"));
    return comm->impl->recv(buf, count, datatype, peer);
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
                        trainmover::rendezvous::TcpStoreServer::start(address, secret, job_id));
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
