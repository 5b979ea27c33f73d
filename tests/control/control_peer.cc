// A process of a test job for the coordinator tests: a fake active rank, a
// fake standby (both through the real ControlClient), or a coordinator of
// its own (so a test can SIGSTOP or SIGKILL it). The ranks train nothing:
// they advance a step counter and answer each order as the contract in
// control_protocol.h says, so that the coordinator's side is what is tested.
//
//   control_peer active  ADDRESS JOB_ID SLOT    [flags]
//   control_peer standby ADDRESS JOB_ID ROLES   [flags]   ROLES: first,last,...
//   control_peer coordinator ADDRESS_FILE DP PP [HEARTBEAT_TIMEOUT_S]
// The job secret comes in TRAINMOVER_JOB_SECRET.
// Flags: --die-on=ORDER (SIGKILL itself on receiving it), --warmup-ms=N,
//        --die-during-warmup, --fail-warmup, --hold-socket (a child keeps
//        the connection open for 5 s after this process dies),
//        --checkpoint=N (its newest checkpoint is of step N; default 1:
//        a rollback loads the newest of a step <= the order's bound),
//        --drain-late-ms=N (steps on for N ms after its first drain order
//        before it is held: a rank that passed the boundary unaware).
// Exit status: 0 after a goodbye, 3 when ordered to stop, 4 when it lost the
// coordinator (the message is on stderr), 5 on a setup error.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "common/parse.h"
#include "control/control_client.h"
#include "control/coordinator.h"

using namespace trainmover;           // NOLINT: a test program
using namespace trainmover::control;  // NOLINT

namespace {

struct Flags {
  std::string die_on;
  std::string fail_once_on;  // answers the first such order with an error
  int warmup_ms = 50;
  bool die_during_warmup = false;
  bool fail_warmup = false;
  bool hold_socket = false;
  uint64_t checkpoint = 1;
  int drain_late_ms = 0;
  uint64_t goodbye_at = 0;  // says goodbye (training finished) at this step, then idles
};

Flags parse_flags(int argc, char** argv, int from) {
  Flags f;
  for (int i = from; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--die-on=", 0) == 0) f.die_on = a.substr(9);
    if (a.rfind("--fail-once-on=", 0) == 0) f.fail_once_on = a.substr(15);
    if (a.rfind("--warmup-ms=", 0) == 0) f.warmup_ms = std::stoi(a.substr(12));
    if (a == "--die-during-warmup") f.die_during_warmup = true;
    if (a == "--fail-warmup") f.fail_warmup = true;
    if (a == "--hold-socket") f.hold_socket = true;
    if (a.rfind("--checkpoint=", 0) == 0) f.checkpoint = std::stoull(a.substr(13));
    if (a.rfind("--drain-late-ms=", 0) == 0) f.drain_late_ms = std::stoi(a.substr(16));
    if (a.rfind("--goodbye-at=", 0) == 0) f.goodbye_at = std::stoull(a.substr(13));
  }
  return f;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "control_peer %d: %s\n", getpid(), what.c_str());
  return 5;
}

Result<std::unique_ptr<ControlClient>> connect(const std::string& address, uint64_t job_id,
                                               Register identity) {
  auto secret = JobSecret::from_hex(get_env("TRAINMOVER_JOB_SECRET").value_or(""));
  if (!secret.ok()) return secret.status();
  ControlClientOptions o;
  o.address = address;
  o.job_id = job_id;
  identity.process.pid = getpid();
  identity.process.host = "localhost";
  identity.process.instance_id = static_cast<uint64_t>(getpid()) << 16 | 7;
  o.identity = identity;
  return ControlClient::connect(o, secret.value());
}

// Answers orders and advances the step every 20 ms while it serves a slot.
int serve(ControlClient& client, Flags flags, bool serving) {  // a copy: --fail-once-on is spent
  uint64_t step = 0;
  auto next_step = std::chrono::steady_clock::now();
  std::optional<Order> late_drain;  // --drain-late-ms: answered at late_at
  auto late_at = next_step;
  int late_drains = flags.drain_late_ms > 0 ? 1 : 0;
  while (true) {
    auto now = std::chrono::steady_clock::now();
    if (serving && now >= next_step) {
      client.set_step(++step);
      next_step = now + std::chrono::milliseconds(20);
      if (step == flags.goodbye_at) {
        serving = false;
        if (!client.send(Goodbye{"training finished"}).ok()) return 4;
      }
    }
    if (late_drain && now >= late_at) {
      Ack ack;
      ack.order_id = late_drain->order_id;
      ack.step = std::max(step + 1, late_drain->step);
      step = ack.step - 1;
      serving = false;
      late_drain.reset();
      if (!client.send(ack).ok()) return 4;
    }
    auto m = client.next(std::chrono::milliseconds(20));
    if (!m.ok() && m.status().code() == TM_ERROR_TIMEOUT) continue;
    if (!m.ok()) {
      std::fprintf(stderr, "control_peer %d: %s\n", getpid(), m.status().message().c_str());
      return 4;
    }
    auto* order = std::get_if<Order>(&m.value());
    if (!order) continue;
    if (flags.die_on == order_kind_name(order->kind)) raise(SIGKILL);
    if (order->kind == OrderKind::kDrain && late_drains > 0) {
      --late_drains;
      late_drain = *order;
      late_at = now + std::chrono::milliseconds(flags.drain_late_ms);
      continue;
    }
    Ack ack;
    ack.order_id = order->order_id;
    if (flags.fail_once_on == order_kind_name(order->kind)) {
      flags.fail_once_on.clear();
      ack.ok = false;
      ack.error = "injected failure (--fail-once-on)";
      if (!client.send(ack).ok()) return 4;
      continue;
    }
    switch (order->kind) {
      case OrderKind::kStop:
        std::fprintf(stderr, "control_peer %d: stopped: %s\n", getpid(), order->reason.c_str());
        return 3;
      case OrderKind::kPromote:
        break;
      case OrderKind::kPrepare:
        serving = false;  // waits at the step boundary
        ack.step = step + 1;
        break;
      case OrderKind::kSendState:
      case OrderKind::kReceiveState:
        ack.bytes = 4096;
        break;
      case OrderKind::kDrain:
        serving = false;  // held at the step boundary (it is always at one)
        ack.step = std::max(step + 1, order->step);
        step = ack.step - 1;
        break;
      case OrderKind::kRollback:
        serving = false;
        ack.step = std::min(flags.checkpoint, order->step);
        step = ack.step - 1;  // the step counter before the checkpoint's next step
        break;
      case OrderKind::kSwitch:
        step = order->step;
        client.set_step(step);
        serving = true;
        break;
    }
    if (!client.send(ack).ok()) return 4;
  }
}

int run_active(int argc, char** argv) {
  if (argc < 5) return fail("usage: active ADDRESS JOB_ID SLOT");
  Flags flags = parse_flags(argc, argv, 5);
  Register r;
  r.kind = PeerKind::kActive;
  r.slot = std::atoi(argv[4]);
  auto client = connect(argv[2], std::stoull(argv[3]), r);
  if (!client.ok()) return fail(client.status().message());
  if (flags.hold_socket && fork() == 0) {
    sleep(5);
    _exit(0);
  }
  return serve(*client.value(), flags, true);
}

int run_standby(int argc, char** argv) {
  if (argc < 5) return fail("usage: standby ADDRESS JOB_ID ROLES");
  Flags flags = parse_flags(argc, argv, 5);
  Register r;
  r.kind = PeerKind::kStandby;
  auto client = connect(argv[2], std::stoull(argv[3]), r);
  if (!client.ok()) return fail(client.status().message());
  WarmupProgress progress;
  std::string roles = argv[4];
  for (size_t at = 0; at <= roles.size();) {
    size_t comma = std::min(roles.find(',', at), roles.size());
    auto role = parse_stage_role(roles.substr(at, comma - at));
    if (!role.ok()) return fail(role.status().message());
    progress.state = WarmupState::kWarming;
    progress.warming = role.value();
    if (!client.value()->send(progress).ok()) return 4;
    if (flags.die_during_warmup) raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(flags.warmup_ms));
    progress.ready_roles.insert(role.value());
    at = comma + 1;
  }
  progress.state = flags.fail_warmup ? WarmupState::kFailed : WarmupState::kReady;
  progress.error = flags.fail_warmup ? "replay diverged" : "";
  if (!client.value()->send(progress).ok()) return 4;
  return serve(*client.value(), flags, false);
}

volatile std::sig_atomic_t g_terminate = 0;

int run_coordinator(int argc, char** argv) {
  if (argc < 5) return fail("usage: coordinator ADDRESS_FILE DP PP");
  auto secret = JobSecret::from_hex(get_env("TRAINMOVER_JOB_SECRET").value_or(""));
  if (!secret.ok()) return fail(secret.status().message());
  auto layout = Layout::create(std::atoi(argv[3]), std::atoi(argv[4]));
  if (!layout.ok()) return fail(layout.status().message());
  CoordinatorConfig config;
  config.job_id = 42;
  config.layout = layout.value();
  if (argc > 5) config.heartbeat_timeout = seconds(std::atof(argv[5]));
  auto coordinator = Coordinator::start(config, secret.value());
  if (!coordinator.ok()) return fail(coordinator.status().message());
  std::signal(SIGTERM, [](int) { g_terminate = 1; });
  {
    std::ofstream out(std::string(argv[2]) + ".tmp");
    out << coordinator.value()->address() << "\n";
  }
  std::rename((std::string(argv[2]) + ".tmp").c_str(), argv[2]);
  while (!g_terminate) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: control_peer active|standby|coordinator ...");
  std::string mode = argv[1];
  if (mode == "active") return run_active(argc, argv);
  if (mode == "standby") return run_standby(argc, argv);
  if (mode == "coordinator") return run_coordinator(argc, argv);
  return fail("unknown mode " + mode);
}
