// ControlServer's re-entrancy rule: send() never calls a callback. A write
// that fails inside send() (the peer gone) is reported by on_closed from
// the next tick(), so the coordinator may send while it walks its table
// of peers, which on_closed changes (srun crashed in Coordinator::emit when
// a send inside its loop over the peers erased one).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "control/control_client.h"
#include "control/control_server.h"

namespace trainmover::control {
namespace {

constexpr uint64_t kJob = 77;

struct Closed {
  ControlServer::ConnectionId id;
  bool inside_send;
};

TEST(ControlServer, AFailedSendIsReportedByTheNextTickNotInsideSend) {
  JobSecret secret = JobSecret::generate().value();
  auto loop = EventLoop::create().value();
  std::unique_ptr<ControlServer> server;
  std::atomic<ControlServer::ConnectionId> client_id{0};
  bool in_send = false;
  std::vector<Closed> closed;
  ControlServer::Callbacks callbacks;
  callbacks.on_message = [&](ControlServer::ConnectionId id, Message m) {
    if (!std::holds_alternative<Register>(m)) return;
    Welcome w;
    w.heartbeat_interval_s = 10;
    w.heartbeat_timeout_s = 60;
    server->send(id, w);
    client_id = id;
  };
  callbacks.on_closed = [&](ControlServer::ConnectionId id, const Status&) {
    closed.push_back({id, in_send});
  };
  auto listening = ControlServer::listen(*loop, "127.0.0.1:0", secret, kJob, {}, callbacks);
  ASSERT_TRUE(listening.ok()) << listening.status().message();
  server = std::move(listening).value();

  ControlClientOptions o;
  o.address = server->address();
  o.job_id = kJob;
  o.identity.kind = PeerKind::kCtl;
  auto connecting =
      std::async(std::launch::async, [&] { return ControlClient::connect(o, secret); });
  while (connecting.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    ASSERT_TRUE(loop->run_once(std::chrono::milliseconds(10)).ok());
    server->tick(Clock::now());
  }
  auto client = connecting.get();
  ASSERT_TRUE(client.ok()) << client.status().message();
  ASSERT_NE(client_id.load(), 0u);

  // The client goes; the loop does not run, so only a send can find out.
  client.value().reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 50 && closed.empty(); ++i) {
    in_send = true;
    server->send(client_id, StatusRequest{});
    in_send = false;
    server->tick(Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(closed.size(), 1u) << "no send found the connection broken";
  EXPECT_EQ(closed[0].id, client_id.load());
  EXPECT_FALSE(closed[0].inside_send) << "on_closed ran inside send()";
  // Sending to it now is a no-op, and it is reported only once.
  server->send(client_id, StatusRequest{});
  server->tick(Clock::now());
  EXPECT_EQ(closed.size(), 1u);
}

}  // namespace
}  // namespace trainmover::control
