#include "rendezvous/tcp_store.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <thread>

#include "common/parse.h"
#include "transport/frame.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"

namespace trainmover::rendezvous {

using transport::FrameHeader;
using transport::FrameKind;

namespace {
// A store server answers a request in microseconds; a reply that takes
// this much longer than the request's own wait means the server is gone.
constexpr Duration kReplySlack = std::chrono::seconds(10);

Status wait_fd(int fd, short events, const Deadline& deadline, const std::string& what) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, deadline.poll_timeout_ms());
    if (n > 0) return Status::Ok();
    if (n == 0) return error(TM_ERROR_TIMEOUT, what, " timed out");
    if (errno != EINTR) return system_error("poll", errno);
  }
}

Status send_all(int fd, std::span<const std::byte> bytes, const Deadline& deadline) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      return system_error("send to the store", errno);
    TM_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, "sending to the store"));
  }
  return Status::Ok();
}

Status recv_all(int fd, std::span<std::byte> bytes, const Deadline& deadline) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::recv(fd, bytes.data() + done, bytes.size() - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return error(TM_ERROR_PEER_FAILED, "the store closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return system_error("recv from the store", errno);
    TM_RETURN_IF_ERROR(wait_fd(fd, POLLIN, deadline, "waiting for the store"));
  }
  return Status::Ok();
}

Result<UniqueFd> connect_once(const transport::tcp::SocketAddress& address, const JobSecret& secret,
                              uint64_t job_id, const Deadline& deadline) {
  TM_ASSIGN_OR_RETURN(UniqueFd fd, transport::tcp::start_connect(address));
  transport::Hello local;
  local.job_id = job_id;
  local.comm_id = kStoreCommId;
  TM_ASSIGN_OR_RETURN(auto session,
                      transport::tcp::HandshakeSession::connector(
                          std::move(fd), secret, local, {}, "the store at " + address.to_string()));
  while (true) {
    session->advance();
    if (session->state() == transport::tcp::HandshakeSession::State::kDone)
      return session->take_fd();
    if (session->state() == transport::tcp::HandshakeSession::State::kFailed)
      return session->status();
    short events = session->wants_write() ? POLLOUT : POLLIN;
    TM_RETURN_IF_ERROR(wait_fd(session->fd(), events, deadline,
                               "handshake with the store at " + address.to_string()));
  }
}
}  // namespace

Result<std::unique_ptr<TcpStore>> TcpStore::connect(const std::string& address,
                                                    const JobSecret& secret, uint64_t job_id,
                                                    Duration timeout) {
  auto resolved = transport::tcp::resolve(address);
  if (!resolved.ok()) return resolved.status().with_context("store address");
  Deadline deadline = Deadline::after(timeout);
  auto backoff = std::chrono::milliseconds(10);
  while (true) {
    auto fd = connect_once(resolved.value(), secret, job_id, deadline);
    if (fd.ok())
      return std::unique_ptr<TcpStore>(new TcpStore(std::move(fd).value(), address, job_id));
    bool retry =
        fd.status().code() == TM_ERROR_SYSTEM || fd.status().code() == TM_ERROR_PEER_FAILED;
    if (!retry) {  // it answered: waiting longer would not change its mind
      return Status(fd.status().code(),
                    str_cat("the rendezvous store at ", address, " refused this client after ",
                            to_seconds(timeout - deadline.remaining()) * 1e3,
                            " ms: ", fd.status().message()));
    }
    if (deadline.remaining() < backoff) {
      return Status(fd.status().code() == TM_ERROR_SYSTEM ? TM_ERROR_TIMEOUT : fd.status().code(),
                    str_cat("cannot reach the rendezvous store at ", address, " within ",
                            to_seconds(timeout), " s: ", fd.status().message()));
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::milliseconds(500));
  }
}

Status TcpStore::check_key(const std::string& key) const {
  if (key.empty()) return error(TM_ERROR_INVALID_ARGUMENT, "empty store key");
  if (key.size() > kMaxKeyBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "store key of ", key.size(), " bytes exceeds ",
                 kMaxKeyBytes);
  }
  return Status::Ok();
}

Result<StoreResponse> TcpStore::call(const StoreRequest& request, Duration reply_timeout) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fd_.valid())
    return error(TM_ERROR_PEER_FAILED, "the connection to the store at ", address_, " is broken");
  Deadline deadline = Deadline::after(reply_timeout + kReplySlack);
  auto payload = encode_request(request);
  FrameHeader h;
  h.kind = FrameKind::kStoreRequest;
  h.job_id = job_id_;
  h.tag = next_tag_++;
  h.length = payload.size();
  auto header = transport::encode_frame_header(h);
  // One write for header and payload: two small writes let Nagle's algorithm
  // hold the payload back until the store's delayed ACK (~40 ms a request).
  payload.insert(payload.begin(), header.begin(), header.end());
  Status st = send_all(fd_.get(), payload, deadline);
  transport::FrameHeaderBytes reply_header;
  if (st.ok()) st = recv_all(fd_.get(), reply_header, deadline);
  transport::FrameLimits limits;
  limits.job_id = job_id_;
  limits.max_data_length = kMaxStoreFrame;
  limits.store_frames = true;
  limits.epoch = 0;
  Result<FrameHeader> parsed =
      st.ok() ? transport::parse_frame_header(reply_header, limits) : Result<FrameHeader>(st);
  std::vector<std::byte> body;
  if (parsed.ok()) {
    if (parsed->kind != FrameKind::kStoreResponse || parsed->tag != h.tag) {
      parsed = error(TM_ERROR_PROTOCOL, "unexpected reply from the store");
    } else {
      body.resize(parsed->length);
      st = recv_all(fd_.get(), body, deadline);
      if (!st.ok()) parsed = st;
    }
  }
  if (!parsed.ok()) {
    fd_.reset();  // the stream position is unknown now
    return parsed.status().with_context("rendezvous store at " + address_);
  }
  return parse_response(body);
}

Status TcpStore::set(const std::string& key, const std::string& value) {
  TM_RETURN_IF_ERROR(check_key(key));
  if (value.size() > kMaxValueBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "store value of ", value.size(), " bytes exceeds ",
                 kMaxValueBytes);
  }
  TM_ASSIGN_OR_RETURN(StoreResponse r, call({StoreOp::kSet, key, value, 0, 0}, Duration::zero()));
  if (r.code != TM_SUCCESS) return Status(r.code, "store set '" + key + "': " + r.body);
  return Status::Ok();
}

Result<std::string> TcpStore::get(const std::string& key, Duration timeout) {
  TM_RETURN_IF_ERROR(check_key(key));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  uint32_t timeout_ms = static_cast<uint32_t>(std::clamp<int64_t>(ms, 0, INT32_MAX));
  TM_ASSIGN_OR_RETURN(StoreResponse r, call({StoreOp::kGet, key, "", 0, timeout_ms},
                                            std::chrono::milliseconds(timeout_ms)));
  if (r.code == TM_ERROR_TIMEOUT) {
    return error(TM_ERROR_TIMEOUT, "rendezvous key '", key, "' did not appear within ",
                 to_seconds(timeout), " s");
  }
  if (r.code != TM_SUCCESS) return Status(r.code, "store get '" + key + "': " + r.body);
  return std::move(r.body);
}

Result<int64_t> TcpStore::add(const std::string& key, int64_t delta) {
  TM_RETURN_IF_ERROR(check_key(key));
  TM_ASSIGN_OR_RETURN(StoreResponse r, call({StoreOp::kAdd, key, "", delta, 0}, Duration::zero()));
  if (r.code != TM_SUCCESS) return Status(r.code, "store add '" + key + "': " + r.body);
  return parse_int(r.body, INT64_MIN, INT64_MAX);
}

Result<Store::CompareSetResult> TcpStore::compare_set(const std::string& key,
                                                      const std::optional<std::string>& expected,
                                                      const std::string& value) {
  TM_RETURN_IF_ERROR(check_key(key));
  size_t bytes = value.size() + (expected ? expected->size() : 0);
  if (bytes > kMaxValueBytes) {
    return error(TM_ERROR_INVALID_ARGUMENT, "store compare-and-set '", key, "': ", bytes,
                 " bytes of expected and new value exceed ", kMaxValueBytes);
  }
  StoreRequest request{StoreOp::kCompareSet, key, value, 0, 0, expected};
  TM_ASSIGN_OR_RETURN(StoreResponse r, call(request, Duration::zero()));
  if (r.code != TM_SUCCESS) return Status(r.code, "store compare-and-set '" + key + "': " + r.body);
  auto reply = parse_compare_set_reply(r.body);
  if (!reply.ok()) return reply.status().with_context("store compare-and-set '" + key + "'");
  return reply;
}

}  // namespace trainmover::rendezvous
