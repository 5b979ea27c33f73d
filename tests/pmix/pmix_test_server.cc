// The PMIx server of pmix_event_test, a program of its own: the test runs
// it by fork and exec, as slurmstepd is to a task, so that the test can kill
// it as a node's slurmstepd dies. A program rather than a forked copy of the
// test, because the test has threads (its coordinator, its store) by the
// time it starts the server, and a fork can inherit a lock that one of them
// held (ASan's allocator did: PMIx_server_init then waited forever).
//
//   pmix_test_server DIR OUT0 OUT1 OUT2 COMMANDS CLIENT [ARG...]
//
// DIR: the server's temporary directory; OUTr: the descriptor client r's
// stdout goes to; COMMANDS: the descriptor the test writes commands to
// ("aborted R" and "terminated R,R" deliver those events naming the ranks);
// CLIENT [ARG...]: what each client runs. Exit 0 when COMMANDS closes; 2 on
// bad arguments; 10-14 when a PMIx step fails.
#include <pmix.h>
#include <pmix_server.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

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

// The server: forks the clients with their stdout on pipes the test made,
// then serves the commands read from a pipe.
class ServerProcess {
 public:
  ServerProcess(const std::string& dir, std::vector<int> client_out, int commands)
      : dir_(dir), client_out_(std::move(client_out)), commands_(commands) {}

  // Each client runs `argv` (argv[0] relative to the working directory).
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

int descriptor(const char* text) {
  char* end = nullptr;
  long fd = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || fd < 0 || fd > 65535) {
    std::fprintf(stderr, "pmix_test_server: '%s' is not a file descriptor\n", text);
    std::exit(2);
  }
  return static_cast<int>(fd);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int kFixed = 3 + kRanks;  // program, DIR, OUT0..2, COMMANDS
  if (argc < kFixed + 1) {
    std::fprintf(stderr, "usage: pmix_test_server DIR OUT0 OUT1 OUT2 COMMANDS CLIENT [ARG...]\n");
    return 2;
  }
  std::vector<int> client_out;
  for (int r = 0; r < kRanks; ++r) client_out.push_back(descriptor(argv[2 + r]));
  int commands = descriptor(argv[2 + kRanks]);
  std::vector<std::string> client_argv(argv + kFixed, argv + argc);
  ServerProcess(argv[1], client_out, commands).run(client_argv);
}
