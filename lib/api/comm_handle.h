// The real communicator behind a C API handle, for other parts of the
// library (the runtime's worker drives the switch of the program's
// communicators through it). Not part of the public API.
#pragma once

#include <functional>

#include "comm/communicator.h"
#include "common/status.h"
#include "trainmover/trainmover.h"

namespace trainmover::api {

// The live communicator of `comm`; fails for NULL or a sandbox handle. The
// pointer is valid while the handle lives and stays live.
Result<Communicator*> live_communicator(tm_comm_t comm);

// Runs `body` as every C API call does: its Status becomes the result code
// and the calling thread's tm_get_last_error(); exceptions become errors.
tm_result_t c_call(const std::function<Status()>& body);

}  // namespace trainmover::api
