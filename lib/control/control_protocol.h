// The control protocol: messages between the coordinator and the processes of
// a job (active ranks, standbys, the launcher, trainmover-ctl).
//
// Wire format: a frame is an 8-byte header, magic "TMC1" (u32 LE) and the
// payload length (u32 LE, at most kMaxControlFrame), followed by the payload,
// a JSON object {"type": NAME, ...fields}. JSON rather than a binary layout
// because these messages are few (heartbeats at ~5 Hz a rank, a handful of
// orders a recovery), carry nested, growing data (views, status, events) that
// trainmover-ctl prints and the event log stores as JSON anyway, and because
// a person can read them in a packet capture. The channel under it
// (control_channel.h) has already authenticated the peer, and TCP checks the
// bytes, so the header carries no checksum.
//
// Parsing is strict: an unknown type, a missing or unknown field, a value of
// the wrong type or out of range each fail with TM_ERROR_PROTOCOL and a
// message naming the type and field. Parsing never throws and never aborts;
// nesting deeper than kMaxJsonDepth is refused before the JSON parser sees it.
//
// Direction and contract of each message:
//   client -> coordinator
//     Register        first message on every connection; kind says who.
//     Heartbeat       liveness; `step` is the step the rank is in (active) or 0.
//     FailureReport   a rank's collective failed because of `failed_slot`.
//     ExitReport      a launcher saw process `pid` exit (code or signal), or
//                     begin to (its lifeline broke).
//     TaskLost        the resource manager (a PMIx event a rank heard) says
//                     the process of task `task` (its PMIx rank, as its
//                     Register named it) is gone.
//     WarmupProgress  a standby's warm-up state: ready_roles are the roles it
//                     may be promoted to, warm_roles those of them it warmed
//                     up for (the others it serves cold); error says why a
//                     role is cold, or (kFailed) why it failed.
//     FirstStep       a joiner's first step after its switch, as it measured
//                     it: wall and CPU seconds (the whole process), minor page
//                     faults, and whether it had warmed up for its role.
//     StatusRequest   answered with StatusReply.
//     MigrateRequest  planned move of `slot` to a standby; answered with Reply.
//     Subscribe       events: the stored ones (replay) then EventsEnd, and the
//                     new ones as they happen (follow).
//     Ack             the answer to the Order with the same order_id.
//     Goodbye         the sender is done (a rank that finished training); the
//                     connection closing after it is no failure.
//   coordinator -> client
//     Welcome         answer to Register: epoch, standby id, heartbeat timing.
//     Heartbeat       the coordinator's liveness (step 0).
//     Order           what a rank or standby must do (OrderKind below).
//     Reply           answer to a request; ok=false names what was wrong.
//                     Also sent, unasked, for a message that was malformed.
//     StatusReply, EventMessage, EventsEnd.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "control/membership.h"

namespace trainmover::control {

inline constexpr size_t kControlHeaderSize = 8;
inline constexpr uint32_t kControlMagic = 0x31434D54;  // "TMC1"
inline constexpr uint32_t kMaxControlFrame = 1 << 20;
inline constexpr int kMaxJsonDepth = 16;
inline constexpr size_t kMaxText = 4096;  // error texts, reasons, host names

enum class PeerKind { kActive, kStandby, kLauncher, kCtl };
const char* peer_kind_name(PeerKind kind);

struct Register {
  PeerKind kind = PeerKind::kActive;
  int slot = -1;  // kActive: the slot it serves; else -1
  ProcessId process;
  // Its task in the resource manager's job (the PMIx rank under srun
  // --mpi=pmix), which TaskLost reports name; -1: none (not sent).
  int task = -1;
};
struct Welcome {
  uint64_t epoch = 0;
  int standby_id = -1;  // kStandby: its id in the pool
  double heartbeat_interval_s = 0;
  double heartbeat_timeout_s = 0;
};
struct Heartbeat {
  uint64_t step = 0;
};
struct FailureReport {
  int failed_slot = -1;
  std::string error;
};
struct ExitReport {
  pid_t pid = 0;
  int exit_code = -1;  // when it exited; -1 when a signal killed it
  int signal = 0;
  // The host the process ran on, as it registered (pids repeat across
  // nodes); empty: any host (a launcher on the coordinator's own host).
  std::string host{};
  // The exit has only begun (the process's lifeline, lifeline.h): its
  // status is not known yet, and a report with it follows.
  bool begun = false;
};
struct TaskLost {
  int task = 0;
  std::string detail;  // the event, e.g. "PROC-ABORTED"
};
struct WarmupProgress {
  WarmupState state = WarmupState::kStarting;
  StageRole warming = StageRole::kNone;  // kWarming
  std::set<StageRole> ready_roles;
  std::set<StageRole> warm_roles;  // a subset of ready_roles
  std::string error;               // kFailed; kReady: why some roles are cold
};
struct FirstStep {
  uint64_t step = 0;  // the step it ran (the resume step)
  double wall_s = 0;
  double cpu_s = 0;     // user + system, every thread of the process
  uint64_t minflt = 0;  // minor page faults, every thread
  bool warm = false;    // it had warmed up for the role it took
};
struct StatusRequest {};
struct StatusReply {
  nlohmann::json status;  // an object: Coordinator::status()
};
struct MigrateRequest {
  int slot = -1;
};
struct Subscribe {
  bool replay = true;
  bool follow = false;
};
struct EventMessage {
  nlohmann::json event;  // an object: see events.h
};
struct EventsEnd {};
struct Goodbye {
  std::string reason;
};
struct Reply {
  bool ok = true;
  std::string error;
};

// Orders, in the order a recovery sends them (docs/runtime.md):
//   kDrain         stayer, planned migration only: keep training until the
//                  boundary of `step` (0: the next boundary), ack there with
//                  that step and wait at it for the next order (another
//                  kDrain moves the boundary on; any other order is served
//                  there). No collective is in flight at the boundary, so
//                  the switch that follows fails no step.
//   kPromote       standby: serve `slot` in `role` from `epoch`; ack once its
//                  role is allocated and it can take part in the switch.
//   kPrepare       stayer: `view` of `epoch` replaces `slot` (the leaver);
//                  stop at the next step boundary and ack with the step it
//                  will run next (`Ack::step`).
//   kSendState     donor: send its registered state to `joiner`; ack with
//                  the bytes sent.
//   kReceiveState  joiner: receive the state from `donor`; ack with bytes.
//   kRollback      every rank: load the last checkpoint in place; ack with
//                  the step it will run next.
//   kSwitch        every member of `epoch`: switch to it and resume from
//                  `step`; ack once switched.
//   kStop          stop: `reason` says why (exit without touching checkpoints).
enum class OrderKind {
  kPromote,
  kPrepare,
  kSendState,
  kReceiveState,
  kRollback,
  kSwitch,
  kStop,
  kDrain
};
const char* order_kind_name(OrderKind kind);

struct Order {
  uint64_t order_id = 0;  // unique per coordinator; Ack carries it back
  OrderKind kind = OrderKind::kStop;
  uint64_t epoch = 0;
  int slot = -1;
  StageRole role = StageRole::kNone;
  int donor = -1;
  int joiner = -1;
  uint64_t step = 0;
  // Recovery orders: {"epoch", "joining": [slots that get a joiner],
  // "base_epoch": the epoch the other slots keep}. The whole view (every
  // slot's process) is published apart (ViewPublisher).
  nlohmann::json view;
  std::string reason;  // kStop
};
struct Ack {
  uint64_t order_id = 0;
  bool ok = true;
  std::string error;
  uint64_t step = 0;
  uint64_t bytes = 0;
  // CPU seconds (user + system, the whole process) from the order's arrival
  // to this ack: the rank's work on the recovery's critical path.
  double cpu_s = 0;
};

using Message =
    std::variant<Register, Welcome, Heartbeat, FailureReport, ExitReport, WarmupProgress,
                 StatusRequest, StatusReply, MigrateRequest, Subscribe, EventMessage, EventsEnd,
                 Reply, Order, Ack, Goodbye, FirstStep, TaskLost>;

const char* message_type(const Message& message);

// JSON as text, never throwing: invalid UTF-8 (texts come from errno strings
// and host names) is replaced instead of failing the dump.
std::string json_text(const nlohmann::json& value, int indent = -1);

// The JSON payload of a message (no frame header).
std::string encode_payload(const Message& message);
Result<Message> parse_payload(std::string_view payload);

// Header and payload, ready to write.
std::vector<std::byte> encode_frame(const Message& message);
// Parses a frame header; returns the payload length.
Result<uint32_t> parse_frame_header(std::span<const std::byte> header);

}  // namespace trainmover::control
