// The coordinator with fake ranks and standbys as real processes over real
// sockets (control_peer, through the real ControlClient). The test plays the
// launcher: it reaps its children and reports their exits.
#include "control/coordinator.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "control/control_client.h"
#include "control/control_stream.h"
#include "control/job_file.h"
#include "transport/tcp/handshake_session.h"
#include "transport/tcp/socket.h"

extern char** environ;

namespace trainmover::control {
namespace {

using nlohmann::json;
constexpr uint64_t kJob = 42;
constexpr auto kWait = std::chrono::seconds(30);  // generous: the machine is shared

struct Exit {
  int code = -1;
  int signal = 0;
};

class Cluster {
 public:
  explicit Cluster(int dp, int pp, std::function<void(CoordinatorConfig&)> adjust = {})
      : secret_(JobSecret::generate().value()) {
    CoordinatorConfig c;
    c.job_id = kJob;
    c.layout = Layout::create(dp, pp).value();
    c.heartbeat_interval = std::chrono::milliseconds(100);
    c.heartbeat_timeout = std::chrono::seconds(3);
    c.order_timeout = std::chrono::seconds(10);
    c.standby_wait = std::chrono::seconds(10);
    if (adjust) adjust(c);
    auto started = Coordinator::start(c, secret_);
    EXPECT_TRUE(started.ok()) << started.status().message();
    coordinator_ = std::move(started).value();
    reaper_ = std::thread([this] { reap(); });
  }
  ~Cluster() {
    for (pid_t pid : live()) ::kill(pid, SIGKILL);
    wait_all_exited(std::chrono::seconds(10));
    stopping_ = true;
    reaper_.join();
    coordinator_.reset();
  }

  Coordinator& coordinator() { return *coordinator_; }
  const JobSecret& secret() const { return secret_; }

  pid_t spawn(std::vector<std::string> args) {
    args.insert(args.begin(), TM_CONTROL_PEER);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings = {"TRAINMOVER_JOB_SECRET=" + secret_.to_hex()};
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "TRAINMOVER_JOB_SECRET=", 22) != 0) env_strings.emplace_back(*e);
    }
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    std::lock_guard<std::mutex> lock(mutex_);
    // Thrown, not returned: a test that went on with pid -1 would kill(-1).
    if (int rc = posix_spawn(&pid, TM_CONTROL_PEER, nullptr, nullptr, argv.data(), envp.data()))
      throw std::runtime_error(std::string("cannot run " TM_CONTROL_PEER ": ") + std::strerror(rc));
    children_.insert(pid);
    return pid;
  }
  pid_t active(int slot, const std::string& flag = "") {
    std::vector<std::string> a = {"active", coordinator_->address(), std::to_string(kJob),
                                  std::to_string(slot)};
    if (!flag.empty()) a.push_back(flag);
    return spawn(a);
  }
  pid_t standby(const std::string& roles, const std::string& flag = "") {
    std::vector<std::string> a = {"standby", coordinator_->address(), std::to_string(kJob), roles};
    if (!flag.empty()) a.push_back(flag);
    return spawn(a);
  }

  // The first event named `name` for which `match` holds.
  std::optional<json> wait_event(const std::string& name,
                                 std::function<bool(const json&)> match = {},
                                 Duration timeout = kWait) {
    Deadline deadline = Deadline::after(timeout);
    while (!deadline.expired()) {
      auto events = coordinator_->events();
      if (events.ok()) {
        for (const json& e : events.value()) {
          if (e["event"] == name && (!match || match(e))) return e;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "no event '" << name << "' within " << to_seconds(timeout) << " s";
    return std::nullopt;
  }
  int count_events(const std::string& name) {
    int n = 0;
    auto events = coordinator_->events();
    EXPECT_TRUE(events.ok());
    if (events.ok())
      for (const json& e : events.value()) n += e["event"] == name;
    return n;
  }
  // Waits until every slot is served and `ready` standbys are ready.
  void wait_started(int ready_standbys) {
    Deadline deadline = Deadline::after(kWait);
    while (!deadline.expired()) {
      json s = coordinator_->status().value();
      bool all = true;
      for (const json& slot : s["slots"]) all = all && !slot["process"].is_null();
      int ready = 0;
      for (const json& sb : s["standbys"]) ready += sb["state"] == "ready";
      if (all && ready >= ready_standbys) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the job did not start: " << coordinator_->status().value().dump();
  }
  // Waits until `pid` has forked (a --hold-socket peer's holder): the peer
  // registers before it forks, so a started job does not mean it is held.
  void wait_forked(pid_t pid) {
    std::string children =
        "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
    Deadline deadline = Deadline::after(kWait);
    while (!deadline.expired()) {
      std::ifstream in(children);
      pid_t child = 0;
      if (in >> child) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ADD_FAILURE() << "process " << pid << " did not fork";
  }
  std::optional<Exit> wait_exit(pid_t pid, Duration timeout = kWait) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return exits_.count(pid) > 0; })) return {};
    return exits_[pid];
  }

 private:
  std::vector<pid_t> live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {children_.begin(), children_.end()};
  }
  void wait_all_exited(Duration timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return children_.empty(); });
  }
  // The launcher's part: reap children and report each exit at once. Only
  // the job's own children: waitpid(-1) would also take the child of a
  // popen() the test runs meanwhile (trainmover-ctl), whose pclose then fails.
  void reap() {
    while (!stopping_) {
      bool reaped = false;
      for (pid_t child : live()) {
        int status = 0;
        if (waitpid(child, &status, WNOHANG) != child) continue;
        reaped = true;
        Exit e;
        if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
        coordinator_->report_exit(child, e.code, e.signal);
        std::lock_guard<std::mutex> lock(mutex_);
        children_.erase(child);
        exits_[child] = e;
        changed_.notify_all();
      }
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  JobSecret secret_;
  std::unique_ptr<Coordinator> coordinator_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<pid_t> children_;
  std::map<pid_t, Exit> exits_;
  std::atomic<bool> stopping_{false};
  std::thread reaper_;
};

pid_t pid_of_slot(Coordinator& c, int slot) {
  json s = c.status().value();
  return s["slots"][slot]["process"]["pid"].get<pid_t>();
}

TEST(Coordinator, KilledRankIsReportedByItsExitAndReplacedFromAReplica) {
  Cluster job(2, 1);
  job.active(0);
  pid_t victim = job.active(1, "--hold-socket");  // only the exit report is immediate
  pid_t standby = job.standby("none");
  job.wait_started(1);
  job.wait_forked(victim);
  ::kill(victim, SIGKILL);
  auto failed = job.wait_event("slot_failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["slot"], 1);
  EXPECT_EQ((*failed)["source"], "exit");
  EXPECT_EQ((*failed)["detail"], "exit by signal 9");
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["path"], "replica");
  EXPECT_EQ((*done)["donor"], 0);
  EXPECT_EQ((*done)["first_step_seen"], true);
  EXPECT_EQ((*done)["bytes"], 4096);
  for (const char* key :
       {"downtime_s", "detection_s", "switch_s", "state_transfer_s", "first_step_s"})
    EXPECT_GE((*done)[key].get<double>(), 0) << key;
  for (const char* name : {"joiner_chosen", "standby_promoted", "view_published",
                           "state_transfer_started", "state_transferred", "switchover"})
    EXPECT_EQ(job.count_events(name), 1) << name;
  EXPECT_EQ(pid_of_slot(job.coordinator(), 1), standby);
  json status = job.coordinator().status().value();
  EXPECT_EQ(status["epoch"], 1);
  EXPECT_TRUE(status["standbys"].empty());
}

// tm_worker_finish's contract: once a rank said goodbye, its exit is no
// failure however it ends (a kill on its way out), and nothing is recovered:
// the job's other ranks are past their last collective.
TEST(Coordinator, KillAfterGoodbyeIsNoFailureAndStartsNoRecovery) {
  Cluster job(2, 1);
  pid_t finisher = job.active(0, "--goodbye-at=3");
  job.active(1);
  job.standby("none");
  job.wait_started(1);
  ASSERT_TRUE(job.wait_event("slot_finished"));
  ::kill(finisher, SIGKILL);
  auto ended = job.wait_event("exit_after_finish");
  ASSERT_TRUE(ended);
  EXPECT_EQ((*ended)["slot"], 0);
  EXPECT_EQ((*ended)["pid"], finisher);
  EXPECT_EQ((*ended)["detail"], "exit by signal 9");
  auto finished = job.coordinator().finished_training(finisher);
  ASSERT_TRUE(finished.ok());
  EXPECT_TRUE(*finished);
  EXPECT_EQ(job.count_events("slot_failed"), 0);
  EXPECT_EQ(job.count_events("recovery_started"), 0);
  EXPECT_EQ(pid_of_slot(job.coordinator(), 0), finisher);
  EXPECT_EQ(job.coordinator().status().value()["standbys"].size(), 1u);
}

TEST(Coordinator, SilentRankIsDetectedByHeartbeatAndFencedWhenItResumes) {
  Cluster job(2, 1);
  pid_t paused = job.active(0);
  job.active(1);
  job.standby("none");
  job.wait_started(1);
  ::kill(paused, SIGSTOP);
  auto failed = job.wait_event("slot_failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["source"], "heartbeat");
  EXPECT_GE((*failed)["detection_s"].get<double>(), 3.0);
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["donor"], 1);
  // The paused leaver wakes up after its replacement: its connection is
  // gone, so it stops without acting on the job.
  ::kill(paused, SIGCONT);
  auto exit = job.wait_exit(paused);
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->code == 3 || exit->code == 4) << exit->code;
  EXPECT_NE(pid_of_slot(job.coordinator(), 0), paused);
}

TEST(Coordinator, MigrationTakesTheStateFromTheLeaverWhichThenStops) {
  Cluster job(1, 2);
  job.active(0);
  pid_t leaver = job.active(1);
  pid_t standby = job.standby("first,last");
  job.wait_started(1);
  ASSERT_TRUE(job.coordinator().migrate(1).ok());
  EXPECT_FALSE(job.coordinator().migrate(1).ok());  // already under way
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["cause"], "migration");
  EXPECT_EQ((*done)["path"], "leaver");
  EXPECT_EQ((*done)["donor"], 1);
  EXPECT_EQ((*done)["redone_steps"], 0);  // held at one boundary: nothing redone
  EXPECT_EQ(job.count_events("drained"), 1);
  auto exit = job.wait_exit(leaver);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 3);  // ordered to stop
  EXPECT_EQ(pid_of_slot(job.coordinator(), 1), standby);
  EXPECT_EQ(job.count_events("slot_failed"), 0);
  Status none = job.coordinator().migrate(0);  // no standby left
  EXPECT_TRUE(none.ok()) << none.message();
  EXPECT_FALSE(job.coordinator().migrate(7).ok());
}

TEST(Coordinator, StandbyLostDuringWarmUpShrinksThePool) {
  Cluster job(1, 3);
  for (int s = 0; s < 3; ++s) job.active(s);
  job.standby("first,middle,last");
  pid_t dying = job.standby("first,middle,last", "--die-during-warmup");
  job.standby("first,middle,last", "--fail-warmup");
  job.wait_started(1);
  auto lost = job.wait_event("standby_lost");
  ASSERT_TRUE(lost);
  // Its connection closing or its exit report, whichever came first.
  std::string detail = (*lost)["detail"].get<std::string>();
  EXPECT_TRUE(detail.find("signal 9") != std::string::npos ||
              detail.find("connection closed") != std::string::npos)
      << detail;
  EXPECT_LE((*lost)["pool"].get<int>(), 2);
  auto failed = job.wait_event("standby_failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["error"], "replay diverged");
  ASSERT_TRUE(job.wait_exit(dying));
  json status = job.coordinator().status().value();
  int ready = 0;
  for (const json& sb : status["standbys"]) ready += sb["state"] == "ready";
  EXPECT_EQ(ready, 1) << status.dump();
}

TEST(Coordinator, JoinerLostDuringTheSwitchIsReplacedByAnotherStandby) {
  Cluster job(2, 1);
  job.active(0);
  pid_t victim = job.active(1);
  job.standby("none", "--die-on=receive_state");
  job.wait_started(1);
  pid_t second = job.standby("none", "--warmup-ms=400");
  job.wait_started(2);
  ::kill(victim, SIGKILL);
  auto joiner_failed = job.wait_event("joiner_failed");
  // A process cannot claim the slot under recovery as an active rank.
  {
    ControlClientOptions o;
    o.address = job.coordinator().address();
    o.job_id = kJob;
    o.identity.kind = PeerKind::kActive;
    o.identity.slot = 1;
    auto impostor = ControlClient::connect(o, job.secret());
    ASSERT_FALSE(impostor.ok());
    const std::string& why = impostor.status().message();
    // Refused while the recovery runs, and once it is done the slot is served.
    EXPECT_TRUE(why.find("is being recovered") != std::string::npos ||
                why.find("already served") != std::string::npos)
        << why;
  }
  ASSERT_TRUE(joiner_failed);
  EXPECT_EQ((*joiner_failed)["state"], "transfer");
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["first_step_seen"], true);
  EXPECT_EQ(pid_of_slot(job.coordinator(), 1), second);
  // Each attempt had its own epoch.
  EXPECT_EQ(job.count_events("view_published"), 2);
  EXPECT_EQ((*done)["epoch"], 2);
}

// The joiner dies on its switch order, after the stayer switched to the new
// epoch: no round can start over from the old epoch (the stayer would refuse
// its prepare), so the switch completes without the joiner and its slot
// fails in the new epoch, recovered next by the other standby.
TEST(Coordinator, JoinerLostInTheSwitchWindowFailsItsSlotInTheNewEpoch) {
  Cluster job(2, 1);
  job.active(0);
  pid_t victim = job.active(1);
  job.standby("none", "--die-on=switch");
  job.wait_started(1);
  pid_t second = job.standby("none", "--warmup-ms=400");
  job.wait_started(2);
  ::kill(victim, SIGKILL);
  auto lost = job.wait_event("joiner_lost_in_switch");
  ASSERT_TRUE(lost);
  EXPECT_EQ((*lost)["slot"], 1);
  EXPECT_EQ((*lost)["epoch"], 1);
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["slot"], 1);
  EXPECT_EQ((*done)["epoch"], 2);  // the next epoch after the one committed
  EXPECT_EQ((*done)["first_step_seen"], true);
  EXPECT_EQ(pid_of_slot(job.coordinator(), 1), second);
  EXPECT_EQ(job.count_events("joiner_failed"), 1);
  EXPECT_EQ(job.count_events("recovery_done"), 1);  // only the recovery that succeeded
  EXPECT_EQ(job.count_events("recovery_abandoned"), 0);
  EXPECT_GT(pid_of_slot(job.coordinator(), 0), 0);
}

// A donor whose send fails (its joiner died mid-transfer, here an injected
// error) is not at fault: the joiner is dropped, a new round takes the
// other standby, and the donor serves again.
TEST(Coordinator, DonorsFailedSendDropsTheJoinerNotTheDonor) {
  Cluster job(2, 1);
  pid_t donor = job.active(0, "--fail-once-on=send_state");
  pid_t victim = job.active(1);
  job.standby("none");
  job.wait_started(1);
  job.standby("none", "--warmup-ms=400");
  job.wait_started(2);
  ::kill(victim, SIGKILL);
  auto lost = job.wait_event("standby_lost");
  ASSERT_TRUE(lost);
  EXPECT_NE((*lost)["detail"].get<std::string>().find("send_state failed"), std::string::npos)
      << *lost;
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["donor"], 0);
  EXPECT_EQ((*done)["epoch"], 2);
  EXPECT_EQ(pid_of_slot(job.coordinator(), 0), donor);
  EXPECT_EQ(job.count_events("slot_failed"), 1);  // the victim's only
}

TEST(Coordinator, DonorLostDuringTheTransferIsReplacedByAnotherReplica) {
  Cluster job(3, 1);
  job.active(0, "--die-on=send_state");
  job.active(1);
  pid_t victim = job.active(2);
  job.standby("none");
  job.standby("none");
  job.wait_started(2);
  ::kill(victim, SIGKILL);
  auto donor_failed = job.wait_event("donor_failed");
  ASSERT_TRUE(donor_failed);
  EXPECT_EQ((*donor_failed)["donor"], 0);
  auto first = job.wait_event("recovery_done", [](const json& e) { return e["slot"] == 2; });
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["donor"], 1);
  // The donor's own failure is recovered next.
  auto second = job.wait_event("recovery_done", [](const json& e) { return e["slot"] == 0; });
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)["path"], "replica");
}

TEST(Coordinator, WithoutAReplicaEveryRankRollsBackToTheCheckpoint) {
  Cluster job(1, 2);
  job.active(0);
  pid_t victim = job.active(1);
  job.standby("first,last");
  job.wait_started(1);
  ::kill(victim, SIGKILL);
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["path"], "rollback");
  EXPECT_EQ((*done)["resume_step"], 1);
  EXPECT_EQ(job.count_events("rollback_started"), 1);
  EXPECT_EQ(job.count_events("rolled_back"), 1);
}

// A planned migration holds every rank at one step boundary first. Slot 0
// sees the drain order only ~600 ms late (it passed its boundary unaware and
// keeps stepping, as its heartbeats say): the coordinator moves the boundary
// on, the held ranks step on to it, and every rank ends held at the same
// one: the resume step, with nothing redone.
TEST(Coordinator, MigrationDrainMovesTheBoundaryPastALateRank) {
  Cluster job(2, 1);
  job.active(0, "--drain-late-ms=600");
  job.active(1);
  job.standby("none");
  job.wait_started(1);
  ASSERT_TRUE(job.coordinator().migrate(1).ok());
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  auto drained = job.wait_event("drained");
  ASSERT_TRUE(drained);
  EXPECT_EQ((*done)["resume_step"], (*drained)["step"]);
  EXPECT_EQ((*done)["redone_steps"], 0);
  EXPECT_EQ(job.count_events("slot_failed"), 0);
  // The late rank stepped ~600 ms (20 ms a step) after the others were held.
  EXPECT_GT((*drained)["step"].get<uint64_t>(), 10u);
}

// A failure during a checkpoint write leaves the stages one checkpoint apart:
// the stayer loads step 8, the joiner (the failed stage) only has step 4.
// The coordinator orders the rollback again, at most step 4, so that every
// rank resumes from the same step.
TEST(Coordinator, RollbackOfStagesOneCheckpointApartAgreesOnTheOlder) {
  Cluster job(1, 2);
  job.active(0, "--checkpoint=8");
  pid_t victim = job.active(1, "--checkpoint=4");
  job.standby("first,last", "--checkpoint=4");
  job.wait_started(1);
  ::kill(victim, SIGKILL);
  auto done = job.wait_event("recovery_done");
  ASSERT_TRUE(done);
  EXPECT_EQ((*done)["path"], "rollback");
  EXPECT_EQ((*done)["resume_step"], 4);
  EXPECT_EQ(job.count_events("rollback_started"), 2);
  auto again =
      job.wait_event("rollback_started", [](const json& e) { return e.contains("at_most"); });
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)["at_most"], 4);
}

TEST(Coordinator, NoStandbyWaitsThenStopsTheJob) {
  Cluster job(2, 1, [](CoordinatorConfig& c) { c.standby_wait = std::chrono::seconds(1); });
  pid_t stayer = job.active(0);
  pid_t victim = job.active(1);
  job.wait_started(0);
  ::kill(victim, SIGKILL);
  auto none = job.wait_event("no_standby");
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)["waiting_s"], 1.0);
  ASSERT_TRUE(job.coordinator().wait_stopped(kWait));
  EXPECT_NE(job.coordinator().stopped_reason()->find("no standby became ready for slot 1"),
            std::string::npos);
  auto exit = job.wait_exit(stayer);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->code, 3);  // ordered to stop, checkpoint untouched
  EXPECT_EQ(job.count_events("job_stopped"), 1);
}

TEST(Coordinator, AStandbyArrivingWhileWaitingIsTaken) {
  Cluster job(2, 1);
  job.active(0);
  pid_t victim = job.active(1);
  job.wait_started(0);
  ::kill(victim, SIGKILL);
  ASSERT_TRUE(job.wait_event("no_standby"));
  pid_t late = job.standby("none");
  ASSERT_TRUE(job.wait_event("recovery_done"));
  EXPECT_EQ(pid_of_slot(job.coordinator(), 1), late);
}

TEST(Coordinator, WrongSecretIsRefused) {
  Cluster job(1, 1);
  ControlClientOptions o;
  o.address = job.coordinator().address();
  o.job_id = kJob;
  o.identity.kind = PeerKind::kActive;
  o.identity.slot = 0;
  o.connect_timeout = std::chrono::seconds(5);
  auto wrong = ControlClient::connect(o, JobSecret::generate().value());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("job secret"), std::string::npos)
      << wrong.status().message();
  o.job_id = kJob + 1;
  EXPECT_FALSE(ControlClient::connect(o, job.secret()).ok());
  json status = job.coordinator().status().value();
  EXPECT_TRUE(status["slots"][0]["process"].is_null());
  o.job_id = kJob;
  auto right = ControlClient::connect(o, job.secret());
  ASSERT_TRUE(right.ok()) << right.status().message();
  EXPECT_EQ(right.value()->welcome().heartbeat_timeout_s, 3.0);
}

// An authenticated raw connection, to send bytes no client would.
UniqueFd raw_connection(const std::string& address, const JobSecret& secret) {
  auto fd = transport::tcp::start_connect(transport::tcp::resolve(address).value()).value();
  transport::Hello hello;
  hello.job_id = kJob;
  hello.comm_id = kControlCommId;
  auto session =
      transport::tcp::HandshakeSession::connector(std::move(fd), secret, hello, {}, "coordinator")
          .value();
  Deadline deadline = Deadline::after(kWait);
  while (session->state() == transport::tcp::HandshakeSession::State::kRunning &&
         !deadline.expired()) {
    session->advance();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(session->state(), transport::tcp::HandshakeSession::State::kDone)
      << session->status().message();
  return session->take_fd();
}

void send_raw(int fd, const std::string& payload) {
  std::vector<std::byte> frame = encode_frame(Heartbeat{0});
  frame.resize(kControlHeaderSize);
  uint32_t length = static_cast<uint32_t>(payload.size());
  std::memcpy(frame.data() + 4, &length, 4);
  frame.insert(frame.end(), reinterpret_cast<const std::byte*>(payload.data()),
               reinterpret_cast<const std::byte*>(payload.data() + payload.size()));
  ASSERT_EQ(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(frame.size()));
}

// The next message that is not a heartbeat.
Result<Message> receive(ControlStream& stream, int fd) {
  Deadline deadline = Deadline::after(kWait);
  std::optional<Result<Message>> got;
  while (!got && !deadline.expired()) {
    Status st = stream.read_available([&](Result<Message> m) {
      if (!got && !(m.ok() && std::holds_alternative<Heartbeat>(m.value()))) got = std::move(m);
    });
    if (!st.ok()) return st;
    if (!got) {
      pollfd p{fd, POLLIN, 0};
      poll(&p, 1, 100);
    }
  }
  if (!got) return error(TM_ERROR_TIMEOUT, "nothing received");
  return std::move(*got);
}

std::string reply_error(ControlStream& stream, int fd) {
  auto m = receive(stream, fd);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  auto* reply = std::get_if<Reply>(&m.value());
  EXPECT_TRUE(reply) << message_type(m.value());
  EXPECT_FALSE(reply && reply->ok);
  return reply ? reply->error : "";
}

TEST(Coordinator, MalformedMessagesGetAnErrorNeverACrash) {
  Cluster job(1, 1);
  UniqueFd fd = raw_connection(job.coordinator().address(), job.secret());
  ControlStream stream(fd.get());
  send_raw(fd.get(), "{not json");
  EXPECT_NE(reply_error(stream, fd.get()).find("not valid JSON"), std::string::npos);
  send_raw(fd.get(), R"({"type":"status"})");
  EXPECT_NE(reply_error(stream, fd.get()).find("register first"), std::string::npos);
  send_raw(
      fd.get(),
      R"({"type":"register","kind":"ctl","slot":-1,"process":{"pid":1,"host":"h","instance":5}})");
  auto welcome = receive(stream, fd.get());
  ASSERT_TRUE(welcome.ok());
  EXPECT_TRUE(std::holds_alternative<Welcome>(welcome.value()));
  send_raw(fd.get(), R"({"type":"exit_report","pid":1,"exit_code":0,"signal":0})");
  EXPECT_NE(reply_error(stream, fd.get()).find("from launchers only"), std::string::npos);
  send_raw(fd.get(), R"({"type":"task_lost","task":0,"detail":"PROC-ABORTED"})");
  EXPECT_NE(reply_error(stream, fd.get()).find("from ranks and standbys only"), std::string::npos);
  send_raw(fd.get(), R"({"type":"migrate","slot":"zero"})");
  EXPECT_NE(reply_error(stream, fd.get()).find("field 'slot'"), std::string::npos);
  send_raw(fd.get(), R"({"type":"migrate","slot":0})");
  EXPECT_NE(reply_error(stream, fd.get()).find("no live process"), std::string::npos);
  send_raw(
      fd.get(),
      R"({"type":"order","order_id":1,"kind":"stop","epoch":0,"slot":-1,"role":"none","donor":-1,"joiner":-1,"step":0,"view":{},"reason":""})");
  EXPECT_NE(reply_error(stream, fd.get()).find("sent by the coordinator"), std::string::npos);
  // A bad frame header ends the connection, and only it.
  const char garbage[] = "GARBAGE!";
  ASSERT_EQ(::send(fd.get(), garbage, 8, MSG_NOSIGNAL), 8);
  EXPECT_FALSE(receive(stream, fd.get()).ok());
  EXPECT_TRUE(job.coordinator().status().ok());
}

TEST(Coordinator, RanksStopWhenTheCoordinatorIsLost) {
  std::string address_file = ::testing::TempDir() + "/coordinator-" + std::to_string(getpid());
  Cluster launcher(1, 1);  // only for its spawn and reap; its coordinator is unused
  pid_t coordinator = launcher.spawn({"coordinator", address_file, "2", "1", "2"});
  std::string address;
  Deadline deadline = Deadline::after(kWait);
  while (address.empty() && !deadline.expired()) {
    std::ifstream in(address_file);
    std::getline(in, address);
    if (address.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(address.empty());
  std::remove(address_file.c_str());
  pid_t a = launcher.spawn({"active", address, std::to_string(kJob), "0"});
  pid_t b = launcher.spawn({"active", address, std::to_string(kJob), "1"});
  // Wait until both have registered, asking the coordinator as trainmover-ctl would.
  ControlClientOptions o;
  o.address = address;
  o.job_id = kJob;
  o.identity.kind = PeerKind::kCtl;
  auto asker = ControlClient::connect(o, launcher.secret());
  ASSERT_TRUE(asker.ok()) << asker.status().message();
  bool registered = false;
  while (!registered && !deadline.expired()) {
    ASSERT_TRUE(asker.value()->send(StatusRequest{}).ok());
    auto m = asker.value()->next(kWait);
    ASSERT_TRUE(m.ok());
    if (auto* r = std::get_if<StatusReply>(&m.value())) {
      registered = !r->status["slots"][0]["process"].is_null() &&
                   !r->status["slots"][1]["process"].is_null();
    }
    if (!registered) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(registered);
  // Paused, not killed: the connections stay open, only the heartbeats stop.
  ::kill(coordinator, SIGSTOP);
  auto paused_at = Clock::now();
  auto ea = launcher.wait_exit(a);
  auto eb = launcher.wait_exit(b);
  double waited = to_seconds(Clock::now() - paused_at);
  // The in-process client notices too, by the heartbeats alone.
  Result<Message> lost = asker.value()->next(kWait);
  while (lost.ok()) lost = asker.value()->next(kWait);
  EXPECT_EQ(lost.status().code(), TM_ERROR_PEER_FAILED);
  EXPECT_NE(lost.status().message().find("no heartbeat"), std::string::npos)
      << lost.status().message();
  ::kill(coordinator, SIGKILL);
  ASSERT_TRUE(ea && eb);
  EXPECT_EQ(ea->code, 4);
  EXPECT_EQ(eb->code, 4);
  // The coordinator's heartbeat timeout is 2 s; the rest is slack for a
  // loaded machine.
  EXPECT_GE(waited, 1.9);
  EXPECT_LT(waited, 10.0);
}

ControlClientOptions in_process(const Cluster& job, PeerKind kind, int slot, uint64_t instance) {
  ControlClientOptions o;
  o.address = const_cast<Cluster&>(job).coordinator().address();
  o.job_id = kJob;
  o.identity.kind = kind;
  o.identity.slot = slot;
  o.identity.process = {instance, static_cast<pid_t>(100000 + instance), "elsewhere"};
  return o;
}

// The next order a client receives (other messages are skipped).
std::optional<Order> next_order(ControlClient& client) {
  Deadline deadline = Deadline::after(kWait);
  while (!deadline.expired()) {
    auto m = client.next(deadline.remaining());
    if (!m.ok()) return std::nullopt;
    if (auto* o = std::get_if<Order>(&m.value())) return *o;
  }
  return std::nullopt;
}

TEST(Coordinator, FailureReportsAndLauncherExitReportsOverTheChannel) {
  std::string events_file = ::testing::TempDir() + "/events-" + std::to_string(getpid());
  std::remove(events_file.c_str());
  Cluster job(3, 1, [&](CoordinatorConfig& c) {
    c.standby_wait = Duration::zero();  // no standby: stop at once
    c.events_path = events_file;
  });
  auto a = ControlClient::connect(in_process(job, PeerKind::kActive, 0, 1), job.secret());
  pid_t b = job.active(1);  // a process of its own, to be paused
  auto c = ControlClient::connect(in_process(job, PeerKind::kActive, 2, 3), job.secret());
  auto launcher = ControlClient::connect(in_process(job, PeerKind::kLauncher, -1, 4), job.secret());
  ASSERT_TRUE(a.ok() && c.ok() && launcher.ok());
  job.wait_started(0);
  // A launcher may not claim failures as a rank, nor a rank report exits.
  ASSERT_TRUE(a.value()->send(ExitReport{100003, -1, 9}).ok());
  ASSERT_TRUE(launcher.value()->send(FailureReport{1, "x"}).ok());
  ASSERT_TRUE(launcher.value()->send(ExitReport{424242, 1, 0}).ok());
  ASSERT_TRUE(job.wait_event("exit_ignored"));
  // A report of a slot that keeps heartbeating fails nothing (the reporter
  // may name a live neighbour that only relayed an abort).
  ASSERT_TRUE(a.value()->send(FailureReport{2, "recv from slot 2 failed"}).ok());
  auto doubted =
      job.wait_event("failure_reported", [](const json& e) { return e["failed_slot"] == 2; });
  ASSERT_TRUE(doubted);
  EXPECT_EQ((*doubted)["corroborated"], false);
  // Slot 1 paused: its peers' reports, corroborated by two missed heartbeat
  // intervals (0.2 s), fail it long before its heartbeat timeout (3 s).
  ::kill(b, SIGSTOP);
  auto paused_at = Clock::now();
  while (Clock::now() - paused_at < std::chrono::milliseconds(300))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(a.value()->send(FailureReport{1, "recv from slot 1 failed"}).ok());
  auto failed = job.wait_event("slot_failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["slot"], 1);
  EXPECT_EQ((*failed)["source"], "report");  // not "heartbeat": before the timeout
  std::printf("paused slot 1 failed by a report %.3f s after the pause\n",
              to_seconds(Clock::now() - paused_at));
  ::kill(b, SIGCONT);
  auto fenced = job.wait_exit(b);  // it finds its orders say stop
  ASSERT_TRUE(fenced);
  // No standby and no wait: the job stops, every rank is told why.
  ASSERT_TRUE(job.coordinator().wait_stopped(kWait));
  auto late = ControlClient::connect(in_process(job, PeerKind::kStandby, -1, 5), job.secret());
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("the job has stopped"), std::string::npos);
  auto stop = next_order(*c.value());
  ASSERT_TRUE(stop);
  EXPECT_NE(stop->reason.find("no standby is ready for slot 1"), std::string::npos) << stop->reason;
  // The events file holds the same events, one JSON object a line, 0600.
  struct stat st {};
  ASSERT_EQ(stat(events_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Events go on after the stop (connections closing), so the file is read
  // after a snapshot of the memory log: it holds at least those, in order.
  auto kept = job.coordinator().events().value();
  std::ifstream in(events_file);
  std::string line;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    json e = json::parse(line, nullptr, false);
    ASSERT_TRUE(e.is_object()) << line;
    EXPECT_TRUE(e["time"].is_number());
    names.push_back(e["event"]);
  }
  ASSERT_GE(names.size(), kept.size());
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(names[i], kept[i]["event"]) << i;
  EXPECT_NE(std::find(names.begin(), names.end(), "job_stopped"), names.end());
  EXPECT_EQ(job.count_events("slot_failed"), 1);  // the refused reports changed nothing
  std::remove(events_file.c_str());
}

// A launcher's lifeline report fails the slot at once, while its process
// still runs; the exit report that follows names the slot it served.
TEST(Coordinator, ALifelineReportFailsTheSlotAndTheExitFollows) {
  Cluster job(3, 1, [&](CoordinatorConfig& c) { c.standby_wait = Duration::zero(); });
  auto a = ControlClient::connect(in_process(job, PeerKind::kActive, 0, 1), job.secret());
  pid_t b = job.active(1);
  auto c = ControlClient::connect(in_process(job, PeerKind::kActive, 2, 3), job.secret());
  auto launcher = ControlClient::connect(in_process(job, PeerKind::kLauncher, -1, 4), job.secret());
  ASSERT_TRUE(a.ok() && c.ok() && launcher.ok());
  job.wait_started(0);
  ASSERT_TRUE(launcher.value()->send(ExitReport{b, -1, 0, "", true}).ok());
  auto failed = job.wait_event("slot_failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["slot"], 1);
  EXPECT_EQ((*failed)["source"], "lifeline");
  EXPECT_EQ((*failed)["pid"], b);
  // Fenced, it stops by itself; the harness reports its exit as a launcher.
  auto exit = job.wait_exit(b);
  ASSERT_TRUE(exit);
  auto ended = job.wait_event("exit_ignored");
  ASSERT_TRUE(ended);
  EXPECT_EQ((*ended)["slot"], 1);
  EXPECT_EQ((*ended)["pid"], b);
  EXPECT_EQ(job.count_events("slot_failed"), 1);
}

TEST(Coordinator, UnauthenticatedConnectionsAreBoundedAndTimedOut) {
  Cluster job(1, 1, [](CoordinatorConfig& c) {
    c.limits.max_pending_handshakes = 2;
    c.limits.handshake_timeout = std::chrono::seconds(3);
  });
  auto address = transport::tcp::resolve(job.coordinator().address()).value();
  auto open_idle = [&] {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_EQ(::connect(fd.get(), address.get(), address.length), 0);
    return fd;
  };
  // The connection is closed by the coordinator when recv sees end of stream.
  auto closed_within = [](int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return false;
    char byte;
    return ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
  };
  UniqueFd first = open_idle();
  UniqueFd second = open_idle();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  UniqueFd third = open_idle();
  // Over the bound: closed at accept, long before the handshake timeout.
  EXPECT_TRUE(closed_within(third.get(), 1500));
  EXPECT_FALSE(closed_within(first.get(), 0));
  // The idle ones are dropped at their deadline...
  EXPECT_TRUE(closed_within(first.get(), 10000));
  EXPECT_TRUE(closed_within(second.get(), 10000));
  // ...and a real client gets in again.
  auto client = ControlClient::connect(in_process(job, PeerKind::kCtl, -1, 9), job.secret());
  EXPECT_TRUE(client.ok()) << client.status().message();
}

struct CtlRun {
  int status = -1;
  std::string output;
};

// Runs trainmover-ctl with `args` (stdout and stderr together).
CtlRun ctl(const std::string& env, const std::string& args) {
  std::string command = env + " " TM_CTL " " + args + " 2>&1";
  CtlRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(TrainmoverCtl, StatusMigrateAndEventsOfARunningJob) {
  Cluster job(2, 1);
  job.active(0);
  job.active(1);
  pid_t standby = job.standby("none");
  job.wait_started(1);
  std::string file = ::testing::TempDir() + "/job-" + std::to_string(getpid()) + ".json";
  std::remove(file.c_str());
  ASSERT_TRUE(
      write_job_file(file, {job.coordinator().address(), kJob, job.secret().to_hex(), getpid()})
          .ok());
  std::string env = "TRAINMOVER_CTL=" + file;

  CtlRun status = ctl(env, "status");
  EXPECT_EQ(status.status, 0) << status.output;
  EXPECT_NE(status.output.find("epoch 0"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("standby 0  ready for {none}"), std::string::npos) << status.output;
  CtlRun as_json = ctl("", "--job " + file + " status --json");
  EXPECT_EQ(as_json.status, 0);
  EXPECT_EQ(json::parse(as_json.output, nullptr, false)["dp"], 2) << as_json.output;

  CtlRun migrate = ctl(env, "migrate 1");
  EXPECT_EQ(migrate.status, 0) << migrate.output;
  ASSERT_TRUE(job.wait_event("recovery_done"));
  EXPECT_EQ(pid_of_slot(job.coordinator(), 1), standby);
  CtlRun again = ctl(env, "migrate 1");  // no standby is left
  EXPECT_EQ(again.status, 0) << again.output;
  CtlRun bad_slot = ctl(env, "migrate 9");
  EXPECT_EQ(bad_slot.status, 1);
  EXPECT_NE(bad_slot.output.find("slot 9 is outside 0..1"), std::string::npos) << bad_slot.output;

  CtlRun events = ctl(env, "events");
  EXPECT_EQ(events.status, 0) << events.output;
  EXPECT_NE(events.output.find(R"("event":"recovery_done")"), std::string::npos);
  EXPECT_NE(events.output.find(R"("path":"leaver")"), std::string::npos);

  EXPECT_EQ(ctl(env, "").status, 2);
  EXPECT_EQ(ctl(env, "frobnicate").status, 2);
  EXPECT_EQ(ctl(env, "migrate").status, 2);
  EXPECT_EQ(ctl(env, "migrate x").status, 2);
  EXPECT_EQ(ctl(env, "status --follow").status, 2);
  EXPECT_EQ(ctl("TRAINMOVER_CTL=", "status").status, 2);
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  CtlRun unsafe = ctl(env, "status");
  EXPECT_EQ(unsafe.status, 1);
  EXPECT_NE(unsafe.output.find("it must be 0600"), std::string::npos) << unsafe.output;
  std::remove(file.c_str());
}

}  // namespace
}  // namespace trainmover::control
