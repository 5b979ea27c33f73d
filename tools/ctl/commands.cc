#include "commands.h"

#include <iomanip>
#include <iostream>

namespace trainmover::ctl {

using control::Message;
using nlohmann::json;

namespace {

// Waits for the first message of type T; errors and other types end it.
template <typename T>
Result<T> await(control::ControlClient& client, Duration timeout) {
  Deadline deadline = Deadline::after(timeout);
  while (true) {
    auto m = client.next(deadline.remaining());
    if (!m.ok()) return m.status();
    if (auto* wanted = std::get_if<T>(&m.value())) return std::move(*wanted);
    if (auto* reply = std::get_if<control::Reply>(&m.value()); reply && !reply->ok)
      return error(TM_ERROR_INVALID_ARGUMENT, "the coordinator refused: ", reply->error);
  }
}

std::string text_of(const json& j) {
  if (j.is_null()) return "-";
  if (j.is_string()) return j.get<std::string>();
  return control::json_text(j);
}

}  // namespace

void print_status(const json& s, std::ostream& out) {
  out << "epoch " << text_of(s.value("epoch", json())) << "  step "
      << text_of(s.value("step", json())) << "  dp " << text_of(s.value("dp", json())) << "  pp "
      << text_of(s.value("pp", json())) << "\n";
  if (s.contains("recovery") && !s["recovery"].is_null())
    out << "recovery: slot " << text_of(s["recovery"].value("leaver", json())) << " in state "
        << text_of(s["recovery"].value("state", json())) << "\n";
  if (s.contains("stopped") && !s["stopped"].is_null())
    out << "stopped: " << text_of(s["stopped"]) << "\n";
  out << std::left << std::setw(6) << "SLOT" << std::setw(8) << "ROLE" << std::setw(5) << "DP"
      << std::setw(5) << "PP" << std::setw(10) << "STEP" << std::setw(9) << "PID"
      << "HOST\n";
  for (const json& slot : s.value("slots", json::array())) {
    const json process = slot.value("process", json());
    out << std::setw(6) << text_of(slot.value("slot", json())) << std::setw(8)
        << text_of(slot.value("role", json())) << std::setw(5)
        << text_of(slot.value("dp_index", json())) << std::setw(5)
        << text_of(slot.value("pp_index", json())) << std::setw(10)
        << text_of(slot.value("step", json())) << std::setw(9)
        << (process.is_object() ? text_of(process.value("pid", json())) : "-")
        << (process.is_object() ? text_of(process.value("host", json())) : "(vacant)") << "\n";
  }
  const json standbys = s.value("standbys", json::array());
  out << "standbys: " << standbys.size() << "\n";
  for (const json& sb : standbys) {
    std::string roles;
    for (const json& r : sb.value("ready_roles", json::array()))
      roles += (roles.empty() ? "" : ",") + text_of(r);
    const json process = sb.value("process", json());
    std::string state = text_of(sb.value("state", json()));
    out << "  standby " << text_of(sb.value("id", json())) << "  ";
    if (state == "ready") {
      out << "ready for {" << roles << "}";
    } else if (state == "warming") {
      out << "warming " << text_of(sb.value("warming", json())) << " (ready for {" << roles << "})";
    } else if (state == "failed") {
      out << "failed: " << text_of(sb.value("error", json()));
    } else {
      out << state;
    }
    if (process.is_object())
      out << "  pid " << text_of(process.value("pid", json())) << " on "
          << text_of(process.value("host", json()));
    out << "\n";
  }
}

int run_status(control::ControlClient& client, Duration timeout, bool as_json, std::ostream& out) {
  if (Status st = client.send(control::StatusRequest{}); !st.ok()) {
    std::cerr << "trainmover-ctl: " << st.message() << "\n";
    return 1;
  }
  auto reply = await<control::StatusReply>(client, timeout);
  if (!reply.ok()) {
    std::cerr << "trainmover-ctl: status: " << reply.status().message() << "\n";
    return 1;
  }
  if (as_json) {
    out << control::json_text(reply->status, 2) << "\n";
  } else {
    print_status(reply->status, out);
  }
  return 0;
}

int run_migrate(control::ControlClient& client, Duration timeout, int slot, std::ostream& out) {
  if (Status st = client.send(control::MigrateRequest{slot}); !st.ok()) {
    std::cerr << "trainmover-ctl: " << st.message() << "\n";
    return 1;
  }
  auto reply = await<control::Reply>(client, timeout);
  if (reply.ok() && !reply->ok) reply = error(TM_ERROR_INVALID_ARGUMENT, reply->error);
  if (!reply.ok()) {
    std::cerr << "trainmover-ctl: migrate " << slot << ": " << reply.status().message() << "\n";
    return 1;
  }
  out << "migration of slot " << slot << " started\n";
  return 0;
}

int run_events(control::ControlClient& client, Duration timeout, bool follow, std::ostream& out) {
  if (Status st = client.send(control::Subscribe{true, follow}); !st.ok()) {
    std::cerr << "trainmover-ctl: " << st.message() << "\n";
    return 1;
  }
  bool replayed = false;
  while (true) {
    // Following waits as long as the job runs; the client's heartbeat
    // timeout still ends the wait when the coordinator goes away.
    auto m = client.next(follow && replayed ? std::chrono::hours(1) : timeout);
    if (!m.ok() && m.status().code() == TM_ERROR_TIMEOUT && follow && replayed) continue;
    if (!m.ok()) {
      if (follow && replayed && m.status().code() == TM_ERROR_PEER_FAILED) {
        out << std::flush;
        std::cerr << "trainmover-ctl: events: the job ended: " << m.status().message() << "\n";
        return 0;
      }
      std::cerr << "trainmover-ctl: events: " << m.status().message() << "\n";
      return 1;
    }
    if (auto* e = std::get_if<control::EventMessage>(&m.value())) {
      out << control::json_text(e->event) << "\n" << std::flush;
    } else if (std::holds_alternative<control::EventsEnd>(m.value())) {
      if (!follow) return 0;
      replayed = true;
    }
  }
}

}  // namespace trainmover::ctl
