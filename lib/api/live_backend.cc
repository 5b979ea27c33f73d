#include "api/live_backend.h"

namespace trainmover::api {

Result<std::unique_ptr<CommBackend>> LiveBackend::create(const tm_config_t& config) {
  TM_ASSIGN_OR_RETURN(CommConfig c, CommConfig::from_c(config));
  TM_ASSIGN_OR_RETURN(auto comm, Communicator::create(c));
  return std::unique_ptr<CommBackend>(std::make_unique<LiveBackend>(std::move(comm)));
}

}  // namespace trainmover::api
