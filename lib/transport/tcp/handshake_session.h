// Drives the link handshake (transport/handshake.h) over one non-blocking
// socket, for either role. It never blocks: advance() does what the socket
// allows and returns; the owner calls it again when the socket is ready (from
// an event loop, or from a poll() loop in blocking clients). The owner also
// enforces the deadline: a session that is still running at its deadline is
// dropped.
//
// Threading: used by one thread at a time. The JobSecret must outlive it.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>

#include "common/secret.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "transport/handshake.h"

namespace trainmover::transport::tcp {

// What a connector requires of the acceptor it reaches.
struct ExpectedPeer {
  int32_t slot = -1;         // -1: any
  uint64_t instance_id = 0;  // 0: any
};

// Decides, once the connector has proved the secret and its hello matches
// job, communicator and epoch, whether the acceptor takes it.
using AcceptPolicy = std::function<Verdict(const Hello& peer)>;

class HandshakeSession {
 public:
  enum class State { kRunning, kDone, kFailed };

  // `fd` comes from start_connect(); the connect may still be in progress.
  // `peer_name` names the peer in errors ("slot 3 at 10.0.0.2:4000").
  static Result<std::unique_ptr<HandshakeSession>> connector(UniqueFd fd, const JobSecret& secret,
                                                             const Hello& local,
                                                             ExpectedPeer expect,
                                                             std::string peer_name);
  // `fd` comes from accept(). local.target_slot is ignored.
  static Result<std::unique_ptr<HandshakeSession>> acceptor(UniqueFd fd, const JobSecret& secret,
                                                            const Hello& local, AcceptPolicy policy,
                                                            std::string peer_name);

  void advance();
  // Acceptor whose policy deferred its verdict: asks the policy again and,
  // once it decides, sends the verdict.
  void reconsider();
  bool deferred() const { return step_ == Step::kAwaitVerdict; }
  State state() const { return state_; }
  const Status& status() const { return status_; }
  bool wants_write() const;
  int fd() const { return fd_.get(); }
  UniqueFd take_fd() { return std::move(fd_); }
  // Valid once the peer's hello has been read.
  const Hello& peer() const { return peer_; }
  // The verdict the acceptor gave (connector) or sent (acceptor).
  Verdict verdict() const { return verdict_; }
  const std::string& peer_name() const { return peer_name_; }

 private:
  enum class Step {
    kConnecting,
    kSendHello,
    kRecvReply,
    kSendProof,
    kRecvVerdict,
    kRecvHello,
    kSendReply,
    kRecvProof,
    kAwaitVerdict,
    kSendVerdict,
    kFinished
  };

  HandshakeSession(UniqueFd fd, const JobSecret& secret, const Hello& local, std::string peer_name);

  // Moves bytes; returns false when the socket would block or failed.
  bool flush_out();
  bool fill_in();
  void queue_out(std::span<const std::byte> bytes);
  void expect_in(size_t bytes);
  void fail(Status status);
  void step();
  void on_reply();
  void on_hello();
  void on_proof();
  void on_verdict();
  void decide();
  Verdict check_fields(const Hello& peer) const;

  UniqueFd fd_;
  const JobSecret* secret_;
  Hello local_;
  HelloBytes local_bytes_{};
  HelloBytes peer_bytes_{};
  Hello peer_;
  ExpectedPeer expect_;
  AcceptPolicy policy_;
  std::string peer_name_;
  Step step_ = Step::kFinished;
  State state_ = State::kRunning;
  Status status_;
  Verdict verdict_ = Verdict::kRefused;

  std::array<std::byte, kHelloSize + kProofSize> out_{};
  size_t out_len_ = 0;
  size_t out_done_ = 0;
  std::array<std::byte, kHelloSize + kProofSize> in_{};
  size_t in_need_ = 0;
  size_t in_got_ = 0;
};

}  // namespace trainmover::transport::tcp
