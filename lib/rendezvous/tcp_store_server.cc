#include "rendezvous/tcp_store_server.h"

#include <sys/socket.h>

#include <cerrno>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/event_loop.h"
#include "common/log.h"
#include "common/parse.h"
#include "rendezvous/store.h"
#include "rendezvous/store_protocol.h"
#include "transport/tcp/acceptor.h"
#include "transport/tcp/frame_stream.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"

namespace trainmover::rendezvous {

using transport::FrameHeader;
using transport::FrameKind;
using transport::tcp::FrameStream;
using transport::tcp::HandshakeSession;

namespace {
constexpr Duration kHandshakeTimeout = std::chrono::seconds(10);
// Clients that have not proved the secret yet: beyond this many, the oldest
// goes, so that a flood of silent connections can neither exhaust the
// server's descriptors nor keep a real client out.
constexpr size_t kMaxPendingHandshakes = 128;
}  // namespace

class TcpStoreServer::Impl final : private EventHandler {
 public:
  Impl(std::unique_ptr<EventLoop> loop, UniqueFd listen_fd, const JobSecret& secret,
       uint64_t job_id)
      : loop_(std::move(loop)),
        acceptor_(std::move(listen_fd), "store"),
        secret_(secret),
        job_id_(job_id) {}
  ~Impl() {
    connections_.clear();
    loop_->remove(acceptor_.fd(), this);
  }

  Status register_listener() { return loop_->add(acceptor_.fd(), EPOLLIN, this); }
  void run();
  void stop() {
    stopping_ = true;
    loop_->wake();
  }

 private:
  // One client: first its handshake, then its frames.
  struct Connection final : EventHandler {
    Impl* owner = nullptr;
    uint64_t id = 0;
    std::unique_ptr<HandshakeSession> handshake;  // null once authenticated
    UniqueFd fd;
    std::unique_ptr<FrameStream> stream;
    Clock::time_point handshake_deadline;
    bool dead = false;
    void on_events(uint32_t) override { owner->on_connection_event(*this); }
    ~Connection() {
      if (fd.valid() && !dead) owner->loop_->remove(fd.get(), this);
    }
  };
  struct Waiter {
    uint64_t connection = 0;
    uint64_t tag = 0;
    Clock::time_point deadline;
  };

  void on_events(uint32_t) override;  // listener
  void on_accepted(UniqueFd fd);
  void drop_oldest_pending();
  void on_connection_event(Connection& c);
  void on_request(Connection& c, const FrameHeader& header, std::vector<std::byte>&& payload);
  void store(const std::string& key, const std::string& value);
  std::string compare_set(const StoreRequest& r);  // the reply body
  void respond(uint64_t connection, uint64_t tag, const StoreResponse& response);
  void drop(Connection& c, const Status& why);
  void expire(Clock::time_point now);
  Duration next_timeout() const;

  std::unique_ptr<EventLoop> loop_;
  transport::tcp::Acceptor acceptor_;
  JobSecret secret_;
  uint64_t job_id_;
  std::atomic<bool> stopping_{false};
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::unordered_map<std::string, std::string> values_;
  std::multimap<std::string, Waiter> waiters_;
};

void TcpStoreServer::Impl::run() {
  while (!stopping_) {
    Status st = loop_->run_once(next_timeout());
    if (!st.ok()) {
      log(LogLevel::kError, "store server: ", st.message());
      return;
    }
    expire(Clock::now());
    if (Clock::now() >= acceptor_.retry_at()) on_events(EPOLLIN);
    std::erase_if(connections_, [](const auto& entry) { return entry.second->dead; });
  }
}

Duration TcpStoreServer::Impl::next_timeout() const {
  Clock::time_point next = Clock::now() + std::chrono::seconds(1);
  for (const auto& [key, w] : waiters_) next = std::min(next, w.deadline);
  next = std::min(next, acceptor_.retry_at());
  return std::max<Duration>(next - Clock::now(), Duration::zero());
}

void TcpStoreServer::Impl::on_events(uint32_t) {
  acceptor_.accept_ready([this](UniqueFd fd) { on_accepted(std::move(fd)); });
}

void TcpStoreServer::Impl::on_accepted(UniqueFd fd) {
  drop_oldest_pending();
  transport::Hello local;
  local.job_id = job_id_;
  local.comm_id = kStoreCommId;
  auto session = HandshakeSession::acceptor(std::move(fd), secret_, local, nullptr, "store client");
  if (!session.ok()) return;
  auto c = std::make_unique<Connection>();
  c->owner = this;
  c->id = next_id_++;
  c->handshake = std::move(session).value();
  c->handshake_deadline = Clock::now() + kHandshakeTimeout;
  if (!loop_->add(c->handshake->fd(), EPOLLIN | EPOLLOUT | EPOLLRDHUP, c.get()).ok()) return;
  Connection& ref = *c;
  connections_[ref.id] = std::move(c);
  on_connection_event(ref);
}

// Makes room for one more unauthenticated client (ids grow with age).
void TcpStoreServer::Impl::drop_oldest_pending() {
  size_t pending = 0;
  Connection* oldest = nullptr;
  for (auto& [id, c] : connections_) {
    if (c->dead || !c->handshake) continue;
    ++pending;
    if (oldest == nullptr || id < oldest->id) oldest = c.get();
  }
  if (pending >= kMaxPendingHandshakes) {
    drop(*oldest, error(TM_ERROR_TIMEOUT, "handshake pending while ", pending,
                        " newer clients wait: dropped the oldest"));
  }
}

void TcpStoreServer::Impl::drop(Connection& c, const Status& why) {
  if (c.dead) return;
  log(LogLevel::kDebug, "store: dropping client ", c.id, ": ", why.message());
  int fd = c.handshake ? c.handshake->fd() : c.fd.get();
  loop_->remove(fd, &c);
  c.dead = true;
  // An unauthenticated client's descriptor goes now, not after the batch: a
  // flood accepted in one batch must not hold descriptors it was refused.
  c.handshake.reset();
  std::erase_if(waiters_, [&](const auto& entry) { return entry.second.connection == c.id; });
}

void TcpStoreServer::Impl::on_connection_event(Connection& c) {
  if (c.dead) return;
  if (c.handshake) {
    c.handshake->advance();
    if (c.handshake->state() == HandshakeSession::State::kRunning) return;
    if (c.handshake->state() == HandshakeSession::State::kFailed) {
      log(LogLevel::kInfo, "store: ", c.handshake->status().message());
      return drop(c, c.handshake->status());
    }
    c.fd = c.handshake->take_fd();
    c.handshake.reset();
    transport::FrameLimits limits;
    limits.job_id = job_id_;
    limits.max_data_length = kMaxStoreFrame;
    limits.store_frames = true;
    limits.epoch = 0;
    c.stream = std::make_unique<FrameStream>(c.fd.get(), limits);
  }
  Status st = c.stream->read_available([&](const FrameHeader& h, std::vector<std::byte>&& payload) {
    on_request(c, h, std::move(payload));
  });
  if (st.ok()) st = c.stream->write_available();
  if (!st.ok()) drop(c, st);
}

void TcpStoreServer::Impl::on_request(Connection& c, const FrameHeader& header,
                                      std::vector<std::byte>&& payload) {
  if (header.kind != FrameKind::kStoreRequest) {
    return respond(c.id, header.tag, {TM_ERROR_PROTOCOL, "expected a store request"});
  }
  auto request = parse_request(payload);
  if (!request.ok())
    return respond(c.id, header.tag, {TM_ERROR_PROTOCOL, request.status().message()});
  StoreRequest& r = request.value();
  switch (r.op) {
    case StoreOp::kSet:
      store(r.key, r.value);
      return respond(c.id, header.tag, {TM_SUCCESS, ""});
    case StoreOp::kGet: {
      auto it = values_.find(r.key);
      if (it != values_.end()) return respond(c.id, header.tag, {TM_SUCCESS, it->second});
      auto deadline = Clock::now() + std::chrono::milliseconds(r.timeout_ms);
      waiters_.emplace(r.key, Waiter{c.id, header.tag, deadline});
      return;
    }
    case StoreOp::kAdd: {
      int64_t current = 0;
      if (auto it = values_.find(r.key); it != values_.end()) {
        auto parsed = parse_int(it->second, INT64_MIN, INT64_MAX);
        if (!parsed.ok()) {
          return respond(c.id, header.tag, {TM_ERROR_INVALID_ARGUMENT, "key holds no integer"});
        }
        current = parsed.value();
      }
      std::string sum = std::to_string(
          static_cast<int64_t>(static_cast<uint64_t>(current) + static_cast<uint64_t>(r.delta)));
      store(r.key, sum);
      return respond(c.id, header.tag, {TM_SUCCESS, sum});
    }
    case StoreOp::kCompareSet:
      return respond(c.id, header.tag, {TM_SUCCESS, compare_set(r)});
  }
}

// One thread serves every request, so the compare and the set are atomic.
std::string TcpStoreServer::Impl::compare_set(const StoreRequest& r) {
  auto it = values_.find(r.key);
  std::optional<std::string> current;
  if (it != values_.end()) current = it->second;
  if (current != r.expected) return encode_compare_set_reply({false, current});
  store(r.key, r.value);
  return encode_compare_set_reply({true, r.value});
}

// Sets `key` and answers every get waiting for it.
void TcpStoreServer::Impl::store(const std::string& key, const std::string& value) {
  values_[key] = value;
  auto [first, last] = waiters_.equal_range(key);
  std::vector<Waiter> ready;
  for (auto it = first; it != last; ++it) ready.push_back(it->second);
  waiters_.erase(first, last);
  for (const Waiter& w : ready) respond(w.connection, w.tag, {TM_SUCCESS, value});
}

void TcpStoreServer::Impl::respond(uint64_t connection, uint64_t tag,
                                   const StoreResponse& response) {
  auto it = connections_.find(connection);
  if (it == connections_.end() || it->second->dead || !it->second->stream) return;
  Connection& c = *it->second;
  FrameHeader h;
  h.kind = FrameKind::kStoreResponse;
  h.job_id = job_id_;
  h.tag = tag;
  auto payload = encode_response(response);
  h.length = payload.size();
  c.stream->queue(h, std::move(payload));
  Status st = c.stream->write_available();
  if (!st.ok()) drop(c, st);
}

void TcpStoreServer::Impl::expire(Clock::time_point now) {
  std::vector<std::pair<std::string, Waiter>> expired;
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (it->second.deadline <= now) {
      expired.emplace_back(it->first, it->second);
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, w] : expired) {
    respond(w.connection, w.tag,
            {TM_ERROR_TIMEOUT, str_cat("key '", key, "' was not set in time")});
  }
  for (auto& [id, c] : connections_) {
    if (c->handshake && !c->dead && now >= c->handshake_deadline) {
      drop(*c, error(TM_ERROR_TIMEOUT, "handshake timed out"));
    }
  }
}

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::start(const std::string& address,
                                                              const JobSecret& secret,
                                                              uint64_t job_id) {
  TM_ASSIGN_OR_RETURN(auto bind_address, transport::tcp::resolve(address));
  TM_ASSIGN_OR_RETURN(UniqueFd fd, transport::tcp::listen_on(bind_address));
  TM_ASSIGN_OR_RETURN(auto bound, transport::tcp::local_address(fd.get()));
  TM_ASSIGN_OR_RETURN(auto loop, EventLoop::create());
  auto impl = std::make_unique<Impl>(std::move(loop), std::move(fd), secret, job_id);
  TM_RETURN_IF_ERROR(impl->register_listener());
  std::unique_ptr<TcpStoreServer> server(new TcpStoreServer(std::move(impl)));
  server->address_ = bound.to_string();
  server->thread_ = std::thread([s = server.get()] { s->impl_->run(); });
  return server;
}

TcpStoreServer::TcpStoreServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

TcpStoreServer::~TcpStoreServer() {
  impl_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trainmover::rendezvous
