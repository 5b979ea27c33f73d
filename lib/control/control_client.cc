#include "control/control_client.h"

#include <algorithm>

#include <poll.h>
#include <sys/eventfd.h>

#include <cerrno>

#include "common/log.h"
#include "control/control_server.h"
#include "control/control_stream.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"

namespace trainmover::control {

using transport::tcp::HandshakeSession;

namespace {

Status wait_fd(int fd, short events, const Deadline& deadline, const std::string& what) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, deadline.poll_timeout_ms());
    if (n > 0) return Status::Ok();
    if (n == 0) return error(TM_ERROR_TIMEOUT, what, " timed out");
    if (errno != EINTR) return system_error("poll", errno);
  }
}

Result<UniqueFd> handshake(const transport::tcp::SocketAddress& address, const JobSecret& secret,
                           const ControlClientOptions& options, const Deadline& deadline) {
  TM_ASSIGN_OR_RETURN(UniqueFd fd, transport::tcp::start_connect(address));
  // TCP_NODELAY: an ack followed by a heartbeat are two small frames; with
  // Nagle the second waits for the delayed ACK of the first (~40 ms), which
  // delays every recovery step the coordinator times.
  TM_RETURN_IF_ERROR(transport::tcp::set_link_options(fd.get(), {}));
  transport::Hello local;
  local.job_id = options.job_id;
  local.comm_id = kControlCommId;
  local.slot = options.identity.slot;
  local.instance_id = options.identity.process.instance_id;
  std::string name = "the coordinator at " + address.to_string();
  TM_ASSIGN_OR_RETURN(auto session,
                      HandshakeSession::connector(std::move(fd), secret, local, {}, name));
  while (true) {
    session->advance();
    if (session->state() == HandshakeSession::State::kDone) return session->take_fd();
    if (session->state() == HandshakeSession::State::kFailed) return session->status();
    short events = session->wants_write() ? POLLOUT : POLLIN;
    TM_RETURN_IF_ERROR(wait_fd(session->fd(), events, deadline, "handshake with " + name));
  }
}

// Connects and authenticates, retrying while the coordinator is not up yet.
Result<UniqueFd> connect_authenticated(const ControlClientOptions& options, const JobSecret& secret,
                                       const Deadline& deadline) {
  auto resolved = transport::tcp::resolve(options.address);
  if (!resolved.ok()) return resolved.status().with_context("coordinator address");
  auto backoff = std::chrono::milliseconds(10);
  while (true) {
    auto fd = handshake(resolved.value(), secret, options, deadline);
    if (fd.ok()) return fd;
    bool retry =
        fd.status().code() == TM_ERROR_SYSTEM || fd.status().code() == TM_ERROR_PEER_FAILED;
    if (!retry || deadline.remaining() < backoff) {
      return Status(fd.status().code() == TM_ERROR_SYSTEM ? TM_ERROR_TIMEOUT : fd.status().code(),
                    str_cat("cannot reach the coordinator at ", options.address, ": ",
                            fd.status().message()));
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::milliseconds(500));
  }
}

// Sends Register and waits for the Welcome (or the refusal).
Result<Welcome> register_with(int fd, const Register& identity, const Deadline& deadline) {
  ControlStream stream(fd);
  stream.queue(identity);
  while (stream.has_pending_writes()) {
    TM_RETURN_IF_ERROR(stream.write_available());
    if (stream.has_pending_writes())
      TM_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, "registering with the coordinator"));
  }
  std::optional<Result<Message>> answer;
  while (!answer) {
    TM_RETURN_IF_ERROR(wait_fd(fd, POLLIN, deadline, "waiting for the coordinator's welcome"));
    Status st = stream.read_available([&](Result<Message> m) {
      if (!answer) answer = std::move(m);
    });
    if (!answer && !st.ok()) return st;
  }
  if (!answer->ok()) return answer->status();
  Message& m = answer->value();
  if (auto* w = std::get_if<Welcome>(&m)) return *w;
  if (auto* r = std::get_if<Reply>(&m))
    return error(TM_ERROR_INVALID_ARGUMENT, "the coordinator refused the registration: ", r->error);
  return error(TM_ERROR_PROTOCOL, "the coordinator answered the registration with '",
               message_type(m), "'");
}

}  // namespace

Result<std::unique_ptr<ControlClient>> ControlClient::connect(const ControlClientOptions& options,
                                                              const JobSecret& secret) {
  Deadline deadline = Deadline::after(options.connect_timeout);
  TM_ASSIGN_OR_RETURN(UniqueFd fd, connect_authenticated(options, secret, deadline));
  TM_ASSIGN_OR_RETURN(Welcome welcome, register_with(fd.get(), options.identity, deadline));
  if (welcome.heartbeat_interval_s <= 0 || welcome.heartbeat_timeout_s <= 0)
    return error(TM_ERROR_PROTOCOL, "the coordinator's welcome gives no heartbeat timing");
  UniqueFd wake(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) return system_error("eventfd", errno);
  std::unique_ptr<ControlClient> client(
      new ControlClient(options, std::move(fd), std::move(wake), welcome));
  client->thread_ = std::thread([c = client.get()] { c->run(); });
  return client;
}

ControlClient::ControlClient(ControlClientOptions options, UniqueFd fd, UniqueFd wake,
                             Welcome welcome)
    : options_(std::move(options)),
      fd_(std::move(fd)),
      wake_fd_(std::move(wake)),
      welcome_(welcome) {}

ControlClient::~ControlClient() {
  stopping_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
}

void ControlClient::wake() const {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof one);
}

Status ControlClient::send(const Message& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!lost_.ok()) return lost_;
    outbox_.push_back(message);
  }
  wake();
  return Status::Ok();
}

Result<Message> ControlClient::next(Duration timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  arrived_.wait_for(lock, timeout, [&] { return !inbox_.empty() || !lost_.ok(); });
  // Messages that arrived before the loss are still delivered, in order.
  if (!inbox_.empty()) {
    Message m = std::move(inbox_.front());
    inbox_.pop_front();
    return m;
  }
  if (!lost_.ok()) return lost_;
  return error(TM_ERROR_TIMEOUT, "no message from the coordinator within ", to_seconds(timeout),
               " s");
}

bool ControlClient::order_waiting() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !lost_.ok() || std::any_of(inbox_.begin(), inbox_.end(), [](const Message& m) {
    return std::holds_alternative<Order>(m);
  });
}

Status ControlClient::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_;
}

void ControlClient::lose(const Status& why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!lost_.ok()) return;
    lost_ = Status(TM_ERROR_PEER_FAILED,
                   "lost the coordinator at " + options_.address + ": " + why.message());
  }
  log(LogLevel::kError, health().message());
  arrived_.notify_all();
  if (options_.on_lost) options_.on_lost(health());
}

void ControlClient::run() {
  ControlStream stream(fd_.get());
  const Duration interval = seconds(welcome_.heartbeat_interval_s);
  const Duration timeout = seconds(welcome_.heartbeat_timeout_s);
  Clock::time_point last_heard = Clock::now();
  Clock::time_point next_beat = Clock::now();
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    if (now - last_heard > timeout)
      return lose(error(TM_ERROR_TIMEOUT, "no heartbeat for ", to_seconds(now - last_heard),
                        " s (timeout ", to_seconds(timeout), " s)"));
    // The program's messages go out before a heartbeat whose step was read
    // with them, under one lock: a program that sends a report and then sets
    // the step (the joiner's first-step report, then the step that ends its
    // recovery) never has its heartbeat overtake the report. Read outside
    // the lock, a heartbeat could carry the new step ahead of the report
    // still in the outbox.
    uint64_t step = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      step = step_.load(std::memory_order_relaxed);
      for (const Message& m : outbox_) stream.queue(m);
      outbox_.clear();
    }
    if (now >= next_beat) {
      stream.queue(Heartbeat{step});
      next_beat = now + interval;
    }
    if (Status st = stream.write_available(); !st.ok()) return lose(st);
    Clock::time_point wake_at = std::min(next_beat, last_heard + timeout);
    int wait_ms = Deadline(wake_at).poll_timeout_ms();
    short out = stream.has_pending_writes() ? POLLOUT : 0;
    pollfd fds[2] = {{fd_.get(), static_cast<short>(POLLIN | out), 0}, {wake_fd_.get(), POLLIN, 0}};
    int n = poll(fds, 2, wait_ms);
    if (n < 0 && errno != EINTR) return lose(system_error("poll", errno));
    if (fds[1].revents) {
      uint64_t count;
      [[maybe_unused]] ssize_t r = ::read(wake_fd_.get(), &count, sizeof count);
    }
    if (!(fds[0].revents & (POLLIN | POLLERR | POLLHUP))) continue;
    Status st = stream.read_available([&](Result<Message> m) {
      last_heard = Clock::now();
      if (!m.ok()) return log(LogLevel::kWarn, "control: ", m.status().message());
      if (std::holds_alternative<Heartbeat>(m.value())) return;
      if (auto* order = std::get_if<Order>(&m.value()); order && options_.on_order)
        options_.on_order(*order);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        inbox_.push_back(std::move(m).value());
      }
      arrived_.notify_all();
    });
    if (!st.ok()) return lose(st);
  }
}

}  // namespace trainmover::control
