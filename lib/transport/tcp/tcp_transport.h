// TcpTransport: listens on one address, runs handshakes for incoming and
// outgoing connections, and turns each authenticated connection into a
// TcpLink.
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
#include "transport/tcp/acceptor.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/tcp_link.h"
#include "transport/transport.h"
#include "transport/transport_factory.h"

namespace trainmover::transport::tcp {

class TcpTransport final : public Transport, private EventHandler {
 public:
  using Options = TransportOptions;
  static constexpr size_t kMaxPendingAccepts = 128;

  // `secret`, `loop` and both observers must outlive the transport.
  static Result<std::unique_ptr<TcpTransport>> create(EventLoop& loop, const JobSecret& secret,
                                                      const Options& options,
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

  TcpTransport(EventLoop& loop, const JobSecret& secret, const Options& options,
               TransportListener* listener, LinkObserver* link_observer);
  void on_events(uint32_t events) override;  // the listening socket
  void accept_all();
  void on_accepted(UniqueFd fd);
  void retire_oldest_unauthenticated();
  bool unauthenticated(const Pending& pending) const;
  Duration limit_for(const Pending& pending) const;
  Hello local_hello() const;
  void start_session(std::unique_ptr<HandshakeSession> session, int slot, bool outgoing);
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
  std::string endpoint_;
  std::vector<std::unique_ptr<Pending>> pending_;
};

}  // namespace trainmover::transport::tcp
