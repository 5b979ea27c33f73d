#include "comm.h"

#include <algorithm>
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

// The role a communicator's trace is recorded under: the stage's role and
// which communicator ("world" or "dp"), in the canonical form that is also
// its file name (record/role.h).
std::string trace_role(int stage, int pp, const char* which) {
  return str_cat("stage=", role_name(stage_role(stage, pp)), ",comm=", which);
}

// Recording (tm_config_t's trace_dir from TRAINMOVER_TRACE_DIR): one rank
// per warmed stage records, DP index 0; its replicas run the same calls, so
// their traces would add nothing. The others record nothing.
void set_recording(tm_config_t& config, const Topology& topo, const std::string& role) {
  const std::vector<int> warmed = warmed_stages(topo.pp);
  const bool records =
      topo.dp_index() == 0 && std::find(warmed.begin(), warmed.end(), topo.stage()) != warmed.end();
  if (!records || config.trace_dir == nullptr || *config.trace_dir == '\0') {
    config.trace_dir = nullptr;
    return;
  }
  config.role = role.c_str();
  // The recorded outputs of a few steps of this model are small (activations
  // and one stage's gradients); the default 32 MiB reserve made resident per
  // communicator would cost more than it saves. TRAINMOVER_RECORD_RESERVE
  // still sets it.
  if (!get_env("TRAINMOVER_RECORD_RESERVE")) config.record_reserve_bytes = 0;
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

Result<tm_comm_t> open_sandbox(tm_config_t config, int slot, const std::string& role) {
  config.slot = slot;
  config.role = role.c_str();
  tm_comm_t comm = nullptr;
  TM_RETURN_IF_ERROR(api_status(tm_comm_init_sandbox(&comm, &config, nullptr),
                                "replay the trace of " + role, nullptr));
  return comm;
}

// The DP group's key: one for every slot, so the group is ordered by world
// slot, which within a stage is DP order (group slot = DP index). A key
// that does not depend on the slot lets a standby make its group before it
// knows the slot it will serve (StageComm::become_standby).
constexpr int kDpKey = 0;

// This slot's DP group: the world's slots of its stage (color). On a
// standby world, a standby group.
Result<tm_comm_t> split_dp(tm_comm_t world, const Topology& t, const tm_config_t* config) {
  tm_comm_t group = nullptr;
  TM_RETURN_IF_ERROR(api_status(tm_comm_split_config(world, t.stage(), kDpKey, &group, config),
                                str_cat("split the DP group of stage ", t.stage()), world));
  return group;
}

Status go_standby_comm(tm_comm_t comm, tm_config_t config, int nslots, const std::string& name) {
  config.slot = -1;
  config.nslots = nslots;
  config.name = name.c_str();
  return api_status(tm_comm_go_standby(comm, &config),
                    "turn the sandbox " + name + " into a standby", nullptr);
}

}  // namespace

const char* role_name(tm_stage_t role) {
  switch (role) {
    case TM_STAGE_NONE:
      return "none";
    case TM_STAGE_FIRST:
      return "first";
    case TM_STAGE_MIDDLE:
      return "middle";
    case TM_STAGE_LAST:
      return "last";
  }
  return "none";
}

tm_stage_t stage_role(int stage, int pp) {
  if (pp <= 1) return TM_STAGE_NONE;
  if (stage == 0) return TM_STAGE_FIRST;
  return stage == pp - 1 ? TM_STAGE_LAST : TM_STAGE_MIDDLE;
}

std::vector<int> warmed_stages(int pp) {
  std::vector<int> stages = {0};
  if (pp >= 3) stages.push_back(1);
  if (pp >= 2) stages.push_back(pp - 1);
  return stages;
}

Result<std::unique_ptr<StageComm>> StageComm::create(int dp, int pp) {
  if (dp < 1 || pp < 1) return error(TM_ERROR_INVALID_ARGUMENT, "--dp and --pp must be >= 1");
  auto comm = std::make_unique<StageComm>(Key(), Topology{dp, pp, 0});
  if (dp * pp == 1) return comm;
  TM_ASSIGN_OR_RETURN(tm_config_t config, job_config(dp, pp));
  comm->topo_.slot = config.slot;
  const Topology& t = comm->topo_;
  const std::string world_role = trace_role(t.stage(), pp, "world");
  const std::string dp_role = trace_role(t.stage(), pp, "dp");
  tm_config_t world_config = config, dp_config = config;
  set_recording(world_config, t, world_role);
  set_recording(dp_config, t, dp_role);
  TM_ASSIGN_OR_RETURN(comm->world_, open_comm(world_config, config.slot, dp * pp, "gpt-world"));
  if (dp > 1) {
    TM_ASSIGN_OR_RETURN(comm->dp_, split_dp(comm->world_, t, &dp_config));
  }
  return comm;
}

Result<std::unique_ptr<StageComm>> StageComm::create_sandbox(int dp, int pp, int stage) {
  if (dp < 1 || pp < 1 || dp * pp == 1)
    return error(TM_ERROR_INVALID_ARGUMENT, "a standby needs a job of more than one slot");
  if (stage < 0 || stage >= pp)
    return error(TM_ERROR_INVALID_ARGUMENT, "stage ", stage, " is not in [0, ", pp, ")");
  auto comm = std::make_unique<StageComm>(Key(), Topology{dp, pp, stage * dp});
  TM_ASSIGN_OR_RETURN(tm_config_t config, job_config(dp, pp));
  TM_ASSIGN_OR_RETURN(comm->world_,
                      open_sandbox(config, stage * dp, trace_role(stage, pp, "world")));
  if (dp > 1) {
    TM_ASSIGN_OR_RETURN(comm->dp_, open_sandbox(config, 0, trace_role(stage, pp, "dp")));
  }
  return comm;
}

std::vector<std::string> StageComm::trace_paths(const std::string& trace_dir, int dp, int pp,
                                                int stage) {
  std::vector<std::string> paths = {
      str_cat(trace_dir, "/", trace_role(stage, pp, "world"), ".tmtrace")};
  if (dp > 1) paths.push_back(str_cat(trace_dir, "/", trace_role(stage, pp, "dp"), ".tmtrace"));
  return paths;
}

Status StageComm::become_standby() {
  TM_ASSIGN_OR_RETURN(tm_config_t config, job_config(topo_.dp, topo_.pp));
  TM_RETURN_IF_ERROR(go_standby_comm(world_, config, topo_.nslots(), "gpt-world"));
  if (dp_ != nullptr)
    TM_RETURN_IF_ERROR(api_status(tm_comm_go_split(dp_, world_, topo_.stage(), kDpKey),
                                  "turn the DP sandbox into the standby group of its stage",
                                  nullptr));
  return Status::Ok();
}

Status StageComm::take_slot(int slot) {
  if (slot < 0 || slot >= topo_.nslots() || slot / topo_.dp != topo_.stage())
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is not of stage ", topo_.stage());
  topo_.slot = slot;
  return Status::Ok();
}

Status StageComm::iteration_begin() {
  for (tm_comm_t c : {world_, dp_}) {
    if (c != nullptr) TM_RETURN_IF_ERROR(api_status(tm_iteration_begin(c), "begin a step", c));
  }
  return Status::Ok();
}

Status StageComm::iteration_end() {
  Status first;
  for (tm_comm_t c : {world_, dp_}) {
    if (c == nullptr) continue;
    Status st = api_status(tm_iteration_end(c), "end a step", c);
    if (first.ok() && !st.ok()) first = st;  // end every one, whatever the first said
  }
  return first;
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
    TM_ASSIGN_OR_RETURN(comm->dp_, split_dp(comm->world_, comm->topo_, nullptr));
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
