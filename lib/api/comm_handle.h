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

// A joiner promoted again before its switch (the recovery started a new
// round, docs/runtime.md): a fresh standby communicator of `comm`'s
// configuration, listening at a new endpoint, replaces the handle's joined
// one (its links close), so that it can join the new epoch's view.
Status restart_standby(tm_comm_t comm);
// The same for a group of `parent` (restarted first): a fresh standby split
// of it with the group's color and key. Groups of one parent must be
// restarted in the order they were split (standby splits are numbered).
Status restart_standby_group(tm_comm_t group, tm_comm_t parent);

// Runs `body` as every C API call does: its Status becomes the result code
// and the calling thread's tm_get_last_error(); exceptions become errors.
tm_result_t c_call(const std::function<Status()>& body);

}  // namespace trainmover::api
