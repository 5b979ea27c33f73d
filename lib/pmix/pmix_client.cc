#include "pmix/pmix_client.h"

#include <pmix.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace trainmover::pmix {
namespace {

// The process's one client while any owner holds it. PMIx is process-wide
// state already; this only lets its owners share the one session.
struct Shared {
  std::mutex mutex;
  std::weak_ptr<PmixClient> client;
};
Shared& shared() {
  static Shared instance;
  return instance;
}

Status pmix_error(const std::string& what, pmix_status_t rc) {
  tm_result_t code = rc == PMIX_ERR_TIMEOUT ? TM_ERROR_TIMEOUT : TM_ERROR_SYSTEM;
  return error(code, what, ": ", PMIx_Error_string(rc));
}

int timeout_seconds(Duration timeout) {
  return std::max(1, static_cast<int>(std::ceil(to_seconds(timeout))));
}

}  // namespace

bool PmixClient::available() { return std::getenv("PMIX_NAMESPACE") != nullptr; }

Result<std::shared_ptr<PmixClient>> PmixClient::acquire() {
  if (!available())
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "PMIx: not started by a PMIx server (no PMIX_NAMESPACE; run under "
                 "srun --mpi=pmix)");
  std::lock_guard<std::mutex> lock(shared().mutex);
  if (auto live = shared().client.lock()) return live;
  TM_ASSIGN_OR_RETURN(auto client, init());
  shared().client = client;
  return client;
}

Result<std::shared_ptr<PmixClient>> PmixClient::init() {
  pmix_proc_t self;
  pmix_status_t rc = PMIx_Init(&self, nullptr, 0);
  if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Init", rc);
  // From here the client owns the PMIx session: its destructor finalizes.
  std::shared_ptr<PmixClient> client(new PmixClient());
  client->nspace_ = self.nspace;
  client->rank_ = self.rank;
  pmix_proc_t job;
  PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t* size = nullptr;
  rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &size);
  if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Get(PMIX_JOB_SIZE)", rc);
  bool is_size = size && size->type == PMIX_UINT32;
  if (is_size) client->job_size_ = size->data.uint32;
  if (size) PMIX_VALUE_RELEASE(size);
  if (!is_size) return error(TM_ERROR_PROTOCOL, "PMIx_Get(PMIX_JOB_SIZE): not a uint32");
  return client;
}

PmixClient::~PmixClient() { PMIx_Finalize(nullptr, 0); }

Status PmixClient::put(const std::string& key, const std::string& value) {
  if (key.empty() || key.size() >= PMIX_MAX_KEYLEN)
    return error(TM_ERROR_INVALID_ARGUMENT, "PMIx key '", key, "' must have 1 to ",
                 PMIX_MAX_KEYLEN - 1, " bytes");
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = const_cast<char*>(value.data());
  v.data.bo.size = value.size();
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
  return rc == PMIX_SUCCESS ? Status::Ok() : pmix_error("PMIx_Put(" + key + ")", rc);
}

Status PmixClient::commit() {
  pmix_status_t rc = PMIx_Commit();
  return rc == PMIX_SUCCESS ? Status::Ok() : pmix_error("PMIx_Commit", rc);
}

Status PmixClient::fence(Duration timeout) {
  pmix_info_t info[2];
  bool collect = true;
  int seconds = timeout_seconds(timeout);
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  pmix_status_t rc = PMIx_Fence(nullptr, 0, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  return rc == PMIX_SUCCESS ? Status::Ok() : pmix_error("PMIx_Fence", rc);
}

Result<std::string> PmixClient::get(uint32_t rank, const std::string& key, Duration timeout) {
  pmix_proc_t peer;
  PMIX_LOAD_PROCID(&peer, nspace_.c_str(), rank);
  pmix_info_t info;
  int seconds = timeout_seconds(timeout);
  PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &seconds, PMIX_INT);
  pmix_value_t* value = nullptr;
  pmix_status_t rc = PMIx_Get(&peer, key.c_str(), &info, 1, &value);
  PMIX_INFO_DESTRUCT(&info);
  std::string what = str_cat("PMIx_Get(rank ", rank, ", ", key, ")");
  if (rc != PMIX_SUCCESS) return pmix_error(what, rc);
  if (!value || value->type != PMIX_BYTE_OBJECT) {
    if (value) PMIX_VALUE_RELEASE(value);
    return error(TM_ERROR_PROTOCOL, what, ": not a byte string");
  }
  std::string out(value->data.bo.bytes, value->data.bo.size);
  PMIX_VALUE_RELEASE(value);
  return out;
}

}  // namespace trainmover::pmix
