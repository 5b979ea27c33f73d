#include "control/membership.h"

#include <algorithm>

namespace trainmover::control {

const char* stage_role_name(StageRole role) {
  switch (role) {
    case StageRole::kNone:
      return "none";
    case StageRole::kFirst:
      return "first";
    case StageRole::kMiddle:
      return "middle";
    case StageRole::kLast:
      return "last";
  }
  return "unknown";
}

Result<StageRole> parse_stage_role(std::string_view name) {
  for (StageRole r : {StageRole::kNone, StageRole::kFirst, StageRole::kMiddle, StageRole::kLast}) {
    if (name == stage_role_name(r)) return r;
  }
  return error(TM_ERROR_INVALID_ARGUMENT, "unknown stage role '", name,
               "' (expected none, first, middle or last)");
}

const char* warmup_state_name(WarmupState state) {
  switch (state) {
    case WarmupState::kStarting:
      return "starting";
    case WarmupState::kWarming:
      return "warming";
    case WarmupState::kReady:
      return "ready";
    case WarmupState::kFailed:
      return "failed";
  }
  return "unknown";
}

// Bounded so that slot numbers fit every wire field and a typo cannot make
// the coordinator allocate millions of slots.
constexpr int kMaxSlots = 1 << 16;

Result<Layout> Layout::create(int dp, int pp) {
  if (dp < 1 || pp < 1)
    return error(TM_ERROR_INVALID_ARGUMENT, "layout dp=", dp, " pp=", pp, ": both must be >= 1");
  if (static_cast<int64_t>(dp) * pp > kMaxSlots)
    return error(TM_ERROR_INVALID_ARGUMENT, "layout dp=", dp, " pp=", pp, " exceeds ", kMaxSlots,
                 " slots");
  Layout l;
  l.dp = dp;
  l.pp = pp;
  return l;
}

StageRole Layout::role(int slot) const {
  if (pp == 1) return StageRole::kNone;
  int stage = pp_index(slot);
  if (stage == 0) return StageRole::kFirst;
  if (stage == pp - 1) return StageRole::kLast;
  return StageRole::kMiddle;
}

std::vector<StageRole> Layout::roles() const {
  if (pp == 1) return {StageRole::kNone};
  if (pp == 2) return {StageRole::kFirst, StageRole::kLast};
  return {StageRole::kFirst, StageRole::kMiddle, StageRole::kLast};
}

Status Membership::assign(int slot, const ProcessId& process) {
  if (!layout_.valid_slot(slot))
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is outside 0..", layout_.nslots() - 1);
  if (served(slot)) {
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is already served by pid ",
                 slots_[slot].process->pid, " on ", slots_[slot].process->host);
  }
  slots_[slot].process = process;
  return Status::Ok();
}

void Membership::vacate(int slot) {
  if (layout_.valid_slot(slot)) slots_[slot].process.reset();
}

bool Membership::all_served() const {
  return std::all_of(slots_.begin(), slots_.end(), [](const SlotState& s) { return s.process; });
}

int Membership::add_standby(const ProcessId& process) {
  Standby s;
  s.id = next_standby_id_++;
  s.process = process;
  standbys_.push_back(std::move(s));
  return standbys_.back().id;
}

Standby* Membership::find_standby(int id) {
  auto it = std::find_if(standbys_.begin(), standbys_.end(), [&](auto& s) { return s.id == id; });
  return it == standbys_.end() ? nullptr : &*it;
}

const Standby* Membership::standby(int id) const {
  return const_cast<Membership*>(this)->find_standby(id);
}

Status Membership::set_warmup(int id, WarmupState state, StageRole warming,
                              std::set<StageRole> ready, std::set<StageRole> warm,
                              std::string error_text) {
  Standby* s = find_standby(id);
  if (!s) return error(TM_ERROR_INVALID_ARGUMENT, "no standby ", id);
  if (s->state == WarmupState::kFailed)
    return error(TM_ERROR_INVALID_ARGUMENT, "standby ", id, " has failed already");
  for (StageRole r : warm) {
    if (!ready.count(r))
      return error(TM_ERROR_INVALID_ARGUMENT, "standby ", id, " is warm for role ",
                   stage_role_name(r), " but not ready for it");
  }
  s->state = state;
  s->warming = warming;
  s->ready_roles = std::move(ready);
  s->warm_roles = std::move(warm);
  s->error = std::move(error_text);
  return Status::Ok();
}

void Membership::remove_standby(int id) {
  std::erase_if(standbys_, [&](const Standby& s) { return s.id == id; });
}

int Membership::usable_standbys() const {
  return static_cast<int>(std::count_if(standbys_.begin(), standbys_.end(),
                                        [](auto& s) { return s.state != WarmupState::kFailed; }));
}

std::optional<int> Membership::pick_standby(StageRole role, const std::set<int>& exclude) const {
  for (const Standby& s : standbys_) {
    if (s.state == WarmupState::kReady && s.ready_roles.count(role) && !exclude.count(s.id))
      return s.id;
  }
  return std::nullopt;
}

Status Membership::promote(int id, int slot) {
  Standby* s = find_standby(id);
  if (!s) return error(TM_ERROR_INVALID_ARGUMENT, "no standby ", id);
  ProcessId process = s->process;
  TM_RETURN_IF_ERROR(assign(slot, process));
  remove_standby(id);
  return Status::Ok();
}

std::vector<int> Membership::replicas_of(int slot) const {
  std::vector<int> out;
  int stage = layout_.pp_index(slot);
  for (int d = 0; d < layout_.dp; ++d) {
    int other = layout_.slot_of(d, stage);
    if (other != slot && served(other)) out.push_back(other);
  }
  return out;
}

std::optional<int> Membership::slot_of_instance(uint64_t instance_id) const {
  for (int s = 0; s < layout_.nslots(); ++s) {
    if (served(s) && slots_[s].process->instance_id == instance_id) return s;
  }
  return std::nullopt;
}

std::optional<int> Membership::slot_of_pid(pid_t pid, std::string_view host) const {
  for (int s = 0; s < layout_.nslots(); ++s) {
    if (served(s) && slots_[s].process->pid == pid &&
        (host.empty() || slots_[s].process->host == host))
      return s;
  }
  return std::nullopt;
}

std::optional<int> Membership::standby_of_instance(uint64_t instance_id) const {
  for (const Standby& s : standbys_) {
    if (s.process.instance_id == instance_id) return s.id;
  }
  return std::nullopt;
}

std::optional<int> Membership::standby_of_pid(pid_t pid, std::string_view host) const {
  for (const Standby& s : standbys_) {
    if (s.process.pid == pid && (host.empty() || s.process.host == host)) return s.id;
  }
  return std::nullopt;
}

nlohmann::json roles_json(const std::set<StageRole>& roles) {
  nlohmann::json out = nlohmann::json::array();
  for (StageRole r : roles) out.push_back(stage_role_name(r));
  return out;
}

namespace {
nlohmann::json process_json(const ProcessId& p) {
  return {{"pid", p.pid}, {"host", p.host}, {"instance", p.instance_id}};
}
}  // namespace

nlohmann::json Membership::to_json() const {
  nlohmann::json slots = nlohmann::json::array();
  for (int s = 0; s < layout_.nslots(); ++s) {
    nlohmann::json j = {{"slot", s},
                        {"role", stage_role_name(layout_.role(s))},
                        {"dp_index", layout_.dp_index(s)},
                        {"pp_index", layout_.pp_index(s)},
                        {"step", slots_[s].step}};
    j["process"] = served(s) ? process_json(*slots_[s].process) : nlohmann::json(nullptr);
    slots.push_back(std::move(j));
  }
  nlohmann::json standbys = nlohmann::json::array();
  for (const Standby& s : standbys_) {
    nlohmann::json j = {{"id", s.id},
                        {"process", process_json(s.process)},
                        {"state", warmup_state_name(s.state)},
                        {"ready_roles", roles_json(s.ready_roles)},
                        {"warm_roles", roles_json(s.warm_roles)}};
    if (s.state == WarmupState::kWarming) j["warming"] = stage_role_name(s.warming);
    if (!s.error.empty()) j["error"] = s.error;
    standbys.push_back(std::move(j));
  }
  return {{"epoch", epoch_},
          {"dp", layout_.dp},
          {"pp", layout_.pp},
          {"slots", std::move(slots)},
          {"standbys", std::move(standbys)}};
}

}  // namespace trainmover::control
