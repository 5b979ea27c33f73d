#include "transport/tcp/tcp_transport.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "transport/shm/local_socket.h"
#include "transport/shm/ring_stream.h"

namespace trainmover::transport::tcp {

// A handshake in progress, registered with the event loop.
struct TcpTransport::Pending final : EventHandler {
  TcpTransport* owner = nullptr;
  std::unique_ptr<HandshakeSession> session;
  int slot = -1;  // outgoing: the slot asked for; incoming: -1 until known
  bool outgoing = false;
  bool local = false;  // over the abstract Unix socket: a shared-memory link
  uint64_t epoch = 0;  // outgoing: the epoch we asked for (the link's epoch)
  bool registered = false;
  bool finished = false;
  Clock::time_point started;

  void on_events(uint32_t) override { owner->on_session_event(*this); }
};

// The abstract Unix socket of the shared-memory links.
struct TcpTransport::LocalListener final : EventHandler {
  TcpTransport* owner = nullptr;
  std::unique_ptr<Acceptor> acceptor;

  void on_events(uint32_t) override { owner->accept_all(); }
};

namespace {
constexpr std::string_view kShmMark = "/shm/";
}  // namespace

Result<std::unique_ptr<TcpTransport>> TcpTransport::create(EventLoop& loop, const JobSecret& secret,
                                                           const Options& options, LocalLinks local,
                                                           TransportListener* listener,
                                                           LinkObserver* link_observer) {
  std::unique_ptr<TcpTransport> t(new TcpTransport(loop, secret, options, listener, link_observer));
  t->local_ = local;
  TM_ASSIGN_OR_RETURN(SocketAddress bind_address, resolve(options.listen_host, 0));
  TM_ASSIGN_OR_RETURN(UniqueFd listen_fd, listen_on(bind_address));
  TM_ASSIGN_OR_RETURN(SocketAddress bound, local_address(listen_fd.get()));
  t->endpoint_ = bound.to_string();
  t->acceptor_ = std::make_unique<Acceptor>(std::move(listen_fd), "link listener");
  TM_RETURN_IF_ERROR(loop.add(t->acceptor_->fd(), EPOLLIN, t.get()));
  if (local != LocalLinks::kTcp) TM_RETURN_IF_ERROR(t->listen_locally());
  return t;
}

// "auto" without a host identity (no /proc) gives up shared memory and says
// so; "shm" cannot.
Status TcpTransport::listen_locally() {
  auto identity = shm::host_identity();
  if (!identity.ok() && local_ == LocalLinks::kAuto) {
    log(LogLevel::kInfo, "no shared-memory links: ", identity.status().message());
    return Status::Ok();
  }
  if (!identity.ok()) return identity.status().with_context("shared-memory transport");
  TM_ASSIGN_OR_RETURN(uint64_t nonce, random_u64());
  std::string name = str_cat("trainmover/", hex64(options_.job_id), "/", hex64(nonce));
  TM_ASSIGN_OR_RETURN(UniqueFd fd, shm::listen_local(name));
  local_listener_ = std::make_unique<LocalListener>();
  local_listener_->owner = this;
  local_listener_->acceptor = std::make_unique<Acceptor>(std::move(fd), "shared-memory listener");
  TM_RETURN_IF_ERROR(loop_.add(local_listener_->acceptor->fd(), EPOLLIN, local_listener_.get()));
  host_identity_ = identity.value();
  endpoint_ += str_cat(kShmMark, host_identity_, "/", hex64(nonce));
  return Status::Ok();
}

Result<std::string> TcpTransport::local_name_of(int slot, const std::string& endpoint) const {
  size_t mark = endpoint.find(kShmMark);
  std::string_view rest;
  if (mark != std::string::npos) rest = std::string_view(endpoint).substr(mark + kShmMark.size());
  size_t slash = rest.find('/');
  bool same_host = !host_identity_.empty() && slash != std::string_view::npos &&
                   rest.substr(0, slash) == host_identity_;
  if (same_host) return str_cat("trainmover/", hex64(options_.job_id), "/", rest.substr(slash + 1));
  if (local_ == LocalLinks::kShm) {
    return error(TM_ERROR_UNSUPPORTED, "slot ", slot, " at ", endpoint,
                 " does not share this host's memory (transport shm; use auto or tcp)");
  }
  return std::string();
}

TcpTransport::TcpTransport(EventLoop& loop, const JobSecret& secret, const Options& options,
                           TransportListener* listener, LinkObserver* link_observer)
    : loop_(loop),
      secret_(secret),
      options_(options),
      listener_(listener),
      link_observer_(link_observer) {}

TcpTransport::~TcpTransport() {
  for (auto& p : pending_) retire(*p);
  if (acceptor_ != nullptr) loop_.remove(acceptor_->fd(), this);
  if (local_listener_ != nullptr)
    loop_.remove(local_listener_->acceptor->fd(), local_listener_.get());
}

std::string TcpTransport::slot_name(int slot) const {
  return slot >= 0 ? str_cat("slot ", slot) : "a peer";
}

Hello TcpTransport::local_hello() const {
  Hello h;
  h.job_id = options_.job_id;
  h.comm_id = options_.comm_id;
  h.epoch = options_.epoch;
  h.slot = options_.slot;
  h.instance_id = options_.instance_id;
  return h;
}

void TcpTransport::on_events(uint32_t) { accept_all(); }

void TcpTransport::accept_all() {
  acceptor_->accept_ready([this](UniqueFd fd) { on_accepted(std::move(fd), false); });
  if (local_listener_ != nullptr)
    local_listener_->acceptor->accept_ready(
        [this](UniqueFd fd) { on_accepted(std::move(fd), true); });
}

void TcpTransport::on_accepted(UniqueFd fd, bool local) {
  std::string name = local ? "a local connection" : "a connection";
  if (auto peer = peer_address(fd.get()); peer.ok() && !local)
    name = "connection from " + peer.value().to_string();
  retire_oldest_unauthenticated();
  auto session = HandshakeSession::acceptor(
      std::move(fd), secret_, local_hello(),
      [this](const Hello& h) { return listener_->on_incoming(h); }, std::move(name));
  if (!session.ok()) {
    log(LogLevel::kWarn, "cannot start handshake: ", session.status().message());
    return;
  }
  start_session(std::move(session).value(), -1, false, local);
}

// An incoming connection that has not proved the secret yet.
bool TcpTransport::unauthenticated(const Pending& p) const {
  return !p.finished && !p.outgoing && !p.session->deferred();
}

// Makes room for one more unauthenticated connection (pending_ is oldest first).
void TcpTransport::retire_oldest_unauthenticated() {
  size_t count = 0;
  Pending* oldest = nullptr;
  for (auto& p : pending_) {
    if (!unauthenticated(*p)) continue;
    ++count;
    if (oldest == nullptr) oldest = p.get();
  }
  if (count < kMaxPendingAccepts) return;
  log(LogLevel::kInfo, "dropping ", oldest->session->peer_name(), ": ", count,
      " connections wait for their handshake");
  retire(*oldest);
  oldest->session->take_fd();  // closes it now
}

void TcpTransport::connect(int slot, const std::string& endpoint, uint64_t instance_id) {
  auto fail = [&](const Status& st) { listener_->on_connect_failed(slot, st, Verdict::kRefused); };
  auto local_name = local_name_of(slot, endpoint);
  if (!local_name.ok()) return fail(local_name.status());
  bool local = !local_name.value().empty();
  Result<UniqueFd> fd = UniqueFd();
  if (local) {
    fd = shm::start_connect_local(local_name.value());
  } else {
    auto address = resolve(endpoint.substr(0, endpoint.find(kShmMark)));
    if (!address.ok())
      return fail(address.status().with_context(str_cat("endpoint of slot ", slot)));
    fd = start_connect(address.value());
  }
  if (!fd.ok()) return fail(fd.status().with_context(str_cat("slot ", slot)));
  auto session = HandshakeSession::connector(
      std::move(fd).value(), secret_,
      [&] {
        Hello h = local_hello();
        h.target_slot = slot;
        return h;
      }(),
      ExpectedPeer{slot, instance_id}, str_cat("slot ", slot, " at ", endpoint));
  if (!session.ok()) return fail(session.status());
  start_session(std::move(session).value(), slot, true, local);
}

void TcpTransport::set_identity(int slot, uint64_t epoch) {
  options_.slot = slot;
  options_.epoch = epoch;
}

void TcpTransport::reconsider_deferred() {
  // Index loop: finishing a session can start nothing new, but stay safe.
  for (size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = *pending_[i];
    if (p.finished || p.outgoing || !p.session->deferred()) continue;
    p.session->reconsider();
    if (p.session->state() != HandshakeSession::State::kRunning) finish(p);
  }
}

void TcpTransport::cancel_connect(int slot) {
  for (auto& p : pending_) {
    if (p->outgoing && p->slot == slot && !p->finished) retire(*p);
  }
}

void TcpTransport::start_session(std::unique_ptr<HandshakeSession> session, int slot, bool outgoing,
                                 bool local) {
  auto pending = std::make_unique<Pending>();
  pending->owner = this;
  pending->session = std::move(session);
  pending->slot = slot;
  pending->outgoing = outgoing;
  pending->local = local;
  pending->epoch = options_.epoch;
  pending->started = Clock::now();
  Status st = loop_.add(pending->session->fd(), EPOLLIN | EPOLLOUT | EPOLLRDHUP, pending.get());
  if (!st.ok()) {
    if (outgoing) listener_->on_connect_failed(slot, st, Verdict::kRefused);
    return;
  }
  pending->registered = true;
  Pending& ref = *pending;
  pending_.push_back(std::move(pending));
  on_session_event(ref);  // the accept or connect may already be readable/writable
}

void TcpTransport::on_session_event(Pending& pending) {
  if (pending.finished) return;
  pending.session->advance();
  if (pending.session->state() != HandshakeSession::State::kRunning) finish(pending);
}

void TcpTransport::retire(Pending& pending) {
  if (pending.registered) {
    loop_.remove(pending.session->fd(), &pending);
    pending.registered = false;
  }
  pending.finished = true;
}

void TcpTransport::finish(Pending& pending) {
  HandshakeSession& s = *pending.session;
  retire(pending);
  if (s.state() == HandshakeSession::State::kFailed) {
    if (pending.outgoing) {
      listener_->on_connect_failed(pending.slot, s.status(), s.verdict());
    } else {
      log(LogLevel::kInfo, s.status().message());
    }
    s.take_fd();  // closes it
    return;
  }
  const Hello peer = s.peer();
  auto stream = open_stream(s.take_fd(), pending.local);
  StreamLink::Options lo;
  lo.job_id = options_.job_id;
  // The connector's epoch, which the acceptor's policy agreed to.
  lo.epoch = pending.outgoing ? pending.epoch : peer.epoch;
  lo.local_slot = options_.slot;
  lo.peer_slot = peer.slot;
  lo.peer_instance = peer.instance_id;
  lo.max_frame_bytes = options_.max_frame_bytes;
  lo.max_outstanding = options_.max_outstanding;
  lo.peer_name = str_cat("slot ", peer.slot);
  Result<std::unique_ptr<StreamLink>> link =
      stream.ok() ? StreamLink::create(loop_, std::move(stream).value(), lo, link_observer_)
                  : Result<std::unique_ptr<StreamLink>>(stream.status());
  if (!link.ok()) {
    if (pending.outgoing) {
      listener_->on_connect_failed(pending.slot, link.status(), Verdict::kRefused);
    } else {
      // The peer's own connect reports it; say here why this end dropped it.
      log(LogLevel::kWarn, "link from slot ", peer.slot, " dropped: ", link.status().message());
    }
    return;
  }
  listener_->on_link_ready(std::move(link).value(), peer);
}

Result<std::unique_ptr<ByteStream>> TcpTransport::open_stream(UniqueFd fd, bool local) const {
  if (local) {
    TM_ASSIGN_OR_RETURN(auto rings, shm::RingStream::create(std::move(fd), options_.shm_ring_bytes,
                                                            options_.ring_pool.get()));
    return std::unique_ptr<ByteStream>(std::move(rings));
  }
  TM_RETURN_IF_ERROR(set_link_options(fd.get(), LinkSocketOptions{options_.socket_buffer_bytes}));
  return socket_stream(std::move(fd));
}

Duration TcpTransport::limit_for(const Pending& p) const {
  return unauthenticated(p) ? options_.accept_timeout : options_.handshake_timeout;
}

void TcpTransport::sweep() {
  auto now = Clock::now();
  if (now >= acceptor_->retry_at()) accept_all();
  for (auto& p : pending_) {
    if (p->finished) continue;
    Duration limit = limit_for(*p);
    if (now < p->started + limit) continue;
    Status timeout = error(TM_ERROR_TIMEOUT, "handshake with ", p->session->peer_name(),
                           " did not complete within ", to_seconds(limit), " s");
    retire(*p);
    if (p->outgoing) {
      listener_->on_connect_failed(p->slot, timeout, Verdict::kRefused);
    } else {
      log(LogLevel::kInfo, timeout.message());
    }
  }
  std::erase_if(pending_, [](const std::unique_ptr<Pending>& p) { return p->finished; });
}

}  // namespace trainmover::transport::tcp
