// trainmover-gpt: trains a small GPT (examples/gpt) as one process or as the
// ranks of a DP x PP TrainMover job; the workload of the runtime's tests.
//
// Exit status: 0 when the run finished; 2 for a bad command line; 1 when it
// failed (the message names why).
#include <cinttypes>
#include <cstdio>

#include "comm.h"
#include "options.h"
#include "trainer.h"

namespace {

using namespace trainmover::gpt;

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int fail(const trainmover::Status& status) {
  std::fprintf(stderr, "trainmover-gpt: %s\n", status.message().c_str());
  return kExitFailed;
}

void print_summary(const CommandLine& cl, const Trainer& trainer, const TrainSummary& s) {
  std::fprintf(stderr,
               "trainmover-gpt: done: steps %" PRIu64 "-%" PRIu64
               ", loss %.4f -> %.4f, %.3f ms/step,"
               " dp %d pp %d, %zu parameters on this stage, hash %016" PRIx64 "\n",
               s.first_step, s.end_step, s.first_loss, s.last_loss, s.mean_step_s * 1e3, cl.dp,
               cl.pp, trainer.stage().layout().total(), s.param_hash);
  if (cl.train.print_hash) std::printf("param-hash %016" PRIx64 "\n", s.param_hash);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  auto cl = parse_command_line(argc, argv);
  if (!cl.ok()) {
    std::fprintf(stderr, "trainmover-gpt: %s\nTry 'trainmover-gpt --help'.\n",
                 cl.status().message().c_str());
    return kExitUsage;
  }
  if (cl->help) {
    std::fputs(cl->help_text.c_str(), stdout);
    return 0;
  }
  auto comm = StageComm::create(cl->dp, cl->pp);
  if (!comm.ok()) return fail(comm.status());
  auto trainer = Trainer::create(cl->train, **comm);
  if (!trainer.ok()) return fail(trainer.status());
  auto summary = (*trainer)->run();
  if (!summary.ok()) return fail(summary.status());
  const Topology& topo = (*comm)->topology();
  if (topo.stage() == topo.pp - 1 && topo.dp_index() == 0) print_summary(*cl, **trainer, *summary);
  return 0;
}
