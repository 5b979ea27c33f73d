#include "pmix/failure_listener.h"

#include <pmix.h>

#include <condition_variable>
#include <mutex>

namespace trainmover::pmix {

// Lives as long as the registration: the PMIx callback gets it as cbdata
// only through the registry below, keyed by PMIx's handler id.
struct FailureListener::State {
  std::string nspace;
  Callback callback;
  std::mutex mutex;
  std::condition_variable changed;
  bool registered = false;
  bool stopping = false;
  int running = 0;
  size_t handler_id = 0;
  pmix_status_t registration = PMIX_SUCCESS;
  bool registration_done = false;
};

namespace {

// PMIx's event callback carries no user pointer: the one listener of the
// process (PMIx is per process) is found here.
std::mutex g_registry_mutex;
std::shared_ptr<FailureListener::State> g_listener;

std::vector<uint32_t> affected_ranks(const std::string& nspace, const pmix_proc_t* source,
                                     const pmix_info_t* info, size_t ninfo) {
  std::vector<uint32_t> ranks;
  auto add = [&](const pmix_proc_t& p) {
    if (nspace == p.nspace && p.rank != PMIX_RANK_UNDEF && p.rank != PMIX_RANK_WILDCARD)
      ranks.push_back(p.rank);
  };
  for (size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC) {
      add(*info[i].value.data.proc);
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
               info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray &&
               info[i].value.data.darray->type == PMIX_PROC) {
      const auto* procs = static_cast<const pmix_proc_t*>(info[i].value.data.darray->array);
      for (size_t k = 0; k < info[i].value.data.darray->size; ++k) add(procs[k]);
    }
  }
  if (ranks.empty() && source) add(*source);
  return ranks;
}

void on_event(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[],
              size_t ninfo, pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t done,
              void* done_data) {
  std::shared_ptr<FailureListener::State> state;
  {
    std::lock_guard lock(g_registry_mutex);
    state = g_listener;
  }
  if (state) {
    std::unique_lock lock(state->mutex);
    if (!state->stopping) {
      ++state->running;
      lock.unlock();
      FailureEvent event;
      event.status = status;
      event.status_name = PMIx_Error_string(status);
      event.ranks = affected_ranks(state->nspace, source, info, ninfo);
      event.lost_server = status == PMIX_ERR_LOST_CONNECTION;
      state->callback(event);
      lock.lock();
      --state->running;
      state->changed.notify_all();
    }
  }
  // Let other handlers of the same event run too.
  if (done) done(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, done_data);
}

void on_registered(pmix_status_t status, size_t handler_id, void*) {
  std::shared_ptr<FailureListener::State> state;
  {
    std::lock_guard lock(g_registry_mutex);
    state = g_listener;
  }
  if (!state) return;
  std::lock_guard lock(state->mutex);
  state->registration = status;
  state->handler_id = handler_id;
  state->registered = status == PMIX_SUCCESS;
  state->registration_done = true;
  state->changed.notify_all();
}

void on_deregistered(pmix_status_t, void* data) {
  auto* state = static_cast<FailureListener::State*>(data);
  std::lock_guard lock(state->mutex);
  state->registered = false;
  state->changed.notify_all();
}

}  // namespace

const std::vector<int>& FailureListener::codes() {
  static const std::vector<int> kCodes = {
      PMIX_ERR_PROC_ABORTED,      PMIX_ERR_PROC_ABORTING,     PMIX_ERR_PROC_ABORTED_BY_SIG,
      PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_EVENT_NODE_DOWN,
      PMIX_ERR_UNREACH,           PMIX_ERR_LOST_CONNECTION};
  return kCodes;
}

namespace {

// PMIx_Register_event_handler hands the codes and the info to its progress
// thread without copying them, and reads them after the call returns (a CI
// run under ASan caught a read of a destructed name). Both live as long as the
// process, so a late read is safe even after our wait has given up.
const pmix_info_t& handler_name() {
  static const pmix_info_t name = [] {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_EVENT_HDLR_NAME, "trainmover-failures", PMIX_STRING);
    return info;
  }();
  return name;
}

const std::vector<pmix_status_t>& job_event_codes() {
  static const std::vector<pmix_status_t> codes(FailureListener::codes().begin(),
                                                FailureListener::codes().end());
  return codes;
}

const std::vector<pmix_status_t>& lost_server_codes() {
  static const std::vector<pmix_status_t> codes = {PMIX_ERR_LOST_CONNECTION};
  return codes;
}

// Registers on_event for `codes` (which live as long as the process, see
// above) and waits for PMIx's answer (10 s at most).
Status register_handler(FailureListener::State& state, const std::vector<pmix_status_t>& codes) {
  {
    std::lock_guard lock(state.mutex);
    state.registration_done = false;
  }
  // PMIx takes non-const pointers but only reads them.
  pmix_status_t rc = PMIx_Register_event_handler(
      const_cast<pmix_status_t*>(codes.data()), codes.size(),
      const_cast<pmix_info_t*>(&handler_name()), 1, on_event, on_registered, nullptr);
  if (rc != PMIX_SUCCESS)
    return error(TM_ERROR_SYSTEM, "PMIx_Register_event_handler: ", PMIx_Error_string(rc));
  std::unique_lock lock(state.mutex);
  if (!state.changed.wait_for(lock, std::chrono::seconds(10),
                              [&] { return state.registration_done; }))
    return error(TM_ERROR_TIMEOUT, "PMIx_Register_event_handler: no answer within 10 s");
  if (state.registration != PMIX_SUCCESS)
    return error(TM_ERROR_SYSTEM,
                 "PMIx_Register_event_handler: ", PMIx_Error_string(state.registration));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<FailureListener>> FailureListener::start(PmixClient& client,
                                                                Callback callback) {
  auto state = std::make_shared<State>();
  state->nspace = client.nspace();
  state->callback = std::move(callback);
  {
    std::lock_guard lock(g_registry_mutex);
    if (g_listener)
      return error(TM_ERROR_INVALID_ARGUMENT, "PMIx: a failure listener already runs");
    g_listener = state;
  }
  // Job events need the server's support; Slurm 22.05's refuses them
  // ("SERVER FAILED REQUEST"). The lost server is seen by the client alone.
  Status job = register_handler(*state, job_event_codes());
  std::string refused;
  if (!job.ok()) {
    refused = job.message();
    Status local = register_handler(*state, lost_server_codes());
    if (!local.ok()) {
      std::lock_guard registry(g_registry_mutex);
      g_listener.reset();
      return local.with_context("PMIx failure events (" + refused + ")");
    }
  }
  return std::unique_ptr<FailureListener>(new FailureListener(std::move(state), refused));
}

FailureListener::~FailureListener() {
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->changed.wait(lock, [&] { return state_->running == 0; });
  if (state_->registered) {
    size_t id = state_->handler_id;
    lock.unlock();
    PMIx_Deregister_event_handler(id, on_deregistered, state_.get());
    lock.lock();
    state_->changed.wait_for(lock, std::chrono::seconds(5), [&] { return !state_->registered; });
  }
  lock.unlock();
  std::lock_guard registry(g_registry_mutex);
  g_listener.reset();
}

}  // namespace trainmover::pmix
