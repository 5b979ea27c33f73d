#include "comm/config.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "common/log.h"
#include "common/parse.h"
#include "common/secret.h"
#include "rendezvous/store_factory.h"
#include "transport/transport_factory.h"

namespace trainmover {
namespace {

constexpr double kMaxTimeoutSeconds = 1e6;  // about 11 days; beyond it deadlines overflow
constexpr double kMaxHeartbeatSeconds = 60;

struct EnvVar {
  const char* name;
  const char* meaning;
  std::function<Status(tm_config_t&, const char*)> apply;
};

Result<int64_t> int_value(const char* text, int64_t min, int64_t max) {
  return parse_int(text, min, max);
}

// Seconds in (0, max]; a negative value is a number out of range.
Result<double> seconds_value(std::string_view text, double max) {
  bool negative = !text.empty() && text.front() == '-';
  TM_ASSIGN_OR_RETURN(double s, parse_seconds(negative ? text.substr(1) : text));
  if (negative) s = -s;
  if (!(s > 0 && s <= max))
    return error(TM_ERROR_INVALID_ARGUMENT, "'", text, "' is out of range (0, ", max, "] seconds");
  return s;
}

const std::vector<EnvVar>& env_table() {
  static const std::vector<EnvVar> table = {
      {"TRAINMOVER_SLOT", "this process's slot (0-based)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(int64_t n, int_value(v, 0, INT32_MAX));
         c.slot = static_cast<int>(n);
         return Status::Ok();
       }},
      {"TRAINMOVER_NSLOTS", "number of slots of the communicator",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(int64_t n, int_value(v, 1, INT32_MAX));
         c.nslots = static_cast<int>(n);
         return Status::Ok();
       }},
      {"TRAINMOVER_JOB_ID", "job identifier carried by every frame (decimal)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(int64_t n, int_value(v, 0, INT64_MAX));
         c.job_id = static_cast<uint64_t>(n);
         return Status::Ok();
       }},
      {"TRAINMOVER_JOB_SECRET", "per-job secret, hex (set by the launcher; keep it private)",
       [](tm_config_t& c, const char* v) -> Status {
         c.job_secret = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_STORE",
       "rendezvous store: tcp://HOST:PORT (or HOST:PORT), pmix, or pmix,tcp://HOST:PORT",
       [](tm_config_t& c, const char* v) -> Status {
         c.store_address = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_LISTEN_ADDR",
       "address links listen on (default: the one that reaches the store)",
       [](tm_config_t& c, const char* v) -> Status {
         c.listen_address = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_SOCKET_IFNAME",
       "interfaces links may bind, as NCCL_SOCKET_IFNAME: prefixes (eth), exact (=eth0), "
       "excluded (^docker,lo)",
       [](tm_config_t& c, const char* v) -> Status {
         c.listen_interface = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_TRANSPORT",
       "transport of the links: auto (default: shared memory within a host, TCP "
       "between hosts), tcp, or shm",
       [](tm_config_t& c, const char* v) -> Status {
         c.transport = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_ALGO",
       "collective algorithm: auto (default: chosen by size), ring, or doubling (recursive "
       "doubling for every allreduce)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_RETURN_IF_ERROR(parse_algorithm_force(v).status());
         c.algorithm = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_ALGO_THRESHOLDS",
       "where auto switches algorithm: [OP:]doubling:SIZE[,...], the largest call (of OP, or of "
       "every collective) that runs recursive doubling (defaults allreduce 512K, reduce_scatter "
       "16K, allgather 1M, broadcast 1M; doubling:0: the ring always)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_RETURN_IF_ERROR(parse_algorithm_thresholds(v).status());
         c.algorithm_thresholds = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_COMM_NAME", "communicator name (default world)",
       [](tm_config_t& c, const char* v) -> Status {
         c.name = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_TIMEOUT", "seconds without progress before a collective fails (default 30)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(c.timeout_s, seconds_value(v, kMaxTimeoutSeconds));
         return Status::Ok();
       }},
      {"TRAINMOVER_CONNECT_TIMEOUT", "seconds allowed for rendezvous and connections (default 60)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(c.connect_timeout_s, seconds_value(v, kMaxTimeoutSeconds));
         return Status::Ok();
       }},
      {"TRAINMOVER_HEARTBEAT_INTERVAL", "seconds between liveness messages (default 0.5)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(c.heartbeat_interval_s, seconds_value(v, kMaxHeartbeatSeconds));
         return Status::Ok();
       }},
      {"TRAINMOVER_SEGMENT_BYTES",
       "pipelining unit of the ring (default 512K); over transport tcp the allgather uses 4 "
       "times it (capped at the larger of 4M and it), the broadcast a call's size / 8 within "
       "[it, 4 times it]",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(c.segment_bytes, parse_size(v));
         return Status::Ok();
       }},
      {"TRAINMOVER_SOCKET_BUFFER",
       "socket buffer size (default 4M, capped by net.core.wmem_max/rmem_max; 0: kernel "
       "autotuning)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(c.socket_buffer_bytes, parse_size(v));
         return Status::Ok();
       }},
      {"TRAINMOVER_STAGING_BUFFERS", "receive buffers per communicator, >= 2 (default 4)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(int64_t n, int_value(v, 2, 1024));
         c.staging_buffers = static_cast<int>(n);
         return Status::Ok();
       }},
      {"TRAINMOVER_RECORD_ITERATIONS",
       "iterations recorded for standbys when TRAINMOVER_TRACE_DIR is set (default 2; 0: off)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(int64_t n, int_value(v, 0, 1000));
         c.record_iterations = static_cast<int>(n);
         return Status::Ok();
       }},
      {"TRAINMOVER_RECORD_RESERVE",
       "trace memory made resident by tm_comm_init, before recording (default 32M)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(c.record_reserve_bytes, parse_size(v));
         return Status::Ok();
       }},
      {"TRAINMOVER_TRACE_DIR", "directory of the job's collective traces (enables recording)",
       [](tm_config_t& c, const char* v) -> Status {
         c.trace_dir = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_TRACE_COMPRESS", "1: zstd-compress written traces (default 0)",
       [](tm_config_t& c, const char* v) -> Status {
         TM_ASSIGN_OR_RETURN(int64_t n, int_value(v, 0, 1));
         c.trace_compress = static_cast<int>(n);
         return Status::Ok();
       }},
      {"TRAINMOVER_ROLE", "this process's role, e.g. stage=first,tp=0 (default stage=none)",
       [](tm_config_t& c, const char* v) -> Status {
         c.role = v;
         return Status::Ok();
       }},
      {"TRAINMOVER_LOG", "diagnostics on stderr: error, warn (default), info or debug",
       [](tm_config_t&, const char* v) -> Status { return parse_log_level(v).status(); }},
  };
  return table;
}

std::string hex_u32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// The header fields of a caller's struct (trainmover.h): checked before
// anything else of it is read.
Status check_header(const tm_config_t& c) {
  constexpr size_t kHeaderBytes = offsetof(tm_config_t, slot);
  if (c.magic != TM_CONFIG_MAGIC) {
    return error(TM_ERROR_INVALID_ARGUMENT, "tm_config_t.magic is ", hex_u32(c.magic),
                 ", not TM_CONFIG_MAGIC (", hex_u32(TM_CONFIG_MAGIC),
                 "): declare the configuration with TM_CONFIG_INITIALIZER, then call "
                 "tm_config_init()");
  }
  if (c.version < 1 || c.version > TM_CONFIG_VERSION) {
    return error(TM_ERROR_INVALID_ARGUMENT, "tm_config_t.version is ", c.version,
                 "; this library knows versions 1 to ", TM_CONFIG_VERSION,
                 " (a program built against a newer trainmover.h?)");
  }
  if (c.struct_size < kHeaderBytes || c.struct_size > sizeof(tm_config_t) ||
      c.struct_size % alignof(tm_config_t) != 0) {
    return error(TM_ERROR_INVALID_ARGUMENT, "tm_config_t.struct_size is ", c.struct_size,
                 ": not the size of a tm_config_t of this or an older header (a multiple of ",
                 alignof(tm_config_t), " from ", kHeaderBytes, " to ", sizeof(tm_config_t),
                 "); declare the configuration with TM_CONFIG_INITIALIZER");
  }
  return Status::Ok();
}

}  // namespace

Status init_config(tm_config_t& c) {
  c = tm_config_t TM_CONFIG_INITIALIZER;
  for (const EnvVar& var : env_table()) {
    const char* value = std::getenv(var.name);
    if (value == nullptr || *value == '\0') continue;
    Status st = var.apply(c, value);
    if (!st.ok()) return Status(TM_ERROR_INVALID_ARGUMENT, str_cat(var.name, ": ", st.message()));
  }
  return Status::Ok();
}

Status init_caller_config(tm_config_t& caller) {
  TM_RETURN_IF_ERROR(check_header(caller));
  tm_config_t full;
  TM_RETURN_IF_ERROR(init_config(full));
  const size_t size = caller.struct_size;
  const unsigned version = caller.version;
  std::memcpy(&caller, &full, size);
  caller.struct_size = size;  // the caller's header stays
  caller.version = version;
  return Status::Ok();
}

Result<tm_config_t> complete_config(const tm_config_t& caller) {
  TM_RETURN_IF_ERROR(check_header(caller));
  tm_config_t full = TM_CONFIG_INITIALIZER;
  // Only an older header's struct has a tail to fill; the environment is not
  // read (nor its errors reported) for a complete one.
  if (caller.struct_size < sizeof(tm_config_t)) TM_RETURN_IF_ERROR(init_config(full));
  std::memcpy(&full, &caller, caller.struct_size);
  full.struct_size = sizeof(tm_config_t);
  full.version = TM_CONFIG_VERSION;
  return full;
}

std::string environment_help() {
  std::string text;
  for (const EnvVar& var : env_table())
    text += str_cat("  ", var.name, "\n      ", var.meaning, "\n");
  return text;
}

std::vector<std::string> environment_variables() {
  std::vector<std::string> names;
  for (const EnvVar& var : env_table()) names.emplace_back(var.name);
  return names;
}

Result<AlgorithmPolicy> algorithm_policy(const tm_config_t& c) {
  AlgorithmPolicy policy;
  if (c.algorithm != nullptr) {
    auto force = parse_algorithm_force(c.algorithm);
    if (!force.ok()) return force.status().with_context("algorithm (TRAINMOVER_ALGO)");
    policy.force = force.value();
  }
  if (c.algorithm_thresholds != nullptr) {
    auto thresholds = parse_algorithm_thresholds(c.algorithm_thresholds);
    if (!thresholds.ok())
      return thresholds.status().with_context("algorithm_thresholds (TRAINMOVER_ALGO_THRESHOLDS)");
    policy.doubling_max_bytes = thresholds.value().doubling_max_bytes;
    policy.halving_max_bytes = thresholds.value().halving_max_bytes;
  }
  return policy;
}

Result<CommConfig> CommConfig::from_c(const tm_config_t& caller) {
  TM_ASSIGN_OR_RETURN(const tm_config_t c, complete_config(caller));
  CommConfig out;
  out.slot = c.slot;
  out.nslots = c.nslots;
  out.job_id = c.job_id;
  auto str = [](const char* s) { return s != nullptr ? std::string(s) : std::string(); };
  out.job_secret = str(c.job_secret);
  out.store_address = str(c.store_address);
  out.listen_address = str(c.listen_address);
  out.listen_interface = str(c.listen_interface);
  out.name = c.name != nullptr ? std::string(c.name) : "world";
  out.transport = c.transport != nullptr ? std::string(c.transport) : out.transport;
  out.timeout_s = c.timeout_s;
  out.connect_timeout_s = c.connect_timeout_s;
  out.heartbeat_interval_s = c.heartbeat_interval_s;
  out.segment_bytes = c.segment_bytes;
  out.socket_buffer_bytes = c.socket_buffer_bytes;
  out.staging_buffers = c.staging_buffers;
  TM_ASSIGN_OR_RETURN(out.algorithms, algorithm_policy(c));
  TM_RETURN_IF_ERROR(out.validate());
  return out;
}

Status CommConfig::validate() const {
  auto bad = [](const char* what, const std::string& why) {
    return Status(TM_ERROR_INVALID_ARGUMENT, str_cat(what, ": ", why));
  };
  auto store = rendezvous::StoreSpec::parse(store_address);
  // Under PMIx both may be left unset: the PMIx server gives the rank and
  // the job size (Communicator::open).
  const bool identity_from_store = slot == -1 && nslots == 0 && store.ok() &&
                                   store.value().kind == rendezvous::StoreSpec::Kind::kPmix;
  if (!identity_from_store && nslots < 1)
    return bad("nslots (TRAINMOVER_NSLOTS)", "must be at least 1");
  if (!identity_from_store && (slot < 0 || slot >= nslots)) {
    return bad("slot (TRAINMOVER_SLOT)", str_cat(slot, " is not in [0, ", nslots, ")"));
  }
  if (job_secret.empty())
    return bad("job_secret (TRAINMOVER_JOB_SECRET)", "not set; the launcher provides it");
  if (auto s = JobSecret::from_hex(job_secret); !s.ok())
    return bad("job_secret (TRAINMOVER_JOB_SECRET)", s.status().message());
  if (store_address.empty()) return bad("store_address (TRAINMOVER_STORE)", "not set");
  if (!store.ok()) return bad("store_address", store.status().message());
  TM_RETURN_IF_ERROR(
      transport::check_transport_kind(transport, "transport (TRAINMOVER_TRANSPORT)"));
  if (name.empty() || name.size() > 128)
    return bad("name (TRAINMOVER_COMM_NAME)", "must have 1 to 128 characters");
  constexpr double kMaxSeconds = kMaxTimeoutSeconds;
  if (!(timeout_s > 0 && timeout_s <= kMaxSeconds)) {
    return bad("timeout_s (TRAINMOVER_TIMEOUT)", "must be positive and at most 1e6 seconds");
  }
  if (!(connect_timeout_s > 0 && connect_timeout_s <= kMaxSeconds)) {
    return bad("connect_timeout_s (TRAINMOVER_CONNECT_TIMEOUT)",
               "must be positive and at most 1e6 seconds");
  }
  if (!(heartbeat_interval_s > 0) || heartbeat_interval_s > 60) {
    return bad("heartbeat_interval_s (TRAINMOVER_HEARTBEAT_INTERVAL)",
               "must be in (0, 60] seconds");
  }
  if (segment_bytes < 64 || segment_bytes > (size_t{64} << 20)) {
    return bad("segment_bytes (TRAINMOVER_SEGMENT_BYTES)", "must be between 64 bytes and 64 MiB");
  }
  if (socket_buffer_bytes > (size_t{1} << 30))
    return bad("socket_buffer_bytes (TRAINMOVER_SOCKET_BUFFER)", "at most 1 GiB");
  if (staging_buffers < 2 || staging_buffers > 1024) {
    return bad("staging_buffers (TRAINMOVER_STAGING_BUFFERS)", "must be between 2 and 1024");
  }
  return Status::Ok();
}

size_t copy_segment_bytes(const CommConfig& config) {
  const size_t segment = config.segment_bytes;
  if (config.transport != "tcp") return segment;
  return std::min(4 * segment, std::max(segment, kMaxP2PFrameBytes));
}

size_t broadcast_segment_bytes(const CommConfig& config, size_t bytes) {
  return std::clamp(bytes / 8, config.segment_bytes, copy_segment_bytes(config));
}

}  // namespace trainmover
