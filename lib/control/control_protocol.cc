#include "control/control_protocol.h"

#include <limits>

#include "common/bytes.h"

namespace trainmover::control {

using nlohmann::json;

const char* peer_kind_name(PeerKind kind) {
  switch (kind) {
    case PeerKind::kActive:
      return "active";
    case PeerKind::kStandby:
      return "standby";
    case PeerKind::kLauncher:
      return "launcher";
    case PeerKind::kCtl:
      return "ctl";
  }
  return "unknown";
}

const char* order_kind_name(OrderKind kind) {
  switch (kind) {
    case OrderKind::kPromote:
      return "promote";
    case OrderKind::kPrepare:
      return "prepare";
    case OrderKind::kSendState:
      return "send_state";
    case OrderKind::kReceiveState:
      return "receive_state";
    case OrderKind::kRollback:
      return "rollback";
    case OrderKind::kSwitch:
      return "switch";
    case OrderKind::kStop:
      return "stop";
    case OrderKind::kDrain:
      return "drain";
  }
  return "unknown";
}

namespace {

// One name per alternative of Message, in its order.
constexpr const char* kTypeNames[] = {
    "register", "welcome",      "heartbeat", "failure_report", "exit_report", "warmup",
    "status",   "status_reply", "migrate",   "subscribe",      "event",       "events_end",
    "reply",    "order",        "ack",       "goodbye",        "first_step",  "task_lost"};
static_assert(std::size(kTypeNames) == std::variant_size_v<Message>);

// ---- encoding -------------------------------------------------------------

json process_json(const ProcessId& p) {
  return {{"pid", p.pid}, {"host", p.host}, {"instance", p.instance_id}};
}

json fields_of(const Register& m) {
  json j = {
      {"kind", peer_kind_name(m.kind)}, {"slot", m.slot}, {"process", process_json(m.process)}};
  if (m.task >= 0) j["task"] = m.task;
  return j;
}
json fields_of(const Welcome& m) {
  return {{"epoch", m.epoch},
          {"standby_id", m.standby_id},
          {"heartbeat_interval_s", m.heartbeat_interval_s},
          {"heartbeat_timeout_s", m.heartbeat_timeout_s}};
}
json fields_of(const Heartbeat& m) { return {{"step", m.step}}; }
json fields_of(const FailureReport& m) {
  return {{"failed_slot", m.failed_slot}, {"error", m.error}};
}
json fields_of(const ExitReport& m) {
  json j = {{"pid", m.pid}, {"exit_code", m.exit_code}, {"signal", m.signal}};
  if (!m.host.empty()) j["host"] = m.host;
  if (m.begun) j["begun"] = true;
  return j;
}
json fields_of(const TaskLost& m) { return {{"task", m.task}, {"detail", m.detail}}; }
json fields_of(const WarmupProgress& m) {
  return {{"state", warmup_state_name(m.state)},
          {"warming", stage_role_name(m.warming)},
          {"ready_roles", roles_json(m.ready_roles)},
          {"warm_roles", roles_json(m.warm_roles)},
          {"error", m.error}};
}
json fields_of(const FirstStep& m) {
  return {{"step", m.step},
          {"wall_s", m.wall_s},
          {"cpu_s", m.cpu_s},
          {"minflt", m.minflt},
          {"warm", m.warm}};
}
json fields_of(const StatusRequest&) { return json::object(); }
json fields_of(const StatusReply& m) { return {{"status", m.status}}; }
json fields_of(const MigrateRequest& m) { return {{"slot", m.slot}}; }
json fields_of(const Subscribe& m) { return {{"replay", m.replay}, {"follow", m.follow}}; }
json fields_of(const EventMessage& m) { return {{"event", m.event}}; }
json fields_of(const EventsEnd&) { return json::object(); }
json fields_of(const Reply& m) { return {{"ok", m.ok}, {"error", m.error}}; }
json fields_of(const Order& m) {
  return {{"order_id", m.order_id},
          {"kind", order_kind_name(m.kind)},
          {"epoch", m.epoch},
          {"slot", m.slot},
          {"role", stage_role_name(m.role)},
          {"donor", m.donor},
          {"joiner", m.joiner},
          {"step", m.step},
          {"view", m.view.is_object() ? m.view : json::object()},
          {"reason", m.reason}};
}
json fields_of(const Goodbye& m) { return {{"reason", m.reason}}; }
json fields_of(const Ack& m) {
  return {{"order_id", m.order_id}, {"ok", m.ok},       {"error", m.error},
          {"step", m.step},         {"bytes", m.bytes}, {"cpu_s", m.cpu_s}};
}

// ---- parsing ----------------------------------------------------------------

// Reads the fields of one message object; the first problem wins and names
// the message type and the field.
class Fields {
 public:
  Fields(const json& object, const char* type) : object_(object), type_(type) {}

  int64_t integer(const char* name, int64_t min, int64_t max) {
    const json* v = find(name);
    if (!v) return 0;
    if (v->is_number_unsigned()) {
      uint64_t u = v->get<uint64_t>();
      if (u <= static_cast<uint64_t>(max) && static_cast<int64_t>(u) >= min)
        return static_cast<int64_t>(u);
    } else if (v->is_number_integer()) {
      int64_t x = v->get<int64_t>();
      if (x >= min && x <= max) return x;
    }
    return fail_range(name, min, max);
  }
  uint64_t unsigned64(const char* name) {
    const json* v = find(name);
    if (!v) return 0;
    if (v->is_number_unsigned()) return v->get<uint64_t>();
    if (v->is_number_integer() && v->get<int64_t>() >= 0) return v->get<int64_t>();
    fail(name, "must be an unsigned integer");
    return 0;
  }
  double seconds(const char* name) {
    const json* v = find(name);
    if (!v) return 0;
    if (v->is_number()) {
      double x = v->get<double>();
      if (x >= 0 && x <= 1e6) return x;
    }
    fail(name, "must be a number of seconds in [0, 1e6]");
    return 0;
  }
  bool boolean(const char* name) {
    const json* v = find(name);
    if (!v) return false;
    if (v->is_boolean()) return v->get<bool>();
    fail(name, "must be true or false");
    return false;
  }
  std::string text(const char* name) {
    const json* v = find(name);
    if (!v) return {};
    if (v->is_string() && v->get_ref<const std::string&>().size() <= kMaxText)
      return v->get<std::string>();
    fail(name, str_cat("must be a string of at most ", kMaxText, " bytes"));
    return {};
  }
  // An integer field that may be absent (added after the message's first
  // version): `absent` when it is.
  int64_t optional_integer(const char* name, int64_t min, int64_t max, int64_t absent) {
    if (!object_.contains(name)) return absent;
    return integer(name, min, max);
  }
  // A boolean field that may be absent (added after the message's first
  // version): false when it is.
  bool optional_boolean(const char* name) {
    if (!object_.contains(name)) return false;
    return boolean(name);
  }
  // A text field that may be absent (added after the message's first
  // version): "" when it is.
  std::string optional_text(const char* name) {
    if (!object_.contains(name)) return {};
    return text(name);
  }
  json object(const char* name) {
    const json* v = find(name);
    if (!v) return json::object();
    if (v->is_object()) return *v;
    fail(name, "must be an object");
    return json::object();
  }
  // A field holding one of `names`; returns its index.
  template <typename Enum, size_t N>
  Enum choice(const char* name, const Enum (&values)[N], const char* (*to_name)(Enum)) {
    const json* v = find(name);
    if (!v) return values[0];
    if (v->is_string()) {
      for (Enum e : values) {
        if (v->get_ref<const std::string&>() == to_name(e)) return e;
      }
    }
    std::string allowed;
    for (Enum e : values) allowed += str_cat(allowed.empty() ? "" : ", ", to_name(e));
    fail(name, "must be one of " + allowed);
    return values[0];
  }
  std::set<StageRole> roles(const char* name);
  ProcessId process(const char* name);

  // Fails on fields the message does not have.
  Status finish() {
    if (!status_.ok()) return status_;
    for (const auto& [key, value] : object_.items()) {
      if (key != "type" && !used_.count(key)) {
        return error(TM_ERROR_PROTOCOL, "message '", type_, "' has unknown field '", key, "'");
      }
    }
    return Status::Ok();
  }

 private:
  const json* find(const char* name) {
    if (!status_.ok()) return nullptr;
    used_.insert(name);
    auto it = object_.find(name);
    if (it == object_.end()) {
      status_ = error(TM_ERROR_PROTOCOL, "message '", type_, "' lacks field '", name, "'");
      return nullptr;
    }
    return &*it;
  }
  void fail(const char* name, const std::string& why) {
    if (status_.ok())
      status_ = error(TM_ERROR_PROTOCOL, "field '", name, "' of message '", type_, "' ", why);
  }
  int64_t fail_range(const char* name, int64_t min, int64_t max) {
    fail(name, str_cat("must be an integer in [", min, ", ", max, "]"));
    return 0;
  }

  const json& object_;
  const char* type_;
  std::set<std::string> used_;
  Status status_;
};

constexpr StageRole kRoles[] = {StageRole::kNone, StageRole::kFirst, StageRole::kMiddle,
                                StageRole::kLast};
constexpr WarmupState kWarmupStates[] = {WarmupState::kStarting, WarmupState::kWarming,
                                         WarmupState::kReady, WarmupState::kFailed};
constexpr PeerKind kPeerKinds[] = {PeerKind::kActive, PeerKind::kStandby, PeerKind::kLauncher,
                                   PeerKind::kCtl};
constexpr OrderKind kOrderKinds[] = {
    OrderKind::kPromote,  OrderKind::kPrepare, OrderKind::kSendState, OrderKind::kReceiveState,
    OrderKind::kRollback, OrderKind::kSwitch,  OrderKind::kStop,      OrderKind::kDrain};
constexpr int64_t kSlotMax = 1 << 16;
constexpr int64_t kPidMax = std::numeric_limits<pid_t>::max();

std::set<StageRole> Fields::roles(const char* name) {
  const json* v = find(name);
  std::set<StageRole> out;
  if (!v) return out;
  if (!v->is_array() || v->size() > std::size(kRoles)) {
    fail(name, "must be an array of at most 4 stage roles");
    return out;
  }
  for (const json& r : *v) {
    auto role = r.is_string() ? parse_stage_role(r.get_ref<const std::string&>())
                              : Result<StageRole>(error(TM_ERROR_PROTOCOL, "not a string"));
    if (!role.ok()) {
      fail(name, "must hold only none, first, middle or last");
      return out;
    }
    out.insert(role.value());
  }
  return out;
}

ProcessId Fields::process(const char* name) {
  json obj = object(name);
  ProcessId p;
  if (!status_.ok()) return p;
  Fields inner(obj, type_);
  p.pid = static_cast<pid_t>(inner.integer("pid", 0, kPidMax));
  p.host = inner.text("host");
  p.instance_id = inner.unsigned64("instance");
  Status st = inner.finish();
  if (!st.ok()) status_ = st.with_context(str_cat("field '", name, "'"));
  return p;
}

Message read(Fields& f, Register) {
  Register m;
  m.kind = f.choice("kind", kPeerKinds, peer_kind_name);
  m.slot = static_cast<int>(f.integer("slot", -1, kSlotMax));
  m.process = f.process("process");
  m.task = static_cast<int>(f.optional_integer("task", 0, INT32_MAX, -1));
  return m;
}
Message read(Fields& f, Welcome) {
  Welcome m;
  m.epoch = f.unsigned64("epoch");
  m.standby_id = static_cast<int>(f.integer("standby_id", -1, INT32_MAX));
  m.heartbeat_interval_s = f.seconds("heartbeat_interval_s");
  m.heartbeat_timeout_s = f.seconds("heartbeat_timeout_s");
  return m;
}
Message read(Fields& f, Heartbeat) { return Heartbeat{f.unsigned64("step")}; }
Message read(Fields& f, FailureReport) {
  FailureReport m;
  m.failed_slot = static_cast<int>(f.integer("failed_slot", -1, kSlotMax));
  m.error = f.text("error");
  return m;
}
Message read(Fields& f, ExitReport) {
  ExitReport m;
  m.pid = static_cast<pid_t>(f.integer("pid", 1, kPidMax));
  m.exit_code = static_cast<int>(f.integer("exit_code", -1, 255));
  m.signal = static_cast<int>(f.integer("signal", 0, 128));
  m.host = f.optional_text("host");
  m.begun = f.optional_boolean("begun");
  return m;
}
Message read(Fields& f, TaskLost) {
  TaskLost m;
  m.task = static_cast<int>(f.integer("task", 0, INT32_MAX));
  m.detail = f.text("detail");
  return m;
}
Message read(Fields& f, WarmupProgress) {
  WarmupProgress m;
  m.state = f.choice("state", kWarmupStates, warmup_state_name);
  m.warming = f.choice("warming", kRoles, stage_role_name);
  m.ready_roles = f.roles("ready_roles");
  m.warm_roles = f.roles("warm_roles");
  m.error = f.text("error");
  return m;
}
Message read(Fields&, StatusRequest) { return StatusRequest{}; }
Message read(Fields& f, StatusReply) { return StatusReply{f.object("status")}; }
Message read(Fields& f, MigrateRequest) {
  return MigrateRequest{static_cast<int>(f.integer("slot", 0, kSlotMax))};
}
Message read(Fields& f, Subscribe) {
  Subscribe m;
  m.replay = f.boolean("replay");
  m.follow = f.boolean("follow");
  return m;
}
Message read(Fields& f, EventMessage) { return EventMessage{f.object("event")}; }
Message read(Fields&, EventsEnd) { return EventsEnd{}; }
Message read(Fields& f, Reply) {
  Reply m;
  m.ok = f.boolean("ok");
  m.error = f.text("error");
  return m;
}
Message read(Fields& f, Order) {
  Order m;
  m.order_id = f.unsigned64("order_id");
  m.kind = f.choice("kind", kOrderKinds, order_kind_name);
  m.epoch = f.unsigned64("epoch");
  m.slot = static_cast<int>(f.integer("slot", -1, kSlotMax));
  m.role = f.choice("role", kRoles, stage_role_name);
  m.donor = static_cast<int>(f.integer("donor", -1, kSlotMax));
  m.joiner = static_cast<int>(f.integer("joiner", -1, kSlotMax));
  m.step = f.unsigned64("step");
  m.view = f.object("view");
  m.reason = f.text("reason");
  return m;
}
Message read(Fields& f, Ack) {
  Ack m;
  m.order_id = f.unsigned64("order_id");
  m.ok = f.boolean("ok");
  m.error = f.text("error");
  m.step = f.unsigned64("step");
  m.bytes = f.unsigned64("bytes");
  m.cpu_s = f.seconds("cpu_s");
  return m;
}

Message read(Fields& f, Goodbye) { return Goodbye{f.text("reason")}; }
Message read(Fields& f, FirstStep) {
  FirstStep m;
  m.step = f.unsigned64("step");
  m.wall_s = f.seconds("wall_s");
  m.cpu_s = f.seconds("cpu_s");
  m.minflt = f.unsigned64("minflt");
  m.warm = f.boolean("warm");
  return m;
}

template <size_t I = 0>
Result<Message> read_type(const json& object, const std::string& type) {
  if constexpr (I == std::variant_size_v<Message>) {
    return error(TM_ERROR_PROTOCOL, "unknown message type '", type.substr(0, 64), "'");
  } else {
    if (type != kTypeNames[I]) return read_type<I + 1>(object, type);
    Fields f(object, kTypeNames[I]);
    Message m = read(f, std::variant_alternative_t<I, Message>{});
    TM_RETURN_IF_ERROR(f.finish());
    return m;
  }
}

// Refuses nesting deeper than kMaxJsonDepth, counting brackets outside
// strings, so that neither parsing nor destroying the value can recurse deep.
Status check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth)
        return error(TM_ERROR_PROTOCOL, "control message nests deeper than ", kMaxJsonDepth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return Status::Ok();
}

}  // namespace

const char* message_type(const Message& message) { return kTypeNames[message.index()]; }

std::string json_text(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string encode_payload(const Message& message) {
  json j = std::visit([](const auto& m) { return fields_of(m); }, message);
  j["type"] = message_type(message);
  return json_text(j);
}

Result<Message> parse_payload(std::string_view payload) {
  if (payload.size() > kMaxControlFrame)
    return error(TM_ERROR_PROTOCOL, "control message of ", payload.size(), " bytes exceeds ",
                 kMaxControlFrame);
  TM_RETURN_IF_ERROR(check_depth(payload));
  json j = json::parse(payload.begin(), payload.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return error(TM_ERROR_PROTOCOL, "control message is not valid JSON");
  if (!j.is_object()) return error(TM_ERROR_PROTOCOL, "control message is not a JSON object");
  auto type = j.find("type");
  if (type == j.end() || !type->is_string())
    return error(TM_ERROR_PROTOCOL, "control message has no string field 'type'");
  return read_type(j, type->get<std::string>());
}

std::vector<std::byte> encode_frame(const Message& message) {
  std::string payload = encode_payload(message);
  std::vector<std::byte> out;
  out.reserve(kControlHeaderSize + payload.size());
  ByteWriter w(out);
  w.u32(kControlMagic);
  w.u32(static_cast<uint32_t>(payload.size()));
  w.bytes(as_bytes(payload));
  return out;
}

Result<uint32_t> parse_frame_header(std::span<const std::byte> header) {
  if (header.size() != kControlHeaderSize)
    return error(TM_ERROR_PROTOCOL, "control frame header has ", header.size(), " bytes");
  ByteReader r(header);
  uint32_t magic = r.u32();
  uint32_t length = r.u32();
  if (magic != kControlMagic)
    return error(TM_ERROR_PROTOCOL, "not a control frame (bad magic 0x", std::hex, magic, ")");
  if (length > kMaxControlFrame)
    return error(TM_ERROR_PROTOCOL, "control frame of ", length, " bytes exceeds ",
                 kMaxControlFrame);
  return length;
}

}  // namespace trainmover::control
