#include "control/control_server.h"

#include <sys/socket.h>

#include <cerrno>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/log.h"
#include "control/control_stream.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"

namespace trainmover::control {

using transport::tcp::HandshakeSession;

class ControlServer::Impl final : private EventHandler {
 public:
  Impl(EventLoop& loop, UniqueFd listen_fd, std::string address, const JobSecret& secret,
       uint64_t job_id, ControlServerLimits limits, Callbacks callbacks)
      : loop_(loop),
        listen_fd_(std::move(listen_fd)),
        address_(std::move(address)),
        secret_(secret),
        job_id_(job_id),
        limits_(limits),
        callbacks_(std::move(callbacks)) {}
  ~Impl() {
    for (auto& [id, c] : connections_) forget(*c);
    loop_.remove(listen_fd_.get(), this);
  }

  Status register_listener() { return loop_.add(listen_fd_.get(), EPOLLIN, this); }
  const std::string& address() const { return address_; }
  void send(ConnectionId id, const Message& message);
  void close(ConnectionId id);
  void tick(Clock::time_point now);
  int pending() const { return pending_; }
  uint64_t refused() const { return refused_; }

 private:
  struct Connection final : EventHandler {
    Impl* owner = nullptr;
    ConnectionId id = 0;
    std::unique_ptr<HandshakeSession> handshake;  // null once authenticated
    Clock::time_point handshake_deadline;
    UniqueFd fd;
    std::unique_ptr<ControlStream> stream;
    bool dead = false;
    // Set when a send() found the connection broken: on_closed is called
    // from the next tick(), never from inside send().
    std::optional<Status> closed_why;
    int current_fd() const { return handshake ? handshake->fd() : fd.get(); }
    void on_events(uint32_t) override { owner->on_connection_event(*this); }
  };

  void on_events(uint32_t) override;  // the listener
  void accept_one(int fd);
  void on_connection_event(Connection& c);
  void finish_handshake(Connection& c);
  void on_frame(Connection& c, Result<Message> message);
  void flush(Connection& c);
  // What flush() does for send(): a failed write is reported by tick().
  void flush_deferred(Connection& c);
  Status write_queued(Connection& c);
  // Unregisters the connection; it is freed by the next tick().
  void forget(Connection& c);
  void drop(Connection& c, const Status& why);

  EventLoop& loop_;
  UniqueFd listen_fd_;
  std::string address_;
  JobSecret secret_;
  uint64_t job_id_;
  ControlServerLimits limits_;
  Callbacks callbacks_;
  ConnectionId next_id_ = 1;
  int pending_ = 0;
  uint64_t refused_ = 0;
  std::unordered_map<ConnectionId, std::unique_ptr<Connection>> connections_;
};

void ControlServer::Impl::on_events(uint32_t) {
  while (true) {
    int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      accept_one(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return;
  }
}

void ControlServer::Impl::accept_one(int fd) {
  UniqueFd owned(fd);
  // TCP_NODELAY (orders are small frames sent back to back; see control_client.cc).
  if (Status st = transport::tcp::set_link_options(fd, {}); !st.ok())
    log(LogLevel::kWarn, "control: ", st.message());
  if (pending_ >= limits_.max_pending_handshakes) {
    ++refused_;
    log(LogLevel::kWarn, "control: refusing a connection: ", pending_,
        " handshakes already pending");
    return;
  }
  transport::Hello local;
  local.job_id = job_id_;
  local.comm_id = kControlCommId;
  auto session =
      HandshakeSession::acceptor(std::move(owned), secret_, local, nullptr, "control client");
  if (!session.ok()) return;
  auto c = std::make_unique<Connection>();
  c->owner = this;
  c->id = next_id_++;
  c->handshake = std::move(session).value();
  c->handshake_deadline = Clock::now() + limits_.handshake_timeout;
  if (!loop_.add(c->current_fd(), EPOLLIN | EPOLLOUT | EPOLLRDHUP, c.get()).ok()) return;
  ++pending_;
  Connection& ref = *c;
  connections_[ref.id] = std::move(c);
  on_connection_event(ref);
}

void ControlServer::Impl::on_connection_event(Connection& c) {
  if (c.dead) return;
  if (c.handshake) {
    c.handshake->advance();
    if (c.handshake->state() == HandshakeSession::State::kRunning) return;
    --pending_;
    if (c.handshake->state() == HandshakeSession::State::kFailed) {
      log(LogLevel::kWarn, "control: refused a client: ", c.handshake->status().message());
      forget(c);
      return;
    }
    finish_handshake(c);
  }
  Status st = c.stream->read_available([&](Result<Message> m) { on_frame(c, std::move(m)); });
  if (!st.ok()) return drop(c, st);
  flush(c);
}

void ControlServer::Impl::finish_handshake(Connection& c) {
  c.fd = c.handshake->take_fd();
  c.handshake.reset();
  c.stream = std::make_unique<ControlStream>(c.fd.get());
}

void ControlServer::Impl::on_frame(Connection& c, Result<Message> message) {
  if (c.dead) return;
  if (!message.ok()) {
    log(LogLevel::kInfo, "control: client ", c.id, ": ", message.status().message());
    c.stream->queue(Reply{false, message.status().message()});
    return;
  }
  callbacks_.on_message(c.id, std::move(message).value());
}

Status ControlServer::Impl::write_queued(Connection& c) {
  Status st = c.stream->write_available();
  if (st.ok() && c.stream->pending_bytes() > limits_.max_queued_bytes)
    st = error(TM_ERROR_PEER_FAILED, "client reads too slowly (", c.stream->pending_bytes(),
               " bytes queued)");
  return st;
}

void ControlServer::Impl::flush(Connection& c) {
  if (c.dead || !c.stream) return;
  Status st = write_queued(c);
  if (!st.ok()) drop(c, st);
}

void ControlServer::Impl::flush_deferred(Connection& c) {
  if (c.dead || !c.stream) return;
  Status st = write_queued(c);
  if (st.ok()) return;
  forget(c);
  c.closed_why = st;
  loop_.wake();  // so that tick() reports it soon
}

void ControlServer::Impl::forget(Connection& c) {
  if (c.dead) return;
  loop_.remove(c.current_fd(), &c);
  c.dead = true;
}

void ControlServer::Impl::drop(Connection& c, const Status& why) {
  if (c.dead) return;
  bool authenticated = c.stream != nullptr;
  forget(c);
  if (authenticated) callbacks_.on_closed(c.id, why);
}

void ControlServer::Impl::send(ConnectionId id, const Message& message) {
  auto it = connections_.find(id);
  if (it == connections_.end() || it->second->dead || !it->second->stream) return;
  it->second->stream->queue(message);
  flush_deferred(*it->second);
}

void ControlServer::Impl::close(ConnectionId id) {
  auto it = connections_.find(id);
  if (it != connections_.end()) forget(*it->second);
}

void ControlServer::Impl::tick(Clock::time_point now) {
  for (auto& [id, c] : connections_) {
    if (c->handshake && !c->dead && now >= c->handshake_deadline) {
      log(LogLevel::kWarn, "control: a client did not finish the handshake in time");
      --pending_;
      forget(*c);
    }
  }
  std::vector<std::pair<ConnectionId, Status>> closed;
  for (auto& [id, c] : connections_) {
    if (!c->closed_why) continue;
    closed.emplace_back(id, std::move(*c->closed_why));
    c->closed_why.reset();
  }
  std::erase_if(connections_,
                [](const auto& entry) { return entry.second->dead && !entry.second->closed_why; });
  // After the table is settled: a callback may send (a closed id is a
  // no-op) and so mark more connections for the next tick.
  for (auto& [id, why] : closed) callbacks_.on_closed(id, why);
}

Result<std::unique_ptr<ControlServer>> ControlServer::listen(
    EventLoop& loop, const std::string& address, const JobSecret& secret, uint64_t job_id,
    ControlServerLimits limits, Callbacks callbacks) {
  auto resolved = transport::tcp::resolve(address);
  if (!resolved.ok()) return resolved.status().with_context("control address");
  TM_ASSIGN_OR_RETURN(UniqueFd fd, transport::tcp::listen_on(resolved.value()));
  TM_ASSIGN_OR_RETURN(auto bound, transport::tcp::local_address(fd.get()));
  auto impl = std::make_unique<Impl>(loop, std::move(fd), bound.to_string(), secret, job_id, limits,
                                     std::move(callbacks));
  TM_RETURN_IF_ERROR(impl->register_listener());
  return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl)));
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlServer::~ControlServer() = default;
const std::string& ControlServer::address() const { return impl_->address(); }
void ControlServer::send(ConnectionId id, const Message& message) { impl_->send(id, message); }
void ControlServer::close(ConnectionId id) { impl_->close(id); }
void ControlServer::tick(Clock::time_point now) { impl_->tick(now); }
int ControlServer::pending_handshakes() const { return impl_->pending(); }
uint64_t ControlServer::refused_connections() const { return impl_->refused(); }

}  // namespace trainmover::control
