// The C API of the worker (tm_worker_* in trainmover.h) over Worker.
#include <memory>
#include <set>
#include <vector>

#include "api/comm_handle.h"
#include "trainmover/trainmover.h"
#include "worker/worker.h"

struct tm_worker {
  std::unique_ptr<trainmover::worker::Worker> impl;
};

namespace {

using trainmover::Status;
using trainmover::api::c_call;

Status need_worker(tm_worker_t w) {
  if (w == nullptr || !w->impl)
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "worker is NULL");
  return Status::Ok();
}

template <typename T>
Status need_out(T* p, const char* what) {
  if (p == nullptr) return trainmover::error(TM_ERROR_INVALID_ARGUMENT, what, " is NULL");
  return Status::Ok();
}

}  // namespace

tm_result_t tm_worker_init(tm_worker_t* worker) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_out(worker, "worker"));
    *worker = nullptr;
    TM_ASSIGN_OR_RETURN(auto impl, trainmover::worker::Worker::create());
    auto handle = std::make_unique<tm_worker>();
    handle->impl = std::move(impl);
    *worker = handle.release();
    return Status::Ok();
  });
}

tm_result_t tm_worker_destroy(tm_worker_t worker) {
  std::unique_ptr<tm_worker> owned(worker);
  return TM_SUCCESS;
}

tm_result_t tm_worker_kind(tm_worker_t worker, tm_worker_kind_t* kind) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_RETURN_IF_ERROR(need_out(kind, "kind"));
    switch (worker->impl->kind()) {
      case trainmover::worker::WorkerKind::kAlone:
        *kind = TM_WORKER_ALONE;
        break;
      case trainmover::worker::WorkerKind::kActive:
        *kind = TM_WORKER_ACTIVE;
        break;
      case trainmover::worker::WorkerKind::kStandby:
        *kind = TM_WORKER_STANDBY;
        break;
    }
    return Status::Ok();
  });
}

tm_result_t tm_worker_register_buffer(tm_worker_t worker, const char* name, void* data,
                                      size_t bytes) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    return worker->impl->register_buffer(name ? name : "", data, bytes);
  });
}

tm_result_t tm_worker_add_comm(tm_worker_t worker, tm_comm_t comm, const int* job_slots,
                               int nslots) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_RETURN_IF_ERROR(need_out(job_slots, "job_slots"));
    if (nslots < 1) return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "nslots must be >= 1");
    return worker->impl->add_comm(comm, std::vector<int>(job_slots, job_slots + nslots));
  });
}

tm_result_t tm_worker_set_rollback(tm_worker_t worker, tm_rollback_fn fn, void* context) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    worker->impl->set_rollback(fn, context);
    return Status::Ok();
  });
}

tm_result_t tm_worker_step_boundary(tm_worker_t worker, uint64_t next_step, uint64_t* run_step) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_RETURN_IF_ERROR(need_out(run_step, "run_step"));
    TM_ASSIGN_OR_RETURN(*run_step, worker->impl->step_boundary(next_step));
    return Status::Ok();
  });
}

tm_result_t tm_worker_recover(tm_worker_t worker, uint64_t* resume_step) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_RETURN_IF_ERROR(need_out(resume_step, "resume_step"));
    TM_ASSIGN_OR_RETURN(*resume_step, worker->impl->recover());
    return Status::Ok();
  });
}

namespace {

trainmover::Result<trainmover::control::StageRole> role_of(tm_stage_t stage) {
  using trainmover::control::StageRole;
  switch (stage) {
    case TM_STAGE_NONE:
      return StageRole::kNone;
    case TM_STAGE_FIRST:
      return StageRole::kFirst;
    case TM_STAGE_MIDDLE:
      return StageRole::kMiddle;
    case TM_STAGE_LAST:
      return StageRole::kLast;
  }
  return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "invalid pipeline stage ",
                           static_cast<int>(stage));
}

trainmover::Result<std::set<trainmover::control::StageRole>> roles_of(const tm_stage_t* stages,
                                                                      int n, const char* what) {
  std::set<trainmover::control::StageRole> roles;
  if (n < 0 || (n > 0 && stages == nullptr))
    return trainmover::error(TM_ERROR_INVALID_ARGUMENT, what, ": ", n, " roles at NULL");
  for (int i = 0; i < n; ++i) {
    TM_ASSIGN_OR_RETURN(auto role, role_of(stages[i]));
    roles.insert(role);
  }
  return roles;
}

}  // namespace

tm_result_t tm_worker_warmup_begin(tm_worker_t worker, tm_stage_t role) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_ASSIGN_OR_RETURN(auto r, role_of(role));
    return worker->impl->warmup_begin(r);
  });
}

tm_result_t tm_worker_warmup_done(tm_worker_t worker, const tm_stage_t* warm, int nwarm,
                                  const tm_stage_t* cold, int ncold, const char* detail) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_ASSIGN_OR_RETURN(auto warm_roles, roles_of(warm, nwarm, "warm"));
    TM_ASSIGN_OR_RETURN(auto cold_roles, roles_of(cold, ncold, "cold"));
    return worker->impl->warmup_done(std::move(warm_roles), std::move(cold_roles),
                                     detail != nullptr ? detail : "");
  });
}

tm_result_t tm_worker_wait_promotion(tm_worker_t worker, double timeout_s, int* slot) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_RETURN_IF_ERROR(need_out(slot, "slot"));
    if (!(timeout_s > 0))
      return trainmover::error(TM_ERROR_INVALID_ARGUMENT, "timeout_s must be positive");
    TM_ASSIGN_OR_RETURN(*slot, worker->impl->wait_promotion(trainmover::seconds(timeout_s)));
    return Status::Ok();
  });
}

tm_result_t tm_worker_join(tm_worker_t worker, uint64_t* resume_step) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    TM_RETURN_IF_ERROR(need_out(resume_step, "resume_step"));
    TM_ASSIGN_OR_RETURN(*resume_step, worker->impl->join());
    return Status::Ok();
  });
}

tm_result_t tm_worker_finish(tm_worker_t worker) {
  return c_call([&]() -> Status {
    TM_RETURN_IF_ERROR(need_worker(worker));
    return worker->impl->finish();
  });
}
