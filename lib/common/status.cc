#include "common/status.h"

#include <cstring>

namespace trainmover {

Status system_error(const std::string& what, int errno_value) {
  return Status(TM_ERROR_SYSTEM, what + ": " + std::strerror(errno_value));
}

}  // namespace trainmover
