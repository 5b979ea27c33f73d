#include "api/record_config.h"

#include <unistd.h>

#include "comm/config.h"
#include "record/compress.h"

namespace trainmover::api {

Result<RecordConfig> RecordConfig::from_c(const tm_config_t& caller) {
  TM_ASSIGN_OR_RETURN(const tm_config_t c, complete_config(caller));
  RecordConfig out;
  out.job_id = c.job_id;
  out.slot = c.slot;
  if (c.record_iterations < 0 || c.record_iterations > 1000) {
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "record_iterations (TRAINMOVER_RECORD_ITERATIONS): must be between 0 and 1000");
  }
  out.iterations = static_cast<uint32_t>(c.record_iterations);
  // Faulting in more than the machine can spare would push the job out of
  // memory before it records anything.
  const uint64_t physical = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                            static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  if (c.record_reserve_bytes > physical / 4) {
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "record_reserve_bytes (TRAINMOVER_RECORD_RESERVE): ", c.record_reserve_bytes,
                 " bytes is more than a quarter of this machine's ", physical, " bytes of memory");
  }
  out.reserve_bytes = c.record_reserve_bytes;
  if (c.trace_dir != nullptr) out.trace_dir = c.trace_dir;
  if (c.trace_compress != 0 && c.trace_compress != 1) {
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "trace_compress (TRAINMOVER_TRACE_COMPRESS): must be 0 or 1");
  }
  if (c.trace_compress == 1) {
    if (!record::zstd_available()) {
      return error(TM_ERROR_UNSUPPORTED,
                   "trace_compress (TRAINMOVER_TRACE_COMPRESS): this build has no zstd "
                   "(install libzstd-dev and re-run configure), so traces cannot be compressed");
    }
    out.compression = record::Compression::kZstd;
  }
  if (c.role != nullptr && *c.role != '\0') {
    auto role = record::Role::parse(c.role);
    if (!role.ok()) return role.status().with_context("role (TRAINMOVER_ROLE)");
    out.role = std::move(role.value());
    out.role_given = true;
  }
  return out;
}

Result<record::Stage> stage_from_c(tm_stage_t stage) {
  switch (stage) {
    case TM_STAGE_NONE:
      return record::Stage::kNone;
    case TM_STAGE_FIRST:
      return record::Stage::kFirst;
    case TM_STAGE_MIDDLE:
      return record::Stage::kMiddle;
    case TM_STAGE_LAST:
      return record::Stage::kLast;
  }
  return error(TM_ERROR_INVALID_ARGUMENT, "invalid pipeline stage ", static_cast<int>(stage));
}

}  // namespace trainmover::api
