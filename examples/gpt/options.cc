#include "options.h"

#include <cstdint>
#include <limits>
#include <string>

#include "cli/command_line.h"
#include "common/str.h"

namespace trainmover::gpt {
namespace {

constexpr int64_t kMaxSteps = 1000000000000LL;  // 10^12

// The table shows each default in --help; the strings are copied by add.
template <typename T>
std::string with_default(const char* help, const T& value) {
  return str_cat(help, " (default ", value, ")");
}

// What the table parses into before it is narrowed into TrainOptions'
// unsigned and float fields; starts at TrainOptions' defaults.
struct Wide {
  int64_t steps, seed, checkpoint_every;
  double lr, weight_decay, beta1, beta2;
};

Wide widen(const TrainOptions& t) {
  return {static_cast<int64_t>(t.steps),
          static_cast<int64_t>(t.seed),
          static_cast<int64_t>(t.checkpoint_every),
          t.adamw.lr,
          t.adamw.weight_decay,
          t.adamw.beta1,
          t.adamw.beta2};
}

void narrow(const Wide& w, TrainOptions& t) {
  t.steps = static_cast<uint64_t>(w.steps);
  t.seed = static_cast<uint64_t>(w.seed);
  t.checkpoint_every = static_cast<uint64_t>(w.checkpoint_every);
  t.adamw.lr = static_cast<float>(w.lr);
  t.adamw.weight_decay = static_cast<float>(w.weight_decay);
  t.adamw.beta1 = static_cast<float>(w.beta1);
  t.adamw.beta2 = static_cast<float>(w.beta2);
}

void describe(cli::CommandLine& table, CommandLine& cl, Wide& w) {
  TrainOptions& t = cl.train;
  ModelShape& m = t.shape;
  table.section("Job")
      .integer("dp", "D", 1, 4096, cl.dp, with_default("data-parallel replicas", cl.dp).c_str())
      .integer("pp", "P", 1, 4096, cl.pp,
               with_default("pipeline stages (needs D*P processes)", cl.pp).c_str())
      .integer("steps", "N", 0, kMaxSteps, w.steps,
               with_default("train until this many steps are done", w.steps).c_str())
      .integer("seed", "S", 0, INT64_MAX, w.seed,
               with_default("seed of the init and of the data", w.seed).c_str())
      .text("data", "FILE", t.data_path, "training text (default /usr/share/common-licenses/GPL-3)")
      .integer("log-every", "K", 0, INT32_MAX, t.log_every,
               with_default("a progress line every N steps (0: none)", t.log_every).c_str())
      .flag("print-hash", t.print_hash,
            "print the final parameter hash on stdout, as \"param-hash HEX\"")
      .duration("warmup-wait", "SEC", 0, 3600, cl.warmup_wait_s,
                "a standby waits this long in all for the roles' traces; a role whose trace is"
                " not there by then is served cold (default 10)");
  // The shape's ranges are validate(ModelShape)'s; it also checks the pairs.
  table.section("Model")
      .integer("layers", "L", 1, 256, m.n_layers, with_default("blocks", m.n_layers).c_str())
      .integer("d-model", "C", 1, 4096, m.d_model, with_default("width", m.d_model).c_str())
      .integer("heads", "H", 1, 4096, m.n_heads,
               with_default("attention heads (divide --d-model)", m.n_heads).c_str())
      .integer("seq-len", "T", 1, 4096, m.seq_len,
               with_default("tokens (bytes) per sequence", m.seq_len).c_str())
      .integer("ffn-mult", "M", 1, 16, m.ffn_mult,
               with_default("MLP width / d-model", m.ffn_mult).c_str());
  table.section("Training")
      .integer("batch", "B", 1, 65536, t.batch,
               with_default("sequences per DP replica and step", t.batch).c_str())
      .integer("micro-batches", "M", 1, 65536, t.micro_batches,
               with_default("pipeline micro-batches per step (divides --batch)", t.micro_batches)
                   .c_str())
      .number("lr", "RATE", 0, 1, w.lr, "AdamW learning rate, in (0, 1) (default 0.003)")
      .number("weight-decay", "W", 0, std::numeric_limits<double>::max(), w.weight_decay,
              "AdamW decoupled weight decay (default 0.1)")
      .number("beta1", "X", 0, 1, w.beta1, "AdamW beta1, in [0, 1) (default 0.9)")
      .number("beta2", "X", 0, 1, w.beta2, "AdamW beta2, in [0, 1) (default 0.95)");
  table.section("Checkpoints")
      .text("checkpoint-dir", "DIR", t.checkpoint_dir, "directory of the checkpoints")
      .integer("checkpoint-every", "N", 0, kMaxSteps, w.checkpoint_every,
               "a checkpoint every N steps (default 0: only at the end)")
      .flag("resume", t.resume, "continue from the latest checkpoint all stages have");
}

// What the table's closed ranges cannot say: open ends and pairs of options.
std::string check_values(const CommandLine& cl, const Wide& w) {
  const TrainOptions& t = cl.train;
  if (w.lr <= 0 || w.lr >= 1) return "--lr must be in (0, 1)";
  if (w.beta1 >= 1) return "--beta1 must be in [0, 1)";
  if (w.beta2 >= 1) return "--beta2 must be in [0, 1)";
  if (t.resume && t.checkpoint_dir.empty()) return "--resume needs --checkpoint-dir";
  Status shape = validate(t.shape);
  if (!shape.ok()) return "model: " + shape.message();
  if (cl.pp > t.shape.n_layers) return "--pp must not exceed --layers";
  if (t.batch % t.micro_batches != 0) return "--batch must be a multiple of --micro-batches";
  return "";
}

}  // namespace

std::optional<int> parse_command_line(int argc, const char* const* argv, CommandLine& out) {
  cli::CommandLine table(
      "trainmover-gpt", "trainmover-gpt [OPTIONS]",
      "Train a small GPT on a text, as one process or as the D*P ranks of a\n"
      "TrainMover job (trainmover-launch --nprocs D*P -- trainmover-gpt --dp D --pp P).\n");
  Wide wide = widen(out.train);
  describe(table, out, wide);
  if (auto exit_code = table.parse(argc, argv)) return exit_code;
  std::string problem = check_values(out, wide);
  if (!problem.empty()) return table.usage_error(problem);
  narrow(wide, out.train);
  return std::nullopt;
}

}  // namespace trainmover::gpt
