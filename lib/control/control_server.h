// ControlServer: the coordinator's end of the control channel. It listens on
// one address, authenticates each connection with the link handshake
// (transport/handshake.h: HMAC over fresh nonces under the job secret), then
// carries control frames both ways.
//
// Defences: it binds only the address it is given; at most
// max_pending_handshakes connections may be unauthenticated at once (more are
// closed at accept); a handshake must finish within handshake_timeout; a
// client that lets max_queued_bytes pile up unread is dropped. A malformed
// message is answered with Reply{ok=false, error} and the connection stays.
//
// Threading: every method, and every callback, runs on the thread that runs
// the EventLoop given to listen(); the loop must outlive the server.
// Re-entrancy: send() and close() never call a callback, so a caller may
// send while it walks tables of its own that on_closed changes. A write
// that fails in send() is reported by on_closed from the next tick(); one
// that fails in the loop's own dispatch, at once from there.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/event_loop.h"
#include "common/secret.h"
#include "common/status.h"
#include "control/control_protocol.h"

namespace trainmover::control {

// The handshake's comm_id for the control channel, so a proof made for a
// link or the store cannot be replayed here.
inline constexpr uint64_t kControlCommId = 0x4C4F52544E4F43;  // "CONTROL"

struct ControlServerLimits {
  int max_pending_handshakes = 64;
  Duration handshake_timeout = std::chrono::seconds(5);
  size_t max_queued_bytes = 16u << 20;
};

class ControlServer {
 public:
  using ConnectionId = uint64_t;
  struct Callbacks {
    // An authenticated client sent a well-formed message.
    std::function<void(ConnectionId, Message)> on_message;
    // An authenticated connection ended (peer closed, error, or dropped).
    std::function<void(ConnectionId, const Status&)> on_closed;
  };

  // `address` is "host:port"; port 0 picks a free one (see address()).
  static Result<std::unique_ptr<ControlServer>> listen(EventLoop& loop, const std::string& address,
                                                       const JobSecret& secret, uint64_t job_id,
                                                       ControlServerLimits limits,
                                                       Callbacks callbacks);
  ~ControlServer();

  const std::string& address() const;
  // Queues `message` to the connection and writes what it can; a no-op for
  // one that has closed. Never calls a callback (see Re-entrancy).
  void send(ConnectionId id, const Message& message);
  // Closes the connection without calling on_closed.
  void close(ConnectionId id);
  // Drops handshakes past their deadline, calls on_closed for connections
  // that send() found broken, and reaps closed connections.
  void tick(Clock::time_point now);
  int pending_handshakes() const;
  // Handshakes refused because too many were pending (for tests and status).
  uint64_t refused_connections() const;

 private:
  class Impl;
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainmover::control
