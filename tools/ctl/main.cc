// trainmover-ctl: status, planned migration and events of a running job.
// It finds the job through the job file the launcher writes (--job FILE, or
// TRAINMOVER_CTL=FILE), which holds the coordinator's address and the job
// secret, and talks to the coordinator over the authenticated control channel.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "common/parse.h"
#include "control/job_file.h"

namespace po = boost::program_options;
using namespace trainmover;  // NOLINT: a program's main file

namespace {

constexpr int kExitUsage = 2;

const char* kUsage =
    "Usage: trainmover-ctl [OPTIONS] COMMAND [ARGS]\n"
    "Talk to a running TrainMover job.\n\n"
    "Commands:\n"
    "  status          slots, roles, standbys, epoch and step\n"
    "  migrate SLOT    move SLOT's work to a standby (planned, the job goes on)\n"
    "  events          print the job's events as JSON lines (--follow: and new ones)\n\n"
    "Exit status: 0 done, 1 the job refused or could not be reached, 2 usage error.\n";

struct Options {
  std::string job_file;
  double timeout_s = 5;
  bool json = false;
  bool follow = false;
  std::vector<std::string> command;
};

int usage_error(const std::string& what) {
  std::cerr << "trainmover-ctl: " << what << "\nTry 'trainmover-ctl --help'.\n";
  return kExitUsage;
}

Result<control::ControlClient*> connect_to_job(const Options& o,
                                               std::unique_ptr<control::ControlClient>& holder) {
  TM_ASSIGN_OR_RETURN(control::JobFile job, control::read_job_file(o.job_file));
  TM_ASSIGN_OR_RETURN(JobSecret secret, JobSecret::from_hex(job.secret_hex));
  TM_ASSIGN_OR_RETURN(uint64_t instance, random_u64());
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  control::ControlClientOptions options;
  options.address = job.address;
  options.job_id = job.job_id;
  options.identity.kind = control::PeerKind::kCtl;
  options.identity.process = {instance, getpid(), host};
  options.connect_timeout = seconds(o.timeout_s);
  TM_ASSIGN_OR_RETURN(holder, control::ControlClient::connect(options, secret));
  return holder.get();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  po::options_description visible("Options");
  visible.add_options()("help,h", "show this help")(
      "job,j", po::value<std::string>(&o.job_file),
      "the job file the launcher wrote (default: $TRAINMOVER_CTL)")(
      "timeout", po::value<std::string>()->default_value("5"),
      "seconds to wait for the coordinator")("json", po::bool_switch(&o.json),
                                             "status: print the JSON object")(
      "follow,f", po::bool_switch(&o.follow), "events: keep printing new events");
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::vector<std::string>>(&o.command));
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("command", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (vm.count("help")) {
    std::cout << kUsage << "\n" << visible;
    return 0;
  }
  auto timeout = parse_seconds(vm["timeout"].as<std::string>());
  if (!timeout.ok() || timeout.value() <= 0)
    return usage_error("--timeout: " +
                       (timeout.ok() ? std::string("must be > 0") : timeout.status().message()));
  o.timeout_s = timeout.value();
  if (o.command.empty()) return usage_error("no command given");
  const std::string& name = o.command[0];
  int slot = -1;
  if (name == "migrate") {
    if (o.command.size() != 2) return usage_error("migrate takes one SLOT");
    auto parsed = parse_int(o.command[1], 0, 65535);
    if (!parsed.ok()) return usage_error("migrate SLOT: " + parsed.status().message());
    slot = static_cast<int>(parsed.value());
  } else if (name == "status" || name == "events") {
    if (o.command.size() != 1) return usage_error(name + " takes no arguments");
  } else {
    return usage_error("unknown command '" + name + "'");
  }
  if (o.follow && name != "events") return usage_error("--follow goes with events only");
  if (o.json && name != "status") return usage_error("--json goes with status only");
  if (o.job_file.empty()) o.job_file = get_env("TRAINMOVER_CTL").value_or("");
  if (o.job_file.empty()) return usage_error("no job given: use --job FILE or set TRAINMOVER_CTL");

  std::unique_ptr<control::ControlClient> holder;
  auto client = connect_to_job(o, holder);
  if (!client.ok()) {
    std::cerr << "trainmover-ctl: " << client.status().message() << "\n";
    return 1;
  }
  Duration wait = seconds(o.timeout_s);
  if (name == "status") return ctl::run_status(*client.value(), wait, o.json, std::cout);
  if (name == "migrate") return ctl::run_migrate(*client.value(), wait, slot, std::cout);
  return ctl::run_events(*client.value(), wait, o.follow, std::cout);
}
