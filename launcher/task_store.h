// What a task's program takes from PMIx under srun --trainmover: which store
// it wires up through,
// the srun side's TCP store, or PMIx first when the task is a PMIx client
// (srun --mpi=pmix), with the TCP store behind it for what PMIx cannot
// serve (standbys taking a slot, later epochs, state transfer); and whether
// it listens for PMIx failure events.
#pragma once

#include <string>
#include <string_view>

namespace trainmover::launcher {

// TRAINMOVER_STORE for the program: "pmix,tcp://HOST:PORT" when `pmix` is
// true and `tcp_store` (HOST:PORT or tcp://HOST:PORT, as the srun side
// sets it) is not empty, else `tcp_store` unchanged.
std::string task_store_spec(std::string_view tcp_store, bool pmix);

// Whether the program should wire up through PMIx: this build has PMIx,
// the task's environment names a PMIx server's client (PMIX_NAMESPACE and
// PMIX_RANK, as srun --mpi=pmix sets them) and TRAINMOVER_PMIX_WIREUP is not
// "0". Standby tasks take part in the fence from tm_worker_init (they create
// their communicators only once promoted), and joiners read the first round
// from the TCP store behind it (pmix_store.h). Only the environment is read:
// the launcher never becomes a PMIx client itself (PMIx is process-wide and
// belongs to the program).
bool pmix_wireup_wanted();

// Whether the program should listen for PMIx failure events
// (TRAINMOVER_PMIX_EVENTS=1 for it; worker/pmix_failures.h): this build has
// PMIx, the task is a PMIx client (PMIX_NAMESPACE and PMIX_RANK) and the
// step's TRAINMOVER_PMIX_EVENTS is not "0". Standbys too: a gone task is
// reported by whoever hears it first.
bool pmix_events_wanted();

}  // namespace trainmover::launcher
