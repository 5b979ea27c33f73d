#include "record/nccl/replay_engine.h"

#include "common/log.h"
#include "record/nccl/cuda_support.h"

namespace trainmover::nccl {

ReplayEngine::ReplayEngine(const Settings& settings, ReplayBook book)
    : settings_(settings), book_(std::move(book)) {
  std::span<std::byte> payload = book_.payload();
  if (payload.empty()) return;
  Status s = cuda_status(cudaHostRegister(payload.data(), payload.size(), cudaHostRegisterDefault),
                         "cudaHostRegister of the replay trace");
  pinned_ = s.ok();
  if (!pinned_)
    log(LogLevel::kWarn, "nccl: replay copies come from pageable memory: ", s.message());
}

ReplayEngine::~ReplayEngine() {
  if (pinned_) (void)cudaHostUnregister(book_.payload().data());
}

GroupQueue<ReplayEngine::PendingCopy>& ReplayEngine::group() {
  thread_local GroupQueue<PendingCopy> queue;  // per thread, as NCCL's group state
  return queue;
}

Result<std::shared_ptr<ReplayEngine::Comm>> ReplayEngine::find(ncclComm_t comm) {
  std::lock_guard lock(mu_);
  auto it = comms_.find(comm);
  if (it == comms_.end())
    return error(TM_ERROR_INVALID_ARGUMENT, "not a communicator of this replay");
  return it->second;
}

Result<ncclComm_t> ReplayEngine::adopt(Result<CommEntry> entry,
                                       std::unique_lock<std::mutex>& lock) {
  if (!entry.ok() && entry.status().code() == TM_ERROR_NOT_FOUND) {
    lock.unlock();
    std::string why = str_cat("replay trace exhausted: ", entry.status().message());
    log(LogLevel::kWarn, "nccl: ", why, "; waiting up to ", settings_.replay_wait_s,
        " s (TRAINMOVER_NCCL_REPLAY_WAIT) for the switch to the live job");
    return creation_gate_.wait(why, seconds(settings_.replay_wait_s));
  }
  if (!entry.ok()) return entry.status();
  auto comm = std::make_shared<Comm>();
  comm->entry = *entry;
  TM_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&comm->device), "cudaGetDevice"));
  auto handle = reinterpret_cast<ncclComm_t>(comm.get());
  comms_.emplace(handle, std::move(comm));
  return handle;
}

Result<ncclComm_t> ReplayEngine::init_comm(int nranks, int rank) {
  std::unique_lock lock(mu_);
  return adopt(book_.open_init(nranks, rank), lock);
}

Result<ncclComm_t> ReplayEngine::split_comm(ncclComm_t parent, int color, int key) {
  TM_ASSIGN_OR_RETURN(auto from, find(parent));
  if (color == NCCL_SPLIT_NOCOLOR) return ncclComm_t{nullptr};
  std::unique_lock lock(mu_);
  return adopt(book_.open_split(from->entry.ordinal, color, key), lock);
}

Status ReplayEngine::destroy(ncclComm_t comm) {
  std::shared_ptr<Comm> gone;
  {
    std::lock_guard lock(mu_);
    auto it = comms_.find(comm);
    if (it == comms_.end())
      return error(TM_ERROR_INVALID_ARGUMENT, "not a communicator of this replay");
    gone = std::move(it->second);
    comms_.erase(it);
  }
  gone->gate.release();
  return Status::Ok();
}

Result<ReplayEngine::CommView> ReplayEngine::view(ncclComm_t comm) {
  TM_ASSIGN_OR_RETURN(auto c, find(comm));
  return CommView{c->entry, c->device};
}

Status ReplayEngine::copy(const PendingCopy& c) {
  return cuda_status(
      cudaMemcpyAsync(c.dst, c.src.data(), c.src.size(), cudaMemcpyHostToDevice, c.stream),
      "cudaMemcpyAsync of a replayed output");
}

Status ReplayEngine::past_end(const std::shared_ptr<Comm>& comm, const CallDesc& asked) {
  uint64_t recorded;
  {
    std::lock_guard lock(mu_);
    recorded = book_.recorded_calls(comm->entry.ordinal);
  }
  log(LogLevel::kWarn,
      "nccl: ", past_end_message(comm->entry, recorded, asked, settings_.replay_wait_s));
  return comm->gate.wait(str_cat("replay trace exhausted on ", describe(comm->entry)),
                         seconds(settings_.replay_wait_s));
}

Status ReplayEngine::data_call(const DataCall& call) {
  TM_ASSIGN_OR_RETURN(auto comm, find(call.comm));
  std::optional<ReplayBook::Answer> answer;
  {
    std::lock_guard lock(mu_);
    TM_ASSIGN_OR_RETURN(answer, book_.next(comm->entry.ordinal, call.desc));
  }
  if (!answer) return past_end(comm, call.desc);
  if (answer->output.empty()) return Status::Ok();
  PendingCopy pending{call.recvbuff, answer->output, call.stream};
  if (group().open()) {
    group().defer(pending);
    return Status::Ok();
  }
  return copy(pending);
}

void ReplayEngine::group_start() { group().start(); }

Status ReplayEngine::group_end() {
  TM_ASSIGN_OR_RETURN(auto held, group().end());
  for (const PendingCopy& pending : held) TM_RETURN_IF_ERROR(copy(pending));
  return Status::Ok();
}

}  // namespace trainmover::nccl
