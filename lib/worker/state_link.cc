#include "worker/state_link.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"

namespace trainmover::worker {
namespace {

using transport::tcp::HandshakeSession;

constexpr uint64_t kHeaderMagic = 0x314554415453;  // "STATE1"
constexpr size_t kMaxBuffers = 1024;

Status wait_fd(int fd, short events, const Deadline& deadline, const char* what) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, deadline.poll_timeout_ms());
    if (n > 0) return Status::Ok();
    if (n == 0) return error(TM_ERROR_TIMEOUT, "state transfer: ", what, " timed out");
    if (errno != EINTR) return system_error("poll", errno);
  }
}

// Moves `size` bytes in one direction until done, the peer closes, or the
// deadline: `step` is one send or read call.
template <typename Bytes, typename Step>
Status move_all(int fd, Bytes* p, size_t size, const Deadline& deadline, short event,
                const char* doing, const char* peer, Step step) {
  while (size > 0) {
    ssize_t n = step(p, size);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      TM_RETURN_IF_ERROR(wait_fd(fd, event, deadline, doing));
      continue;
    }
    return Status(TM_ERROR_PEER_FAILED, str_cat("state transfer: the ", peer, " closed the link: ",
                                                n < 0 ? std::strerror(errno) : "EOF"));
  }
  return Status::Ok();
}

Status write_all(int fd, const void* data, size_t size, const Deadline& deadline) {
  return move_all(fd, static_cast<const char*>(data), size, deadline, POLLOUT, "sending", "joiner",
                  [fd](const char* p, size_t n) { return ::send(fd, p, n, MSG_NOSIGNAL); });
}

Status read_all(int fd, void* data, size_t size, const Deadline& deadline) {
  return move_all(fd, static_cast<char*>(data), size, deadline, POLLIN, "receiving", "donor",
                  [fd](char* p, size_t n) { return ::read(fd, p, n); });
}

transport::Hello hello(uint64_t job_id) {
  transport::Hello h;
  h.job_id = job_id;
  h.comm_id = kStateCommId;
  return h;
}

Result<UniqueFd> finish_handshake(std::unique_ptr<HandshakeSession> session,
                                  const Deadline& deadline) {
  while (true) {
    session->advance();
    if (session->state() == HandshakeSession::State::kDone) return session->take_fd();
    if (session->state() == HandshakeSession::State::kFailed) return session->status();
    TM_RETURN_IF_ERROR(wait_fd(session->fd(), session->wants_write() ? POLLOUT : POLLIN, deadline,
                               "the handshake"));
  }
}

// Header: magic, step, count, then each buffer's size.
std::vector<uint64_t> header_of(const std::vector<StateBuffer>& buffers, uint64_t step) {
  std::vector<uint64_t> h = {kHeaderMagic, step, buffers.size()};
  for (const StateBuffer& b : buffers) h.push_back(b.bytes);
  return h;
}

uint64_t total_bytes(const std::vector<StateBuffer>& buffers) {
  uint64_t total = 0;
  for (const StateBuffer& b : buffers) total += b.bytes;
  return total;
}

}  // namespace

Result<StateListener> StateListener::open(const std::string& host) {
  TM_ASSIGN_OR_RETURN(auto address, transport::tcp::resolve(host, 0));
  StateListener listener;
  TM_ASSIGN_OR_RETURN(listener.fd_, transport::tcp::listen_on(address, 1));
  TM_ASSIGN_OR_RETURN(auto bound, transport::tcp::local_address(listener.fd_.get()));
  listener.address_ = bound.to_string();
  return listener;
}

void StateListener::cancel() const { (void)::shutdown(fd_.get(), SHUT_RDWR); }

Result<uint64_t> StateListener::receive(const std::vector<StateBuffer>& buffers, uint64_t step,
                                        const JobSecret& secret, uint64_t job_id,
                                        Deadline deadline) {
  TM_RETURN_IF_ERROR(wait_fd(fd_.get(), POLLIN, deadline, "waiting for the donor"));
  UniqueFd conn(accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!conn.valid()) return system_error("accept", errno);
  TM_ASSIGN_OR_RETURN(
      auto session,
      HandshakeSession::acceptor(std::move(conn), secret, hello(job_id), nullptr, "the donor"));
  TM_ASSIGN_OR_RETURN(UniqueFd fd, finish_handshake(std::move(session), deadline));
  TM_RETURN_IF_ERROR(transport::tcp::set_link_options(fd.get(), {}));
  uint64_t fixed[3];
  TM_RETURN_IF_ERROR(read_all(fd.get(), fixed, sizeof fixed, deadline));
  if (fixed[0] != kHeaderMagic)
    return error(TM_ERROR_PROTOCOL, "state transfer: the donor's header is not a state header");
  if (fixed[2] != buffers.size() || fixed[2] > kMaxBuffers)
    return error(TM_ERROR_PROTOCOL, "state transfer: the donor sends ", fixed[2],
                 " buffers, this process registered ", buffers.size());
  if (fixed[1] != step)
    return error(TM_ERROR_PROTOCOL, "state transfer: the donor sends the state of step ", fixed[1],
                 ", the coordinator ordered step ", step);
  std::vector<uint64_t> sizes(buffers.size());
  TM_RETURN_IF_ERROR(read_all(fd.get(), sizes.data(), sizes.size() * 8, deadline));
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (sizes[i] != buffers[i].bytes)
      return error(TM_ERROR_PROTOCOL, "state transfer: buffer ", i, " (", buffers[i].name, ") is ",
                   buffers[i].bytes, " bytes here but ", sizes[i], " at the donor");
  }
  for (const StateBuffer& b : buffers)
    TM_RETURN_IF_ERROR(read_all(fd.get(), b.data, b.bytes, deadline));
  const char done = 1;
  TM_RETURN_IF_ERROR(write_all(fd.get(), &done, 1, deadline));
  return total_bytes(buffers);
}

Result<uint64_t> send_state(const std::string& address, const std::vector<StateBuffer>& buffers,
                            uint64_t step, const JobSecret& secret, uint64_t job_id,
                            Deadline deadline) {
  TM_ASSIGN_OR_RETURN(auto resolved, transport::tcp::resolve(address));
  TM_ASSIGN_OR_RETURN(UniqueFd conn, transport::tcp::start_connect(resolved));
  TM_ASSIGN_OR_RETURN(auto session,
                      HandshakeSession::connector(std::move(conn), secret, hello(job_id), {},
                                                  "the joiner at " + address));
  // TCP_NODELAY: the header, the buffers and the answer are separate writes;
  // with Nagle, the second waits for the first's delayed ACK (~40 ms).
  TM_ASSIGN_OR_RETURN(UniqueFd fd, finish_handshake(std::move(session), deadline));
  TM_RETURN_IF_ERROR(transport::tcp::set_link_options(fd.get(), {}));
  std::vector<uint64_t> header = header_of(buffers, step);
  TM_RETURN_IF_ERROR(write_all(fd.get(), header.data(), header.size() * 8, deadline));
  for (const StateBuffer& b : buffers)
    TM_RETURN_IF_ERROR(write_all(fd.get(), b.data, b.bytes, deadline));
  char done = 0;
  TM_RETURN_IF_ERROR(read_all(fd.get(), &done, 1, deadline));
  return total_bytes(buffers);
}

}  // namespace trainmover::worker
