// TcpStore: a Store client of a TcpStoreServer. Blocking calls, each bounded
// by a deadline; one request at a time per client (calls are serialised by a
// mutex, so one TcpStore may be shared by threads).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/secret.h"
#include "common/unique_fd.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"

namespace trainmover::rendezvous {

class TcpStore final : public Store {
 public:
  // Connects and authenticates, retrying refused connections until `timeout`.
  static Result<std::unique_ptr<TcpStore>> connect(const std::string& address,
                                                   const JobSecret& secret, uint64_t job_id,
                                                   Duration timeout);

  Status set(const std::string& key, const std::string& value) override;
  Result<std::string> get(const std::string& key, Duration timeout) override;
  Result<int64_t> add(const std::string& key, int64_t delta) override;
  Result<CompareSetResult> compare_set(const std::string& key,
                                       const std::optional<std::string>& expected,
                                       const std::string& value) override;

 private:
  TcpStore(UniqueFd fd, std::string address, uint64_t job_id)
      : fd_(std::move(fd)), address_(std::move(address)), job_id_(job_id) {}
  Result<StoreResponse> call(const StoreRequest& request, Duration reply_timeout);
  Status check_key(const std::string& key) const;

  std::mutex mutex_;
  UniqueFd fd_;
  std::string address_;
  uint64_t job_id_;
  uint64_t next_tag_ = 1;
};

}  // namespace trainmover::rendezvous
