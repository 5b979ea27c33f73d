// A rank of a job started by a PMIx server (srun --mpi=pmix, or
// pmix_event_test's own server) that wires up through the PMIx store.
//   pmix_store_client comm   tm_comm_init with TRAINMOVER_STORE=pmix (rank
//                            and size from PMIx unless TRAINMOVER_SLOT/NSLOTS
//                            are set), one allreduce, then prints
//     comm slot=S nslots=N sum=ok hosts=H   (H: the local addresses of its
//                                            TCP sockets, from getsockname)
//   pmix_store_client store  the PmixStore alone: each rank sets a key,
//                            one fence, every rank's key is read, and a set
//                            after the fence must be refused, naming the way
//                            out (pmix,tcp://); prints
//     store rank=R size=N peers=ok later=refused
// Anything else prints "error MESSAGE" and exits 2 (bad use) or 1.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "pmix/pmix_store.h"
#include "support/socket_hosts.h"
#include "trainmover/trainmover.h"

using namespace trainmover;

namespace {

void say(const std::string& line) {
  std::string out = line + "\n";
  if (write(STDOUT_FILENO, out.data(), out.size()) < 0) _exit(4);
}

int fail(const std::string& message) {
  say("error " + message);
  return 1;
}

int run_comm() {
  tm_config_t config = TM_CONFIG_INITIALIZER;
  if (tm_config_init(&config) != TM_SUCCESS) return fail(tm_get_last_error());
  tm_comm_t comm = nullptr;
  if (tm_comm_init(&comm, &config) != TM_SUCCESS) return fail(tm_get_last_error());
  int slot = -1, nslots = 0;
  tm_comm_slot(comm, &slot);
  tm_comm_nslots(comm, &nslots);
  std::vector<double> in(1000, slot + 1.0), out(in.size());
  if (tm_allreduce(in.data(), out.data(), in.size(), TM_FLOAT64, TM_SUM, comm) != TM_SUCCESS)
    return fail(tm_get_last_error());
  const double want = nslots * (nslots + 1) / 2.0;
  bool ok = true;
  for (double v : out) ok = ok && v == want;
  std::string hosts = testing::tcp_socket_hosts_text();  // while the links are up
  tm_comm_destroy(comm);
  if (!ok) return fail("allreduce gave the wrong sum");
  say("comm slot=" + std::to_string(slot) + " nslots=" + std::to_string(nslots) +
      " sum=ok hosts=" + hosts);
  return 0;
}

int run_store() {
  auto store = pmix::PmixStore::create(nullptr);
  if (!store.ok()) return fail(store.status().message());
  auto id = (*store)->identity();
  if (!id) return fail("a PMIx store without an identity");
  const std::string mine = "value-of-" + std::to_string(id->rank);
  Status st = (*store)->set("key/" + std::to_string(id->rank), mine);
  if (st.ok()) st = (*store)->sync(seconds(30));
  if (!st.ok()) return fail(st.message());
  for (int r = 0; r < id->size; ++r) {
    auto theirs = (*store)->get("key/" + std::to_string(r), seconds(10));
    if (!theirs.ok()) return fail(theirs.status().message());
    if (*theirs != "value-of-" + std::to_string(r)) return fail("rank " + std::to_string(r));
  }
  Status later = (*store)->set("key/late", "x");
  bool refused = !later.ok() && later.code() == TM_ERROR_INVALID_ARGUMENT &&
                 later.message().find("pmix,tcp://") != std::string::npos;
  if (!refused) return fail("a set after the fence was not refused clearly: " + later.message());
  auto counter = (*store)->add("counter", 1);
  if (counter.ok()) return fail("add() on a PMIx store succeeded");
  say("store rank=" + std::to_string(id->rank) + " size=" + std::to_string(id->size) +
      " peers=ok later=refused");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "comm") == 0) return run_comm();
  if (argc == 2 && std::strcmp(argv[1], "store") == 0) return run_store();
  say("error usage: pmix_store_client comm|store");
  return 2;
}
