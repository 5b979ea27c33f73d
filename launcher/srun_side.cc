// The srun side of a TrainMover step (srun_side.h): the rendezvous store
// and the coordinator, with the coordinator's events on srun's stderr.
#include "srun_side.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "common/parse.h"
#include "common/secret.h"
#include "common/status.h"
#include "control/coordinator.h"
#include "event_printer.h"
#include "rendezvous/tcp_store_server.h"
#include "transport/tcp/interfaces.h"

using trainmover::Result;
using trainmover::Status;
namespace control = trainmover::control;

// A peer silent for this many heartbeat intervals has failed.
constexpr double kHeartbeatsLost = 5;

struct tm_srun {
  std::unique_ptr<trainmover::rendezvous::TcpStoreServer> store;
  std::unique_ptr<control::Coordinator> coordinator;
  std::shared_ptr<trainmover::launcher::EventPrinter> printer;
  std::string secret_hex;
  std::string job_id;
};

namespace {

void set_error(char* err, size_t errlen, const std::string& message) {
  if (err == nullptr || errlen == 0) return;
  std::snprintf(err, errlen, "%s", message.c_str());
}

// The address the store and the coordinator listen on: the plugin's bind=
// when given, else the one the tasks' links would choose with no peer known
// (TRAINMOVER_SOCKET_IFNAME in srun's environment, else the first interface
// up that is not a loopback, docker or bridge one), so that other nodes
// reach it.
Result<std::string> listen_host(const tm_srun_config& config) {
  if (config.bind != nullptr && *config.bind) return std::string(config.bind);
  return trainmover::transport::tcp::listen_address_from_environment(std::nullopt);
}

Result<std::unique_ptr<tm_srun>> start(const tm_srun_config& config) {
  if (config.nslots < 1 || config.nslots > 4096)
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "the step has ", config.nslots,
                             " active tasks; 1..4096 are possible");
  if (!(config.heartbeat_s > 0))
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "the heartbeat must be positive");
  TM_ASSIGN_OR_RETURN(const std::string host, listen_host(config));
  auto srun = std::make_unique<tm_srun>();
  TM_ASSIGN_OR_RETURN(trainmover::JobSecret secret, trainmover::JobSecret::generate());
  TM_ASSIGN_OR_RETURN(uint64_t job_id, trainmover::random_u64());
  job_id >>= 1;  // printable as a positive signed number too
  TM_ASSIGN_OR_RETURN(srun->store,
                      trainmover::rendezvous::TcpStoreServer::start(host + ":0", secret, job_id));
  TM_ASSIGN_OR_RETURN(control::Layout layout, control::Layout::create(config.nslots, 1));
  control::CoordinatorConfig cc;
  cc.address = host + ":0";
  cc.job_id = job_id;
  cc.layout = layout;
  cc.heartbeat_interval = trainmover::seconds(config.heartbeat_s);
  cc.heartbeat_timeout = trainmover::seconds(config.heartbeat_s * kHeartbeatsLost);
  cc.events_path = config.events != nullptr ? config.events : "";
  // With no standby left: how long to wait for one before stopping the job
  // (srun's environment, as trainmover-launch --standby-wait reads it).
  if (auto wait = trainmover::get_env("TRAINMOVER_STANDBY_WAIT")) {
    TM_ASSIGN_OR_RETURN(double s, trainmover::parse_seconds(*wait));
    cc.standby_wait = trainmover::seconds(s);
  }
  if (!config.quiet) {
    srun->printer = std::make_shared<trainmover::launcher::EventPrinter>("trainmover");
    cc.on_event = [printer = srun->printer](const nlohmann::json& e) { printer->print(e); };
  }
  TM_ASSIGN_OR_RETURN(srun->coordinator, control::Coordinator::start(std::move(cc), secret));
  srun->secret_hex = secret.to_hex();
  srun->job_id = std::to_string(job_id);
  return srun;
}

// The slots whose process registered on `host`.
Result<std::vector<int>> slots_on(control::Coordinator& coordinator, const std::string& host) {
  TM_ASSIGN_OR_RETURN(nlohmann::json st, coordinator.status());
  std::vector<int> slots;
  for (const nlohmann::json& s : st.value("slots", nlohmann::json::array())) {
    const nlohmann::json& p = s.value("process", nlohmann::json());
    if (p.is_object() && p.value("host", std::string()) == host)
      slots.push_back(s.value("slot", -1));
  }
  return slots;
}

}  // namespace

extern "C" {

struct tm_srun* tm_srun_start(const struct tm_srun_config* config, char* err, size_t errlen) {
  if (config == nullptr) {
    set_error(err, errlen, "no configuration");
    return nullptr;
  }
  auto started = start(*config);
  if (!started.ok()) {
    set_error(err, errlen, started.status().message());
    return nullptr;
  }
  return started->release();  // owned by the caller until tm_srun_stop
}

const char* tm_srun_control_address(const struct tm_srun* srun) {
  return srun->coordinator->address().c_str();
}
const char* tm_srun_store_address(const struct tm_srun* srun) {
  return srun->store->address().c_str();
}
const char* tm_srun_secret_hex(const struct tm_srun* srun) { return srun->secret_hex.c_str(); }
const char* tm_srun_job_id(const struct tm_srun* srun) { return srun->job_id.c_str(); }

int tm_srun_migrate_host(struct tm_srun* srun, const char* host, char* err, size_t errlen) {
  auto slots = slots_on(*srun->coordinator, host);
  if (!slots.ok()) {
    set_error(err, errlen, slots.status().message());
    return -1;
  }
  int asked = 0;
  for (int slot : *slots) {
    Status st = srun->coordinator->migrate(slot);
    if (st.ok())
      ++asked;
    else
      set_error(err, errlen, st.message());  // e.g. a recovery runs: asked again later
  }
  return asked;
}

int tm_srun_slot_hosts(struct tm_srun* srun, char* buf, size_t len) {
  if (len > 0) buf[0] = '\0';
  auto st = srun->coordinator->status();
  if (!st.ok()) return -1;
  std::set<std::string> hosts;
  for (const nlohmann::json& s : st->value("slots", nlohmann::json::array())) {
    const nlohmann::json& p = s.value("process", nlohmann::json());
    if (p.is_object()) hosts.insert(p.value("host", std::string()));
  }
  std::string list;
  for (const std::string& h : hosts) list += (list.empty() ? "" : ",") + h;
  set_error(buf, len, list);
  return static_cast<int>(hosts.size());
}

int tm_srun_slots_on_host(struct tm_srun* srun, const char* host) {
  auto slots = slots_on(*srun->coordinator, host);
  return slots.ok() ? static_cast<int>(slots->size()) : -1;
}

int tm_srun_stopped(const struct tm_srun* srun) {
  return srun->coordinator->stopped_reason().has_value() ? 1 : 0;
}

void tm_srun_stop(struct tm_srun* srun) {
  std::unique_ptr<tm_srun> owned(srun);
  if (!owned) return;
  if (owned->printer) {
    auto t = owned->printer->totals();
    std::fprintf(stderr, "trainmover: summary: %d failure(s), %d recovered, %.3f s of downtime\n",
                 t.failures, t.recoveries, t.downtime_s);
  }
  owned->coordinator.reset();
  owned->store.reset();
}

}  // extern "C"
