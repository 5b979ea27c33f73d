// Every layer's gradients, and the whole stage's, against central finite
// differences, in double precision: each parameter tensor and each layer's
// input. Then the float instantiation (what trains) against the double one.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpt/kernels.h"
#include "gpt/stage.h"
#include "gradient_check.h"

namespace trainmover::gpt {
namespace {

using testing::expect_gradient;
using testing::random_values;
using testing::weighted_sum;
using Vec = std::vector<double>;

constexpr int kRows = 6, kIn = 5, kOut = 7;

TEST(GptGradients, Linear) {
  Vec x = random_values(kRows * kIn, 1), w = random_values(kIn * kOut, 2),
      b = random_values(kOut, 3), r = random_values(kRows * kOut, 4);
  auto loss = [&] {
    Vec y(kRows * kOut);
    linear_forward(x.data(), w.data(), b.data(), y.data(), kRows, kIn, kOut);
    return weighted_sum(y, r);
  };
  Vec dx(x.size()), dw(w.size()), db(b.size());
  linear_backward(x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data(), kRows, kIn, kOut);
  expect_gradient("linear x", x, dx, loss);
  expect_gradient("linear w", w, dw, loss);
  expect_gradient("linear b", b, db, loss);
}

TEST(GptGradients, LayerNorm) {
  Vec x = random_values(kRows * kIn, 5, 2.0), g = random_values(kIn, 6), b = random_values(kIn, 7),
      r = random_values(kRows * kIn, 8);
  Vec mean(kRows), rstd(kRows);
  auto loss = [&] {
    Vec y(x.size());
    layernorm_forward(x.data(), g.data(), b.data(), y.data(), mean.data(), rstd.data(), kRows, kIn);
    return weighted_sum(y, r);
  };
  loss();  // fills mean and rstd for the backward pass
  Vec dx(x.size()), dg(g.size()), db(b.size());
  layernorm_backward(x.data(), g.data(), mean.data(), rstd.data(), r.data(), dx.data(), dg.data(),
                     db.data(), kRows, kIn);
  expect_gradient("layernorm x", x, dx, loss);
  expect_gradient("layernorm g", g, dg, loss);
  expect_gradient("layernorm b", b, db, loss);
}

TEST(GptGradients, Gelu) {
  Vec x = random_values(40, 9, 2.0), r = random_values(40, 10);
  auto loss = [&] {
    Vec y(x.size());
    gelu_forward(x.data(), y.data(), static_cast<int64_t>(x.size()));
    return weighted_sum(y, r);
  };
  Vec dx(x.size());
  gelu_backward(x.data(), r.data(), dx.data(), static_cast<int64_t>(x.size()));
  expect_gradient("gelu x", x, dx, loss, 40);
}

TEST(GptGradients, CausalAttention) {
  const AttentionShape s{2, 5, 8, 2};  // batch, seq, c, heads
  const size_t rows = s.batch * s.seq;
  Vec qkv = random_values(rows * 3 * s.c, 11), r = random_values(rows * s.c, 12);
  Vec probs(static_cast<size_t>(s.batch) * s.heads * s.seq * s.seq);
  auto loss = [&] {
    Vec out(rows * s.c);
    attention_forward(qkv.data(), out.data(), probs.data(), s);
    return weighted_sum(out, r);
  };
  loss();
  Vec dqkv(qkv.size());
  attention_backward(qkv.data(), probs.data(), r.data(), dqkv.data(), s);
  expect_gradient("attention qkv", qkv, dqkv, loss, 80);
}

TEST(GptGradients, Embedding) {
  const int vocab = 9, seq = 3, c = 4, rows = 6;
  const std::vector<int32_t> tokens = {1, 8, 1, 0, 4, 4};
  Vec tok = random_values(vocab * c, 13), pos = random_values(seq * c, 14),
      r = random_values(rows * c, 15);
  auto loss = [&] {
    Vec x(rows * c);
    embedding_forward(tokens.data(), tok.data(), pos.data(), x.data(), rows, seq, c);
    return weighted_sum(x, r);
  };
  Vec dtok(tok.size()), dpos(pos.size());
  embedding_backward(tokens.data(), r.data(), dtok.data(), dpos.data(), rows, seq, c);
  expect_gradient("embedding tok", tok, dtok, loss, 36);
  expect_gradient("embedding pos", pos, dpos, loss, 12);
}

TEST(GptGradients, CrossEntropy) {
  const int rows = 4, vocab = 6;
  const std::vector<int32_t> targets = {0, 5, 2, 2};
  const double scale = 0.25;
  Vec logits = random_values(rows * vocab, 16, 3.0), probs(logits.size());
  auto loss = [&] {
    return scale * cross_entropy_forward(logits.data(), targets.data(), probs.data(), rows, vocab);
  };
  loss();
  Vec dlogits(logits.size());
  cross_entropy_backward(probs.data(), targets.data(), scale, dlogits.data(), rows, vocab);
  expect_gradient("cross-entropy logits", logits, dlogits, loss);
}

// A small model whose weights are large enough that every path matters.
ModelShape tiny_shape() {
  ModelShape shape;
  shape.vocab = 11;
  shape.d_model = 8;
  shape.n_layers = 3;
  shape.n_heads = 2;
  shape.seq_len = 5;
  shape.ffn_mult = 2;
  return shape;
}

constexpr int kBatch = 2;

// The stage's loss, and its analytic gradients, at random parameters:
// every tensor of the layout and, past the first stage, the input.
struct StageProblem {
  StageProblem(int stage, int stages)
      : span(stage_span(tiny_shape(), stage, stages).value()),
        model(tiny_shape(), span, kBatch),
        params(random_values(model.layout().total(), 100 + stage, 0.5)),
        x_in(random_values(model.activation_count(), 200 + stage)),
        dy_out(random_values(model.activation_count(), 300 + stage)) {
    model.resize(cache);
    for (size_t i = 0; i < cache.tokens.size(); ++i) cache.tokens[i] = (i * 7 + 3) % 11;
    for (size_t i = 0; i < cache.targets.size(); ++i) cache.targets[i] = (i * 5 + 1) % 11;
  }

  // The last stage's mean token loss; elsewhere sum(dy_out * output).
  double loss() {
    const double sum = model.forward(params.data(), x_in.data(), cache);
    return span.last() ? sum * scale() : weighted_sum(cache.out, dy_out);
  }
  double scale() const { return 1.0 / model.rows(); }

  void check() {
    loss();
    Vec grads(params.size()), dx_in(x_in.size());
    model.backward(params.data(), cache, dy_out.data(), scale(), grads.data(), dx_in.data());
    auto f = [this] { return loss(); };
    for (const TensorInfo& t : model.layout().tensors()) {
      Vec p(params.begin() + t.offset, params.begin() + t.offset + t.count);
      Vec g(grads.begin() + t.offset, grads.begin() + t.offset + t.count);
      auto f_tensor = [&] {
        std::copy(p.begin(), p.end(), params.begin() + t.offset);
        return f();
      };
      expect_gradient(t.name, p, g, f_tensor, 12);
      std::copy(p.begin(), p.end(), params.begin() + t.offset);
    }
    if (!span.first()) expect_gradient("stage input", x_in, dx_in, f, 24);
  }

  StageSpan span;
  Stage<double> model;
  Vec params, x_in, dy_out;
  StageCache<double> cache;
};

TEST(GptGradients, WholeModelOnOneStage) { StageProblem(0, 1).check(); }
TEST(GptGradients, FirstStageOfThree) { StageProblem(0, 3).check(); }
TEST(GptGradients, MiddleStageOfThree) { StageProblem(1, 3).check(); }
TEST(GptGradients, LastStageOfThree) { StageProblem(2, 3).check(); }

// The float model (what trains) has the double model's gradients, to float
// precision.
TEST(GptGradients, FloatMatchesDouble) {
  StageProblem problem(0, 1);
  problem.loss();
  Vec grads(problem.params.size()), unused;
  problem.model.backward(problem.params.data(), problem.cache, nullptr, problem.scale(),
                         grads.data(), unused.data());
  Stage<float> model(tiny_shape(), problem.span, kBatch);
  StageCache<float> cache;
  model.resize(cache);
  cache.tokens = problem.cache.tokens;
  cache.targets = problem.cache.targets;
  std::vector<float> params(problem.params.begin(), problem.params.end());
  std::vector<float> grads_f(params.size(), 0.0f);
  model.forward(params.data(), nullptr, cache);
  model.backward(params.data(), cache, nullptr, 1.0f / model.rows(), grads_f.data(), nullptr);
  double worst = 0, largest = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    worst = std::max(worst, std::abs(grads[i] - grads_f[i]));
    largest = std::max(largest, std::abs(grads[i]));
  }
  EXPECT_LE(worst, 1e-5 * std::max(1.0, largest)) << "largest gradient " << largest;
  std::printf("float vs double: largest gradient %.3g, largest difference %.3g\n", largest, worst);
}

// Prints the margin under the tolerance once every test has run.
class ReportWorstError : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("largest relative error vs finite differences: %.3g (tolerance 1e-6)\n",
                testing::max_seen_error());
  }
};
// gtest owns registered environments.
[[maybe_unused]] ::testing::Environment* const kReport =
    ::testing::AddGlobalTestEnvironment(new ReportWorstError);

}  // namespace
}  // namespace trainmover::gpt
