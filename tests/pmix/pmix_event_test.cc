// The PMIx path of the launcher, against a PMIx server written here (the
// Slurm 22.05 on these machines delivers no PMIx events, so only a server of
// our own can show the handler works): three clients forked by the server
// wire up through PMIx put/commit/fence/get, then receive the failure events
// the server delivers (a rank aborted, a rank terminated, and the server
// itself gone) as FailureEvents naming the right ranks. The same server
// runs three pmix_store_client ranks: the PmixStore round, and a
// communicator wired up through TRAINMOVER_STORE=pmix; and three
// pmix_worker_client ranks, real workers whose PMIx events reach a real
// coordinator.
#include <gtest/gtest.h>
#include <pmix.h>
#include <pmix_server.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "control/coordinator.h"
#include "rendezvous/store_factory.h"

namespace {

constexpr const char* kNspace = "tmtest.job";
constexpr int kRanks = 3;

// All procs are on this host: a fence is complete as soon as the server
// library has collected the local contributions.
pmix_status_t fence_nb(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t done, void* done_data) {
  if (done) done(PMIX_SUCCESS, data, ndata, done_data, nullptr, nullptr);
  return PMIX_SUCCESS;
}

// The host has no environmental events of its own to subscribe to.
pmix_status_t register_events(pmix_status_t*, size_t, const pmix_info_t[], size_t, pmix_op_cbfunc_t,
                              void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

struct Waiter {
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
  void set(pmix_status_t s) {
    std::lock_guard lock(mutex);
    status = s;
    done = true;
    changed.notify_all();
  }
  pmix_status_t wait() {
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, std::chrono::seconds(10), [&] { return done; }))
      return PMIX_ERR_TIMEOUT;
    return status;
  }
};

void op_done(pmix_status_t status, void* data) { static_cast<Waiter*>(data)->set(status); }

// A client's stdout, as the test reads it. The clients exit by themselves
// (after their events, or 20 s without them).
struct Child {
  int out = -1;
  std::string buffered;
};

// The PMIx server, in a child process of the test so that the test can
// kill it as a node's slurmstepd dies. It forks the clients with their
// stdout on pipes the test made, then serves commands read from a pipe:
// "aborted R" and "terminated R,R" deliver those events naming the ranks.
class ServerProcess {
 public:
  ServerProcess(const std::string& dir, std::vector<int> client_out, int commands)
      : dir_(dir), client_out_(std::move(client_out)), commands_(commands) {}

  // Each client runs `argv` (argv[0] relative to the test's directory).
  [[noreturn]] void run(const std::vector<std::string>& argv) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_TMPDIR, dir_.c_str(), PMIX_STRING);
    pmix_server_module_t module;
    std::memset(&module, 0, sizeof module);
    module.fence_nb = fence_nb;
    module.register_events = register_events;
    if (PMIx_server_init(&module, &info, 1) != PMIX_SUCCESS) _exit(10);
    if (!register_job()) _exit(11);
    for (int r = 0; r < kRanks; ++r)
      if (!spawn(r, argv)) _exit(12);
    FILE* in = fdopen(commands_, "r");
    char line[256];
    while (in && fgets(line, sizeof line, in)) {
      char what[32] = {}, ranks[200] = {};
      if (sscanf(line, "%31s %199s", what, ranks) != 2) _exit(13);
      std::vector<int> affected;
      for (char* t = strtok(ranks, ","); t; t = strtok(nullptr, ",")) affected.push_back(atoi(t));
      pmix_status_t code =
          std::string(what) == "aborted" ? PMIX_ERR_PROC_ABORTED : PMIX_EVENT_PROC_TERMINATED;
      if (!notify(code, affected)) _exit(14);
    }
    PMIx_server_finalize();
    _exit(0);
  }

 private:
  bool register_job() {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    char* node_map = nullptr;
    char* proc_map = nullptr;
    if (PMIx_generate_regex(host, &node_map) != PMIX_SUCCESS) return false;
    if (PMIx_generate_ppn("0,1,2", &proc_map) != PMIX_SUCCESS) return false;
    uint32_t size = kRanks;
    std::vector<pmix_info_t> info(6);
    PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[3], PMIX_LOCAL_PEERS, "0,1,2", PMIX_STRING);
    PMIX_INFO_LOAD(&info[4], PMIX_NODE_MAP, node_map, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[5], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    Waiter registered;
    bool ok = PMIx_server_register_nspace(kNspace, kRanks, info.data(), info.size(), op_done,
                                          &registered) == PMIX_SUCCESS &&
              registered.wait() == PMIX_SUCCESS;
    for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
    free(node_map);
    free(proc_map);
    return ok;
  }

  bool spawn(int rank, const std::vector<std::string>& argv) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, kNspace, rank);
    Waiter registered;
    if (PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, op_done, &registered) !=
            PMIX_SUCCESS ||
        registered.wait() != PMIX_SUCCESS)
      return false;
    char** env = nullptr;
    if (PMIx_server_setup_fork(&proc, &env) != PMIX_SUCCESS) return false;
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      dup2(client_out_[rank], STDOUT_FILENO);
      for (char** e = env; e && *e; ++e) putenv(*e);
      execv(args[0], args.data());
      _exit(127);
    }
    for (char** e = env; e && *e; ++e) free(*e);
    free(env);
    return true;
  }

  bool notify(pmix_status_t status, const std::vector<int>& ranks) {
    // From the resource manager, not from a rank (PMIx does not deliver an
    // event to its source), to every process.
    pmix_proc_t source;
    PMIX_LOAD_PROCID(&source, "tmtest.rm", 0);
    std::vector<pmix_proc_t> procs(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) PMIX_LOAD_PROCID(&procs[i], kNspace, ranks[i]);
    pmix_info_t info;
    pmix_data_array_t array{PMIX_PROC, procs.size(), procs.data()};
    if (ranks.size() == 1) {
      PMIX_INFO_LOAD(&info, PMIX_EVENT_AFFECTED_PROC, &procs[0], PMIX_PROC);
    } else {
      PMIX_INFO_LOAD(&info, PMIX_EVENT_AFFECTED_PROCS, &array, PMIX_DATA_ARRAY);
    }
    Waiter sent;
    bool ok = PMIx_Notify_event(status, &source, PMIX_RANGE_GLOBAL, &info, 1, op_done, &sent) ==
                  PMIX_SUCCESS &&
              sent.wait() == PMIX_SUCCESS;
    PMIX_INFO_DESTRUCT(&info);
    return ok;
  }

  std::string dir_;
  std::vector<int> client_out_;
  int commands_;
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

  void start(const std::vector<std::string>& client_argv) {
    std::vector<int> write_ends;
    for (int r = 0; r < kRanks; ++r) {
      int fds[2];
      ASSERT_EQ(pipe(fds), 0);
      children_.push_back({fds[0], ""});
      write_ends.push_back(fds[1]);
    }
    int cmd[2];
    ASSERT_EQ(pipe(cmd), 0);
    server_ = fork();
    ASSERT_GE(server_, 0);
    if (server_ == 0) {
      close(cmd[1]);
      for (Child& c : children_) close(c.out);
      ServerProcess(dir_, write_ends, cmd[0]).run(client_argv);
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
