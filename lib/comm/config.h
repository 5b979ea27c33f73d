// Communicator configuration: the C API's tm_config_t, its defaults, the
// TRAINMOVER_* environment variables, and the checked C++ form.
//
// One table (config.cc) lists every variable with its meaning; it drives
// both parsing and the documentation printed by environment_help().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "trainmover/trainmover.h"

namespace trainmover {

// Defaults, then the environment. Strings point into the environment or to
// static literals.
Status init_config(tm_config_t& config);

// Text listing every TRAINMOVER_* variable, for --help output.
std::string environment_help();
// The names of every variable read (the man page is checked against it).
std::vector<std::string> environment_variables();

// tm_config_t.record_reserve_bytes by default: the recorded iterations of a
// small job (two iterations of 16 MiB of outputs).
inline constexpr size_t kDefaultRecordReserveBytes = size_t{32} << 20;

struct CommConfig {
  int slot = -1;
  int nslots = 0;
  uint64_t job_id = 0;
  std::string job_secret;  // hex
  std::string store_address;
  std::string listen_address;
  std::string listen_interface;
  std::string name = "world";
  double timeout_s = 30.0;
  double connect_timeout_s = 60.0;
  double heartbeat_interval_s = 0.5;
  size_t segment_bytes = size_t{512} << 10;
  size_t socket_buffer_bytes = size_t{4} << 20;  // capped by net.core.[rw]mem_max
  int staging_buffers = 4;

  static Result<CommConfig> from_c(const tm_config_t& config);
  // Each problem is named with the field and its environment variable.
  Status validate() const;
};

}  // namespace trainmover
