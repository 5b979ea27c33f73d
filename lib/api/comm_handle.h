// The real communicator behind a C API handle, for other parts of the
// library (the runtime's worker drives the switch of the program's
// communicators through it). Not part of the public API.
#pragma once

#include <functional>
#include <string>

#include "comm/communicator.h"
#include "common/status.h"
#include "trainmover/trainmover.h"

namespace trainmover::api {

// The live communicator of `comm`; fails for NULL or a sandbox handle. The
// pointer is valid while the handle lives and stays live.
Result<Communicator*> live_communicator(tm_comm_t comm);

// The full-rebuild alternative to the delta switch: a new communicator of
// `comm`'s configuration named `name`, serving `slot`, made as tm_comm_init()
// makes one (rendezvous through the store, every link connected again),
// replaces the handle's live one, which is then destroyed (its links close).
// Every member must call it with the same name, at about the same time. On
// failure the handle keeps the old communicator (after a failure: aborted).
Status rebuild_live(tm_comm_t comm, const std::string& name, int slot);

// Runs `body` as every C API call does: its Status becomes the result code
// and the calling thread's tm_get_last_error(); exceptions become errors.
tm_result_t c_call(const std::function<Status()>& body);

}  // namespace trainmover::api
