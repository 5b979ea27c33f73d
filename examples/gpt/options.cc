#include "options.h"

#include <boost/program_options.hpp>
#include <sstream>

namespace trainmover::gpt {
namespace {

namespace po = boost::program_options;

// One option per line, as Boost's option tables read best.
// clang-format off
po::options_description describe(CommandLine& cl) {
  TrainOptions& t = cl.train;
  po::options_description job("Job");
  job.add_options()
      ("help,h", "show this help")
      ("dp", po::value(&cl.dp)->default_value(1), "data-parallel replicas D")
      ("pp", po::value(&cl.pp)->default_value(1), "pipeline stages P (needs D*P processes)")
      ("steps", po::value(&t.steps)->default_value(t.steps), "train until this many steps are done")
      ("seed", po::value(&t.seed)->default_value(t.seed), "seed of the init and of the data")
      ("data", po::value(&t.data_path), "training text (default /usr/share/common-licenses/GPL-3)")
      ("log-every", po::value(&t.log_every)->default_value(t.log_every),
       "a progress line every N steps (0: none)")
      ("print-hash", po::bool_switch(&t.print_hash),
       "print the final parameter hash on stdout, as \"param-hash HEX\"");
  po::options_description model("Model");
  model.add_options()
      ("layers", po::value(&t.shape.n_layers)->default_value(t.shape.n_layers), "blocks L")
      ("d-model", po::value(&t.shape.d_model)->default_value(t.shape.d_model), "width")
      ("heads", po::value(&t.shape.n_heads)->default_value(t.shape.n_heads), "attention heads")
      ("seq-len", po::value(&t.shape.seq_len)->default_value(t.shape.seq_len),
       "tokens (bytes) per sequence")
      ("ffn-mult", po::value(&t.shape.ffn_mult)->default_value(t.shape.ffn_mult),
       "MLP width / d-model");
  po::options_description optim("Training");
  optim.add_options()
      ("batch", po::value(&t.batch)->default_value(t.batch), "sequences per DP replica and step")
      ("micro-batches", po::value(&t.micro_batches)->default_value(t.micro_batches),
       "pipeline micro-batches per step (divides --batch)")
      ("lr", po::value(&t.adamw.lr)->default_value(t.adamw.lr, "0.003"), "AdamW learning rate")
      ("weight-decay", po::value(&t.adamw.weight_decay)->default_value(t.adamw.weight_decay, "0.1"),
       "AdamW decoupled weight decay")
      ("beta1", po::value(&t.adamw.beta1)->default_value(t.adamw.beta1, "0.9"), "AdamW beta1")
      ("beta2", po::value(&t.adamw.beta2)->default_value(t.adamw.beta2, "0.95"), "AdamW beta2");
  po::options_description ckpt("Checkpoints");
  ckpt.add_options()
      ("checkpoint-dir", po::value(&t.checkpoint_dir), "directory of the checkpoints")
      ("checkpoint-every", po::value(&t.checkpoint_every)->default_value(0),
       "a checkpoint every N steps (0: only at the end)")
      ("resume", po::bool_switch(&t.resume),
       "continue from the latest checkpoint all stages have");
  po::options_description all;
  all.add(job).add(model).add(optim).add(ckpt);
  return all;
}
// clang-format on

Status check(bool ok, const char* what) {
  return ok ? Status::Ok() : error(TM_ERROR_INVALID_ARGUMENT, what);
}

Status check_values(const CommandLine& cl) {
  const TrainOptions& t = cl.train;
  TM_RETURN_IF_ERROR(check(cl.dp >= 1 && cl.dp <= 4096, "--dp must be in [1, 4096]"));
  TM_RETURN_IF_ERROR(check(cl.pp >= 1 && cl.pp <= 4096, "--pp must be in [1, 4096]"));
  TM_RETURN_IF_ERROR(check(t.batch >= 1 && t.batch <= 65536, "--batch must be in [1, 65536]"));
  // Boost reads "-1" into an unsigned as its largest value: bound them.
  constexpr uint64_t kMaxSteps = 1000000000000ULL;
  TM_RETURN_IF_ERROR(check(t.steps <= kMaxSteps, "--steps must be in [0, 10^12]"));
  TM_RETURN_IF_ERROR(
      check(t.checkpoint_every <= kMaxSteps, "--checkpoint-every must be in [0, 10^12]"));
  TM_RETURN_IF_ERROR(check(t.log_every >= 0, "--log-every must be >= 0"));
  TM_RETURN_IF_ERROR(check(t.adamw.lr > 0 && t.adamw.lr < 1, "--lr must be in (0, 1)"));
  TM_RETURN_IF_ERROR(check(t.adamw.weight_decay >= 0, "--weight-decay must be >= 0"));
  TM_RETURN_IF_ERROR(check(t.adamw.beta1 >= 0 && t.adamw.beta1 < 1, "--beta1 must be in [0, 1)"));
  TM_RETURN_IF_ERROR(check(t.adamw.beta2 >= 0 && t.adamw.beta2 < 1, "--beta2 must be in [0, 1)"));
  TM_RETURN_IF_ERROR(
      check(!t.resume || !t.checkpoint_dir.empty(), "--resume needs --checkpoint-dir"));
  Status shape = validate(t.shape);
  if (!shape.ok()) return shape.with_context("model");
  TM_RETURN_IF_ERROR(check(cl.pp <= t.shape.n_layers, "--pp must not exceed --layers"));
  TM_RETURN_IF_ERROR(check(t.batch % t.micro_batches == 0 && t.micro_batches >= 1,
                           "--batch must be a multiple of --micro-batches"));
  return Status::Ok();
}

}  // namespace

Result<CommandLine> parse_command_line(int argc, const char* const* argv) {
  CommandLine cl;
  po::options_description options = describe(cl);
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "Usage: trainmover-gpt [OPTIONS]\n"
              "Train a small GPT on a text, as one process or as the D*P ranks of a\n"
              "TrainMover job (trainmover-launch --nprocs D*P -- trainmover-gpt --dp D --pp P).\n"
           << options;
      cl.help = true;
      cl.help_text = text.str();
      return cl;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return error(TM_ERROR_INVALID_ARGUMENT, e.what());
  }
  TM_RETURN_IF_ERROR(check_values(cl));
  return cl;
}

}  // namespace trainmover::gpt
