// trainmover-ctl: status, planned migration and events of a running job.
// It finds the job through the job file the launcher writes (--job FILE, or
// TRAINMOVER_CTL=FILE), which holds the coordinator's address and the job
// secret, and talks to the coordinator over the authenticated control channel.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "commands.h"
#include "common/parse.h"
#include "control/job_file.h"

using namespace trainmover;  // NOLINT: a program's main file

namespace {

const char* kCommands =
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
  cli::CommandLine command_line("trainmover-ctl", "trainmover-ctl [OPTIONS] COMMAND [ARGS]",
                                "Talk to a running TrainMover job.\n");
  command_line.section("Options")
      .text("job,j", "FILE", o.job_file, "the job file the launcher wrote")
      .from_env("TRAINMOVER_CTL")
      .duration("timeout", "SEC", 0.001, 1e9, o.timeout_s,
                "how long to wait for the coordinator (default 5)")
      .flag("json", o.json, "status: print the JSON object")
      .flag("follow,f", o.follow, "events: keep printing new events")
      .operands(cli::Operands::kAny, "COMMAND", o.command)
      .epilog(kCommands);
  if (auto exit_code = command_line.parse(argc, argv)) return *exit_code;
  auto usage_error = [&](const std::string& what) { return command_line.usage_error(what); };
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
