#include "control/coordinator.h"

#include <pthread.h>

#include <algorithm>
#include <future>

#include "common/log.h"
#include "control/coordinator_impl.h"

namespace trainmover::control {

using nlohmann::json;

namespace {
std::string describe_exit(int exit_code, int signal) {
  if (signal != 0) return str_cat("exit by signal ", signal);
  return str_cat("exit with status ", exit_code);
}

// Runs `work` on the coordinator's thread and waits for its result.
template <typename T>
Result<T> call_on_loop(Coordinator::Impl& impl, Duration timeout, std::function<Result<T>()> work) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  impl.post([promise, work] { promise->set_value(work()); });
  if (future.wait_for(timeout) != std::future_status::ready)
    return error(TM_ERROR_TIMEOUT, "the coordinator did not answer within ", to_seconds(timeout),
                 " s");
  return future.get();
}
}  // namespace

Coordinator::Impl::Impl(CoordinatorConfig config, const JobSecret& secret,
                        std::unique_ptr<EventLoop> loop, std::unique_ptr<EventLog> events)
    : config_(std::move(config)),
      secret_(secret),
      loop_(std::move(loop)),
      events_(std::move(events)),
      publisher_(config_.publisher ? config_.publisher : std::make_shared<MemoryViewPublisher>()),
      membership_(config_.layout) {}

Status Coordinator::Impl::listen() {
  ControlServer::Callbacks callbacks;
  callbacks.on_message = [this](ConnectionId id, Message m) { on_message(id, std::move(m)); };
  callbacks.on_closed = [this](ConnectionId id, const Status& why) { on_closed(id, why); };
  TM_ASSIGN_OR_RETURN(server_,
                      ControlServer::listen(*loop_, config_.address, secret_, config_.job_id,
                                            config_.limits, std::move(callbacks)));
  emit("coordinator_started", {{"address", server_->address()},
                               {"dp", config_.layout.dp},
                               {"pp", config_.layout.pp},
                               {"heartbeat_timeout_s", to_seconds(config_.heartbeat_timeout)}});
  return Status::Ok();
}

void Coordinator::Impl::run() {
  ::pthread_setname_np(::pthread_self(), "tm-coordinator");  // for top, perf and gdb
  while (!stopping_) {
    Duration wait =
        std::min<Duration>(config_.heartbeat_interval / 2, std::chrono::milliseconds(50));
    Status st = loop_->run_once(wait);
    if (!st.ok()) {
      log(LogLevel::kError, "coordinator: ", st.message());
      return;
    }
    run_tasks();
    tick(Clock::now());
  }
  server_.reset();  // closes every connection on this thread
}

void Coordinator::Impl::stop() {
  stopping_ = true;
  loop_->wake();
}

void Coordinator::Impl::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  loop_->wake();
}

void Coordinator::Impl::run_tasks() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks.swap(tasks_);
  }
  for (auto& task : tasks) task();
}

std::optional<std::string> Coordinator::Impl::stopped_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopped_;
}

bool Coordinator::Impl::wait_stopped(Duration timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return stopped_changed_.wait_for(lock, timeout, [&] { return stopped_.has_value(); });
}

void Coordinator::Impl::tick(Clock::time_point now) {
  server_->tick(now);
  if (now >= next_beat_) {
    beat(now);
    next_beat_ = now + config_.heartbeat_interval;
  }
  check_heartbeats(now);
  check_suspects(now);
  if (recovery_ && now >= recovery_->deadline) recovery_deadline_passed();
}

void Coordinator::Impl::beat(Clock::time_point) {
  for (auto& [id, peer] : peers_) {
    if (peer.registered) server_->send(id, Heartbeat{0});
  }
}

void Coordinator::Impl::check_heartbeats(Clock::time_point now) {
  std::vector<std::pair<int, Clock::time_point>> silent_slots;
  std::vector<int> silent_standbys;
  for (auto& [id, peer] : peers_) {
    if (!peer.registered || peer.finished || now - peer.last_heard <= config_.heartbeat_timeout)
      continue;
    if (peer.slot >= 0) silent_slots.emplace_back(peer.slot, peer.last_heard);
    if (peer.standby >= 0) silent_standbys.push_back(peer.standby);
  }
  if (silent_slots.empty() && silent_standbys.empty()) return;  // the common case, every pass
  std::string detail = str_cat("no heartbeat for ", to_seconds(config_.heartbeat_timeout), " s");
  for (auto [slot, last] : silent_slots) slot_failed(slot, "heartbeat", detail, last);
  for (int id : silent_standbys) standby_lost(id, detail);
}

void Coordinator::Impl::emit(const std::string& name, json fields) {
  const json& event = events_->record(name, std::move(fields));
  // Not formatted for a log level that is off: a recovery emits O(N) events.
  if (log_enabled(LogLevel::kInfo)) log(LogLevel::kInfo, "coordinator: ", json_text(event));
  for (auto& [id, peer] : peers_) {
    if (peer.follow_events) server_->send(id, EventMessage{event});
  }
  if (config_.on_event) config_.on_event(event);
}

std::optional<ConnectionId> Coordinator::Impl::connection_of_slot(int slot) const {
  for (const auto& [id, peer] : peers_) {
    if (peer.slot == slot) return id;
  }
  return std::nullopt;
}

std::optional<ConnectionId> Coordinator::Impl::connection_of_standby(int standby) const {
  for (const auto& [id, peer] : peers_) {
    if (peer.standby == standby) return id;
  }
  return std::nullopt;
}

// ---- messages -----------------------------------------------------------------

void Coordinator::Impl::reply(ConnectionId id, Status status) {
  server_->send(id, Reply{status.ok(), status.message()});
}

void Coordinator::Impl::on_message(ConnectionId id, Message message) {
  auto it = peers_.find(id);
  if (auto* r = std::get_if<Register>(&message)) {
    if (it != peers_.end()) return reply(id, error(TM_ERROR_PROTOCOL, "already registered"));
    return handle_register(id, *r);
  }
  if (it == peers_.end())
    return reply(id, error(TM_ERROR_PROTOCOL, "'", message_type(message),
                           "' before 'register': register first"));
  it->second.last_heard = Clock::now();
  handle(id, it->second, message);
}

void Coordinator::Impl::handle(ConnectionId id, Peer& peer, const Message& message) {
  auto refuse = [&](const char* who) {
    reply(id, error(TM_ERROR_PROTOCOL, "'", message_type(message), "' is accepted from ", who,
                    " only, not from a ", peer_kind_name(peer.kind)));
  };
  if (auto* m = std::get_if<Heartbeat>(&message)) return handle_heartbeat(peer, *m);
  if (auto* m = std::get_if<Ack>(&message)) return on_ack(peer, *m);
  if (auto* m = std::get_if<FailureReport>(&message)) {
    if (peer.slot < 0) return refuse("active ranks");
    return handle_failure_report(peer, *m);
  }
  if (auto* m = std::get_if<ExitReport>(&message)) {
    if (peer.kind != PeerKind::kLauncher) return refuse("launchers");
    if (m->begun) return handle_dying(m->pid, m->host);
    return handle_exit(m->pid, m->exit_code, m->signal, m->host);
  }
  if (auto* m = std::get_if<TaskLost>(&message)) {
    if (peer.slot < 0 && peer.standby < 0) return refuse("ranks and standbys");
    return handle_task_lost(peer, *m);
  }
  if (auto* m = std::get_if<WarmupProgress>(&message)) {
    if (peer.standby < 0) return refuse("standbys");
    return handle_warmup(peer, *m);
  }
  if (auto* m = std::get_if<FirstStep>(&message)) {
    if (peer.slot < 0) return refuse("active ranks");
    return handle_first_step(peer, *m);
  }
  if (std::holds_alternative<StatusRequest>(message))
    return server_->send(id, StatusReply{status_json()});
  if (auto* m = std::get_if<MigrateRequest>(&message)) return reply(id, request_migration(m->slot));
  if (auto* m = std::get_if<Subscribe>(&message)) return handle_subscribe(id, peer, *m);
  if (std::holds_alternative<Goodbye>(message)) {
    peer.finished = true;
    if (peer.slot >= 0 && membership_.served(peer.slot))
      finished_pids_.insert(membership_.slot(peer.slot).process->pid);
    if (peer.slot >= 0) emit("slot_finished", {{"slot", peer.slot}});
    // A joiner that finished the job ran its steps from the resume step on:
    // the recovery is done (its next heartbeat would never come).
    if (recovery_ && peer.slot >= 0) seat_first_step(peer.slot);
    if (recovery_ && peer.slot >= 0) migration_overtaken(peer.slot);
    return;
  }
  reply(id, error(TM_ERROR_PROTOCOL, "'", message_type(message),
                  "' is sent by the coordinator, not to it"));
}

void Coordinator::Impl::handle_register(ConnectionId id, const Register& r) {
  Peer peer;
  peer.kind = r.kind;
  peer.instance_id = r.process.instance_id;
  peer.task = r.task;
  peer.last_heard = Clock::now();
  Welcome welcome;
  welcome.heartbeat_interval_s = to_seconds(config_.heartbeat_interval);
  welcome.heartbeat_timeout_s = to_seconds(config_.heartbeat_timeout);
  bool rank = r.kind == PeerKind::kActive || r.kind == PeerKind::kStandby;
  if (rank && stopped_reason())
    return reply(id, error(TM_ERROR_INVALID_ARGUMENT, "registration refused: the job has stopped"));
  if (r.kind == PeerKind::kActive && being_recovered(r.slot))
    return reply(id, error(TM_ERROR_INVALID_ARGUMENT, "registration refused: slot ", r.slot,
                           " is being recovered; a replacement registers as a standby"));
  if (r.kind == PeerKind::kActive) {
    Status st = membership_.assign(r.slot, r.process);
    if (!st.ok()) return reply(id, st.with_context("registration refused"));
    peer.slot = r.slot;
    json fields = {{"slot", r.slot}, {"pid", r.process.pid}, {"host", r.process.host}};
    if (r.task >= 0) fields["task"] = r.task;
    emit("slot_registered", std::move(fields));
  } else if (r.kind == PeerKind::kStandby) {
    peer.standby = membership_.add_standby(r.process);
    welcome.standby_id = peer.standby;
    json fields = {{"standby", peer.standby}, {"pid", r.process.pid}, {"host", r.process.host}};
    if (r.task >= 0) fields["task"] = r.task;
    emit("standby_registered", std::move(fields));
  }
  welcome.epoch = membership_.epoch();
  peer.registered = true;
  peers_[id] = peer;
  server_->send(id, welcome);
}

void Coordinator::Impl::handle_heartbeat(Peer& peer, const Heartbeat& h) {
  if (peer.slot < 0) return;
  membership_.set_step(peer.slot, h.step);
  if (recovery_) recovery_saw_step(peer.slot, h.step);
}

// A rank's collective failed naming a peer. One report alone fails no slot:
// a rank whose own collectives were aborted by a failure elsewhere names the
// neighbour that relayed the abort, alive and well. A report is corroborated
// once the named slot has also missed heartbeats (silent for two intervals,
// far less than the heartbeat timeout): then the slot has failed at once.
void Coordinator::Impl::handle_failure_report(Peer& peer, const FailureReport& r) {
  const bool valid = membership_.layout().valid_slot(r.failed_slot) && r.failed_slot != peer.slot;
  auto id = valid ? connection_of_slot(r.failed_slot) : std::nullopt;
  const bool silent = id && Clock::now() - peers_[*id].last_heard > 2 * config_.heartbeat_interval;
  emit("failure_reported", {{"by_slot", peer.slot},
                            {"failed_slot", r.failed_slot},
                            {"error", r.error},
                            {"corroborated", silent}});
  if (!id) return;  // no such slot, or already known to have failed
  suspects_[r.failed_slot] = {peer.slot, r.error, Clock::now()};
  check_suspects(Clock::now());
}

// The resource manager says a task is gone (a PMIx event that a rank
// heard). As authoritative as a launcher's exit report, it fails the
// task's process at once. Every rank hears the event: the first report
// fails it, and the others find no process of that task left.
void Coordinator::Impl::handle_task_lost(const Peer& by, const TaskLost& m) {
  std::optional<Peer> gone;
  for (const auto& [id, p] : peers_) {
    if (p.task == m.task && (p.slot >= 0 || p.standby >= 0)) gone = p;
  }
  if (!gone) return;  // reported already, or not one of this job's ranks
  emit("task_lost",
       {{"task", m.task}, {"detail", m.detail}, {"by_slot", by.slot}, {"by_standby", by.standby}});
  std::string detail = str_cat("PMIx: task ", m.task, ": ", m.detail);
  if (gone->slot >= 0) return slot_failed(gone->slot, "pmix", detail, Clock::now());
  standby_lost(gone->standby, detail);
}

void Coordinator::Impl::check_suspects(Clock::time_point now) {
  std::vector<std::pair<int, Suspect>> confirmed;
  for (auto it = suspects_.begin(); it != suspects_.end();) {
    auto id = connection_of_slot(it->first);
    if (!id || now - it->second.since > config_.heartbeat_timeout) {
      it = suspects_.erase(it);  // failed already, or alive all along: the report was wrong
      continue;
    }
    if (now - peers_[*id].last_heard > 2 * config_.heartbeat_interval) {
      confirmed.emplace_back(*it);
      it = suspects_.erase(it);
      continue;
    }
    ++it;
  }
  for (const auto& [slot, s] : confirmed) {
    auto id = connection_of_slot(slot);
    Clock::time_point last = id ? peers_[*id].last_heard : now;
    slot_failed(slot, "report",
                str_cat("slot ", s.by_slot, " reported: ", s.error, "; and no heartbeat for ",
                        to_seconds(now - last), " s"),
                last);
  }
}

void Coordinator::Impl::handle_warmup(Peer& peer, const WarmupProgress& w) {
  Status st = membership_.set_warmup(peer.standby, w.state, w.warming, w.ready_roles, w.warm_roles,
                                     w.error);
  if (!st.ok()) return;
  json fields = {{"standby", peer.standby},
                 {"state", warmup_state_name(w.state)},
                 {"ready_roles", roles_json(w.ready_roles)},
                 {"warm_roles", roles_json(w.warm_roles)}};
  if (w.state == WarmupState::kWarming) fields["warming"] = stage_role_name(w.warming);
  if (!w.error.empty()) fields["error"] = w.error;
  if (w.state == WarmupState::kFailed) {
    fields["pool"] = membership_.usable_standbys();
    emit("standby_failed", std::move(fields));
    return;
  }
  emit("standby_warmup", std::move(fields));
  if (w.state == WarmupState::kReady) recovery_standby_ready();
}

void Coordinator::Impl::handle_first_step(Peer& peer, const FirstStep& f) {
  json fields = {{"slot", peer.slot}, {"step", f.step},     {"wall_s", f.wall_s},
                 {"cpu_s", f.cpu_s},  {"minflt", f.minflt}, {"warm", f.warm}};
  if (recovery_) {
    if (Seat* seat = recovery_->seat_of_slot(peer.slot)) seat->joiner_step = fields;
  }
  emit("joiner_first_step", std::move(fields));
}

void Coordinator::Impl::handle_subscribe(ConnectionId id, Peer& peer, const Subscribe& s) {
  if (s.replay) {
    for (const json& e : events_->events()) server_->send(id, EventMessage{e});
    server_->send(id, EventsEnd{});
  }
  peer.follow_events = s.follow;
}

void Coordinator::Impl::on_closed(ConnectionId id, const Status& why) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer peer = it->second;
  peers_.erase(it);
  if (peer.finished) return;
  if (peer.slot >= 0)
    slot_failed(peer.slot, "connection", "control connection closed: " + why.message(),
                Clock::now());
  if (peer.standby >= 0) standby_lost(peer.standby, "control connection closed: " + why.message());
}

void Coordinator::Impl::handle_dying(pid_t pid, const std::string& host) {
  const std::string detail = "its process began to exit (killed or crashed)";
  if (auto slot = membership_.slot_of_pid(pid, host))
    return slot_failed(*slot, "lifeline", detail, Clock::now());
  if (auto standby = membership_.standby_of_pid(pid, host)) return standby_lost(*standby, detail);
}

void Coordinator::Impl::handle_exit(pid_t pid, int exit_code, int signal, const std::string& host) {
  std::string detail = describe_exit(exit_code, signal);
  if (exit_code == 0 && signal == 0 && finished_pids_.count(pid) > 0) return;
  if (auto slot = membership_.slot_of_pid(pid, host)) {
    auto id = connection_of_slot(*slot);
    if (exit_code == 0 && signal == 0 && id && peers_[*id].finished) return;
    return slot_failed(*slot, "exit", detail, Clock::now());
  }
  if (auto standby = membership_.standby_of_pid(pid, host)) return standby_lost(*standby, detail);
  auto failed = std::find_if(failed_processes_.begin(), failed_processes_.end(), [&](auto& e) {
    return e.first.second == pid && (host.empty() || e.first.first == host);
  });
  if (failed != failed_processes_.end()) {
    const int slot = failed->second;
    failed_processes_.erase(failed);
    return emit("exit_ignored", {{"pid", pid},
                                 {"slot", slot},
                                 {"detail", detail},
                                 {"why", str_cat("slot ", slot, " failed already")}});
  }
  emit("exit_ignored",
       {{"pid", pid}, {"detail", detail}, {"why", "the process serves no slot and is no standby"}});
}

// ---- failures ---------------------------------------------------------------

void Coordinator::Impl::fence(ConnectionId id, const std::string& reason) {
  Order stop;
  stop.order_id = next_order_id_++;
  stop.kind = OrderKind::kStop;
  stop.reason = reason;
  server_->send(id, stop);
  server_->close(id);
  peers_.erase(id);
}

void Coordinator::Impl::slot_failed(int slot, const std::string& source, const std::string& detail,
                                    Clock::time_point failed_at) {
  if (!membership_.served(slot)) return;  // already known: a second source of one failure
  const ProcessId process = *membership_.slot(slot).process;
  // A process that said goodbye has run all its steps: its exit, however it
  // ended, is no failure (tm_worker_finish), and there is nothing to recover.
  // Unless a recovery under way or queued needs it (every rank prepares; a
  // replica gives state), which a finished rank never does: then it fails
  // and is replaced like any other (a stage killed just before its goodbye,
  // after the other stage's).
  if (finished_pids_.contains(process.pid)) {
    if (!recovery_ && pending_.empty())
      return emit("exit_after_finish", {{"slot", slot},
                                        {"source", source},
                                        {"detail", detail},
                                        {"pid", process.pid},
                                        {"host", process.host}});
    finished_pids_.erase(process.pid);
  }
  Clock::time_point now = Clock::now();
  // The recovery under way already replaces this slot (a migration whose
  // leaver died) unless it has switched, and the slot's new process failed.
  bool covered =
      recovery_ && recovery_->seat_of_slot(slot) && recovery_->state != RecoveryState::kFirstStep;
  emit("slot_failed", {{"slot", slot},
                       {"source", source},
                       {"detail", detail},
                       {"pid", process.pid},
                       {"host", process.host},
                       {"step", membership_.slot(slot).step},
                       {"detection_s", to_seconds(now - failed_at)}});
  if (auto id = connection_of_slot(slot))
    fence(*id, "slot " + std::to_string(slot) + " failed: " + detail);
  if (source != "exit") failed_processes_[{process.host, process.pid}] = slot;
  membership_.vacate(slot);
  if (recovery_ && recovery_lost_slot(slot, failed_at, now)) return;  // folded in
  if (!covered) enqueue_recovery({slot, RecoveryCause::kFailure, failed_at, now});
}

void Coordinator::Impl::standby_lost(int id, const std::string& detail) {
  if (!membership_.standby(id)) return;
  if (auto conn = connection_of_standby(id)) fence(*conn, "standby lost: " + detail);
  membership_.remove_standby(id);
  emit("standby_lost",
       {{"standby", id}, {"detail", detail}, {"pool", membership_.usable_standbys()}});
  if (recovery_ && recovery_->seat_of_joiner(id)) recovery_lost_joiner(id, detail);
}

void Coordinator::Impl::stop_job(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = reason;
  }
  emit("job_stopped", {{"reason", reason}, {"checkpoint", "intact: no rank was ordered to write"}});
  std::vector<ConnectionId> ranks;
  for (auto& [id, peer] : peers_) {
    if (peer.kind == PeerKind::kActive || peer.kind == PeerKind::kStandby) ranks.push_back(id);
  }
  for (ConnectionId id : ranks) fence(id, reason);
  stopped_changed_.notify_all();
}

Status Coordinator::Impl::request_migration(int slot) {
  if (stopped_reason()) return error(TM_ERROR_INVALID_ARGUMENT, "the job has stopped");
  if (!membership_.layout().valid_slot(slot))
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is outside 0..",
                 membership_.layout().nslots() - 1);
  if (!membership_.served(slot))
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " has no live process to migrate");
  if (being_recovered(slot))
    return error(TM_ERROR_INVALID_ARGUMENT, "slot ", slot, " is being recovered already");
  // Every rank must take part in a migration (it is held at a boundary
  // first); one that finished training never will.
  for (int s : participants()) {
    if (finished_pids_.contains(membership_.slot(s).process->pid))
      return error(TM_ERROR_INVALID_ARGUMENT, "the job is finishing: slot ", s,
                   " has finished training");
  }
  Clock::time_point now = Clock::now();
  emit("migration_requested", {{"slot", slot}});
  enqueue_recovery({slot, RecoveryCause::kMigration, now, now});
  return Status::Ok();
}

bool Coordinator::Impl::being_recovered(int slot) const {
  return (recovery_ && recovery_->seat_of_slot(slot)) ||
         std::any_of(pending_.begin(), pending_.end(), [&](auto& p) { return p.slot == slot; });
}

json Coordinator::Impl::status_json() const {
  json j = membership_.to_json();
  uint64_t step = UINT64_MAX;
  for (int s = 0; s < membership_.layout().nslots(); ++s) {
    if (membership_.served(s)) step = std::min(step, membership_.slot(s).step);
  }
  j["step"] = step == UINT64_MAX ? json(nullptr) : json(step);
  j["recovery"] = recovery_ ? json{{"leaver", recovery_->leaver()},
                                   {"slots", recovery_->slots()},
                                   {"state", recovery_state_name(recovery_->state)},
                                   {"epoch", recovery_->epoch}}
                            : json(nullptr);
  j["pending_recoveries"] = pending_.size();
  auto stopped = stopped_reason();
  j["stopped"] = stopped ? json(*stopped) : json(nullptr);
  return j;
}

std::vector<json> Coordinator::Impl::event_list() const {
  return {events_->events().begin(), events_->events().end()};
}

// ---- the public object -----------------------------------------------------------

Result<std::unique_ptr<Coordinator>> Coordinator::start(CoordinatorConfig config,
                                                        const JobSecret& secret) {
  if (config.heartbeat_interval <= Duration::zero() ||
      config.heartbeat_timeout <= config.heartbeat_interval)
    return error(TM_ERROR_INVALID_ARGUMENT,
                 "the heartbeat timeout must be longer than the heartbeat interval (> 0)");
  TM_ASSIGN_OR_RETURN(auto loop, EventLoop::create());
  TM_ASSIGN_OR_RETURN(auto events, EventLog::open(config.events_path));
  auto impl = std::make_unique<Impl>(std::move(config), secret, std::move(loop), std::move(events));
  TM_RETURN_IF_ERROR(impl->listen());
  return std::unique_ptr<Coordinator>(new Coordinator(std::move(impl)));
}

Coordinator::Coordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  thread_ = std::thread([impl = impl_.get()] { impl->run(); });
}

Coordinator::~Coordinator() {
  impl_->stop();
  if (thread_.joinable()) thread_.join();
}

const std::string& Coordinator::address() const { return impl_->address(); }

void Coordinator::report_exit(pid_t pid, int exit_code, int signal, const std::string& host) {
  impl_->post([impl = impl_.get(), pid, exit_code, signal, host] {
    impl->handle_exit(pid, exit_code, signal, host);
  });
}

void Coordinator::report_dying(pid_t pid, const std::string& host) {
  impl_->post([impl = impl_.get(), pid, host] { impl->handle_dying(pid, host); });
}

Status Coordinator::migrate(int slot, Duration timeout) {
  auto r = call_on_loop<bool>(*impl_, timeout, [impl = impl_.get(), slot]() -> Result<bool> {
    TM_RETURN_IF_ERROR(impl->request_migration(slot));
    return true;
  });
  return r.status();
}

Result<bool> Coordinator::finished_training(pid_t pid, Duration timeout) {
  return call_on_loop<bool>(*impl_, timeout, [impl = impl_.get(), pid]() -> Result<bool> {
    return impl->finished_training(pid);
  });
}

Result<json> Coordinator::status(Duration timeout) {
  return call_on_loop<json>(*impl_, timeout,
                            [impl = impl_.get()]() -> Result<json> { return impl->status_json(); });
}

Result<std::vector<json>> Coordinator::events(Duration timeout) {
  return call_on_loop<std::vector<json>>(
      *impl_, timeout,
      [impl = impl_.get()]() -> Result<std::vector<json>> { return impl->event_list(); });
}

std::optional<std::string> Coordinator::stopped_reason() const { return impl_->stopped_reason(); }
bool Coordinator::wait_stopped(Duration timeout) const { return impl_->wait_stopped(timeout); }

}  // namespace trainmover::control
