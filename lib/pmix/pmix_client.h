// PmixClient: this process as a PMIx client (under srun --mpi=pmix, or any
// PMIx server): who it is in the job, and the job's key/value exchange
// (put, commit, fence, get) used for the first wire-up.
//
// Contract: one PmixClient per process at a time, shared by its users (the
// first communicator's store, the worker's failure listener): PMIx itself
// is process-wide. acquire() returns the live one, or initializes PMIx when
// none lives; it fails with TM_ERROR_INVALID_ARGUMENT when the process was
// not started by a PMIx server (no PMIX_NAMESPACE in the environment). The
// last owner's release finalizes PMIx. Methods may be called from any
// thread; PMIx serialises them. Every blocking call is bounded by a timeout
// and fails with TM_ERROR_TIMEOUT naming what it waited for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace trainmover::pmix {

class PmixClient {
 public:
  static Result<std::shared_ptr<PmixClient>> acquire();
  // Whether this process was started by a PMIx server (acquire() may work).
  static bool available();
  ~PmixClient();
  PmixClient(const PmixClient&) = delete;
  PmixClient& operator=(const PmixClient&) = delete;

  const std::string& nspace() const { return nspace_; }
  uint32_t rank() const { return rank_; }
  uint32_t job_size() const { return job_size_; }

  // Publishes key=value to the job (PMIX_GLOBAL scope); visible to others
  // after commit() and a fence().
  Status put(const std::string& key, const std::string& value);
  Status commit();
  // Waits until every process of the job has reached the fence, collecting
  // the committed data.
  Status fence(Duration timeout);
  // The value that process `rank` published under `key`.
  Result<std::string> get(uint32_t rank, const std::string& key, Duration timeout);

 private:
  PmixClient() = default;
  static Result<std::shared_ptr<PmixClient>> init();
  std::string nspace_;
  uint32_t rank_ = 0;
  uint32_t job_size_ = 0;
};

}  // namespace trainmover::pmix
