#include "transport/tcp/handshake_session.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "transport/tcp/socket.h"

namespace trainmover::transport::tcp {

HandshakeSession::HandshakeSession(UniqueFd fd, const JobSecret& secret, const Hello& local,
                                   std::string peer_name)
    : fd_(std::move(fd)), secret_(&secret), local_(local), peer_name_(std::move(peer_name)) {}

Result<std::unique_ptr<HandshakeSession>> HandshakeSession::connector(UniqueFd fd,
                                                                      const JobSecret& secret,
                                                                      const Hello& local,
                                                                      ExpectedPeer expect,
                                                                      std::string peer_name) {
  std::unique_ptr<HandshakeSession> s(
      new HandshakeSession(std::move(fd), secret, local, std::move(peer_name)));
  s->local_.role = Role::kConnector;
  TM_RETURN_IF_ERROR(random_bytes(s->local_.nonce));
  s->local_bytes_ = encode_hello(s->local_);
  s->expect_ = expect;
  s->step_ = Step::kConnecting;
  return s;
}

Result<std::unique_ptr<HandshakeSession>> HandshakeSession::acceptor(UniqueFd fd,
                                                                     const JobSecret& secret,
                                                                     const Hello& local,
                                                                     AcceptPolicy policy,
                                                                     std::string peer_name) {
  std::unique_ptr<HandshakeSession> s(
      new HandshakeSession(std::move(fd), secret, local, std::move(peer_name)));
  s->local_.role = Role::kAcceptor;
  s->local_.target_slot = -1;
  TM_RETURN_IF_ERROR(random_bytes(s->local_.nonce));
  s->local_bytes_ = encode_hello(s->local_);
  s->policy_ = std::move(policy);
  s->step_ = Step::kRecvHello;
  s->expect_in(kHelloSize);
  return s;
}

bool HandshakeSession::wants_write() const {
  return step_ == Step::kConnecting || step_ == Step::kSendHello || step_ == Step::kSendProof ||
         step_ == Step::kSendReply || step_ == Step::kSendVerdict;
}

void HandshakeSession::fail(Status status) {
  status_ = status.with_context("handshake with " + peer_name_);
  state_ = State::kFailed;
  step_ = Step::kFinished;
}

void HandshakeSession::queue_out(std::span<const std::byte> bytes) {
  std::memcpy(out_.data(), bytes.data(), bytes.size());
  out_len_ = bytes.size();
  out_done_ = 0;
}

void HandshakeSession::expect_in(size_t bytes) {
  in_need_ = bytes;
  in_got_ = 0;
}

bool HandshakeSession::flush_out() {
  while (out_done_ < out_len_) {
    ssize_t n = ::send(fd_.get(), out_.data() + out_done_, out_len_ - out_done_,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) fail(system_error("send", errno));
      return false;
    }
    out_done_ += static_cast<size_t>(n);
  }
  return true;
}

bool HandshakeSession::fill_in() {
  while (in_got_ < in_need_) {
    // Read exactly what this step needs: bytes after it belong to the link.
    ssize_t n = ::recv(fd_.get(), in_.data() + in_got_, in_need_ - in_got_, MSG_DONTWAIT);
    if (n == 0) {
      fail(error(TM_ERROR_PEER_FAILED, "connection closed by the peer"));
      return false;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) fail(system_error("recv", errno));
      return false;
    }
    in_got_ += static_cast<size_t>(n);
  }
  return true;
}

void HandshakeSession::advance() {
  while (state_ == State::kRunning) {
    Step before = step_;
    step();
    if (step_ == before) return;  // blocked on the socket
  }
}

void HandshakeSession::step() {
  switch (step_) {
    case Step::kConnecting: {
      // While the connect is in progress SO_ERROR is 0 and send() returns
      // EAGAIN, so the hello simply waits for writability.
      Status st = finish_connect(fd_.get());
      if (!st.ok()) return fail(st);
      step_ = Step::kSendHello;
      queue_out(local_bytes_);
      return;
    }
    case Step::kSendHello:
      if (!flush_out()) return;
      step_ = Step::kRecvReply;
      expect_in(kHelloSize + kProofSize);
      return;
    case Step::kRecvReply:
      if (!fill_in()) return;
      return on_reply();
    case Step::kSendProof:
      if (!flush_out()) return;
      step_ = Step::kRecvVerdict;
      expect_in(kVerdictSize);
      return;
    case Step::kRecvVerdict:
      if (!fill_in()) return;
      return on_verdict();
    case Step::kRecvHello:
      if (!fill_in()) return;
      return on_hello();
    case Step::kSendReply:
      if (!flush_out()) return;
      step_ = Step::kRecvProof;
      expect_in(kProofSize);
      return;
    case Step::kRecvProof:
      if (!fill_in()) return;
      return on_proof();
    case Step::kAwaitVerdict:
      return;  // until reconsider()
    case Step::kSendVerdict:
      if (!flush_out()) return;
      step_ = Step::kFinished;
      if (verdict_ == Verdict::kAccepted) {
        state_ = State::kDone;
      } else {
        fail(error(TM_ERROR_AUTH, "rejected slot ", peer_.slot, ": ", verdict_text(verdict_)));
      }
      return;
    case Step::kFinished:
      return;
  }
}

Verdict HandshakeSession::check_fields(const Hello& peer) const {
  if (peer.job_id != local_.job_id) return Verdict::kWrongJob;
  if (peer.comm_id != local_.comm_id) return Verdict::kWrongComm;
  // Epochs are the acceptor policy's call: during a switch a process accepts
  // links of the next epoch while it still runs in the current one.
  return Verdict::kAccepted;
}

void HandshakeSession::on_reply() {
  std::span<const std::byte> in(in_.data(), kHelloSize + kProofSize);
  auto hello = parse_hello(in.first(kHelloSize));
  if (!hello.ok()) return fail(hello.status());
  peer_ = hello.value();
  std::copy(in.begin(), in.begin() + kHelloSize, peer_bytes_.begin());
  if (peer_.role != Role::kAcceptor)
    return fail(error(TM_ERROR_PROTOCOL, "peer answered as a connector"));
  Verdict fields = check_fields(peer_);
  if (fields != Verdict::kAccepted) {
    return fail(error(TM_ERROR_PROTOCOL,
                      "reached a process of another job or communicator: ", verdict_text(fields),
                      " (it has job ", peer_.job_id, ", this process ", local_.job_id, ")"));
  }
  if (expect_.slot >= 0 && peer_.slot != expect_.slot) {
    return fail(error(TM_ERROR_PROTOCOL, "reached the process serving slot ", peer_.slot,
                      ", expected slot ", expect_.slot, " (stale endpoint?)"));
  }
  if (expect_.instance_id != 0 && peer_.instance_id != expect_.instance_id) {
    return fail(error(TM_ERROR_PROTOCOL,
                      "reached another process than the one registered for slot ", expect_.slot,
                      " (stale endpoint?)"));
  }
  Mac expected = compute_proof(*secret_, Role::kAcceptor, local_bytes_, peer_bytes_);
  Mac got;
  std::memcpy(got.data(), in.data() + kHelloSize, kProofSize);
  if (!mac_equal(expected, got)) {
    return fail(error(TM_ERROR_AUTH, "the acceptor could not prove the job secret"));
  }
  Mac proof = compute_proof(*secret_, Role::kConnector, local_bytes_, peer_bytes_);
  queue_out(proof);
  step_ = Step::kSendProof;
}

void HandshakeSession::on_verdict() {
  auto verdict = parse_verdict(std::span<const std::byte>(in_.data(), kVerdictSize));
  if (!verdict.ok()) return fail(verdict.status());
  verdict_ = verdict.value();
  step_ = Step::kFinished;
  if (verdict_ == Verdict::kAccepted) {
    state_ = State::kDone;
    return;
  }
  tm_result_t code = verdict_ == Verdict::kAuthFailed ? TM_ERROR_AUTH : TM_ERROR_PROTOCOL;
  fail(error(code, "refused: ", verdict_text(verdict_)));
}

void HandshakeSession::on_hello() {
  auto hello = parse_hello(std::span<const std::byte>(in_.data(), kHelloSize));
  if (!hello.ok()) return fail(hello.status());
  peer_ = hello.value();
  std::copy(in_.begin(), in_.begin() + kHelloSize, peer_bytes_.begin());
  if (peer_.role != Role::kConnector)
    return fail(error(TM_ERROR_PROTOCOL, "peer opened as an acceptor"));
  // Answer even a hello we will refuse, so the connector can read why.
  Mac proof = compute_proof(*secret_, Role::kAcceptor, peer_bytes_, local_bytes_);
  std::array<std::byte, kHelloSize + kProofSize> reply;
  std::memcpy(reply.data(), local_bytes_.data(), kHelloSize);
  std::memcpy(reply.data() + kHelloSize, proof.data(), kProofSize);
  queue_out(reply);
  step_ = Step::kSendReply;
}

void HandshakeSession::on_proof() {
  Mac expected = compute_proof(*secret_, Role::kConnector, peer_bytes_, local_bytes_);
  Mac got;
  std::memcpy(got.data(), in_.data(), kProofSize);
  if (!mac_equal(expected, got)) {
    verdict_ = Verdict::kAuthFailed;
  } else {
    verdict_ = check_fields(peer_);
    if (verdict_ == Verdict::kAccepted && local_.slot >= 0 && peer_.target_slot != local_.slot) {
      verdict_ = Verdict::kWrongSlot;
    }
  }
  if (verdict_ == Verdict::kAccepted && policy_) {
    step_ = Step::kAwaitVerdict;
    return decide();
  }
  queue_out(encode_verdict(verdict_));
  step_ = Step::kSendVerdict;
}

void HandshakeSession::decide() {
  Verdict verdict = policy_(peer_);
  if (verdict == Verdict::kDeferred) return;  // still kAwaitVerdict
  verdict_ = verdict;
  queue_out(encode_verdict(verdict_));
  step_ = Step::kSendVerdict;
}

void HandshakeSession::reconsider() {
  if (step_ != Step::kAwaitVerdict) return;
  decide();
  advance();
}

}  // namespace trainmover::transport::tcp
