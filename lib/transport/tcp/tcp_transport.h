// TcpTransport: listens on one address, runs handshakes for incoming and
// outgoing connections, and turns each authenticated connection into a
// StreamLink.
//
// It also carries the shared-memory links (kinds "shm" and "auto"): then it
// listens on an abstract Unix socket too (shm/local_socket.h) and its
// endpoint says so, "host:port/shm/HOSTID/NAME". A peer of the same host
// identity connects there, runs the same handshake, and the link's bytes go
// through shared-memory rings (shm/ring_stream.h); a peer on another host
// uses TCP to the same process ("auto"; "shm" refuses it instead).
//
// Only the address given is bound (never INADDR_ANY unless asked). An
// incoming connection that has not proved the secret within accept_timeout
// is closed, and at most kMaxPendingAccepts such connections are held (the
// oldest goes first), so silent connections cannot starve the job. Outgoing
// handshakes, and incoming ones already authenticated that wait for a
// verdict (a joiner of an epoch not prepared yet), have handshake_timeout.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/event_loop.h"
#include "common/secret.h"
#include "transport/stream_link.h"
#include "transport/tcp/acceptor.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/socket_stream.h"
#include "transport/transport.h"
#include "transport/transport_factory.h"

namespace trainmover::transport::tcp {

// Which links to peers of the same host use shared memory.
enum class LocalLinks { kTcp, kShm, kAuto };

class TcpTransport final : public Transport, private EventHandler {
 public:
  using Options = TransportOptions;
  static constexpr size_t kMaxPendingAccepts = 128;

  // `secret`, `loop` and both observers must outlive the transport.
  static Result<std::unique_ptr<TcpTransport>> create(EventLoop& loop, const JobSecret& secret,
                                                      const Options& options, LocalLinks local,
                                                      TransportListener* listener,
                                                      LinkObserver* link_observer);
  ~TcpTransport() override;

  std::string local_endpoint() const override { return endpoint_; }
  void connect(int slot, const std::string& endpoint, uint64_t instance_id) override;
  void set_identity(int slot, uint64_t epoch) override;
  void reconsider_deferred() override;
  void cancel_connect(int slot) override;
  void sweep() override;

 private:
  struct Pending;
  struct LocalListener;

  TcpTransport(EventLoop& loop, const JobSecret& secret, const Options& options,
               TransportListener* listener, LinkObserver* link_observer);
  void on_events(uint32_t events) override;  // the listening socket
  void accept_all();
  void on_accepted(UniqueFd fd, bool local);
  Status listen_locally();
  // The abstract socket of a same-host endpoint, or "" to use TCP.
  Result<std::string> local_name_of(int slot, const std::string& endpoint) const;
  void retire_oldest_unauthenticated();
  bool unauthenticated(const Pending& pending) const;
  Duration limit_for(const Pending& pending) const;
  Hello local_hello() const;
  void start_session(std::unique_ptr<HandshakeSession> session, int slot, bool outgoing,
                     bool local);
  // The link's bytes: shared-memory rings over a local socket, else TCP.
  Result<std::unique_ptr<ByteStream>> open_stream(UniqueFd fd, bool local) const;
  void on_session_event(Pending& pending);
  void finish(Pending& pending);
  void retire(Pending& pending);
  std::string slot_name(int slot) const;

  EventLoop& loop_;
  const JobSecret& secret_;
  Options options_;
  TransportListener* listener_;
  LinkObserver* link_observer_;
  std::unique_ptr<Acceptor> acceptor_;
  LocalLinks local_ = LocalLinks::kTcp;
  std::string host_identity_;  // empty: no shared-memory links
  std::unique_ptr<LocalListener> local_listener_;
  std::string endpoint_;
  std::vector<std::unique_ptr<Pending>> pending_;
};

}  // namespace trainmover::transport::tcp
