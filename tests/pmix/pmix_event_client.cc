// A client forked by pmix_event_test's PMIx server: publishes its endpoint
// through PMIx, fences, reads every other rank's, then reports every failure
// event its FailureListener delivers, one line each on stdout:
//   ready rank=R size=S peers=ok events=job|lost-only
//   event NAME lost_server=0|1 ranks=R,R
// It exits 0 after EVENTS events, 3 when they do not come within 20 s.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "pmix/failure_listener.h"
#include "pmix/pmix_client.h"

using namespace trainmover;

namespace {

void say(const std::string& line) {
  std::string out = line + "\n";
  if (write(STDOUT_FILENO, out.data(), out.size()) < 0) _exit(4);
}

int fail(const Status& status) {
  say("error " + status.message());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int expected = argc > 1 ? std::atoi(argv[1]) : 1;
  auto client = pmix::PmixClient::acquire();
  if (!client.ok()) return fail(client.status());
  std::mutex mutex;
  std::condition_variable changed;
  int events = 0;
  bool lost_server = false;
  auto listener = pmix::FailureListener::start(**client, [&](const pmix::FailureEvent& e) {
    std::string ranks;
    for (uint32_t r : e.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    say("event " + e.status_name + " lost_server=" + (e.lost_server ? "1" : "0") +
        " ranks=" + ranks);
    std::lock_guard lock(mutex);
    ++events;
    lost_server = lost_server || e.lost_server;
    changed.notify_all();
  });
  if (!listener.ok()) return fail(listener.status());
  pmix::PmixClient& pmix = **client;
  std::string mine = "endpoint-of-" + std::to_string(pmix.rank());
  Status s = pmix.put("tm.endpoint", mine);
  if (s.ok()) s = pmix.commit();
  if (s.ok()) s = pmix.fence(seconds(20));
  if (!s.ok()) return fail(s);
  for (uint32_t r = 0; r < pmix.job_size(); ++r) {
    auto theirs = pmix.get(r, "tm.endpoint", seconds(10));
    if (!theirs.ok()) return fail(theirs.status());
    if (*theirs != "endpoint-of-" + std::to_string(r))
      return fail(error(TM_ERROR_PROTOCOL, "rank ", r, " published '", *theirs, "'"));
  }
  say("ready rank=" + std::to_string(pmix.rank()) + " size=" + std::to_string(pmix.job_size()) +
      " peers=ok events=" + ((*listener)->hears_job_events() ? "job" : "lost-only"));
  std::unique_lock lock(mutex);
  bool all = changed.wait_for(lock, std::chrono::seconds(20), [&] { return events >= expected; });
  bool server_gone = lost_server;
  lock.unlock();
  if (!all) return 3;
  if (server_gone) _exit(0);  // no server to say goodbye to
  listener->reset();
  return 0;
}
