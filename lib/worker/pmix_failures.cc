// The worker's PMIx failure source (pmix_failures.h).
#include "worker/pmix_failures.h"

#include <cstdio>

#include "common/parse.h"
#include "config.h"  // HAVE_PMIX

#if HAVE_PMIX
#include "pmix/failure_listener.h"
#include "pmix/pmix_client.h"
#endif

namespace trainmover::worker {
namespace {

constexpr const char* kVariable = "TRAINMOVER_PMIX_EVENTS";

Result<bool> wanted() {
  const std::string value = get_env(kVariable).value_or("0");
  if (value == "0" || value.empty()) return false;
  if (value == "1") return true;
  return error(TM_ERROR_INVALID_ARGUMENT, kVariable, " must be 0 or 1, not '", value, "'");
}

}  // namespace

#if HAVE_PMIX
struct PmixFailures::Impl {
  // Declared in this order so that the listener goes first.
  std::shared_ptr<pmix::PmixClient> client;
  std::unique_ptr<pmix::FailureListener> listener;
};
#else
struct PmixFailures::Impl {};
#endif

PmixFailures::PmixFailures(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PmixFailures::~PmixFailures() = default;

Result<int> PmixFailures::own_task() {
  TM_ASSIGN_OR_RETURN(bool want, wanted());
  if (!want) return -1;
  const std::string rank = get_env("PMIX_RANK").value_or("");
  auto task = parse_int(rank, 0, INT32_MAX);
  if (!task.ok())
    return error(TM_ERROR_INVALID_ARGUMENT, kVariable, "=1 needs PMIX_RANK, a rank, not '", rank,
                 "'");
  return static_cast<int>(*task);
}

Result<std::unique_ptr<PmixFailures>> PmixFailures::start(Report report) {
  TM_ASSIGN_OR_RETURN(bool want, wanted());
  if (!want) return std::unique_ptr<PmixFailures>();
#if HAVE_PMIX
  auto impl = std::make_unique<Impl>();
  TM_ASSIGN_OR_RETURN(impl->client, pmix::PmixClient::acquire());
  auto forward = [report = std::move(report)](const pmix::FailureEvent& e) {
    if (e.lost_server) {
      // This node's PMIx server is gone (its slurmstepd died): the node's
      // ranks die with it, and the coordinator hears of it otherwise.
      std::fprintf(stderr, "trainmover: PMIx: lost this node's PMIx server (%s)\n",
                   e.status_name.c_str());
      return;
    }
    for (uint32_t rank : e.ranks) report(static_cast<int>(rank), e.status_name);
  };
  auto listener = pmix::FailureListener::start(*impl->client, std::move(forward));
  if (!listener.ok()) return listener.status().with_context("PMIx failure events");
  // A server that refuses the job's events (Slurm 22.05's) leaves the lost
  // server alone; failures then come from exits, heartbeats and links.
  impl->listener = std::move(*listener);
  return std::unique_ptr<PmixFailures>(new PmixFailures(std::move(impl)));
#else
  (void)report;
  return error(TM_ERROR_UNSUPPORTED, kVariable, "=1, but this build has no PMIx");
#endif
}

}  // namespace trainmover::worker
