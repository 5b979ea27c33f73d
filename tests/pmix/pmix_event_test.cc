// The PMIx path of the launcher, against a PMIx server written here (the
// Slurm 22.05 on these machines delivers no PMIx events, so only a server of
// our own can show the handler works: pmix_test_server): three clients it
// forks wire up through PMIx put/commit/fence/get, then receive the failure events
// the server delivers (a rank aborted, a rank terminated, and the server
// itself gone) as FailureEvents naming the right ranks. The same server
// runs three pmix_store_client ranks: the PmixStore round, and a
// communicator wired up through TRAINMOVER_STORE=pmix; and three
// pmix_worker_client ranks, real workers whose PMIx events reach a real
// coordinator.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "control/coordinator.h"
#include "rendezvous/store_factory.h"

namespace {

constexpr int kRanks = 3;

// A client's stdout, as the test reads it. The clients exit by themselves
// (after their events, or 20 s without them).
struct Child {
  int out = -1;
  std::string buffered;
};

class PmixEvents : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tm-pmix-test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }

  void TearDown() override {
    if (server_ > 0) kill(server_, SIGKILL), waitpid(server_, nullptr, 0);
    for (Child& c : children_)
      if (c.out >= 0) close(c.out);
    if (commands_ >= 0) close(commands_);
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  // Runs the PMIx server (pmix_test_server), whose clients run
  // `client_argv`. Everything the child needs is made before the fork: the
  // test may have threads by now, so the child only closes and execs.
  void start(const std::vector<std::string>& client_argv) {
    std::vector<int> write_ends;
    for (int r = 0; r < kRanks; ++r) {
      int fds[2];
      ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
      children_.push_back({fds[0], ""});
      write_ends.push_back(fds[1]);
    }
    int cmd[2];
    ASSERT_EQ(pipe2(cmd, O_CLOEXEC), 0);
    std::vector<std::string> args{"pmix/pmix_test_server", dir_};
    for (int fd : write_ends) args.push_back(std::to_string(fd));
    args.push_back(std::to_string(cmd[0]));
    args.insert(args.end(), client_argv.begin(), client_argv.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    server_ = fork();
    ASSERT_GE(server_, 0);
    if (server_ == 0) {
      // The server's ends survive the exec; the test's ends (O_CLOEXEC) go.
      for (int fd : write_ends) fcntl(fd, F_SETFD, 0);
      fcntl(cmd[0], F_SETFD, 0);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(cmd[0]);
    for (int fd : write_ends) close(fd);
    commands_ = cmd[1];
  }

  void command(const std::string& line) {
    std::string out = line + "\n";
    ASSERT_EQ(write(commands_, out.data(), out.size()), static_cast<ssize_t>(out.size()));
  }

  // The next line client `rank` prints, or "" after 20 s or at its end.
  std::string next_line(int rank) {
    Child& c = children_[rank];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      size_t nl = c.buffered.find('\n');
      if (nl != std::string::npos) {
        std::string line = c.buffered.substr(0, nl);
        c.buffered.erase(0, nl + 1);
        return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "";
      pollfd p{c.out, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return "";
      char buf[512];
      ssize_t n = read(c.out, buf, sizeof buf);
      if (n <= 0) return "";
      c.buffered.append(buf, static_cast<size_t>(n));
    }
  }

  std::string dir_;
  pid_t server_ = -1;
  int commands_ = -1;
  std::vector<Child> children_;
};

TEST_F(PmixEvents, ClientsWireUpThroughPmixAndHearEveryFailureEvent) {
  start({"pmix/pmix_event_client", "3"});
  for (int r = 0; r < kRanks; ++r)
    ASSERT_EQ(next_line(r), "ready rank=" + std::to_string(r) + " size=3 peers=ok events=job");

  command("aborted 1");
  for (int r = 0; r < kRanks; ++r) {
    std::string line = next_line(r);
    EXPECT_NE(line.find("lost_server=0 ranks=1"), std::string::npos)
        << "rank " << r << ": " << line;
  }
  command("terminated 2,0");
  for (int r = 0; r < kRanks; ++r) {
    std::string line = next_line(r);
    EXPECT_NE(line.find("lost_server=0 ranks=2,0"), std::string::npos)
        << "rank " << r << ": " << line;
  }

  // The server dies, as a node's slurmstepd does when the node is lost.
  kill(server_, SIGKILL);
  waitpid(server_, nullptr, 0);
  server_ = -1;
  for (int r = 0; r < kRanks; ++r) {
    std::string line = next_line(r);
    EXPECT_NE(line.find("event LOST_CONNECTION"), std::string::npos)
        << "rank " << r << ": " << line;
    EXPECT_NE(line.find("lost_server=1"), std::string::npos) << "rank " << r << ": " << line;
    EXPECT_EQ(next_line(r), "") << "rank " << r << " printed more";
  }
}

TEST_F(PmixEvents, StoreServesOneRoundAndRefusesWhatFollows) {
  start({"pmix/pmix_store_client", "store"});
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(next_line(r), "store rank=" + std::to_string(r) + " size=3 peers=ok later=refused");
}

// Sets the variables of a rank for one test (the server's clients inherit
// the test's environment).
class ScopedEnv {
 public:
  explicit ScopedEnv(std::vector<std::pair<std::string, std::string>> vars)
      : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& var : vars_) unsetenv(var.first.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

TEST_F(PmixEvents, CommunicatorWiresUpThroughThePmixStore) {
  ScopedEnv env({{"TRAINMOVER_STORE", "pmix"},
                 {"TRAINMOVER_JOB_SECRET", std::string(32, 'e')},
                 {"TRAINMOVER_SOCKET_IFNAME", "=lo"},
                 {"TRAINMOVER_CONNECT_TIMEOUT", "15"}});
  start({"pmix/pmix_store_client", "comm"});
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(next_line(r), "comm slot=" + std::to_string(r) + " nslots=3 sum=ok hosts=127.0.0.1");
  }
}

// The first event named `name` for which `match` holds, within 20 s.
std::optional<nlohmann::json> wait_event(trainmover::control::Coordinator& c,
                                         const std::string& name,
                                         const std::function<bool(const nlohmann::json&)>& match) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    auto events = c.events();
    if (events.ok()) {
      for (const nlohmann::json& e : *events)
        if (e["event"] == name && match(e)) return e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

// The worker's PMIx failure source end to end: three real workers
// (tm_worker_init with TRAINMOVER_PMIX_EVENTS=1) register with a real
// coordinator under their PMIx ranks; the server says rank 1 aborted. The
// coordinator fails slot 1 at once (source "pmix") and starts its recovery,
// although slot 1's process is alive and heartbeating: without the event
// nothing would ever fail it.
TEST_F(PmixEvents, AFailureEventFailsTheTasksSlotThroughTheWorker) {
  using namespace trainmover;
  JobSecret secret = JobSecret::generate().value();
  control::CoordinatorConfig config;
  config.job_id = 42;
  config.layout = control::Layout::create(kRanks, 1).value();
  config.heartbeat_interval = std::chrono::milliseconds(100);
  config.heartbeat_timeout = std::chrono::seconds(10);
  config.standby_wait = std::chrono::seconds(30);
  auto coordinator = control::Coordinator::start(config, secret);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status().message();
  control::Coordinator& c = **coordinator;
  auto store = rendezvous::start_store_server("127.0.0.1:0", secret, config.job_id);
  ASSERT_TRUE(store.ok()) << store.status().message();
  ScopedEnv env({{"TRAINMOVER_CONTROL", c.address()},
                 {"TRAINMOVER_JOB_SECRET", secret.to_hex()},
                 {"TRAINMOVER_JOB_ID", "42"},
                 {"TRAINMOVER_NSLOTS", std::to_string(kRanks)},
                 {"TRAINMOVER_STORE", "tcp://" + (*store)->address()},
                 {"TRAINMOVER_PMIX_EVENTS", "1"}});
  start({"pmix/pmix_worker_client"});
  std::vector<pid_t> workers;
  for (int r = 0; r < kRanks; ++r) {
    std::string line = next_line(r);
    std::string head = "worker slot=" + std::to_string(r) + " pid=";
    ASSERT_EQ(line.rfind(head, 0), 0u) << "rank " << r << ": " << line;
    workers.push_back(static_cast<pid_t>(std::stol(line.substr(head.size()))));
  }
  auto kill_workers = [&] {
    for (pid_t pid : workers) kill(pid, SIGKILL);
  };
  for (int r = 0; r < kRanks; ++r) {
    auto registered =
        wait_event(c, "slot_registered", [&](const nlohmann::json& e) { return e["slot"] == r; });
    if (!registered) kill_workers();
    ASSERT_TRUE(registered) << "slot " << r;
  }

  command("aborted 1");
  auto failed = wait_event(c, "slot_failed", [](const nlohmann::json&) { return true; });
  auto lost = wait_event(c, "task_lost", [](const nlohmann::json&) { return true; });
  auto started = wait_event(c, "recovery_started", [](const nlohmann::json&) { return true; });
  // Every worker heard the event; the first report failed the slot. (Counted
  // before the workers are killed: their closing connections fail theirs.)
  auto events = c.events();
  kill_workers();
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(std::count_if(events->begin(), events->end(),
                          [](const nlohmann::json& e) { return e["event"] == "slot_failed"; }),
            1);
  ASSERT_TRUE(failed);
  EXPECT_EQ((*failed)["slot"], 1);
  EXPECT_EQ((*failed)["source"], "pmix");
  EXPECT_NE((*failed)["detail"].get<std::string>().find("PMIx: task 1: PROC-ABORTED"),
            std::string::npos)
      << *failed;
  EXPECT_EQ((*failed)["pid"], workers[1]);
  ASSERT_TRUE(lost);
  EXPECT_EQ((*lost)["task"], 1);
  ASSERT_TRUE(started);
  EXPECT_EQ((*started)["slot"], 1);
}

}  // namespace
