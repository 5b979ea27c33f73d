// The job file: how trainmover-ctl (and any other tool) finds a running job.
// The launcher writes it when the coordinator is up: a JSON object
// {"address": "host:port", "job_id": N, "secret": HEX, "pid": LAUNCHER}, mode
// 0600, created with O_EXCL through a temporary name and renamed, so a
// reader never sees half a file. Readers refuse a file that others may read
// or write (it holds the job secret) or that another user owns.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/secret.h"
#include "common/status.h"

namespace trainmover::control {

struct JobFile {
  std::string address;
  uint64_t job_id = 0;
  std::string secret_hex;
  pid_t launcher_pid = 0;
};

Status write_job_file(const std::string& path, const JobFile& job);
Result<JobFile> read_job_file(const std::string& path);

}  // namespace trainmover::control
