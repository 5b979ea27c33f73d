#include "comm.h"

#include <string>
#include <vector>

#include "common/parse.h"

namespace trainmover::gpt {
namespace {

// The C API's error as a Status: what failed, the detail, the slot at fault.
Status api_status(tm_result_t rc, const std::string& what, tm_comm_t comm) {
  if (rc == TM_SUCCESS) return Status::Ok();
  std::string detail = tm_get_last_error();
  int failed = -1;
  if (comm != nullptr) (void)tm_comm_failed_slot(comm, &failed);
  return Status(
      rc, str_cat(what, ": ", tm_get_error_string(rc), detail.empty() ? "" : ": ", detail), failed);
}

Result<tm_comm_t> open_comm(tm_config_t config, int slot, int nslots, const std::string& name,
                            bool standby = false) {
  config.slot = slot;
  config.nslots = nslots;
  config.name = name.c_str();
  tm_comm_t comm = nullptr;
  tm_result_t rc = standby ? tm_comm_init_standby(&comm, &config) : tm_comm_init(&comm, &config);
  TM_RETURN_IF_ERROR(api_status(rc, "join communicator " + name, nullptr));
  return comm;
}

Result<tm_config_t> job_config(int dp, int pp) {
  tm_config_t config = TM_CONFIG_INITIALIZER;
  TM_RETURN_IF_ERROR(
      api_status(tm_config_init(&config), "read the TRAINMOVER_* environment", nullptr));
  if (!get_env("TRAINMOVER_NSLOTS"))
    return error(TM_ERROR_INVALID_ARGUMENT, "--dp ", dp, " --pp ", pp, " runs as ", dp * pp,
                 " processes of a TrainMover job, but TRAINMOVER_NSLOTS is not set; start it with"
                 " trainmover-launch --nprocs ",
                 dp * pp);
  if (config.nslots != dp * pp)
    return error(TM_ERROR_INVALID_ARGUMENT, "--dp ", dp, " --pp ", pp, " needs ", dp * pp,
                 " processes, but the job has ", config.nslots,
                 " (TRAINMOVER_NSLOTS); start it with trainmover-launch --nprocs ", dp * pp);
  return config;
}

}  // namespace

Result<std::unique_ptr<StageComm>> StageComm::create(int dp, int pp) {
  if (dp < 1 || pp < 1) return error(TM_ERROR_INVALID_ARGUMENT, "--dp and --pp must be >= 1");
  auto comm = std::make_unique<StageComm>(Key(), Topology{dp, pp, 0});
  if (dp * pp == 1) return comm;
  TM_ASSIGN_OR_RETURN(tm_config_t config, job_config(dp, pp));
  comm->topo_.slot = config.slot;
  TM_ASSIGN_OR_RETURN(comm->world_, open_comm(config, config.slot, dp * pp, "gpt-world"));
  if (dp > 1) {
    const Topology& t = comm->topo_;
    TM_ASSIGN_OR_RETURN(comm->dp_,
                        open_comm(config, t.dp_index(), dp, "gpt-dp" + std::to_string(t.stage())));
  }
  return comm;
}

Result<std::unique_ptr<StageComm>> StageComm::create_standby(int dp, int pp, int slot) {
  if (dp < 1 || pp < 1 || dp * pp == 1)
    return error(TM_ERROR_INVALID_ARGUMENT, "a standby needs a job of more than one slot");
  if (slot < 0 || slot >= dp * pp)
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is not in [0, ", dp * pp, ")");
  auto comm = std::make_unique<StageComm>(Key(), Topology{dp, pp, slot});
  TM_ASSIGN_OR_RETURN(tm_config_t config, job_config(dp, pp));
  TM_ASSIGN_OR_RETURN(comm->world_, open_comm(config, -1, dp * pp, "gpt-world", true));
  if (dp > 1) {
    const Topology& t = comm->topo_;
    TM_ASSIGN_OR_RETURN(comm->dp_,
                        open_comm(config, -1, dp, "gpt-dp" + std::to_string(t.stage()), true));
  }
  return comm;
}

Status StageComm::register_with(tm_worker_t worker) const {
  std::vector<int> world(static_cast<size_t>(topo_.nslots()));
  for (int s = 0; s < topo_.nslots(); ++s) world[static_cast<size_t>(s)] = s;
  if (world_ != nullptr)
    TM_RETURN_IF_ERROR(api_status(tm_worker_add_comm(worker, world_, world.data(), topo_.nslots()),
                                  "register the world communicator", nullptr));
  if (dp_ == nullptr) return Status::Ok();
  std::vector<int> group(static_cast<size_t>(topo_.dp));
  for (int d = 0; d < topo_.dp; ++d)
    group[static_cast<size_t>(d)] = topo_.slot_of(topo_.stage(), d);
  return api_status(tm_worker_add_comm(worker, dp_, group.data(), topo_.dp),
                    "register the DP group communicator", nullptr);
}

StageComm::~StageComm() {
  (void)tm_comm_destroy(dp_);
  (void)tm_comm_destroy(world_);
}

Result<int> StageComm::neighbour(int stage) const {
  if (world_ == nullptr || stage < 0 || stage >= topo_.pp)
    return error(TM_ERROR_INTERNAL, "stage ", topo_.stage(), " has no neighbour stage ", stage);
  return topo_.slot_of(stage, topo_.dp_index());
}

Status StageComm::send(const void* buf, size_t count, tm_datatype_t type, int stage) {
  TM_ASSIGN_OR_RETURN(int peer, neighbour(stage));
  return api_status(tm_send(buf, count, type, peer, world_),
                    str_cat("send to stage ", stage, " (slot ", peer, ")"), world_);
}

Status StageComm::recv(void* buf, size_t count, tm_datatype_t type, int stage) {
  TM_ASSIGN_OR_RETURN(int peer, neighbour(stage));
  return api_status(tm_recv(buf, count, type, peer, world_),
                    str_cat("receive from stage ", stage, " (slot ", peer, ")"), world_);
}

Status StageComm::send_next(const void* buf, size_t count, tm_datatype_t type) {
  return send(buf, count, type, topo_.stage() + 1);
}
Status StageComm::recv_next(void* buf, size_t count, tm_datatype_t type) {
  return recv(buf, count, type, topo_.stage() + 1);
}
Status StageComm::send_prev(const void* buf, size_t count, tm_datatype_t type) {
  return send(buf, count, type, topo_.stage() - 1);
}
Status StageComm::recv_prev(void* buf, size_t count, tm_datatype_t type) {
  return recv(buf, count, type, topo_.stage() - 1);
}

Status StageComm::dp_allreduce(void* buf, size_t count, tm_datatype_t type, tm_redop_t op) {
  if (dp_ == nullptr) return Status::Ok();
  return api_status(tm_allreduce(buf, buf, count, type, op, dp_), "allreduce in the DP group", dp_);
}

Status StageComm::world_allreduce(void* buf, size_t count, tm_datatype_t type, tm_redop_t op) {
  if (world_ == nullptr) return Status::Ok();
  return api_status(tm_allreduce(buf, buf, count, type, op, world_), "allreduce over the job",
                    world_);
}

}  // namespace trainmover::gpt
