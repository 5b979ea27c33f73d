// TcpStoreServer: the rendezvous store a job embeds (in its launcher, in the
// srun-side plugin thread, or in a test). It serves Store requests over TCP
// to clients that prove the job secret, on its own thread.
//
// Waiting gets are parked on the server and answered when the key is set or
// their timeout passes, so clients never poll. The server binds only the
// address it is given.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "common/secret.h"
#include "common/status.h"
#include "rendezvous/store.h"

namespace trainmover::rendezvous {

class TcpStoreServer final : public StoreServer {
 public:
  // `address` is "host:port"; port 0 picks a free port (see address()).
  static Result<std::unique_ptr<TcpStoreServer>> start(const std::string& address,
                                                       const JobSecret& secret, uint64_t job_id);
  // Stops the thread and closes every connection.
  ~TcpStoreServer() override;

  // The address clients connect to.
  const std::string& address() const override { return address_; }

 private:
  class Impl;
  explicit TcpStoreServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::string address_;
  std::thread thread_;
};

}  // namespace trainmover::rendezvous
